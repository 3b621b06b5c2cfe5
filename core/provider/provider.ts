/**
 * The model provider: OpenAI Chat Completions (streaming, with tools) through
 * `npm:openai`, against any OpenAI-compatible server (OpenAI, Ollama, vLLM,
 * LM Studio, OpenRouter, …).
 *
 * - Streams `delta.content` to `onText` and reasoning deltas (`delta.reasoning_content`,
 *   vLLM/DeepSeek; `delta.reasoning`, OpenRouter/Ollama) to `onReasoning`; the response says
 *   which field the reasoning came in (`reasoningField`) so the caller can send it back there.
 *   Structured reasoning (`delta.reasoning_details`, OpenRouter: signed/encrypted blocks that
 *   Anthropic and Gemini models need back with tool calls) is merged by `index` into
 *   `reasoningDetails`; a tool call's `extra_content` (Gemini's `thought_signature`) is kept on
 *   the call. Both are to be sent back unchanged.
 * - Tool-call deltas are accumulated by `index` (id and name usually only in the first delta,
 *   arguments split across many). A delta with a **new `id`** at an index already in use starts
 *   a new call (servers that send every parallel call at index 0, or without an index), as does
 *   a new function name after complete JSON arguments when no ids are sent.
 * - The history is sent through core/provider/messages.ts `wireMessages` (no empty assistant messages,
 *   alternating user turns).
 * - Asks for `stream_options: { include_usage: true }` and returns the final `usage`. A server
 *   that rejects an optional field (HTTP 400/422 naming `stream_options`, `temperature`, `top_p`,
 *   `reasoning_effort` or `reasoning_content`, e.g. Mistral's 422 "extra inputs are not permitted") gets the request
 *   again without it, once, and this provider (one per session) leaves it out from then on;
 *   `streamOptions: false` (config `provider.stream_options: false`) never sends it.
 * - Retries (our own loop; the SDK's is off) 429, 408, 5xx and connection failures that
 *   happen **before any content of that response has streamed**, with exponential
 *   backoff and jitter, honouring `retry-after-ms` (ms) and `retry-after` (seconds or an
 *   HTTP date) and the `x-should-retry` header (as the OpenAI SDKs do). A `retry-after`
 *   above {@link MAX_RETRY_AFTER_MS} is not waited for: the error is reported at once.
 *   A DNS failure or a refused connection is retried at most once ({@link MAX_UNREACHABLE_RETRIES}).
 *   Each retry is announced through `notify` (one line, e.g. to stderr).
 * - Error text comes from every error shape (core/provider/errors.ts). An error event inside the
 *   stream that carries a 4xx code is a rejected request (`bad_request`), not retried. A prompt
 *   over the model's window (`context_length_exceeded`, "maximum context length", HTTP 413) is a
 *   `context_overflow` error carrying the window the server named, if any.
 * - A stream that ends without a `finish_reason` or breaks after content has been shown
 *   is a `stream_cut` error carrying the partial response; it is never retried.
 * - `timeoutMs` bounds the wait for the response headers and every silence between two
 *   stream chunks (an idle timeout, so long answers are not cut); a timeout is not retried.
 *
 * From `npm:openai` we use the wire types, the SSE decoder (`Stream.fromSSEResponse`: `[DONE]`,
 * in-stream `error` payloads) and the error classes (`APIError.generate`); the request itself
 * is a plain `fetch`, because importing the `OpenAI` client class costs 45–75 ms (it pulls in
 * every API resource) against ~3 ms for these modules. They are loaded lazily;
 * {@link createProvider} starts loading them in the background, so importing this module is
 * cheap. The request carries `Authorization: Bearer <apiKey>` plus `headers` from config.
 * @module
 */
import type OpenAI from "openai";
import { wireMessages } from "./messages.ts";
import {
  contextLimitFrom,
  errorText,
  httpErrorText,
  inStreamStatus,
  isContextOverflow,
  type OptionalField,
  rejectedField,
  transportKind,
} from "./errors.ts";

