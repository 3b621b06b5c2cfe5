/**
 * First-party tool packs, written against `sdk/` like any plugin and run
 * in-process by the engine (issue 3): `fs` (`fs_read`, `fs_ls`, `fs_glob`,
 * `fs_grep`, `fs_write`, `fs_patch`), `exec` (`execute_command`), `user`
 * (`user__select|confirm|input|checkbox`), `todo` (`todo__write`) and `web`
 * (`web_fetch`).
 *
 * Heavy dependencies (npm `ignore`, `picomatch`, `html-to-text`) load lazily
 * on first use, so importing this module costs only the tool objects. Their inputs are the
 * generated JSON Schemas of core/tools/builtin_tools.gen.json, typed by the zod schemas of each
 * pack's `inputs.ts` (imported as types only: zod does not load with them; core/tools/lazy.ts).
 * @module
 */
import { ToolRegistry } from "../core/tools/registry.ts";
import type { PluginDefinition } from "../sdk/mod.ts";
import { fsPlugin } from "./fs/mod.ts";
import { execPlugin } from "./exec/mod.ts";
import { userPlugin } from "./user/mod.ts";
import { todoPlugin } from "./todo/mod.ts";
import { webPlugin } from "./web/mod.ts";

/** The built-in plugins: fs, exec, user, todo, web. */
export const corePlugins: PluginDefinition[] = [
  fsPlugin,
  execPlugin,
  userPlugin,
  todoPlugin,
  webPlugin,
];

/**
 * The core tools as an OpenAI `tools` array (`{type: "function", function:
 * {name, description, parameters}}`, parameters as `ToolRegistry.schema` gives them), and
 * the size of its JSON text in chars and in tokens (chars/4, the estimate
 * issue 2 asks for). The budget for all core tools is ~10k chars.
 */
export function toolSchemasSize(plugins: PluginDefinition[] = corePlugins): {
  chars: number;
  tokens: number;
  tools: unknown[];
} {
  const tools = new ToolRegistry(plugins.flatMap((p) => p.tools ?? [])).openAITools();
  const chars = JSON.stringify(tools).length;
  return { chars, tokens: Math.ceil(chars / 4), tools };
}
