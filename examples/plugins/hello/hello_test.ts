/**
 * Unit test of the example plugin: calls the tool's `run` directly with a
 * hand-made context (see docs/plugins.md, "Testing a plugin").
 * Run: deno test examples/plugins/hello/
 */
import assert from "node:assert/strict";
import type { ToolContext } from "@coyote/sdk";
import plugin from "./mod.ts";

function testContext(): ToolContext {
  return {
    cwd: Deno.cwd(),
    signal: new AbortController().signal,
    toolCallId: "test",
    log: { debug() {}, info() {}, warn() {}, error() {} },
    progress() {},
    requestPermission: () => Promise.resolve(false),
  };
}

Deno.test("hello_greet greets by name", async () => {
  const tool = plugin.tools!.find((t) => t.name === "hello_greet")!;
  assert.equal(await tool.run({ name: "Ada" }, testContext()), "Hello, Ada!");
});

Deno.test("the plugin declares no permissions", () => {
  assert.equal(plugin.permissions, undefined);
});
