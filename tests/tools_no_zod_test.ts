/**
 * The built-in tools load no zod (issue 22): their zod schemas live in `inputs.ts` modules that
 * only scripts/gen_tools.ts and tests load; the tool modules import them as types and take the
 * generated JSON Schemas (core/tools/lazy.ts `builtinInputs`), which the registry validates with
 * `@cfworker/json-schema`, dropping unknown keys as zod's `z.object` did.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { z } from "zod";
import { REPO_ROOT } from "./support/run_coyote.ts";
import { staticZod } from "./support/module_graph.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import { corePlugins } from "../plugins/mod.ts";
import { webSearchInput } from "../plugins/web/inputs.ts";
import { webSearchSchema, webSearchTool } from "../plugins/web/search.ts";
import { todoWriteTool } from "../plugins/todo/mod.ts";
import { fsReadTool } from "../plugins/fs/read.ts";
import type { InferInput } from "../sdk/mod.ts";

/** Every module that defines a built-in tool (the `inputs.ts` modules aside). */
const TOOL_MODULES = [
  "plugins/mod.ts",
  "plugins/stubs.ts",
  "plugins/fs/ast_grep.ts",
  "plugins/exec/mod.ts",
  "plugins/web/search.ts",
  "core/supervisor/tools.ts",
  "core/supervisor/tool_stubs.ts",
  "core/extensions/skills/tool_defs.ts",
  "core/extensions/skills/tools.ts",
];

Deno.test("no zod: the tool modules' static module graphs hold no zod", async () => {
  for (const m of TOOL_MODULES) assert.deepEqual(await staticZod(m), [], m);
});

/**
 * Runs a fresh `deno run` that imports `modules`, makes every built-in tool, validates and runs
 * a call, and reports whether zod was evaluated (zod v4 sets `globalThis.__zod_globalConfig`
 * when its core module runs).
 */
async function zodLoaded(extra: string[] = []): Promise<boolean> {
  const url = (m: string) => JSON.stringify(new URL(m, `file://${REPO_ROOT}/`).href);
  const script = `
    const plugins = await import(${url("plugins/mod.ts")});
    const sup = await import(${url("core/supervisor/tools.ts")});
    const skills = await import(${url("core/extensions/skills/tool_defs.ts")});
    const search = await import(${url("plugins/web/search.ts")});
    const exec = await import(${url("plugins/exec/mod.ts")});
    const { ToolRegistry } = await import(${url("core/tools/registry.ts")});
    ${extra.map((m) => `await import(${url(m)});`).join("\n")}
    const tools = [
      ...plugins.corePlugins.flatMap((p) => p.tools ?? []),
      ...sup.supervisorTools(() => { throw new Error("not called"); }),
      ...skills.skillTools({
        state: { loaded: [], load: () => false, unload: () => false },
        visible: [], byName: new Map(), unknown: (n) => n,
      }),
      search.webSearchTool({ backend: "searxng", url: "http://127.0.0.1:9" }),
    ];
    exec.makeExecuteCommandTool(undefined, "note");
    const r = new ToolRegistry(tools);
    r.openAITools();
    const v = await r.validate("todo__write", { todos: [{ content: "x", status: "pending" }] });
    if (!v.ok) throw new Error(v.message);
    await r.get("todo__write").run(v.value, { cwd: "/", signal: new AbortController().signal });
    if ((await r.validate("fs_read", {})).ok) throw new Error("fs_read {} passed");
    console.log(JSON.stringify({ zod: "__zod_globalConfig" in globalThis }));
  `;
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", join(REPO_ROOT, "deno.json"), script],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
  return JSON.parse(new TextDecoder().decode(o.stdout).trim().split("\n").at(-1)!).zod;
}

Deno.test("no zod: making, validating and running the built-in tools does not evaluate zod", async () => {
  assert.equal(await zodLoaded(), false);
  // The check can fail: a module that imports zod at run time sets the marker.
  assert.equal(await zodLoaded(["plugins/fs/inputs.ts"]), true);
});

Deno.test("no zod: unknown keys are dropped, at the top level and inside arrays of objects", async () => {
  const r = new ToolRegistry(corePlugins.flatMap((p) => p.tools ?? []));
  assert.deepEqual(await r.validate("fs_read", { path: "a", extra: 1 }), {
    ok: true,
    value: { path: "a" },
  });
  const todos = { todos: [{ content: "x", status: "pending", junk: true }], more: 2 };
  assert.deepEqual(await r.validate("todo__write", todos), {
    ok: true,
    value: { todos: [{ content: "x", status: "pending" }] },
  });
  // A value with nothing to drop comes back as it is.
  const clean = { path: "a", offset: 2 };
  assert.equal((await r.validate("fs_read", clean) as { value: unknown }).value, clean);
});

Deno.test("no zod: invalid arguments name the field and what is wrong", async () => {
  const r = new ToolRegistry([fsReadTool, todoWriteTool]);
  const bad = await r.validate("fs_read", { offset: "x" }) as { ok: false; message: string };
  assert.equal(bad.ok, false);
  assert.match(bad.message, /required property "path"/);
  assert.match(bad.message, /offset: .*"string" is invalid\. Expected "integer"/);
  const todo = await r.validate("todo__write", { todos: [{ content: "x", status: "done" }] });
  assert.match((todo as { message: string }).message, /todos\/0\/status: .*"pending"/);
});

Deno.test("no zod: web_search's written JSON Schema is the conversion of its zod schema", () => {
  for (const n of [5, 12]) {
    const viaZod = new ToolRegistry([{
      ...webSearchTool({ backend: "searxng" }),
      input: webSearchInput(n),
    }])
      .schema("web_search");
    assert.deepEqual(webSearchSchema(n), viaZod);
  }
  assert.deepEqual(
    new ToolRegistry([webSearchTool({ backend: "searxng", max_results: 12 })]).schema("web_search"),
    webSearchSchema(12),
  );
});

Deno.test("no zod: the tools' input types are the zod schemas' (type-level)", () => {
  type Read = InferInput<typeof fsReadTool.input>;
  const ok: Read = { path: "a", offset: 1 };
  // @ts-expect-error: `path` is a string
  const bad: Read = { path: 1 };
  const same: z.infer<typeof import("../plugins/fs/inputs.ts").FsReadInput> = ok;
  assert.ok(ok && bad && same);
});
