/**
 * Unit tests of the two-file example plugin: the helper on its own, and the
 * tool through the plugin (see docs/plugins.md, "Testing a plugin").
 * Run: deno test examples/plugins/wordstats/
 */
import assert from "node:assert/strict";
import type { ToolContext } from "@coyote/sdk";
import plugin from "./mod.ts";
import { textStats } from "./stats.ts";

const ctx: ToolContext = {
  cwd: Deno.cwd(),
  signal: new AbortController().signal,
  toolCallId: "test",
  log: { debug() {}, info() {}, warn() {}, error() {} },
  progress() {},
  requestPermission: () => Promise.resolve(false),
};

Deno.test("textStats counts words, lines, characters and the top words", () => {
  assert.deepEqual(textStats("the cat\nthe hat é", 2), {
    words: 5,
    lines: 2,
    characters: 17,
    top: [{ word: "the", count: 2 }, { word: "cat", count: 1 }],
  });
  assert.deepEqual(textStats(""), { words: 0, lines: 0, characters: 0, top: [] });
});

Deno.test("wordstats_count reports the counts", async () => {
  const tool = plugin.tools!.find((t) => t.name === "wordstats_count")!;
  assert.equal(
    await tool.run({ text: "a b a", top: 1 }, ctx),
    "3 words, 1 lines, 5 characters; top: a (2)",
  );
});
