/**
 * The `todo` tool pack: `todo__write {todos}` (issue 2, "Core tools"). The
 * model sends its whole plan each time (it replaces the list, as Claude
 * Code's TodoWrite); the result's `plan` makes the engine emit an ACP `plan`
 * update (`PlanEntry[]`, priority defaulting to `medium`).
 * @module
 */
import { builtinInputs } from "../../core/tools/lazy.ts";
import type { TODO_INPUTS } from "./inputs.ts";
import { definePlugin, defineTool } from "../../sdk/mod.ts";
import type { PlanItem, ToolResult } from "../../sdk/mod.ts";

/** `todo__write {todos: [{content, status, priority?}]}`; see the module doc. */
export const todoWriteTool = defineTool({
  name: "todo__write",
  description:
    "Replace your task list (send the whole list each time). Use for multi-step work; keep one item in_progress.",
  input: builtinInputs<typeof TODO_INPUTS>("plugins")("todo__write"),
  kind: "think",
  readOnly: true,
  title: (i) => `Update plan (${i.todos.length} items)`,
  run(input): ToolResult {
    const plan: PlanItem[] = input.todos.map((t) => ({
      content: t.content,
      status: t.status,
      priority: t.priority ?? "medium",
    }));
    const count = (s: PlanItem["status"]) => plan.filter((p) => p.status === s).length;
    const content = plan.length === 0
      ? "Todo list cleared."
      : `Todo list updated: ${count("completed")} completed, ${count("in_progress")} in progress, ${
        count("pending")
      } pending.`;
    return { content, plan, rawOutput: { todos: plan } };
  },
});

/** The `todo` plugin. */
export const todoPlugin = definePlugin({
  name: "todo",
  version: "1.0.0",
  description: "The model's plan, shown as ACP plan updates.",
  tools: [todoWriteTool],
});

export default todoPlugin;