/** Connection settings for one provider (see core/config/config.ts `resolveProvider`). */
export interface ProviderConfig {
  /** e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`. */
  baseURL: string;
  /** Sent as `Authorization: Bearer …`; a placeholder for local servers without auth. */
  apiKey: string;
  model: string;
  /** Wait for response headers and for each next stream chunk, in ms. */
  timeoutMs: number;
  /** Retries after the first attempt (0 = one attempt only). */
  maxRetries: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** First backoff delay in ms (doubles per retry, capped at 8 s, 0–25 % jitter off). Default 500. */
  retryBaseMs?: number;
  /** Send `stream_options: {include_usage: true}` (default true; config `provider.stream_options`). */
  streamOptions?: boolean;
  /** Receives one human line per retry or dropped field ("retrying in 0.5 s …"); never the key. */
  notify?: (line: string) => void;
}

/** One request to the model. */
export interface ModelRequest {
  messages: OpenAI.ChatCompletionMessageParam[];
  tools?: OpenAI.ChatCompletionTool[];
  /** Overrides the configured model for this request. */
  model?: string;
  temperature?: number;
  /** Nucleus sampling (an agent's `top_p`); left out once a server refuses it. */
  top_p?: number;
  /** OpenAI `reasoning_effort` (an agent's `reasoning_effort`); left out once refused. */
  reasoning_effort?: string;
}

/** Streaming callbacks; each is called synchronously per chunk and must not throw. */
export interface ModelCallbacks {
  onText?(delta: string): void;
  onReasoning?(delta: string): void;
  /** A tool-call delta arrived; `id`/`name` are set when that delta carries them. */
  onToolCallDelta?(index: number, id: string | undefined, name: string | undefined): void;
}

/** OpenAI `usage` field names. */
export interface ModelUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A tool call as the model made it; `arguments` is the raw JSON text (may be invalid). */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Provider data to send back with the call (Gemini `extra_content.google.thought_signature`). */
  extra_content?: Record<string, unknown>;
}

/** The accumulated result of one model request. */
export interface ModelResponse {
  text: string;
  reasoning: string;
  /** The delta field the reasoning came in; send it back in the same field. */
  reasoningField?: "reasoning_content" | "reasoning";
  /** OpenRouter `reasoning_details` blocks, merged by `index`; send back unchanged. */
  reasoningDetails?: Record<string, unknown>[];
  /** In `index` order. */
  toolCalls: ModelToolCall[];
  /** OpenAI `finish_reason` (`stop`, `tool_calls`, `length`, `content_filter`, …); null if none came. */
  finishReason: string | null;
  usage?: ModelUsage;
}

/** Error codes of {@link ProviderError}. */
export type ProviderErrorCode =
  | "rate_limited"
  | "server_error"
  | "connection"
  | "timeout"
  | "stream_cut"
  | "cancelled"
  | "auth"
  | "bad_request"
  | "context_overflow";

/**
 * A provider failure. `message` is one line for humans and never contains the API key.
 * `partial` holds what had streamed before the failure (always set for `stream_cut`
 * and `cancelled`). `attempts` counts requests made, `status` is the last HTTP status.
 * `contextWindow` is the window (tokens) a `context_overflow` error named, if it named one.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly partial?: ModelResponse,
    readonly status?: number,
    readonly attempts = 1,
    readonly contextWindow?: number,
  ) {
    super(message);
  }
}

export interface Provider {
  /**
   * Sends one streaming chat-completions request (with retries) and resolves with the
   * accumulated response. Rejects only with {@link ProviderError}.
   */
  complete(
    req: ModelRequest,
    callbacks?: ModelCallbacks,
    signal?: AbortSignal,
  ): Promise<ModelResponse>;
}

/** A `retry-after` longer than this is reported instead of waited for (ms). */
export const MAX_RETRY_AFTER_MS = 60_000;
/** Retries after a DNS failure or a refused connection (whatever `maxRetries` says). */
export const MAX_UNREACHABLE_RETRIES = 1;
const MAX_BACKOFF_MS = 8_000;

interface Sdk {
  Stream: typeof import("openai/core/streaming").Stream;
  APIError: typeof import("openai/core/error").APIError;
}
let sdk: Promise<Sdk> | undefined;
/**
 * Loads the SDK's SSE decoder and error classes (~3 ms) rather than the `OpenAI` client
 * class, whose import (every API resource) costs 45–75 ms on this machine and would eat
 * the start-up budget (process start → first request ≤ 150 ms).
 */
