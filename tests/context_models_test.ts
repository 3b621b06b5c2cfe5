/**
 * The `models:` capability table (config schema, lookup, cost), `provider.stream_options`, the
 * window-sized tool-result cap and the overflow shrink of core/engine/context.ts, and transcript repair
 * on load (empty assistant turns, rejected turns, shrunk results, orphan tool replies).
 */
import assert from "node:assert/strict";
import { parseConfig, resolveProvider } from "../core/config/config.ts";
import { ConfigError } from "../core/protocol/errors.ts";
import {
  configuredModel,
  costUsd,
  DEFAULT_CONTEXT_WINDOW,
  modelInfo,
} from "../core/config/models.ts";
import {
  capText,
  capToolResults,
  MAX_TOOL_OUTPUT,
  shrinkToolResults,
  toolOutputCap,
} from "../core/engine/context.ts";
import type { ChatMessage } from "../core/transcript/types.ts";
import { parseTranscript } from "../core/transcript/load.ts";
import { TranscriptWriter } from "../core/transcript/writer.ts";

const env = (vars: Record<string, string> = {}) => ({ get: (k: string) => vars[k] });

Deno.test("config: models table and provider.stream_options parse; bad values name the key", async () => {
  const cfg = await parseConfig(
    `model: small
provider:
  base_url: http://localhost:8000/v1
  stream_options: false
models:
  small:
    context_window: 8192
    images: false
    max_output_tokens: 1024
    price: { input: 0.5, output: 1.5, cached_input: 0.05 }
  vision:
    images: true
`,
    "c.yaml",
  );
  const p = resolveProvider({ flags: {}, env: env(), config: cfg });
  assert.equal(p.streamOptions, false);
  const small = modelInfo(cfg, "small");
  assert.deepEqual(small, {
    name: "small",
    known: true,
    contextWindow: 8192,
    images: false,
    maxOutputTokens: 1024,
    price: { input: 0.5, output: 1.5, cached_input: 0.05 },
  });
  assert.equal(modelInfo(cfg, "vision").images, true);
  assert.equal(modelInfo(cfg, "vision").contextWindow, DEFAULT_CONTEXT_WINDOW);
  const unknown = modelInfo(cfg, "other");
  assert.equal(unknown.known, false);
  assert.equal(unknown.images, undefined);
  assert.equal(configuredModel(undefined, cfg, env()), "small");
  assert.equal(configuredModel(undefined, cfg, env({ COYOTE_MODEL: "vision" })), "vision");
  assert.equal(configuredModel("flag", cfg, env({ COYOTE_MODEL: "vision" })), "flag");

  for (
    const [text, re] of [
      [
        "models:\n  m:\n    context_window: -1\n",
        /models\.m\.context_window: expected a positive integer/,
      ],
      ["models:\n  m:\n    images: yes please\n", /models\.m\.images: expected true or false/],
      [
        "models:\n  m:\n    contxt_window: 5\n",
        /models\.m\.contxt_window: unknown key \(did you mean `context_window`\?\)/,
      ],
      ["models:\n  m:\n    price: { input: 1 }\n", /models\.m\.price\.output/],
      ["provider:\n  stream_options: 0\n", /provider\.stream_options: expected true or false/],
    ] as const
  ) {
    await assert.rejects(() => parseConfig(text, "c.yaml"), (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, re);
      return true;
    });
  }
});

Deno.test("models: cost in USD from the price table, cached prompt tokens at their price", () => {
  const price = { input: 2, output: 8, cached_input: 0.5 };
  assert.equal(costUsd({ prompt_tokens: 1_000_000, completion_tokens: 500_000 }, price), 6);
  assert.equal(
    costUsd({ prompt_tokens: 1_000_000, completion_tokens: 0 }, price, 400_000),
    0.6 * 2 + 0.4 * 0.5,
  );
  assert.equal(costUsd({ prompt_tokens: 1, completion_tokens: 1 }, undefined), undefined);
});

