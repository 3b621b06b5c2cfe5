/**
 * The agent engine, re-exported from its modules under core/engine/:
 * - `loop.ts` — the turn loop (`Engine`, the LLM `AgentRunner`);
 * - `schedule.ts` — tool scheduling (parallel batches by the tools' `concurrency`);
 * - `prepare.ts` — argument validation, announcement, repeat refusal;
 * - `gate.ts` — the guard gate (policy verdicts, permission asks, remembered rules);
 * - `tool_hooks.ts` — the `PreToolUse` / `PostToolUse` hooks of a call;
 * - `execute.ts` — running one call (context, cancel grace, results);
 * - `prompt.ts` — prompt content and request messages;
 * - `types.ts` — options, limits and the shared per-turn context.
 * @module
 */
export { emptyUsage, Engine } from "./loop.ts";
export { promptText, promptToContent } from "./prompt.ts";
export { ruleFor } from "./gate.ts";
export { runsInParallel } from "./schedule.ts";
export {
  type BeforeTurnEnd,
  CANCEL_GRACE_MS,
  type EngineHooks,
  type EngineOptions,
  MAX_TOOL_OUTPUT,
  type ModelClient,
  type ModelResponse,
  type PolicyLike,
  REPEAT_LIMIT,
} from "./types.ts";
