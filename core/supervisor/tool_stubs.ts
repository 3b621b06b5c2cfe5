/**
 * The `agent__*` tools of one session as stubs (core/tools/lazy.ts): their schemas are generated
 * data, and ./tools.ts is imported at the first validation of a call, or in the background
 * once the first model request is on its way.
 * @module
 */
import type { AnyTool } from "../protocol/types.ts";
import { BUILTIN_TOOLS, lazyTool } from "../tools/lazy.ts";
import type { Supervisor } from "./supervisor.ts";

let mod: Promise<typeof import("./tools.ts")> | undefined;
/** Imports ./tools.ts once. */
function loadTools(): Promise<typeof import("./tools.ts")> {
  return mod ??= import("./tools.ts");
}

/** Stubs of ./tools.ts `supervisorTools(sup)`, bound to one session's supervisor. */
export function lazySupervisorTools(sup: () => Supervisor): AnyTool[] {
  let real: AnyTool[] | undefined;
  return BUILTIN_TOOLS.supervisor.map((d) =>
    lazyTool(d, {
      module: loadTools,
      tool: (m) => (real ??= m.supervisorTools(sup)).find((t) => t.name === d.name)!,
    })
  );
}
