/**
 * The zod schemas of the `agent__*` tools' inputs. Only scripts/gen_tools.ts (which converts them
 * into core/tools/builtin_tools.gen.json) and tests load this module; ./tools.ts imports it with
 * `import type` and takes the generated JSON Schemas at run time (core/tools/lazy.ts), so loading
 * the tools never loads zod.
 * @module
 */
import { z } from "zod";

const ID_INPUT = z.object({ id: z.string().min(1) });

/** The schemas by tool name. */
export const SUPERVISOR_INPUTS = {
  agent__spawn: z.object({
    agent: z.string().min(1).describe("agent name (see agent__list)"),
    prompt: z.string().min(1).describe("the task, self-contained"),
    worktree: z.boolean().optional().describe(
      "run it in its own git worktree; its change comes back as a patch applied to your tree, or reported with its conflicts (default: a coder spawned while another coder runs)",
    ),
  }),
  agent__check: ID_INPUT,
  agent__collect: z.object({
    id: z.string().min(1).optional(),
    timeout_ms: z.number().int().positive().max(3_600_000).optional(),
  }),
  agent__cancel: ID_INPUT,
  agent__send: z.object({
    agent_id: z.string().min(1).describe("the id agent__spawn returned"),
    message: z.string().min(1).describe("the follow-up, e.g. a reviewer's complaints verbatim"),
  }),
  agent__list: z.object({}),
};
