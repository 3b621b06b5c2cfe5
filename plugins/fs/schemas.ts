/**
 * The `fs` tools' run-time input schemas: the generated JSON Schemas of
 * core/tools/builtin_tools.gen.json, typed by the zod schemas of ./inputs.ts (imported as types
 * only, so zod does not load with the tools; core/tools/lazy.ts `builtinInputs`).
 * @module
 */
import { builtinInputs } from "../../core/tools/lazy.ts";
import type { FS_INPUTS } from "./inputs.ts";

/** `fsInput("fs_read")`: that tool's generated JSON Schema, typed as its zod input. */
export const fsInput = builtinInputs<typeof FS_INPUTS>("plugins");
