/**
 * The `user` tool pack: `user__select`, `user__confirm`, `user__input`,
 * `user__checkbox` (issue 2, "Core tools"; the unattended-mode design note).
 *
 * With a human present (`ctx.host.askUser`: REPL prompt or ACP client) the
 * question is asked and the answer returned as text. Headless (no `askUser`),
 * or when asking fails, the tool returns at once — never blocks — the JSON
 * text `{"needs_human": true, "action", "question", "options", "guidance"}`
 * (plus `"default"` when given), so the model can proceed with a sensible
 * default, report the question in its final answer, or stop.
 * @module
 */
import { builtinInputs } from "../../core/tools/lazy.ts";
import type { USER_INPUTS } from "./inputs.ts";
import { definePlugin, defineTool } from "../../sdk/mod.ts";
import type { ToolContext, ToolResult, UserQuestion } from "../../sdk/mod.ts";

/** What the model is told when nobody can answer. */
export const HEADLESS_GUIDANCE =
  "No human is available (headless run); this question was not shown to anyone. " +
  "Proceed with a sensible default if one is safe, and state the question and the choice you made " +
  "in your final answer; if no safe default exists, stop and report what you need.";

/** The headless answer: `{"needs_human": true, ...}` as JSON text. */
export function needsHuman(q: UserQuestion, guidance = HEADLESS_GUIDANCE): string {
  const body: Record<string, unknown> = {
    needs_human: true,
    action: q.action,
    question: q.question,
    options: q.options ?? [],
    guidance,
  };
  if (q.default !== undefined) body.default = q.default;
  return JSON.stringify(body);
}

function format(q: UserQuestion, answer: string | string[] | boolean): string {
  switch (q.action) {
    case "confirm":
      return answer === true || answer === "yes" ? "yes" : "no";
    case "checkbox":
      return JSON.stringify(Array.isArray(answer) ? answer : [String(answer)]);
    default:
      return Array.isArray(answer) ? answer.join(", ") : String(answer);
  }
}

async function ask(q: UserQuestion, ctx: ToolContext): Promise<ToolResult> {
  if (!ctx.host?.askUser) return { content: needsHuman(q), rawOutput: { needs_human: true } };
  try {
    const answer = await ctx.host.askUser(q, ctx.signal);
    return { content: format(q, answer), rawOutput: { answer } };
  } catch (err) {
    if (ctx.signal.aborted) {
      return { content: "cancelled: the question was not answered", isError: true };
    }
    const why = err instanceof Error ? err.message : String(err);
    return {
      content: needsHuman(q, `Asking the human failed (${why}). ${HEADLESS_GUIDANCE}`),
      rawOutput: { needs_human: true },
    };
  }
}

/** The generated JSON Schemas of the `user` tools (core/tools/lazy.ts). */
const userInput = builtinInputs<typeof USER_INPUTS>("plugins");

/** `user__select {question, options}` → the chosen option. */
export const userSelectTool = defineTool({
  name: "user__select",
  description: "Ask the user to pick one option. Headless: returns needs_human JSON at once.",
  input: userInput("user__select"),
  kind: "other",
  readOnly: true,
  title: (i) => i.question,
  run: (i, ctx) => ask({ action: "select", question: i.question, options: i.options }, ctx),
});

/** `user__confirm {question, default?}` → `yes` or `no`. */
export const userConfirmTool = defineTool({
  name: "user__confirm",
  description: "Ask the user a yes/no question. Headless: returns needs_human JSON at once.",
  input: userInput("user__confirm"),
  kind: "other",
  readOnly: true,
  title: (i) => i.question,
  run: (i, ctx) => ask({ action: "confirm", question: i.question, default: i.default }, ctx),
});

/** `user__input {question, default?}` → free text. */
export const userInputTool = defineTool({
  name: "user__input",
  description: "Ask the user for free text. Headless: returns needs_human JSON at once.",
  input: userInput("user__input"),
  kind: "other",
  readOnly: true,
  title: (i) => i.question,
  run: (i, ctx) => ask({ action: "input", question: i.question, default: i.default }, ctx),
});

/** `user__checkbox {question, options}` → JSON array of the chosen options. */
export const userCheckboxTool = defineTool({
  name: "user__checkbox",
  description:
    "Ask the user to pick any number of options. Headless: returns needs_human JSON at once.",
  input: userInput("user__checkbox"),
  kind: "other",
  readOnly: true,
  title: (i) => i.question,
  run: (i, ctx) => ask({ action: "checkbox", question: i.question, options: i.options }, ctx),
});

/** The `user` plugin. */
export const userPlugin = definePlugin({
  name: "user",
  version: "1.0.0",
  description: "Ask the human (or report that nobody is there).",
  tools: [userSelectTool, userConfirmTool, userInputTool, userCheckboxTool],
});

export default userPlugin;