function loadSdk(): Promise<Sdk> {
  sdk ??= Promise.all([import("openai/core/streaming"), import("openai/core/error")]).then((
    [s, e],
  ) => ({ Stream: s.Stream, APIError: e.APIError }));
  return sdk;
}

/** Creates a provider; starts loading the `openai` modules in the background. */
export function createProvider(cfg: ProviderConfig): Provider {
  loadSdk().catch(() => {/* reported on first request */});
  const redact = makeRedactor(cfg.apiKey);
  // Optional fields this server refused: left out for the rest of the session.
  const omit = new Set<OptionalField>(cfg.streamOptions === false ? ["stream_options"] : []);
  const notify = (line: string) => {
    try {
      cfg.notify?.(redact(line));
    } catch { /* a notice is cosmetic */ }
  };

  return {
    async complete(req, callbacks = {}, signal) {
      let lib: Sdk;
      try {
        lib = await loadSdk();
      } catch (e) {
        throw new ProviderError("bad_request", `cannot load the openai package: ${oneLine(e)}`);
      }
      const base = cfg.retryBaseMs ?? 500;
      let retries = 0;
      let unreachable = 0;
      for (let attemptNo = 1;; attemptNo++) {
        const result = await attemptOnce(lib, cfg, req, callbacks, signal, redact, attemptNo, omit);
        if (result.ok) return result.response;
        const err = result.error;
        if (result.dropField && !omit.has(result.dropField)) {
          omit.add(result.dropField);
          notify(
            `coyote: the model server rejects \`${result.dropField}\` (HTTP ${
              err.status ?? "?"
            }); ` +
              `sending without it for this session` +
              (result.dropField === "stream_options"
                ? " (set provider.stream_options: false to skip this)"
                : ""),
          );
          continue;
        }
        const limit = result.unreachable ? MAX_UNREACHABLE_RETRIES : cfg.maxRetries;
        const used = result.unreachable ? unreachable : retries;
        if (!result.retryable || used >= limit) throw finalError(err, attemptNo);
        let wait = result.retryAfterMs;
        if (wait === undefined) {
          wait = Math.min(base * 2 ** retries, MAX_BACKOFF_MS) * (1 - Math.random() * 0.25);
        } else if (wait > MAX_RETRY_AFTER_MS) {
          throw finalError(
            err,
            attemptNo,
            ` (server asks to retry after ${Math.ceil(wait / 1000)} s)`,
          );
        }
        if (result.unreachable) unreachable++;
        retries++;
        notify(
          `coyote: ${err.message}; retrying in ${formatSeconds(wait)}` +
            (result.unreachable ? " (once)" : ` (retry ${retries} of ${cfg.maxRetries})`),
        );
        if (!(await sleep(wait, signal))) {
          throw new ProviderError(
            "cancelled",
            "request cancelled",
            emptyResponse(),
            err.status,
            attemptNo,
          );
        }
      }
    },
  };
}

function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function finalError(err: ProviderError, attempts: number, suffix = ""): ProviderError {
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : "";
  return new ProviderError(
    err.code,
    err.message + suffix + tries,
    err.partial,
    err.status,
    attempts,
    err.contextWindow,
  );
}

type Attempt =
  | { ok: true; response: ModelResponse }
  | {
    ok: false;
    error: ProviderError;
    retryable: boolean;
    retryAfterMs?: number;
    /** An optional field the server refused: retry once without it. */
    dropField?: OptionalField;
    /** A DNS failure or refused connection (retried at most once). */
    unreachable?: boolean;
  };

