/**
 * The built-in tools' stubs (issue 22 item 5, core/tools/lazy.ts): the generated data
 * (core/tools/builtin_tools.gen.json) is current, the model sees exactly what the real tools would
 * send, a stub validates and runs through its real tool, and the headless start path's static
 * module graph holds no zod (it loads at the first validation).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "./support/run_coyote.ts";
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

/**
 * zod in `root`'s static module graph (literal dynamic imports not followed): an import of zod, or
 * of an npm package that depends on zod (the ACP SDK, openai), as "<importer> imports <specifier>".
 */
async function staticZod(root: string): Promise<string[]> {
  return await staticImports(root, (s, zodUsers) => {
    if (!s.startsWith("npm:")) return false;
    const name = npmName(s);
    return name === "zod" || zodUsers.has(name);
  });
}

// `npm:openai@^7` → "openai"; a package "openai@7.59.0_zod@4.6.7" depending on "zod@4.6.7".
const npmName = (s: string) => s.replace(/^npm:\/?/, "").replace(/(.)@.*$/, "$1");

/**
 * The imports of `root`'s static module graph (literal dynamic imports not followed) that `hit`
 * matches (npm and node: specifiers are leaves), as "<importer> imports <specifier>".
 */
async function staticImports(
  root: string,
  hit: (specifier: string, zodUsers: Set<string>) => boolean,
): Promise<string[]> {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", join(REPO_ROOT, "deno.json"), root],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
  const info = JSON.parse(new TextDecoder().decode(o.stdout)) as {
    roots: string[];
    npmPackages?: Record<string, { dependencies?: string[] }>;
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
    }[];
  };
  const bySpec = new Map(info.modules.map((m) => [m.specifier, m]));
  const zodUsers = new Set(
    Object.entries(info.npmPackages ?? {}).filter(([, p]) =>
      (p.dependencies ?? []).some((d) => d.startsWith("zod@"))
    ).map(([k]) => npmName(k)),
  );
  const seen = new Set<string>(info.roots);
  const queue = [...info.roots];
  const found: string[] = [];
  while (queue.length) {
    const m = bySpec.get(queue.shift()!);
    for (const d of m?.dependencies ?? []) {
      const s = d.code?.specifier;
      if (!s || d.isDynamic || seen.has(s)) continue;
      seen.add(s);
      if (hit(s, zodUsers)) found.push(`${m!.specifier} imports ${s}`);
      if (!s.startsWith("npm:") && !s.startsWith("node:")) queue.push(s);
    }
  }
  return found;
}

Deno.test("tool stubs: the headless start path's static module graph holds no zod", async () => {
  // The check can fail: the real tools import zod, the MCP client the MCP SDK (which needs zod).
  assert.notDeepEqual(await staticZod("plugins/mod.ts"), []);
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
