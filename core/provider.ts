/**
 * The model provider: OpenAI Chat Completions (streaming, with tools) through
 * `npm:openai`, against any OpenAI-compatible server (OpenAI, Ollama, vLLM,
 * LM Studio, OpenRouter, …).
 *
 * - Streams `delta.content` to `onText` and reasoning deltas (`delta.reasoning_content`,
 *   vLLM/DeepSeek; `delta.reasoning`, OpenRouter/Ollama) to `onReasoning`; tool-call
 *   deltas are accumulated by `index` (id and name usually only in the first delta,
 *   arguments split across many).
 * - Asks for `stream_options: { include_usage: true }` and returns the final `usage`.
 * - Retries (our own loop; the SDK's is off) 429, 408, 5xx and connection failures that
 *   happen **before any content of that response has streamed**, with exponential
 *   backoff and jitter, honouring `retry-after-ms` (ms) and `retry-after` (seconds or an
 *   HTTP date) and the `x-should-retry` header (as the OpenAI SDKs do). A `retry-after`
 *   above {@link MAX_RETRY_AFTER_MS} is not waited for: the error is reported at once.
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

/** Connection settings for one provider (see core/config.ts `resolveProvider`). */
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
}

/** One request to the model. */
export interface ModelRequest {
  messages: OpenAI.ChatCompletionMessageParam[];
  tools?: OpenAI.ChatCompletionTool[];
  /** Overrides the configured model for this request. */
  model?: string;
  temperature?: number;
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
}

