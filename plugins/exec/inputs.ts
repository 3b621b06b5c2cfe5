/**
 * The zod schema of `execute_command`'s input. Only scripts/gen_tools.ts (which converts it into
 * core/tools/builtin_tools.gen.json) and tests load this module; ./mod.ts imports it with
 * `import type` and takes the generated JSON Schema at run time (core/tools/lazy.ts), so loading
 * the tool never loads zod.
 * @module
 */
import { z } from "zod";

/** `execute_command {command, timeout_ms?}`. */
export const ExecuteCommandInput = z.object({
  command: z.string().min(1).describe("Shell command"),
  timeout_ms: z.number().int().min(1).optional().describe("Timeout in ms"),
});

/** The schemas by tool name. */
export const EXEC_INPUTS = { execute_command: ExecuteCommandInput };
