/**
 * Assembling one streamed Chat Completions response (OpenAI's streaming format: a
 * `chat.completion.chunk` per SSE event, the model's output in `choices[0].delta`) into a
 * {@link ModelResponse}:
 * - tool-call deltas are accumulated by `index` ({@link toolSlot}: a new `id` at an index in use,
 *   or a new function name after complete JSON arguments, starts a new call) and returned in
 *   wire-index order ({@link toolList});
 * - `reasoning_details` blocks (OpenRouter) are merged by `index` ({@link mergeDetails});
 * - `usage` is taken with missing counts as 0 ({@link pickUsage});
 * - a whole `chat.completion` (a server that ignored `stream: true`) is replayed as one chunk
 *   ({@link completionAsChunks}).
 *
 * The SSE decoding itself (`data:` lines, `[DONE]`, in-stream `error` payloads) is `npm:openai`'s
 * `Stream.fromSSEResponse`, loaded lazily with the SDK's error classes by {@link loadSdk}.
 * @module
 */
import type OpenAI from "openai";
import type { ModelResponse, ModelToolCall, ModelUsage } from "./types.ts";

/** The parts of `npm:openai` the provider uses: the SSE decoder and the error classes. */
export interface Sdk {
  Stream: typeof import("openai/core/streaming").Stream;
  APIError: typeof import("openai/core/error").APIError;
}
let sdk: Promise<Sdk> | undefined;
/**
 * Loads the SDK's SSE decoder and error classes (~3 ms) rather than the `OpenAI` client
 * class, whose import (every API resource) costs 45–75 ms on this machine and would eat
 * the start-up budget (process start → first request ≤ 150 ms).
 */
export function loadSdk(): Promise<Sdk> {
  sdk ??= Promise.all([import("openai/core/streaming"), import("openai/core/error")]).then((
    [s, e],
  ) => ({ Stream: s.Stream, APIError: e.APIError }));
  return sdk;
}

/** One tool call being accumulated; `index` is the wire index, `seq` the order of appearance. */
export interface ToolAcc {
  index: number;
  seq: number;
  id?: string;
  name: string;
  arguments: string;
  extra?: Record<string, unknown>;
}

/**
 * Merges streamed `reasoning_details` items into `into`: items with the same `index` (else the
 * same position) are one block whose `text`/`summary`/`data` strings are concatenated.
 */
export function mergeDetails(into: Record<string, unknown>[], items: unknown[]): void {
  items.forEach((item, pos) => {
    if (!item || typeof item !== "object") return;
    const it = item as Record<string, unknown>;
    const at = typeof it.index === "number" ? into.findIndex((d) => d.index === it.index) : -1;
    const cur = at >= 0 ? into[at] : typeof it.index !== "number" ? into[pos] : undefined;
    if (!cur || (typeof it.index !== "number" && typeof cur.index === "number")) {
      into.push({ ...it });
      return;
    }
    for (const [k, v] of Object.entries(it)) {
      const old = cur[k];
      cur[k] = typeof v === "string" && typeof old === "string" &&
          (k === "text" || k === "summary" || k === "data")
        ? old + v
        : v;
    }
  });
}

/**
 * The accumulator a tool-call delta belongs to. Keyed by `index` (its position in the delta when
 * absent); a delta carrying an `id` different from the one at that index starts a new call, and
 * so does a delta without ids that names a function after the current call's arguments are
 * complete JSON (servers that send every parallel call at index 0).
 */
export function toolSlot(
  tools: ToolAcc[],
  slots: Map<number, ToolAcc>,
  tc: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall,
  pos: number,
): ToolAcc {
  const index = typeof tc.index === "number" ? tc.index : pos;
  const cur = slots.get(index);
  const args = argumentsText((tc.function as { arguments?: unknown } | undefined)?.arguments);
  const fresh = !cur ||
    (!!tc.id && !!cur.id && tc.id !== cur.id) ||
    (!tc.id && !!tc.function?.name && !!cur.name && args.trimStart().startsWith("{") &&
      isCompleteJson(cur.arguments));
  if (!fresh) {
    if (tc.id) cur.id ??= tc.id;
    return cur;
  }
  const acc: ToolAcc = { index, seq: tools.length, name: "", arguments: "" };
  if (tc.id) acc.id = tc.id;
  tools.push(acc);
  slots.set(index, acc);
  return acc;
}