/** One tool call being accumulated; `index` is the wire index, `seq` the order of appearance. */
interface ToolAcc {
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
function mergeDetails(into: Record<string, unknown>[], items: unknown[]): void {
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

/** An HTTP error response: status, headers and the raw body text. */
class HttpFault {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly raw: string,
    readonly statusText: string,
  ) {}
}

async function attemptOnce(
  lib: Sdk,
  cfg: ProviderConfig,
  req: ModelRequest,
  cb: ModelCallbacks,
  signal: AbortSignal | undefined,
  redact: (s: string) => string,
  attemptNo: number,
  omit: ReadonlySet<OptionalField>,
): Promise<Attempt> {
  const ctl = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      ctl.abort();
    }, cfg.timeoutMs);
  };
  const onAbort = () => ctl.abort();
  if (signal?.aborted) {
    return { ok: false, error: cancelled(emptyResponse(), attemptNo), retryable: false };
  }
  signal?.addEventListener("abort", onAbort, { once: true });

  let text = "";
  let reasoning = "";
  let reasoningField: ModelResponse["reasoningField"];
  const details: Record<string, unknown>[] = [];
  let finishReason: string | null = null;
  let usage: ModelUsage | undefined;
  const tools: ToolAcc[] = [];
  const slots = new Map<number, ToolAcc>();
  let shown = false; // any content delivered to callbacks
  const partial = (): ModelResponse => ({
    text,
    reasoning,
    ...(reasoningField ? { reasoningField } : {}),
    ...(details.length ? { reasoningDetails: details.map((d) => ({ ...d })) } : {}),
    toolCalls: toolList(tools, attemptNo),
    finishReason,
    usage,
  });

  // The optional fields this request carries (a refusal naming one drops it).
  const sent: OptionalField[] = [];
  arm();
  try {
    const messages = wireMessages(req.messages as Parameters<typeof wireMessages>[0], {
      omitReasoning: omit.has("reasoning_content"),
    });
    if (
      messages.some((m) => m.reasoning_content !== undefined || m.reasoning_details !== undefined)
    ) sent.push("reasoning_content");
    const params: OpenAI.ChatCompletionCreateParamsStreaming = {
      model: req.model ?? cfg.model,
      messages: messages as OpenAI.ChatCompletionMessageParam[],
      stream: true,
    };
    if (!omit.has("stream_options")) {
      params.stream_options = { include_usage: true };
      sent.push("stream_options");
    }
    if (req.tools?.length) params.tools = req.tools;
    if (req.temperature !== undefined && !omit.has("temperature")) {
      params.temperature = req.temperature;
      sent.push("temperature");
    }
    if (req.top_p !== undefined && !omit.has("top_p")) {
      params.top_p = req.top_p;
      sent.push("top_p");
    }
    if (req.reasoning_effort !== undefined && !omit.has("reasoning_effort")) {
      (params as { reasoning_effort?: string }).reasoning_effort = req.reasoning_effort;
      sent.push("reasoning_effort");
    }
    const res = await fetch(`${cfg.baseURL.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "accept": "text/event-stream, application/json",
        "authorization": `Bearer ${cfg.apiKey}`,
        "user-agent": "coyote",
        ...cfg.headers,
      },
      body: JSON.stringify(params),
      signal: ctl.signal,
    });
    if (!res.ok) throw new HttpFault(res.status, res.headers, await res.text(), res.statusText);
    arm();
    let stream: AsyncIterable<OpenAI.ChatCompletionChunk>;
    if ((res.headers.get("content-type") ?? "").includes("application/json")) {
      const whole = await res.json();
      // A 200 whose JSON body is an error (some proxies): the same as an error event.
      if (whole && typeof whole === "object" && whole.error && !Array.isArray(whole.choices)) {
        throw new lib.APIError(undefined, whole.error, undefined, res.headers);
      }
      stream = completionAsChunks(whole);
    } else stream = lib.Stream.fromSSEResponse<OpenAI.ChatCompletionChunk>(res, ctl);
    for await (const chunk of stream) {
      arm();
      if (chunk.usage) usage = pickUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = (choice.delta ?? {}) as OpenAI.ChatCompletionChunk.Choice.Delta & {
        reasoning_content?: unknown;
        reasoning?: unknown;
        reasoning_details?: unknown;
      };
      if (Array.isArray(delta.reasoning_details)) mergeDetails(details, delta.reasoning_details);
      const [r, field] = typeof delta.reasoning_content === "string" && delta.reasoning_content
        ? [delta.reasoning_content, "reasoning_content" as const]
        : typeof delta.reasoning === "string" && delta.reasoning
        ? [delta.reasoning, "reasoning" as const]
        : ["", undefined];
      if (r) {
        reasoning += r;
        reasoningField ??= field;
        shown = true;
        cb.onReasoning?.(r);
      }
      if (typeof delta.content === "string" && delta.content) {
        text += delta.content;
        shown = true;
        cb.onText?.(delta.content);
      }
      if (Array.isArray(delta.tool_calls)) {
        delta.tool_calls.forEach((tc, pos) => {
          const acc = toolSlot(tools, slots, tc, pos);
          const name = tc.function?.name;
          if (name && acc.name !== name) acc.name += name;
          const args = tc.function?.arguments;
          // Some servers repeat the whole arguments in a last delta: not glued on twice.
          if (args && !(args === acc.arguments && isCompleteJson(args))) acc.arguments += args;
          const extra = (tc as { extra_content?: unknown }).extra_content;
          if (extra && typeof extra === "object") {
            acc.extra = { ...acc.extra, ...(extra as Record<string, unknown>) };
          }
          shown = true;
          cb.onToolCallDelta?.(acc.seq, tc.id ?? undefined, name ?? undefined);
        });
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
    if (signal?.aborted) {
      return { ok: false, error: cancelled(partial(), attemptNo), retryable: false };
    }
    if (timedOut) {
      return { ok: false, error: timeoutError(cfg, partial(), attemptNo), retryable: false };
    }
    if (finishReason === null) {
      const error = new ProviderError(
        shown ? "stream_cut" : "connection",
        shown
          ? "the model stream ended before the response was complete (no finish_reason)"
          : "the model server closed the stream without sending anything",
        partial(),
        200,
        attemptNo,
      );
      return { ok: false, error, retryable: !shown };
    }
    return { ok: true, response: partial() };
  } catch (e) {
    if (signal?.aborted) {
      return { ok: false, error: cancelled(partial(), attemptNo), retryable: false };
    }
    if (timedOut) {
      return { ok: false, error: timeoutError(cfg, partial(), attemptNo), retryable: false };
    }
    return classify(e, shown, partial(), redact, attemptNo, sent);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * The accumulator a tool-call delta belongs to. Keyed by `index` (its position in the delta when
 * absent); a delta carrying an `id` different from the one at that index starts a new call, and
 * so does a delta without ids that names a function after the current call's arguments are
 * complete JSON (servers that send every parallel call at index 0).
 */
function toolSlot(
  tools: ToolAcc[],
  slots: Map<number, ToolAcc>,
  tc: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall,
  pos: number,
): ToolAcc {
  const index = typeof tc.index === "number" ? tc.index : pos;
  const cur = slots.get(index);
  const args = tc.function?.arguments ?? "";
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

function isCompleteJson(s: string): boolean {
  if (!s.trim()) return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** A server that ignored `stream: true` and sent a whole `chat.completion`: replay it as one chunk. */
async function* completionAsChunks(
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

function classify(
  e: unknown,
  shown: boolean,
  partial: ModelResponse,
  redact: (s: string) => string,
  attemptNo: number,
  sent: OptionalField[],
): Attempt {
  let status: number | undefined;
  let headers: Headers | undefined;
  let body: unknown;
  let text: string;
  let inStream = false;
  if (e instanceof HttpFault) {
    status = e.status;
    headers = e.headers;
    try {
      body = JSON.parse(e.raw);
    } catch {
      body = e.raw;
    }
    text = httpErrorText(e.raw, e.status, e.statusText);
  } else {
    const err = e as { error?: unknown; message?: string; headers?: Headers };
    if (err && typeof err === "object" && err.error) {
      // An `error` payload inside the SSE stream (OpenRouter, vLLM) or a 200 JSON error body.
      inStream = true;
      body = { error: err.error };
      status = inStreamStatus(err.error);
      headers = err.headers;
      text = errorText(err.error) || "no details";
    } else text = transportMessage(e);
  }
  const detail = redact(oneLine(text));
  if (shown) {
    // Content already reached the user: never retried, reported as a cut stream.
    const error = new ProviderError(
      "stream_cut",
      `the model stream broke off mid-response: ${detail}`,
      partial,
      status,
      attemptNo,
    );
    return { ok: false, error, retryable: false };
  }
  if (isContextOverflow(status, inStream || status !== undefined ? text : "")) {
    const window = contextLimitFrom(text, body);
    const error = new ProviderError(
      "context_overflow",
      `the prompt does not fit the model's context window${
        status ? ` (HTTP ${status})` : ""
      }: ${detail}`,
      partial,
      status,
      attemptNo,
      window,
    );
    return { ok: false, error, retryable: false };
  }
  if (status === undefined) {
    if (inStream) {
      const error = new ProviderError(
        "server_error",
        `model server error in the stream: ${detail}`,
        partial,
        undefined,
        attemptNo,
      );
      return { ok: false, error, retryable: true };
    }
    // A transport failure (fetch TypeError: refused, reset, DNS).
    const kind = transportKind(text);
    const why = kind === "dns"
      ? " (DNS lookup failed)"
      : kind === "refused"
      ? " (connection refused)"
      : "";
    const error = new ProviderError(
      "connection",
      `cannot reach the model server${why}: ${detail}`,
      partial,
      undefined,
      attemptNo,
    );
    return { ok: false, error, retryable: true, unreachable: kind !== undefined };
  }
  const should = inStream ? null : headers?.get?.("x-should-retry");
  let code: ProviderErrorCode;
  let retryable: boolean;
  let what: string;
  if (status === 429) [code, retryable, what] = ["rate_limited", true, "rate limited"];
  else if (status >= 500) [code, retryable, what] = ["server_error", true, "error"];
  else if (status === 408) [code, retryable, what] = ["timeout", true, "request timeout"];
  else if (status === 401 || status === 403) {
    [code, retryable, what] = ["auth", false, "authentication failed"];
  } else [code, retryable, what] = ["bad_request", false, "request rejected"];
  if (should === "true") retryable = true;
  if (should === "false") retryable = false;
  const error = new ProviderError(
    code,
    `model server ${what} (HTTP ${status}${inStream ? ", in the stream" : ""}): ${detail}`,
    partial,
    status,
    attemptNo,
  );
  const dropField = code === "bad_request"
    ? rejectedField(status, `${text} ${typeof body === "string" ? "" : JSON.stringify(body)}`, sent)
    : undefined;
  return { ok: false, error, retryable, retryAfterMs: retryAfter(headers), dropField };
}

/** The message of a transport failure, with its cause (Deno: "error sending request … (os error 111)"). */
function transportMessage(e: unknown): string {
  const err = e as { message?: string; cause?: { message?: string } };
  const msg = typeof err?.message === "string" ? err.message : String(e);
  const cause = err?.cause?.message;
  return cause && !msg.includes(cause) ? `${msg} (${cause})` : msg || "no details";
}

/** `retry-after-ms` (ms) or `retry-after` (seconds or HTTP date), in ms. */
function retryAfter(h: Headers | undefined): number | undefined {
  if (!h?.get) return undefined;
  const ms = h.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = h.get("retry-after");
  if (!ra) return undefined;
  const s = Number(ra);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const date = Date.parse(ra);
  if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  return undefined;
}

function cancelled(partial: ModelResponse, attemptNo: number): ProviderError {
  return new ProviderError("cancelled", "request cancelled", partial, undefined, attemptNo);
}

function timeoutError(cfg: ProviderConfig, partial: ModelResponse, attemptNo: number) {
  return new ProviderError(
    "timeout",
    `no answer from the model server within ${cfg.timeoutMs} ms`,
    partial,
    undefined,
    attemptNo,
  );
}

function pickUsage(u: OpenAI.CompletionUsage): ModelUsage {
  return {
    prompt_tokens: u.prompt_tokens ?? 0,
    completion_tokens: u.completion_tokens ?? 0,
    total_tokens: u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0),
  };
}

/** The calls in wire-index order (calls sharing an index in the order they appeared). */
function toolList(tools: ToolAcc[], attemptNo: number): ModelToolCall[] {
  return [...tools].sort((a, b) => a.index - b.index || a.seq - b.seq).map((t) => ({
    id: t.id ?? `call_coyote_${attemptNo}_${t.seq}`,
    ...(t.extra ? { extra_content: t.extra } : {}),
    name: t.name,
    arguments: t.arguments,
  }));
}

function emptyResponse(): ModelResponse {
  return { text: "", reasoning: "", toolCalls: [], finishReason: null };
}

function oneLine(e: unknown): string {
  const s = e instanceof Error ? e.message : typeof e === "string" ? e : String(e);
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > 300 ? line.slice(0, 297) + "..." : line;
}

/** Removes the API key (and any bearer token) from a message. */
function makeRedactor(apiKey: string): (s: string) => string {
  return (s) => {
    let out = s.replace(/Bearer\s+\S+/gi, "Bearer [redacted]");
    if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join("[redacted]");
    return out;
  };
}

/** Resolves true after `ms`, false at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
