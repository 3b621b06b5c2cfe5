/**
 * STUB CONTRACT (owner: plugin-host helper replaces the bodies, keeps the signatures).
 * Discovers third-party plugins and runs each in a permission-scoped Deno Worker.
 * @module
 */
import type { AgentDefinition, SkillDefinition } from "../../sdk/mod.ts";
import type { AnyTool } from "../types.ts";
import type { AppOptions } from "../app.ts";
import type { Policy } from "../guard/policy.ts";

/** Plugins loaded for one session. Tools proxy `run` to the plugin's worker. */
export interface LoadedPlugins {
  tools: AnyTool[];
  agents: AgentDefinition[];
  skills: SkillDefinition[];
  /** Human-readable load problems (refused permissions, bad modules); never fatal. */
  warnings: string[];
  close(): Promise<void>;
}

/** Discovers plugins (config `plugins:`, `.coyote/plugins/`, user config dir, `--plugin`). */
export function loadPlugins(_app: AppOptions, _policy: Policy, _cwd: string): Promise<LoadedPlugins> {
  return Promise.resolve({ tools: [], agents: [], skills: [], warnings: [], close: () => Promise.resolve() });
}
