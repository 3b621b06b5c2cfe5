/**
 * The provider's retry policy: how a failed attempt is classified ({@link classify}: an HTTP
 * status, a transport failure or an error event inside the stream becomes a
 * {@link ProviderErrorCode}, retryable or not, `x-should-retry` honoured, the optional field a
 * 400/422 refused named, a DNS failure or refused connection marked unreachable), how long the
 * server asks to wait ({@link retryAfter}: `retry-after-ms` in ms, `retry-after` in seconds or an
 * HTTP date, as the OpenAI SDKs read them), the limits ({@link MAX_RETRY_AFTER_MS},
 * {@link MAX_UNREACHABLE_RETRIES}, {@link MAX_BACKOFF_MS}), the final error's text
 * ({@link finalError}) and a cancellable {@link sleep}. The loop itself is `createProvider`'s
 * (core/provider/provider.ts); error text comes from core/provider/errors.ts.
 * @module
 */
import {
  contextLimitFrom,
  errorText,
  httpErrorText,
  inStreamStatus,
  isContextOverflow,
  oneLine,
  type OptionalField,
  rejectedField,
  transportKind,
} from "./errors.ts";
import { type ModelResponse, ProviderError, type ProviderErrorCode } from "./types.ts";

/** A `retry-after` longer than this is reported instead of waited for (ms). */
export const MAX_RETRY_AFTER_MS = 60_000;
/** Retries after a DNS failure or a refused connection (whatever `maxRetries` says). */
export const MAX_UNREACHABLE_RETRIES = 1;
/** Longest backoff between two retries (ms). */
export const MAX_BACKOFF_MS = 8_000;

/** A wait for a notice: `0.5 s` below 10 s, whole seconds above. */
export function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The error reported after the last attempt: `suffix` and the number of attempts appended. */
export function finalError(err: ProviderError, attempts: number, suffix = ""): ProviderError {
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

/** The outcome of one attempt: the response, or the error and whether/how to retry it. */
export type Attempt =
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

/** An HTTP error response: status, headers and the raw body text. */
export class HttpFault {
  constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly raw: string,
    readonly statusText: string,
  ) {}
}

/**
 * A failed attempt as a {@link ProviderError} and a retry decision. `shown`: content already
 * reached the callbacks (then never retried); `sent`: the optional fields this request carried;
 * `endpoint`: the server's base URL as shown to the user, named by a connection failure
 * (`cannot reach the model server at http://127.0.0.1:8080/v1: connection refused`).
 */
export function classify(
  e: unknown,
  shown: boolean,
  partial: ModelResponse,
  redact: (s: string) => string,
  attemptNo: number,
  sent: OptionalField[],
  endpoint?: string,
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
    // A transport failure (fetch TypeError: refused, reset, DNS). A refused connection or a
    // failed DNS lookup is said in those words; fetch's own chain of causes is kept for the rest.
    const kind = transportKind(text);
    const why = kind === "dns"
      ? "DNS lookup failed"
      : kind === "refused"
      ? "connection refused"
      : detail;
    const error = new ProviderError(
      "connection",
      `cannot reach the model server${endpoint ? ` at ${endpoint}` : ""}: ${why}`,
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
    ? rejectedField(status, `${text} ${errorParams(body)}`, sent)
    : undefined;
  return { ok: false, error, retryable, retryAfterMs: retryAfter(headers), dropField };
}

/**
 * The OpenAI `param` (`{"error": {"param": "stream_options"}}`) and pydantic `loc` values of an
 * error body, space-separated: the field a server names as refused without saying it in its
 * message. The rest of the body (pydantic's `input` echo of the request) is not looked at.
 */
function errorParams(body: unknown): string {
  if (!body || typeof body !== "object") return "";
  const out: string[] = [];
  const visit = (v: unknown, depth: number) => {
    if (depth > 4 || !v || typeof v !== "object") return;
    if (Array.isArray(v)) return v.forEach((x) => visit(x, depth + 1));
    const o = v as Record<string, unknown>;
    if (typeof o.param === "string") out.push(o.param);
    if (Array.isArray(o.loc)) out.push(o.loc.filter((x) => typeof x === "string").join("."));
    for (const k of ["error", "detail", "errors"]) visit(o[k], depth + 1);
  };
  visit(body, 0);
  return out.join(" ");
}

/** The message of a transport failure, with its cause (Deno: "error sending request … (os error 111)"). */
function transportMessage(e: unknown): string {
  const err = e as { message?: string; cause?: { message?: string } };
  const msg = typeof err?.message === "string" ? err.message : String(e);
  const cause = err?.cause?.message;
  return cause && !msg.includes(cause) ? `${msg} (${cause})` : msg || "no details";
}

/** `retry-after-ms` (ms) or `retry-after` (seconds or HTTP date), in ms. */
export function retryAfter(h: Headers | undefined): number | undefined {
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

/** Resolves true after `ms`, false at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
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