/**
 * Tool-call `arguments` as text. The OpenAI format sends a JSON string; llama.cpp's server and
 * Ollama's OpenAI endpoint may send the parsed JSON object (or an array, or null). A string is
 * returned as it is, null/undefined as "", anything else as its JSON text — never
 * `"[object Object]"`.
 */
export function argumentsText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "";
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return String(v);
  }
}

/** Whether `s` is non-blank text that parses as JSON. */
export function isCompleteJson(s: string): boolean {
  if (!s.trim()) return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** A server that ignored `stream: true` and sent a whole `chat.completion`: replay it as one chunk. */
export async function* completionAsChunks(
  c: OpenAI.ChatCompletion,
): AsyncGenerator<OpenAI.ChatCompletionChunk> {
  const choice = c.choices?.[0];
  const msg = (choice?.message ?? {}) as OpenAI.ChatCompletionMessage & {
    reasoning_content?: string;
    reasoning?: string;
    reasoning_details?: unknown[];
  };
  yield {
    id: c.id,
    object: "chat.completion.chunk",
    created: c.created,
    model: c.model,
    choices: choice
      ? [{
        index: 0,
        delta: {
          content: msg.content ?? undefined,
          ...(msg.reasoning_content
            ? { reasoning_content: msg.reasoning_content }
            : msg.reasoning
            ? { reasoning: msg.reasoning }
            : {}),
          ...(msg.reasoning_details ? { reasoning_details: msg.reasoning_details } : {}),
          tool_calls: msg.tool_calls?.flatMap((t, index) =>
            t.type === "function" ? [{ ...t, index, type: "function" as const }] : []
          ),
        } as OpenAI.ChatCompletionChunk.Choice.Delta,
        finish_reason: choice.finish_reason,
      }]
      : [],
    usage: c.usage,
  };
}

/** OpenAI `usage` with the three token counts (missing ones 0, total their sum). */
export function pickUsage(u: OpenAI.CompletionUsage): ModelUsage {
  return {
    prompt_tokens: u.prompt_tokens ?? 0,
    completion_tokens: u.completion_tokens ?? 0,
    total_tokens: u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0),
  };
}

/** The calls in wire-index order (calls sharing an index in the order they appeared). */
export function toolList(tools: ToolAcc[], attemptNo: number): ModelToolCall[] {
  return [...tools].sort((a, b) => a.index - b.index || a.seq - b.seq).map((t) => ({
    id: t.id ?? `call_coyote_${attemptNo}_${t.seq}`,
    ...(t.extra ? { extra_content: t.extra } : {}),
    name: t.name,
    arguments: t.arguments,
  }));
}

/**
 * A `finish_reason` in OpenAI's words. Anthropic-compatible servers (and proxies in front of
 * them) send Anthropic's `stop_reason` values: `max_tokens` is OpenAI's `length` (the output
 * limit cut the answer, so its tool calls are refused, core/engine/truncated.ts), `tool_use`
 * is `tool_calls`, `end_turn` / `stop_sequence` are `stop`; Gemini's upper-case `MAX_TOKENS`
 * and `STOP` likewise. Anything else passes unchanged.
 */
export function openaiFinishReason(raw: string): string {
  switch (raw.toLowerCase()) {
    case "max_tokens":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "end_turn":
    case "stop_sequence":
    case "stop":
      return "stop";
    default:
      return raw;
  }
}

/** A response with nothing in it (what a request cancelled before any chunk carries). */
export function emptyResponse(): ModelResponse {
  return { text: "", reasoning: "", toolCalls: [], finishReason: null };
}
