/**
 * The zod schemas of the `skill__*` tools' inputs. Only scripts/gen_tools.ts (which converts them
 * into core/tools/builtin_tools.gen.json) and tests load this module; ./tool_defs.ts imports it
 * with `import type` and takes the generated JSON Schemas at run time (core/tools/lazy.ts), so
 * loading the tools never loads zod.
 * @module
 */
import { z } from "zod";

const NAME_INPUT = z.object({ name: z.string().describe("skill name from the skill index") });

/** The schemas by tool name. */
export const SKILL_INPUTS = {
  skill__list: z.object({}),
  skill__load: NAME_INPUT,
  skill__unload: NAME_INPUT,
};
