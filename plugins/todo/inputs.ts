/**
 * The zod schema of `todo__write`'s input. Only scripts/gen_tools.ts (which converts it into
 * core/tools/builtin_tools.gen.json) and tests load this module; ./mod.ts imports it with
 * `import type` and takes the generated JSON Schema at run time (core/tools/lazy.ts), so loading
 * the tool never loads zod.
 * @module
 */
import { z } from "zod";

/** `todo__write {todos: [{content, status, priority?}]}`. */
export const TodoWriteInput = z.object({
  todos: z.array(z.object({
    content: z.string().min(1),
    status: z.enum(["pending", "in_progress", "completed"]),
    priority: z.enum(["high", "medium", "low"]).optional(),
  })),
});

/** The schemas by tool name. */
export const TODO_INPUTS = { todo__write: TodoWriteInput };
