/**
 * The zod schemas of the `user` tools' inputs. Only scripts/gen_tools.ts (which converts them into
 * core/tools/builtin_tools.gen.json) and tests load this module; ./mod.ts imports it with
 * `import type` and takes the generated JSON Schemas at run time (core/tools/lazy.ts), so loading
 * the tools never loads zod.
 * @module
 */
import { z } from "zod";

const question = z.string().min(1).describe("Question for the user");
const options = z.array(z.string()).min(1).describe("Choices");

/** The schemas by tool name. */
export const USER_INPUTS = {
  /** `user__select {question, options}`. */
  user__select: z.object({ question, options }),
  /** `user__confirm {question, default?}`. */
  user__confirm: z.object({
    question,
    default: z.boolean().optional().describe("Default answer"),
  }),
  /** `user__input {question, default?}`. */
  user__input: z.object({ question, default: z.string().optional().describe("Default answer") }),
  /** `user__checkbox {question, options}`. */
  user__checkbox: z.object({ question, options }),
};
