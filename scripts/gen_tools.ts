/**
 * Writes core/tools/builtin_tools.gen.json (run by `deno task gen`, scripts/gen_builtins.ts): for
 * every built-in tool — `corePlugins` (plugins/mod.ts), the supervisor's `agent__*`, the skill
 * tools — its name, description, `kind`, `readOnly`, `concurrency` (from the real tool) and the
 * JSON Schema of its zod input (from the `inputs.ts` module of its pack, {@link BUILTIN_ZOD})
 * exactly as `ToolRegistry.schema` converts it. Sessions register stubs made from it, and the
 * real tools take their `input` from it (core/tools/lazy.ts), so no run imports zod for the
 * built-in tools; tests/tool_stubs_test.ts fails while the file is stale.
 * @module
 */
import { corePlugins } from "../plugins/mod.ts";
import { supervisorTools } from "../core/supervisor/tools.ts";
import { skillTools } from "../core/extensions/skills/tool_defs.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import type { AnyTool } from "../core/protocol/types.ts";
import type { ToolStubData } from "../core/tools/lazy.ts";
import type { ZodLike } from "../sdk/mod.ts";
import { FS_INPUTS } from "../plugins/fs/inputs.ts";
import { EXEC_INPUTS } from "../plugins/exec/inputs.ts";
import { USER_INPUTS } from "../plugins/user/inputs.ts";
import { TODO_INPUTS } from "../plugins/todo/inputs.ts";
import { WEB_INPUTS } from "../plugins/web/inputs.ts";
import { SUPERVISOR_INPUTS } from "../core/supervisor/inputs.ts";
import { SKILL_INPUTS } from "../core/extensions/skills/inputs.ts";

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

/** The zod schemas of the built-in tools' inputs by tool name (the packs' `inputs.ts`). */
export const BUILTIN_ZOD: Record<string, ZodLike> = {
  ...FS_INPUTS,
  ...EXEC_INPUTS,
  ...USER_INPUTS,
  ...TODO_INPUTS,
  ...WEB_INPUTS,
  ...SUPERVISOR_INPUTS,
  ...SKILL_INPUTS,
};

/** The zod schema of built-in tool `name`. @throws Error when no `inputs.ts` has one. */
export function zodInput(name: string): ZodLike {
  const z = BUILTIN_ZOD[name];
  if (!z) throw new Error(`no inputs.ts has a zod schema for the built-in tool ${name}`);
  return z;
}

/** One tool's entry, through the registry's real conversion of its zod schema. */
function entry(t: AnyTool): ToolStubData {
  const registry = new ToolRegistry([{ ...t, input: zodInput(t.name) }]);
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
