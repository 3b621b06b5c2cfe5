/**
 * Context compaction: when a conversation nears the model's context window (or the server
 * reports an overflow, or the user types `/compact [focus]`), the older turns are replaced by a
 * summary the model writes; the last turns and the todo list stay verbatim.
 *
 * - Token accounting: {@link estimateTokens} (characters / 4, core/engine/context.ts `CHARS_PER_TOKEN`,
 *   over the request's messages and tool schemas), or the server's own count from the last
 *   `usage` when that is larger. The window is the `models:` table's `context_window`, else a
 *   window an overflow error named, else `DEFAULT_CONTEXT_WINDOW` (core/config/models.ts).
 * - Automatic: before a turn's first request when the estimate passes
 *   {@link COMPACT_AT} of the usable window (window minus the answer reserve).
 * - The result is two messages — the summary as a user message (with the todo list) and a short
 *   assistant acknowledgement — followed by the kept turns. The transcript records a
 *   `compaction` line with the new history, so `--continue` resumes from the compacted state.
 * @module
 */
import type { ChatMessage } from "../transcript/types.ts";
import { answerReserve, CHARS_PER_TOKEN } from "./context.ts";
import type { ModelClient, ModelResponse } from "./types.ts";

/** Compact when the estimate passes this share of the usable window. */
export const COMPACT_AT = 0.8;
/** Turns kept verbatim (the newest ones). */
export const KEEP_TURNS = 2;
/** Longest text of one message put into the summary request (characters). */
const MAX_PART = 4000;

/** What a compaction did. */
export interface CompactionResult {
  compacted: boolean;
  /** Why nothing was compacted. */
  reason?: string;
  /** Turns summarised. */
  turns: number;
  /** Estimated tokens before and after. */
  before: number;
  after: number;
  summary?: string;
  /** Usage of the summary request. */
  usage?: ModelResponse["usage"];
}

/**
 * Estimated tokens of a request: its messages (and tool schemas: `extra`, their JSON text or its
 * length in characters) at 4 characters per token.
 */
export function estimateTokens(messages: ChatMessage[], extra: string | number = ""): number {
  let chars = typeof extra === "number" ? extra : extra.length;
  for (const m of messages) {
    chars += 8;
    chars += typeof m.content === "string"
      ? m.content.length
      : m.content
      ? JSON.stringify(m.content).length
      : 0;
    for (const c of m.tool_calls ?? []) {
      chars += c.function.name.length + c.function.arguments.length;
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The estimate above which a turn compacts first (see the module doc). */
export function compactThreshold(windowTokens: number, maxOutputTokens?: number): number {
  return Math.floor((windowTokens - answerReserve(windowTokens, maxOutputTokens)) * COMPACT_AT);
}

/** Indices where turns start (a user message that does not continue the previous turn). */
export function turnStarts(messages: ChatMessage[]): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "user" && (i === 0 || messages[i - 1].role !== "user")) out.push(i);
  });
  return out;
}

function clip(s: string): string {
  return s.length > MAX_PART ? `${s.slice(0, MAX_PART / 2)}\n[…]\n${s.slice(-MAX_PART / 2)}` : s;
}

function asText(m: ChatMessage): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content.map((p: { type?: string; text?: string }) =>
      p.type === "text" ? p.text ?? "" : `[${p.type}]`
    ).join("\n");
  }
  return "";
}

/** The older turns as plain text for the summary request. */
export function transcriptText(messages: ChatMessage[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === "user") lines.push(`USER: ${clip(asText(m))}`);
    else if (m.role === "assistant") {
      const t = asText(m);
      if (t) lines.push(`ASSISTANT: ${clip(t)}`);
      for (const c of m.tool_calls ?? []) {
        lines.push(`TOOL CALL ${c.function.name}: ${clip(c.function.arguments)}`);
      }
    } else if (m.role === "tool") lines.push(`TOOL RESULT: ${clip(asText(m))}`);
  }
  return lines.join("\n\n");
}

/** The system prompt of the summary request. */
export const SUMMARY_INSTRUCTIONS =
  "You compress a coding agent's conversation so it can continue with less context. Write a " +
  "concise summary of the conversation below for the agent itself: the user's goals and " +
  "requests, decisions made, files read and changed (with paths), commands run and their " +
  "outcomes, errors met and how they were solved, and what remains to do. Keep exact names, " +
  "paths, identifiers and numbers. Do not invent anything. Answer with the summary only.";

/**
 * Summarises all but the last `keep` turns of `messages`. Returns null when there is nothing
 * older than the kept turns. `end` excludes a running turn's messages (kept verbatim after).
 * @throws what the model client throws (the caller keeps the history unchanged).
 */
export async function summarise(args: {
  client: ModelClient;
  model: string;
  messages: ChatMessage[];
  /** Messages from here on are the current turn (never summarised); default: the end. */
  end?: number;
  keep?: number;
  focus?: string;
  /** The todo list, verbatim, kept in the summary message. */
  todo?: string;
  signal?: AbortSignal;
  /** Called once the turns to summarise are known, before the summary request is sent. */
  onStart?: (turns: number) => void;
}): Promise<
  {
    messages: ChatMessage[];
    summary: string;
    turns: number;
    turnStart: number;
    usage?: ModelResponse["usage"];
  } | null
> {
  const end = args.end ?? args.messages.length;
  const starts = turnStarts(args.messages.slice(0, end));
  const keep = Math.max(0, args.keep ?? KEEP_TURNS);
  if (starts.length <= keep || !starts.length) return null;
  const upTo = keep === 0 ? end : starts[starts.length - keep];
  if (upTo <= 0) return null;
  const older = args.messages.slice(0, upTo);
  if (!older.length) return null;
  const turns = turnStarts(older).length || 1;
  const focus = args.focus ? `\n\nFocus the summary on: ${args.focus}` : "";
  args.onStart?.(turns);
  const res = await args.client.complete(
    {
      model: args.model,
      messages: [
        { role: "system", content: SUMMARY_INSTRUCTIONS + focus },
        { role: "user", content: transcriptText(older) },
      ],
    },
    {},
    args.signal,
  );
  const summary = (res.text ?? "").trim();
  if (!summary) throw new Error("the model returned an empty summary");
  const head: ChatMessage[] = [
    {
      role: "user",
      content:
        `[Summary of the earlier conversation (${turns} turn(s), compacted to save context)]\n\n${summary}` +
        (args.todo ? `\n\nCurrent todo list (verbatim):\n${args.todo}` : ""),
    },
    { role: "assistant", content: "Understood — I will continue from this summary." },
  ];
  const rest = args.messages.slice(upTo);
  return {
    messages: [...head, ...rest],
    summary,
    turns,
    turnStart: head.length + (end - upTo),
    usage: res.usage,
  };
}
