/**
 * What an OpenAI-compatible server said when it refused a request: one readable line from
 * every error shape seen in the field, and the facts the provider acts on.
 *
 * Error shapes ({@link errorText}):
 * - OpenAI: `{"error": {"message": "…", "type", "code"}}`; `{"error": "…"}`.
 * - vLLM, LM Studio, many proxies: `{"message": "…"}` (vLLM also `{"object":"error","message"}`).
 * - FastAPI / pydantic servers: `{"detail": "…"}` or `{"detail": [{"loc": [...], "msg": "…"}]}`;
 *   Mistral nests that list: `{"message": {"detail": [...]}}`.
 * - OpenRouter: `{"error": {"message": "Provider returned error", "metadata": {"raw": "…",
 *   "provider_name": "…"}}}` — the upstream's own text is in `metadata.raw`.
 * - Plain text, HTML error pages of proxies (the `<title>` is used), or an empty body.
 *
 * Facts: whether an error is a context-window overflow ({@link isContextOverflow}) and the window
 * it names ({@link contextLimitFrom}); which optional request field a server rejects
 * ({@link rejectedField}); whether a transport failure is a DNS failure or a refused connection
 * ({@link transportKind}); the HTTP status an error event inside a stream carries
 * ({@link inStreamStatus}). Any error as one line of at most 300 characters: {@link oneLine}.
 * @module
 */
import { headText } from "../util/text.ts";

/** The readable message of an error body (parsed JSON or raw text); "" when there is none. */
export function errorText(body: unknown): string {
  if (typeof body === "string") return plainText(body);
  return fromJson(body, 0) ?? "";
}

/** Parses a raw body and returns its message; `status`/`statusText` describe an empty body. */
export function httpErrorText(raw: string, status: number, statusText = ""): string {
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch { /* plain text */ }
  const text = errorText(parsed);
  if (text) return text;
  return `${status}${statusText ? " " + statusText : ""} (empty body)`;
}

function plainText(s: string): string {
  const t = s.trim();
  if (!t) return "";
  if (/^<(!doctype|html|head|body)\b/i.test(t)) {
    // A proxy's HTML error page: its title says it ("502 Bad Gateway").
    const title = t.match(/<title[^>]*>([^<]*)<\/title>/i)?.[1];
    const h1 = t.match(/<h1[^>]*>([^<]*)<\/h1>/i)?.[1];
    const txt = (title || h1 || t.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
    return txt;
  }
  return t;
}

const MESSAGE_KEYS = ["error", "message", "detail", "msg", "error_message", "errors", "title"];

function fromJson(v: unknown, depth: number): string | undefined {
  if (depth > 5 || v === null || v === undefined) return undefined;
  if (typeof v === "string") return plainText(v) || undefined;
  if (typeof v === "number" || typeof v === "boolean") return undefined;
  if (Array.isArray(v)) {
    // FastAPI/pydantic validation list: [{loc: ["body", "stream_options"], msg: "…"}]
    const parts = v.map((item) => {
      if (item && typeof item === "object" && typeof (item as { msg?: unknown }).msg === "string") {
        const { loc, msg } = item as { loc?: unknown; msg: string };
        const where = Array.isArray(loc) ? loc.filter((x) => x !== "body").join(".") : "";
        return where ? `${where}: ${msg}` : msg;
      }
      return fromJson(item, depth + 1);
    }).filter((p): p is string => !!p);
    return parts.length ? parts.join("; ") : undefined;
  }
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    for (const k of MESSAGE_KEYS) {
      const t = fromJson(o[k], depth + 1);
      if (!t) continue;
      const meta = o.metadata as { raw?: unknown; provider_name?: unknown } | undefined;
      if (k === "message" && meta && meta.raw !== undefined) {
        const raw = typeof meta.raw === "string" ? httpErrorText(meta.raw, 0) : errorText(meta.raw);
        const who = typeof meta.provider_name === "string" ? `${meta.provider_name}: ` : "";
        if (raw && !raw.endsWith("(empty body)")) return `${t} (${who}${raw})`;
      }
      return t;
    }
  }
  return undefined;
}

const OVERFLOW_RE =
  /context[_ ]length[_ ]exceeded|maximum context length|context (?:window|length|size)|exceed_context_size|too many tokens|prompt is too long|input is too long|reduce the length of the (?:messages|prompt)|string too long/i;