/** The accumulated result of one model request. */
export interface ModelResponse {
  text: string;
  reasoning: string;
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
  | "bad_request";

/**
 * A provider failure. `message` is one line for humans and never contains the API key.
 * `partial` holds what had streamed before the failure (always set for `stream_cut`
 * and `cancelled`). `attempts` counts requests made, `status` is the last HTTP status.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    readonly partial?: ModelResponse,
    readonly status?: number,
    readonly attempts = 1,
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

  return {
    async complete(req, callbacks = {}, signal) {
      let lib: Sdk;
      try {
        lib = await loadSdk();
      } catch (e) {
        throw new ProviderError("bad_request", `cannot load the openai package: ${oneLine(e)}`);
      }
      const base = cfg.retryBaseMs ?? 500;
      for (let attempt = 0;; attempt++) {
        const result = await attemptOnce(lib, cfg, req, callbacks, signal, redact, attempt + 1);
        if (result.ok) return result.response;
        const err = result.error;
        if (!result.retryable || attempt >= cfg.maxRetries) throw finalError(err, attempt + 1);
        let wait = result.retryAfterMs;
        if (wait === undefined) {
          wait = Math.min(base * 2 ** attempt, MAX_BACKOFF_MS) * (1 - Math.random() * 0.25);
        } else if (wait > MAX_RETRY_AFTER_MS) {
          throw finalError(
            err,
            attempt + 1,
            ` (server asks to retry after ${Math.ceil(wait / 1000)} s)`,
          );
        }
        if (!(await sleep(wait, signal))) {
          throw new ProviderError(
            "cancelled",
            "request cancelled",
            emptyResponse(),
            err.status,
            attempt + 1,
          );
        }
      }
    },
  };
}

function finalError(err: ProviderError, attempts: number, suffix = ""): ProviderError {
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : "";
  return new ProviderError(
    err.code,
    err.message + suffix + tries,
    err.partial,
    err.status,
    attempts,
  );
}

type Attempt =
  | { ok: true; response: ModelResponse }
  | { ok: false; error: ProviderError; retryable: boolean; retryAfterMs?: number };

interface ToolAcc {
  id?: string;
  name: string;
  arguments: string;
}

async function attemptOnce(
  lib: Sdk,
  cfg: ProviderConfig,
  req: ModelRequest,
  cb: ModelCallbacks,
  signal: AbortSignal | undefined,
  redact: (s: string) => string,
  attemptNo: number,
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
  let finishReason: string | null = null;
  let usage: ModelUsage | undefined;
  const tools = new Map<number, ToolAcc>();
  let shown = false; // any content delivered to callbacks
  const partial = (): ModelResponse => ({
    text,
    reasoning,
    toolCalls: toolList(tools, attemptNo),
    finishReason,
    usage,
  });

  arm();
  try {
    const params: OpenAI.ChatCompletionCreateParamsStreaming = {
      model: req.model ?? cfg.model,
      messages: req.messages,
      stream: true,
      stream_options: { include_usage: true },
    };
    if (req.tools?.length) params.tools = req.tools;
    if (req.temperature !== undefined) params.temperature = req.temperature;
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
    if (!res.ok) {
      // Same error objects as the OpenAI client: status, headers, parsed `error` body.
      const body = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch { /* plain-text error body */ }
      throw lib.APIError.generate(
        res.status,
        parsed as object | undefined,
        parsed ? undefined : body.slice(0, 500) || undefined,
        res.headers,
      );
    }
    arm();
    const stream: AsyncIterable<OpenAI.ChatCompletionChunk> =
      (res.headers.get("content-type") ?? "").includes("application/json")
        ? completionAsChunks(await res.json())
        : lib.Stream.fromSSEResponse<OpenAI.ChatCompletionChunk>(res, ctl);
    for await (const chunk of stream) {
      arm();
      if (chunk.usage) usage = pickUsage(chunk.usage);
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = (choice.delta ?? {}) as OpenAI.ChatCompletionChunk.Choice.Delta & {
        reasoning_content?: unknown;
        reasoning?: unknown;
      };
      const r = typeof delta.reasoning_content === "string"
        ? delta.reasoning_content
        : typeof delta.reasoning === "string"
        ? delta.reasoning
        : "";
      if (r) {
        reasoning += r;
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
          const idx = typeof tc.index === "number" ? tc.index : pos;
          let acc = tools.get(idx);
          if (!acc) {
            acc = { name: "", arguments: "" };
            tools.set(idx, acc);
          }
          if (tc.id) acc.id ??= tc.id;
          const name = tc.function?.name;
          if (name && acc.name !== name) acc.name += name;
          if (tc.function?.arguments) acc.arguments += tc.function.arguments;
          shown = true;
          cb.onToolCallDelta?.(idx, tc.id ?? undefined, name ?? undefined);
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
    return classify(e, shown, partial(), redact, attemptNo);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
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
          reasoning_content: msg.reasoning_content ?? msg.reasoning,
          tool_calls: msg.tool_calls?.flatMap((t, index) =>
            t.type === "function"
              ? [{ index, id: t.id, type: "function" as const, function: t.function }]
              : []
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
): Attempt {
  const err = e as {
    status?: number;
    headers?: Headers;
    error?: { message?: unknown } | null;
    message?: string;
    name?: string;
  };
  const status = typeof err?.status === "number" ? err.status : undefined;
  const detail = redact(oneLine(serverMessage(err)));
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
  if (status === undefined) {
    // An `error` payload inside the SSE stream (OpenRouter, vLLM) before any content,
    // or a transport failure (fetch TypeError: refused, reset, DNS).
    const inStream = !!err?.error;
    const error = new ProviderError(
      inStream ? "server_error" : "connection",
      inStream
        ? `model server error in the stream: ${detail}`
        : `cannot reach the model server: ${detail}`,
      partial,
      undefined,
      attemptNo,
    );
    return { ok: false, error, retryable: true };
  }
  const should = err.headers?.get?.("x-should-retry");
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
    `model server ${what} (HTTP ${status}): ${detail}`,
    partial,
    status,
    attemptNo,
  );
  return { ok: false, error, retryable, retryAfterMs: retryAfter(err.headers) };
}

function serverMessage(err: { error?: { message?: unknown } | null; message?: string }): string {
  const m = err?.error && typeof err.error === "object" ? err.error.message : undefined;
  if (typeof m === "string" && m) return m;
  const msg = typeof err?.message === "string" ? err.message : String(err);
  // The SDK prefixes "429 " to messages; the status is reported separately.
  const stripped = msg.replace(/^\d{3}\s+/, "");
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  return cause && !stripped.includes(cause) ? `${stripped} (${cause})` : stripped || "no details";
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

function toolList(tools: Map<number, ToolAcc>, attemptNo: number): ModelToolCall[] {
  return [...tools.entries()].sort((a, b) => a[0] - b[0]).map(([i, t]) => ({
    id: t.id ?? `call_coyote_${attemptNo}_${i}`,
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
