/**
 * A child's result for its parent: the final answer, condensed when it is longer than the
 * agent's `summarization_threshold` (characters). Condensing keeps the opening (where answers
 * state their conclusion) and the ending (where they list findings and markers such as
 * `EXPLORE_COMPLETE`), and says how much was left out and where the full text is (the child's
 * transcript). No extra model request is made.
 * @module
 */
import { headText, tailText } from "../util/text.ts";

/** The text the parent sees; `full` is kept in the child's transcript at `transcript`. */
export function condense(full: string, threshold: number, transcript: string): string {
  if (full.length <= threshold) return full;
  const head = Math.floor(threshold * 0.7);
  const tail = Math.max(0, threshold - head - 200);
  const omitted = full.length - head - tail;
  return `${
    headText(full, head)
  }\n\n[… ${omitted} characters condensed; the full answer is in ${transcript} …]\n\n${
    tail ? tailText(full, tail) : ""
  }`;
}

/**
 * Why a child's turn ended short of its answer, for the parent's result line (`""` for
 * `end_turn`, `cancelled` or none): the limit that stopped it, as the top level's stop reason
 * says it (core/engine/loop.ts `max_turn_requests`, `max_tokens`, `refusal`, the budget's
 * `max_budget`).
 */
export function stopNote(reason: string | undefined): string {
  const why: Record<string, string> = {
    max_turn_requests: "its max_turns model requests ran out",
    max_tokens: "the model's output hit max_tokens",
    max_budget: "the budget ran out",
    refusal: "the model refused",
  };
  return reason && why[reason]
    ? ` (stopped: ${reason}, ${why[reason]}; its answer may be unfinished)`
    : "";
}