/**
 * True when the error says the prompt does not fit the model's window: HTTP 413, or a 400-class
 * (or in-stream) error naming it (`context_length_exceeded`, "maximum context length", llama.cpp
 * `exceed_context_size_error`, "prompt is too long"). A 429 is never an overflow (OpenAI's
 * "Request too large … tokens per min" is a rate limit).
 */
export function isContextOverflow(status: number | undefined, text: string): boolean {
  if (status === 413) return true;
  if (status === 429) return false;
  return OVERFLOW_RE.test(text);
}

/**
 * The context window (tokens) an overflow error names, if any: vLLM/OpenAI "maximum context length
 * is 8192 tokens", llama.cpp `n_ctx`, "… > 200000 maximum". Undefined when none is named.
 */
export function contextLimitFrom(text: string, body?: unknown): number | undefined {
  const nctx = (body as { error?: { n_ctx?: unknown } } | undefined)?.error?.n_ctx;
  if (typeof nctx === "number" && nctx > 0) return nctx;
  const patterns = [
    /maximum context length (?:is|of) (\d+)/i,
    /context (?:window|length|size) (?:is |of )?(\d+)/i,
    /n_ctx["']?\s*[:=]\s*(\d+)/i,
    />\s*(\d+) (?:tokens )?maximum/i,
  ];
  for (const re of patterns) {
    const n = Number(text.match(re)?.[1]);
    if (Number.isFinite(n) && n > 0) return n;
  }
  return undefined;
}

/** Optional request fields a server may refuse; the provider drops a refused one and retries once. */
export type OptionalField =
  | "stream_options"
  | "temperature"
  | "top_p"
  | "reasoning_effort"
  | "reasoning_content";

/**
 * Which optional field (of those sent) a 400/422 error's own message names (`text`: the
 * server's message and any OpenAI `param`, never the request it echoes): Mistral-style 422 "extra inputs are
 * not permitted" at `stream_options`, OpenAI reasoning models refusing `temperature`, a server
 * refusing `reasoning_content` in assistant messages. Undefined when none is named.
 */
export function rejectedField(
  status: number | undefined,
  text: string,
  sent: OptionalField[],
): OptionalField | undefined {
  if (status !== undefined && status !== 400 && status !== 422) return undefined;
  // A name as a JSON key (`"stream_options": {…}`) is the server echoing the request body back
  // (pydantic's `input`, a text/plain dump of what it got), not a refusal of that field.
  text = text.replace(/"[A-Za-z_]+"\s*:/g, " ");
  for (const f of sent) {
    const re = f === "stream_options"
      ? /\bstream_options\b|\binclude_usage\b/
      : f === "reasoning_content"
      ? /\breasoning_(?:content|details)\b/
      : new RegExp(`\\b${f}\\b`);
    if (re.test(text)) return f;
  }
  return undefined;
}

/**
 * Classifies a transport failure message (fetch `TypeError`, Deno/Node wording): `dns` for a
 * failed name lookup, `refused` for a refused connection, undefined otherwise.
 */
export function transportKind(message: string): "dns" | "refused" | undefined {
  if (
    /dns error|failed to lookup|name or service not known|nodename nor servname|ENOTFOUND|EAI_AGAIN|no address associated|Temporary failure in name resolution/i
      .test(message)
  ) return "dns";
  if (/connection refused|ECONNREFUSED|os error 111|os error 61\b/i.test(message)) return "refused";
  return undefined;
}

/**
 * The HTTP status an error event inside a stream carries (`{"error": {"code": 400}}` from vLLM
 * and OpenRouter, `"status"`), or undefined when it names none.
 */
export function inStreamStatus(error: unknown): number | undefined {
  if (!error || typeof error !== "object") return undefined;
  const e = error as { code?: unknown; status?: unknown; status_code?: unknown };
  for (const v of [e.code, e.status, e.status_code]) {
    const n = typeof v === "number"
      ? v
      : typeof v === "string" && /^\d{3}$/.test(v)
      ? Number(v)
      : NaN;
    if (n >= 400 && n <= 599) return n;
  }
  return undefined;
}

/** Any error or message as one line: whitespace collapsed, at most 300 characters. */
export function oneLine(e: unknown): string {
  const s = e instanceof Error ? e.message : typeof e === "string" ? e : String(e);
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > 300 ? headText(line, 297) + "..." : line;
}
