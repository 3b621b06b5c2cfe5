/**
 * Writes core/tools/builtin_tools.gen.json (run by `deno task gen`, scripts/gen_builtins.ts): for
 * every built-in tool — `corePlugins` (plugins/mod.ts), the supervisor's `agent__*`, the skill
 * tools — its name, description, `kind`, `readOnly`, `concurrency` and the JSON Schema of its
 * zod input exactly as `ToolRegistry.schema` converts it. Sessions register stubs made from it
 * (core/tools/lazy.ts), so no run imports zod before its first tool call;
 * tests/tool_stubs_test.ts fails while the file is stale.
 * @module
 */
import { corePlugins } from "../plugins/mod.ts";
import { supervisorTools } from "../core/supervisor/tools.ts";
import { skillTools } from "../core/extensions/skills/tool_defs.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import type { AnyTool } from "../core/protocol/types.ts";
import type { ToolStubData } from "../core/tools/lazy.ts";

/** Where the data goes. */
export const TOOLS_OUT = new URL("../core/tools/builtin_tools.gen.json", import.meta.url);

/** The real built-in tools by group (their `run`s are never called here). */
export function realBuiltinTools(): Record<"plugins" | "supervisor" | "skills", AnyTool[]> {
  const state = { loaded: [], load: () => false, unload: () => false };
  return {
    plugins: corePlugins.flatMap((p) => p.tools ?? []),
    supervisor: supervisorTools(() => {
      throw new Error("not called");
    }),
    skills: skillTools({ state, visible: [], byName: new Map(), unknown: (n) => n }),
  };
}

/** One tool's entry, through the registry's real conversion. */
function entry(t: AnyTool): ToolStubData {
  const registry = new ToolRegistry([t]);
  return {
    name: t.name,
    description: t.description,
    ...(t.kind !== undefined ? { kind: t.kind } : {}),
    ...(t.readOnly !== undefined ? { readOnly: t.readOnly } : {}),
    ...(t.concurrency !== undefined ? { concurrency: t.concurrency } : {}),
    parameters: registry.schema(t.name),
  };
}

/** The generated file's text for the tools as they are now. */
export function toolsGeneratedText(): string {
  const groups = realBuiltinTools();
  const out = Object.fromEntries(
    Object.entries(groups).map(([g, tools]) => [g, tools.map(entry)]),
  );
  return JSON.stringify(out, null, 2) + "\n";
}
