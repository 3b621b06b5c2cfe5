/**
 * One attempt of a provider request: builds the Chat Completions body (the history through
 * core/provider/messages.ts `wireMessages`; optional fields the server refused earlier left out,
 * and each one sent recorded), POSTs it with `fetch` to `<baseURL>/chat/completions`, reads the
 * SSE stream (or a whole JSON completion) chunk by chunk into a response (core/provider/stream.ts)
 * and reports the outcome as an {@link Attempt}: the response, or a {@link ProviderError} with what
 * the retry loop of core/provider/provider.ts needs (core/provider/retry.ts `classify`).
 * `cfg.timeoutMs` (ms) bounds the wait for the headers and every silence between two chunks; a
 * cancel or a timeout is never retried.
 * @module
 */
import type OpenAI from "openai";
import { wireMessages } from "./messages.ts";
import type { OptionalField } from "./errors.ts";
import { type Attempt, classify, HttpFault } from "./retry.ts";
import {
  argumentsText,
  completionAsChunks,
  emptyResponse,
  isCompleteJson,
  mergeDetails,
  openaiFinishReason,
  pickUsage,
  type Sdk,
  type ToolAcc,
  toolList,
  toolSlot,
} from "./stream.ts";
import {
  type ModelCallbacks,
  type ModelRequest,
  type ModelResponse,
  type ModelUsage,
  type ProviderConfig,
  ProviderError,
} from "./types.ts";

/** Sends one request and streams its response; never throws (see the module doc). */
export async function attemptOnce(
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
    const res = await (cfg.fetch ?? fetch)(`${cfg.baseURL.replace(/\/+$/, "")}/chat/completions`, {
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
          // llama.cpp / Ollama may send `arguments` as a JSON object (or array/null): one string.
          const args = argumentsText(
            (tc.function as { arguments?: unknown } | undefined)?.arguments,
          );
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
      if (choice.finish_reason) finishReason = openaiFinishReason(choice.finish_reason);
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
    const r = classify(e, shown, partial(), redact, attemptNo, sent, shownURL(cfg.baseURL));
    if (!r.ok && r.error.status !== undefined) {
      const said = r.error.message.replace(/^.*?\(HTTP [^)]*\): /, ""); // the server's words
      r.error.message += statusHint(r.error.status, said, cfg.baseURL);
    }
    return r;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
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

/** A URL as shown in a message: scheme, host and path (no user info, query or fragment). */
function shownURL(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
  } catch {
    return url;
  }
}

/**
 * What to check after an HTTP error status (appended to the message; "" for none; `said`: the
 * server's error text), naming where the setting comes from (env, config, flag; README
 * "Configuration"):
 * - 401/403: the API key;
 * - 404 naming a model ("model … not found", "does not exist"): the model name;
 * - another 404 on `<baseURL>/chat/completions`: the base URL, with the URL tried — when it has no
 *   path, the common slip with servers that serve the OpenAI API under `/v1` (Ollama, vLLM,
 *   LM Studio, llama.cpp), the `/v1` URL to try.
 */
export function statusHint(status: number, said: string, baseURL: string): string {
  if (status === 401 || status === 403) {
    return " — check the API key (OPENAI_API_KEY, provider.api_key or --api-key)";
  }
  if (status !== 404) return "";
  if (/\bmodel\b.*(not found|does not exist|no such|unknown)/i.test(said)) {
    return " — check the model name (COYOTE_MODEL, model: in config.yaml or --model)";
  }
  const tried = `${shownURL(baseURL)}/chat/completions`;
  try {
    const u = new URL(baseURL);
    if (u.pathname.replace(/\/+$/, "") === "") {
      return ` from ${tried} (the base URL ${u.origin} has no path: OpenAI-compatible servers usually answer under /v1 — try ${u.origin}/v1)`;
    }
  } catch { /* not a URL: fetch failed before any status */ }
  return ` from ${tried} — check the base URL (OPENAI_BASE_URL, provider.base_url or --base-url; it usually ends in /v1)`;
}