Deno.test("context: the tool-result cap follows the window; capText keeps head and tail", () => {
  assert.equal(toolOutputCap(128_000), MAX_TOOL_OUTPUT);
  // 32k window: 4096 tokens reserved, a quarter of the rest in characters.
  assert.equal(toolOutputCap(32_768), 28_672);
  assert.equal(toolOutputCap(8192, 1024), 7168);
  assert.equal(toolOutputCap(1000), 1000);
  const text = "H".repeat(3000) + "T".repeat(3000);
  const cut = capText(text, 1000);
  assert.ok(cut.startsWith("H".repeat(750) + "\n[… 5000 of 6000 characters cut"));
  assert.ok(cut.endsWith("\n" + "T".repeat(250)));
  assert.equal(capText("short", 1000), "short");
  const capped = capToolResults([
    { role: "tool", tool_call_id: "a", content: "x".repeat(5000) },
    { role: "user", content: "y".repeat(5000) },
  ], 2000);
  assert.ok((capped[0].content as string).length < 2200);
  assert.equal((capped[1].content as string).length, 5000);
});

Deno.test("context: shrinkToolResults cuts the largest results from an index on", () => {
  const msgs: ChatMessage[] = [
    { role: "tool", tool_call_id: "old", content: "o".repeat(40_000) },
    { role: "user", content: "go" },
    { role: "tool", tool_call_id: "big", content: "b".repeat(80_000) },
    { role: "tool", tool_call_id: "mid", content: "m".repeat(30_000) },
    { role: "tool", tool_call_id: "small", content: "s".repeat(500) },
  ];
  const changed = shrinkToolResults(msgs, 1);
  assert.deepEqual(changed.map((c) => c.tool_call_id), ["big", "mid"]);
  assert.ok((msgs[2].content as string).length < 21_000);
  assert.ok((msgs[3].content as string).length < 21_000);
  assert.match(msgs[2].content as string, /context overflow/);
  assert.equal((msgs[0].content as string).length, 40_000, "earlier turns untouched");
  assert.equal((msgs[4].content as string).length, 500);
  assert.deepEqual(shrinkToolResults([{ role: "user", content: "x".repeat(9e4) }], 0), []);
});

Deno.test("transcript: empty assistant turns, rejected turns, shrunk results and orphans on load", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const w = TranscriptWriter.create(dir, {
      id: "r1",
      cwd: "/w",
      created: "2026-01-01T00:00:00Z",
      model: "m",
      agent: "coyote",
    });
    const usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 1 };
    // Turn 1: an old-style reasoning-only turn stored as content null.
    w.message({ role: "user", content: "one" });
    w.message({ role: "assistant", content: null });
    w.turnEnd("end_turn", usage);
    // Turn 2: a tool call whose result was shrunk later, plus an orphan tool reply.
    w.message({ role: "user", content: "two" });
    w.message({
      role: "assistant",
      content: null,
      reasoning_content: "need the file",
      tool_calls: [{ id: "c1", type: "function", function: { name: "fs_read", arguments: "{}" } }],
    });
    w.message({ role: "tool", tool_call_id: "c1", content: "x".repeat(1000) });
    w.message({ role: "tool", tool_call_id: "c1", content: "duplicate answer" });
    w.message({ role: "tool", tool_call_id: "nobody", content: "orphan" });
    w.toolResultUpdate("c1", "shrunk");
    w.message({ role: "assistant", content: "done" });
    w.turnEnd("end_turn", usage);
    // Turn 3: rejected by the server (an image to a text-only model).
    w.message({ role: "user", content: [{ type: "image_url", image_url: { url: "data:," } }] });
    w.turnEnd("end_turn", usage, { code: "bad_request", message: "no images" }, true);
    w.close();
    const loaded = parseTranscript(await Deno.readTextFile(w.path))!;
    assert.deepEqual(loaded.messages, [
      { role: "user", content: "one" },
      { role: "user", content: "two" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "need the file",
        tool_calls: [{
          id: "c1",
          type: "function",
          function: { name: "fs_read", arguments: "{}" },
        }],
      },
      { role: "tool", tool_call_id: "c1", content: "shrunk" },
      { role: "assistant", content: "done" },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
