/**
 * The built-in tools' stubs (issue 22 item 5, core/tools/lazy.ts): the generated data
 * (core/tools/builtin_tools.gen.json) is current, the model sees exactly what the real tools would
 * send, a stub validates and runs through its real tool, and the headless start path's static
 * module graph holds no zod (it loads at the first validation).
 * @module
 */
import assert from "node:assert/strict";
import { staticImports, staticZod } from "./support/module_graph.ts";
import { realBuiltinTools, TOOLS_OUT, toolsGeneratedText } from "../scripts/gen_tools.ts";
import { coreToolStubs } from "../plugins/stubs.ts";
import { lazySupervisorTools } from "../core/supervisor/tool_stubs.ts";
import { createSkillState } from "../core/extensions/skills/tools.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import { BUILTIN_TOOLS, lazyTool, realTool } from "../core/tools/lazy.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import type { AnyTool } from "../core/protocol/types.ts";
import type { ToolContext } from "../sdk/mod.ts";

const openAI = (tools: AnyTool[]) => new ToolRegistry(tools).openAITools();
const meta = (t: AnyTool) => ({ kind: t.kind, readOnly: t.readOnly, concurrency: t.concurrency });

Deno.test("tool stubs: core/tools/builtin_tools.gen.json is current (else run `deno task gen`)", async () => {
  assert.equal(
    await Deno.readTextFile(TOOLS_OUT),
    toolsGeneratedText(),
    "core/tools/builtin_tools.gen.json is stale: run `deno task gen`",
  );
});

Deno.test("tool stubs: the model and the scheduler see what the real tools give", () => {
  const real = realBuiltinTools();
  const skills = createSkillState(
    [{ name: "example", description: "an example", content: "", source: "builtin", path: "x" }],
    { onChange: () => {} },
  ).tools;
  const sup = lazySupervisorTools(() => {
    throw new Error("not called");
  });
  for (
    const [stubs, reals] of [
      [coreToolStubs, real.plugins],
      [sup, real.supervisor],
      [skills, real.skills],
    ] as const
  ) {
    assert.deepEqual(openAI(stubs), openAI(reals));
    assert.deepEqual(stubs.map(meta), reals.map(meta));
  }
  // The sandboxed execute_command carries the sandbox's note in its description.
  const d = BUILTIN_TOOLS.plugins.find((t) => t.name === "execute_command")!;
  const note = "Commands run in an OS sandbox.";
  const stub = lazyTool(
    d,
    { module: () => Promise.resolve(0), tool: () => ({}) as AnyTool },
    `${d.description} ${note}`,
  );
  assert.deepEqual(openAI([stub]), openAI([makeExecuteCommandTool(undefined, note) as AnyTool]));
});

Deno.test("tool stubs: validation, title, access and run are the real tool's", async () => {
  const registry = new ToolRegistry(coreToolStubs);
  const read = registry.get("fs_read")!;
  const bad = await registry.validate("fs_read", { offset: "x" });
  assert.equal(bad.ok, false);
  assert.match((bad as { message: string }).message, /path/);
  const ok = await registry.validate("fs_read", { path: "a.txt" });
  assert.ok(ok.ok);
  const real = await realTool(read);
  assert.ok(real && real !== read);
  assert.deepEqual(ok, await new ToolRegistry([real]).validate("fs_read", { path: "a.txt" }));
  assert.equal(read.title?.(ok.value), real.title?.(ok.value));
  assert.deepEqual(read.access?.(ok.value, "/w"), [{ type: "read", path: "a.txt" }]);
  const todo = registry.get("todo__write")!;
  const input = { todos: [{ content: "x", status: "pending" }] };
  assert.ok((await registry.validate("todo__write", input)).ok);
  const ctx = { cwd: "/w", signal: new AbortController().signal, toolCallId: "c" } as ToolContext;
  const expected = await (await realTool(todo))!.run(input as never, ctx);
  assert.deepEqual(await todo.run(input as never, ctx), expected);
});

Deno.test("tool stubs: the headless start path's static module graph holds no zod", async () => {
  // The check can fail: the tools' zod schemas import zod, the MCP client the MCP SDK (which
  // needs zod).
  assert.notDeepEqual(await staticZod("plugins/fs/inputs.ts"), []);
  assert.notDeepEqual(await staticZod("core/extensions/mcp/client.ts"), []);
  assert.deepEqual(await staticZod("core/frontends/headless/mod.ts"), []);
  assert.deepEqual(await staticZod("main.ts"), []);
});

Deno.test("tool stubs: the headless start path's static module graph holds neither node:path nor node:fs", async () => {
  // Each loads Node's compat layer behind it (≈ 6 ms and ≈ 4 ms of a start; issue 22).
  const nodeHeavy = (s: string) => /^node:(path|fs)(\/|$)/.test(s);
  assert.notDeepEqual(await staticImports("tests/tool_stubs_test.ts", nodeHeavy), [], "can fail");
  assert.deepEqual(await staticImports("core/frontends/headless/mod.ts", nodeHeavy), []);
  assert.deepEqual(await staticImports("main.ts", nodeHeavy), []);
});
