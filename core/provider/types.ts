/**
 * The provider's shapes: connection settings ({@link ProviderConfig}), one request
 * ({@link ModelRequest}) with its streaming callbacks ({@link ModelCallbacks}), the accumulated
 * response ({@link ModelResponse}; OpenAI Chat Completions field names, `usage` in tokens), the
 * {@link Provider} interface and its one error class, {@link ProviderError} with its
 * {@link ProviderErrorCode}s. Times are in ms. Implemented by core/provider/provider.ts
 * `createProvider`.
 * @module
 */
import type OpenAI from "openai";

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
  /**
   * Parse tool calls a model wrote as text (`<tool_call>…`, `[TOOL_CALLS]…`, bare JSON) into
   * calls when the server returned none (default true; config `provider.text_tool_calls`).
   * core/provider/text_tool_calls.ts.
   */
  textToolCalls?: boolean;
  /**
   * Per-model `text_tool_calls` from the `models:` table (model name → on/off), winning over
   * {@link textToolCalls} for requests to that model.
   */
  textToolCallModels?: Record<string, boolean>;
  /** Receives one human line per retry or dropped field ("retrying in 0.5 s …"); never the key. */
  notify?: (line: string) => void;
  /**
   * The `fetch` every request of this provider goes through (chat completions and the `/models`
   * lookup); default the global one. `--record` / `--replay` put theirs here
   * (core/provider/tape.ts), below the SSE decoder, so retries, deltas and errors run unchanged.
   */
  fetch?: typeof fetch;
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

/** What `createProvider` (core/provider/provider.ts) returns: the model client of a session. */
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
