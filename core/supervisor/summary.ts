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
