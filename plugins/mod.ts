/**
 * STUB CONTRACT (owner: tools helper replaces the body, keeps the signature).
 * First-party tool packs, written against sdk/ and run in-process.
 * @module
 */
import type { PluginDefinition } from "../sdk/mod.ts";

/** The built-in plugins: fs, exec, user, todo, web. */
export const corePlugins: PluginDefinition[] = [];
