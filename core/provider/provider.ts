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
 *
 * This module is the retry loop ({@link createProvider}). The shapes and `ProviderError` are in
 * ./types.ts, one request and its stream in ./attempt.ts, the delta assembly in ./stream.ts, the
 * classification of failures and the retry timing in ./retry.ts, the error text in ./errors.ts.
 * @module
 */
import { oneLine, type OptionalField } from "./errors.ts";
import { attemptOnce } from "./attempt.ts";
import {
  finalError,
  formatSeconds,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_MS,
  MAX_UNREACHABLE_RETRIES,
  sleep,
} from "./retry.ts";
import { emptyResponse, loadSdk, type Sdk } from "./stream.ts";

/** Cheap test for the markers of a text tool call (core/provider/text_tool_calls.ts parses). */
function mayHoldToolCall(text: string): boolean {
  return /<tool_call>|\[TOOL_CALLS\]|<function=|<\|python_tag\|>/.test(text) ||
    /^\s*(?:```(?:json)?\s*)?[[{][\s\S]*"name"\s*:/.test(text);
}
import { type Provider, type ProviderConfig, ProviderError } from "./types.ts";

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
        if (result.ok) {
          const res = result.response;
          if (
            res.toolCalls.length || !req.tools?.length ||
            !(mayHoldToolCall(res.text) || (!res.text.trim() && mayHoldToolCall(res.reasoning)))
          ) return res;
          // Calls written as text (a server without a tool parser): loaded only then.
          const { withTextToolCalls } = await import("./text_tool_calls.ts");
          const known = new Set(
            req.tools.flatMap((t) => t.type === "function" ? [t.function.name] : []),
          );
          // A model's own `models.<name>.text_tool_calls` wins over `provider.text_tool_calls`.
          const model = req.model ?? cfg.model;
          const own = cfg.textToolCallModels?.[model];
          const setting = own !== undefined
            ? `models.${model}.text_tool_calls`
            : "provider.text_tool_calls";
          return withTextToolCalls(
            res,
            known,
            notify,
            attemptNo,
            own ?? cfg.textToolCalls !== false,
            setting,
          );
        }
        const err = result.error;
        if (result.dropField && !omit.has(result.dropField)) {
          omit.add(result.dropField);
          notify(
            `coyote: the model server rejects \`${result.dropField}\` (HTTP ${
              err.status ?? "?"
            }): "${err.message.replace(/^.*?\): /, "")}"; ` +
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

/** Removes the API key (and any bearer token) from a message. */
function makeRedactor(apiKey: string): (s: string) => string {
  return (s) => {
    let out = s.replace(/Bearer\s+\S+/gi, "Bearer [redacted]");
    if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join("[redacted]");
    return out;
  };
}
