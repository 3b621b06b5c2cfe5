/**
 * The record file format and what recording and replaying share (core/provider/tape.ts is the
 * entry point). Record and replay of a run's model exchanges (`--record FILE`, `--replay FILE`; docs/ci.md
 * "Record and replay"). Both work as the provider's `fetch` (core/provider/types.ts
 * `ProviderConfig.fetch`), the lowest layer of the provider: the request body Coyote built, the
 * HTTP status and headers, and the response body as it came off the wire. Everything above —
 * the SSE decoder, delta assembly, tool-call deltas, usage, retries, error classification — runs
 * unchanged on replay, so a recorded 429, a cut stream or a refused field behave as they did.
 * Every session of the process shares the provider of its workspace, so sub-agents and graph llm
 * nodes are recorded and replayed with their parents.
 *
 * The file is JSON Lines ({@link TAPE_FORMAT}, {@link TAPE_VERSION}):
 *
 * ```jsonl
 * {"format":"coyote-record","version":1,"created":"2026-…Z","model":"gpt-5-mini","base_url":"https://api.openai.com/v1"}
 * {"type":"exchange","n":1,"kind":"chat","request":{"method":"POST","url":"…/chat/completions","body":{…}},"response":{"status":200,"status_text":"OK","headers":{"content-type":"text/event-stream"},"body":["data: {…}\n\n","data: [DONE]\n\n"],"end":"done"}}
 * {"type":"exchange","n":2,"kind":"models","request":{"method":"GET","url":"…/models"},"error":{"message":"error sending request … (os error 111)"}}
 * ```
 *
 * - `n` numbers the requests in the order they were sent (lines are written when a response
 *   ends, so concurrent requests may be out of order in the file). `kind` is `chat`
 *   (`/chat/completions`) or `models` (the `GET /models` context-window lookup).
 * - `response.body` is the body text split after each blank line (one SSE event per piece); the
 *   pieces joined are the body as received. `end`: `done` (the body ended), `error` (it broke
 *   off: `error` holds the message) or `aborted` (Coyote stopped reading: a cancel or a timeout).
 *   A request that got no response at all (refused, DNS) has `error` instead of `response`.
 * - Secrets: no request header is written (the `Authorization` bearer, `provider.headers`); the
 *   URL loses its user info and the values of secret-named query parameters; every known secret
 *   value (the provider key, secret-named environment variables, config secrets:
 *   core/tools/redact.ts `knownSecretCandidates`) is replaced by `[redacted]` anywhere in a line.
 * - Paths: the workspace directory is written as {@link CWD_MARK} and the home directory as
 *   {@link HOME_MARK}, in requests and responses; replay puts its own back, so a recording made
 *   in `/home/me/proj` replays in `/runner/work/proj`.
 * @module
 */

/** The `format` of the header line. */
export const TAPE_FORMAT = "coyote-record";
/** The `version` of the header line; a reader refuses other versions. */
export const TAPE_VERSION = 1;
/** What the workspace directory is written as. */
export const CWD_MARK = "<coyote:cwd>";
/** What the home directory is written as. */
export const HOME_MARK = "<coyote:home>";

/** The first line of a record file. */
export interface TapeHeader {
  format: typeof TAPE_FORMAT;
  version: number;
  /** ISO-8601, UTC. */
  created: string;
  /** The provider's model and base URL (credentials removed) when the recording started. */
  model?: string;
  base_url?: string;
}

/** One request and what came back. */
export interface TapeExchange {
  type: "exchange";
  /** 1-based order in which the requests were sent. */
  n: number;
  kind: "chat" | "models";
  request: { method: string; url: string; body?: unknown };
  response?: {
    status: number;
    status_text: string;
    /** Only the headers Coyote reads (content type, retry hints, request id). */
    headers: Record<string, string>;
    /** The body text, split after each blank line. */
    body: string[];
    end: "done" | "error" | "aborted";
    /** With `end: "error"`: the message the body stream broke off with. */
    error?: string;
  };
  /** The request failed before any response (the fetch rejected). */
  error?: { message: string; name?: "AbortError" };
}

/** The response headers kept in a recording (the ones core/provider/ reads). */
export const KEPT_HEADERS = [
  "content-type",
  "retry-after",
  "retry-after-ms",
  "x-should-retry",
  "x-request-id",
];

/** What {@link tapeFetch} needs: where the workspace is, and how to hide secrets. */
export interface TapeContext {
  /** Absolute workspace directory (written as {@link CWD_MARK}). */
  cwd: string;
  /** Home directory (written as {@link HOME_MARK}); skipped when empty or `/`. */
  home?: string;
  /** Every known secret value, replaced by `[redacted]` (core/tools/redact.ts). */
  redact: (text: string) => string;
  /** Diagnostics (stderr). */
  log: (line: string) => void;
  /** The provider's model and base URL, for the header line of a new recording. */
  model?: string;
  baseURL?: string;
}

/**
 * The URL of a request as recorded: no user info, secret-named query values (`key`, `api_key`,
 * `token`, …) replaced by `[redacted]`.
 */
export function cleanUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    for (const k of [...u.searchParams.keys()]) {
      if (/key|token|secret|password|auth|sig/i.test(k)) u.searchParams.set(k, "[redacted]");
    }
    return u.href;
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//");
  }
}

/** The kind of a provider URL: the model list or a chat completion. */
export function kindOf(url: string): "chat" | "models" {
  return /\/models\/?(?:\?|$)/.test(url) ? "models" : "chat";
}

/** `s` with `find` replaced everywhere (plain text). */
function replaceAll(s: string, find: string, by: string): string {
  return find ? s.split(find).join(by) : s;
}

/** A path as it appears inside a JSON string (backslashes and quotes escaped). */
const inJson = (p: string) => JSON.stringify(p).slice(1, -1);

/** The workspace and home directories of `ctx` replaced by their marks in JSON text. */
export function markPaths(json: string, ctx: TapeContext): string {
  let out = replaceAll(json, inJson(ctx.cwd), CWD_MARK);
  if (ctx.home && ctx.home !== "/" && ctx.home.length > 1) {
    out = replaceAll(out, inJson(ctx.home.replace(/\/+$/, "")), HOME_MARK);
  }
  return out;
}

/** The marks of {@link markPaths} replaced by the directories of `ctx` in JSON text. */
export function unmarkPaths(json: string, ctx: TapeContext): string {
  let out = replaceAll(json, CWD_MARK, inJson(ctx.cwd));
  if (ctx.home) out = replaceAll(out, HOME_MARK, inJson(ctx.home.replace(/\/+$/, "")));
  return out;
}

/** Which way a workspace's provider goes through a tape. */
export interface TapeOptions {
  /** `--record FILE` (absolute). */
  record?: string;
  /** `--replay FILE` (absolute). */
  replay?: string;
}

/** A record file that cannot be written or a replay file that cannot be read (a usage error). */
export class TapeError extends Error {
  override name = "TapeError";
}
