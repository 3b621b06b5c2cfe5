/**
 * Usage roll-up of a supervised turn (core/supervisor/supervisor.ts): usage records summed and a
 * turn's result with its children's usage, denied actions and summaries.
 * @module
 */
import type { AgentRunSummary, DeniedAction, TurnResult, TurnUsage } from "../protocol/types.ts";

/** Sums usage records. */
export function addUsage(into: TurnUsage, u: TurnUsage): void {
  into.prompt_tokens += u.prompt_tokens;
  into.completion_tokens += u.completion_tokens;
  into.total_tokens += u.total_tokens;
  into.requests += u.requests;
}

/**
 * A turn's result with its children's rolled up (from ./supervisor.ts `Supervisor.endTurn`): their usage
 * added, their denied actions appended, their summaries as `agents`. Unchanged without children.
 */
export function withChildRuns(
  result: TurnResult,
  kids: { usage: TurnUsage; denied: DeniedAction[]; agents: AgentRunSummary[] },
): TurnResult {
  if (!kids.agents.length) return result;
  const usage = { ...result.usage };
  addUsage(usage, kids.usage);
  return {
    ...result,
    usage,
    denied: [...result.denied, ...kids.denied],
    agents: kids.agents,
  };
}

/** A usage record of nothing. */
export function zeroUsage(): TurnUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 0 };
}
