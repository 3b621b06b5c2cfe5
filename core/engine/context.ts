/**
 * Fitting the model history into the model's context window (tokens are estimated as
 * characters / {@link CHARS_PER_TOKEN}; no tokenizer is loaded).
 *
 * - {@link toolOutputCap}: the longest tool result (characters) passed to the model — a quarter of
 *   the window left after the answer's reserve, at most {@link MAX_TOOL_OUTPUT}, at least
 *   {@link MIN_TOOL_OUTPUT}. A 32k-token model gets ~28 000 characters per result, not 100 000.
 * - {@link capText}: cuts the middle out of a long text (head ¾, tail ¼: the start of a file and
 *   the end of a command's output both survive) with a marker saying how much was cut.
 * - {@link shrinkToolResults}: after a context-overflow error, shrinks the largest tool results of
 *   the messages from an index on (the current turn) so the request can be retried once.
 * Full compaction (summarising old turns) is not done here.
 * @module
 */
import type { ChatMessage } from "../transcript/types.ts";
import { DEFAULT_CONTEXT_WINDOW } from "../config/models.ts";
import { headText, tailText } from "../util/text.ts";

/** Characters per token for estimates (OpenAI's rule of thumb for English and code). */
export const CHARS_PER_TOKEN = 4;
/** Upper bound of one tool result passed to the model (characters), whatever the window. */
export const MAX_TOOL_OUTPUT = 100_000;
/** Lower bound of the per-result cap (characters), so a tiny window still sees something. */
export const MIN_TOOL_OUTPUT = 1_000;

/** Tokens reserved for the answer: `maxOutputTokens`, else an eighth of the window, ≤ 8192. */
export function answerReserve(windowTokens: number, maxOutputTokens?: number): number {
  return Math.min(
    maxOutputTokens ?? Math.min(Math.floor(windowTokens / 8), 8192),
    windowTokens / 2,
  );
}

/** The per-result cap in characters for a window of `windowTokens` (see the module doc). */
export function toolOutputCap(windowTokens = DEFAULT_CONTEXT_WINDOW, maxOutputTokens?: number) {
  const usable = windowTokens - answerReserve(windowTokens, maxOutputTokens);
  const cap = Math.floor(usable * CHARS_PER_TOKEN / 4);
  return Math.max(MIN_TOOL_OUTPUT, Math.min(MAX_TOOL_OUTPUT, cap));
}

/** `text` unchanged when it fits `cap` characters, else head + marker + tail within about `cap`. */
export function capText(text: string, cap: number, why = "to fit the model's context window") {
  if (text.length <= cap) return text;
  const head = Math.floor(cap * 0.75);
  const tail = Math.max(0, cap - head);
  const cut = text.length - head - tail;
  return `${headText(text, head)}\n[… ${cut} of ${text.length} characters cut ${why}; ` +
    `ask for a smaller part if you need them …]\n${tail ? tailText(text, tail) : ""}`;
}

/** Tool messages capped to `cap` characters (a loaded history; the input is not modified). */
export function capToolResults(messages: ChatMessage[], cap: number): ChatMessage[] {
  return messages.map((m) =>
    m.role === "tool" && typeof m.content === "string" && m.content.length > cap
      ? { ...m, content: capText(m.content, cap) }
      : m
  );
}

/**
 * Shrinks, in place, the tool results of `messages[from..]` that are longer than the target: a
 * quarter of the largest one, at most the cap for `windowTokens`, at least {@link MIN_TOOL_OUTPUT}.
 * Returns the changed messages' `tool_call_id`s and new contents (empty when nothing could shrink).
 */
export function shrinkToolResults(
  messages: ChatMessage[],
  from: number,
  windowTokens?: number,
): { tool_call_id: string; content: string }[] {
  const tools = messages.slice(from).filter((m) =>
    m.role === "tool" && typeof m.content === "string" && m.content.length > MIN_TOOL_OUTPUT
  );
  if (!tools.length) return [];
  const largest = Math.max(...tools.map((m) => (m.content as string).length));
  const target = Math.max(
    MIN_TOOL_OUTPUT,
    Math.min(toolOutputCap(windowTokens), Math.floor(largest / 4)),
  );
  const changed: { tool_call_id: string; content: string }[] = [];
  for (const m of tools) {
    const c = m.content as string;
    if (c.length <= target) continue;
    m.content = capText(c, target, "after the model server reported a context overflow");
    changed.push({ tool_call_id: m.tool_call_id ?? "", content: m.content });
  }
  return changed;
}

/**
 * After a context-overflow error: shrinks the tool results of the current turn
 * (`messages[turnStart..]`), or of the whole history when the turn has none to shrink (a resumed
 * session whose old results no longer fit), and records each new content in the transcript
 * (`tool_result_update`) so `--continue` loads the shrunk history. True when anything shrank.
 */
export function shrinkForOverflow(
  messages: ChatMessage[],
  turnStart: number,
  windowTokens: number | undefined,
  transcript?: { toolResultUpdate(id: string, content: string): void },
): boolean {
  let changed = shrinkToolResults(messages, turnStart, windowTokens);
  if (!changed.length) changed = shrinkToolResults(messages, 0, windowTokens);
  for (const c of changed) transcript?.toolResultUpdate(c.tool_call_id, c.content);
  return changed.length > 0;
}
