/**
 * The built-in plugins' tools as the session registers them: stubs from the generated data
 * (core/tools/lazy.ts, `deno task gen`), so a run does not import the tool modules before its
 * first request (and never zod for them: their inputs are that generated JSON Schema). `./mod.ts` (the real tools, `corePlugins`) is imported at the first
 * validation of a call, or in the background once the first request is on its way.
 * @module
 */
import type { AnyTool } from "../core/protocol/types.ts";
import { BUILTIN_TOOLS, lazyTool } from "../core/tools/lazy.ts";

let mod: Promise<typeof import("./mod.ts")> | undefined;
/** Imports ./mod.ts once. */
function loadPlugins(): Promise<typeof import("./mod.ts")> {
  return mod ??= import("./mod.ts");
}

/** Stubs of every tool of `corePlugins` (plugins/mod.ts), in its order. */
export const coreToolStubs: AnyTool[] = BUILTIN_TOOLS.plugins.map((d) =>
  lazyTool(d, {
    module: loadPlugins,
    tool: (m) => m.corePlugins.flatMap((p) => p.tools ?? []).find((t) => t.name === d.name)!,
  })
);
