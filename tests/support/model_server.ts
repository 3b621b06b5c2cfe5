/**
 * A scripted OpenAI-compatible model server for tests and benchmarks: real HTTP/1.1
 * (keep-alive, chunked SSE) on 127.0.0.1, ephemeral port, speaking the Chat Completions wire format,
 * both non-streaming (`chat.completion`) and streaming (`chat.completion.chunk`
 * server-sent events ending in `data: [DONE]`, per the OpenAI API reference).
 *
 * Each `POST /v1/chat/completions` consumes the next {@link ScriptedReply}
 * (or asks the script function). Scripted faults: HTTP error statuses with
 * headers (`retry-after`), streams cut after N chunks, delays, hangs. When the
 * script runs out the server answers HTTP 500 `script exhausted` so a test
 * that makes an unexpected request fails visibly. `GET /v1/models` lists one
 * model, `scripted`.
 *
 * Servers as they really behave: `raw_chunks` sends exact SSE payloads (any shape a real server
 * streams), `error_body` + `error_content_type` any error body, `tool_call_indexes` the index
 * habits of servers that put every parallel call at index 0 or send none, `reasoning_field` the
 * DeepSeek or OpenRouter reasoning field. Per-request `rules` ({@link RequestRule}, ready-made
 * ones in {@link serverRules}) answer matching requests before the script is consulted — a
 * strict server that rejects `stream_options`, an assistant message without content, an image,
 * or a prompt over its window — without consuming a scripted reply.
 *
 * The HTTP layer is a small hand-written one over `Deno.listen` rather than `Deno.serve`
 * so that a scripted cut is exact and quiet: the first N chunks are on the wire, then the
 * socket closes without the terminating chunk (`Deno.serve` drops queued chunks and logs
 * a stack trace when a body stream errors).
 *
 * As a subprocess (benchmarks):
 *
 * ```sh
 * deno run --allow-net --allow-read tests/support/model_server.ts --script replies.json [--repeat]
 * deno run --allow-net tests/support/model_server.ts --script-json '[{"text":"hi"}]' [--repeat]
 * ```
 *
 * prints `{"baseURL":"http://127.0.0.1:PORT/v1"}` as its first stdout line,
 * then one line `{"event":"request","index":N,"time":EPOCH_MS,"path":"..."}`
 * as each chat request arrives (time has sub-millisecond precision), and
 * serves until killed. `--repeat` loops the script forever.
 * @module
 */

/** A tool call the scripted model makes. `arguments` objects are JSON-encoded. */
export interface ScriptedToolCall {
  /** Defaults to `call_<request>_<index>`. */
  id?: string;
  name: string;
  arguments: string | Record<string, unknown> | unknown[];
}

/** OpenAI `usage` object. */
export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One scripted reply to one chat-completions request. */
export interface ScriptedReply {
  /** Assistant text (`delta.content`). */
  text?: string;
  /** Reasoning text, sent as `delta.reasoning_content` (vLLM/DeepSeek convention). */
  reasoning?: string;
  /** Send reasoning as `delta.reasoning` (OpenRouter convention) instead. */
  reasoning_field?: "reasoning_content" | "reasoning";
  tool_calls?: ScriptedToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finish_reason?: string;
  /** Defaults to an estimate (chars / 4). Sent in the last chunk when `stream_options.include_usage`. */
  usage?: ScriptedUsage;
  /**
   * Error reply with this HTTP status (e.g. 429, 500); the body is `error_body` (a string is
   * sent as text/plain, anything else as JSON) or an OpenAI-style error object. With status 200
   * and an `error_body`, a proxy that answers errors with "200 OK".
   */
  status?: number;
  error_body?: unknown;
  /** Extra response headers, e.g. `{"retry-after": "1"}`. */
  headers?: Record<string, string>;
  /** Characters per text/reasoning chunk (default 4, so text arrives in many chunks). */
  chunk_size?: number;
  /** Tool-call argument characters per chunk (default: about a third of the arguments, at most 8). */
  split_arguments?: number;
  /** Interleave the argument chunks of parallel tool calls (default: one call after the other, like OpenAI). */
  interleave_tool_calls?: boolean;
  /** Stream: end the body after N `data:` chunks (no finish_reason, no `[DONE]`). */
  cut_after_chunks?: number;
  /** With `cut_after_chunks`: end the chunked body cleanly instead of resetting the connection. */
  cut_clean?: boolean;
  /** Send this as an SSE `data: {"error": …}` event after `after_chunks` chunks, then end the stream. */
  stream_error?: { after_chunks: number; error: unknown };
  /** Answer with a whole `chat.completion` JSON even when streaming was requested. */
  ignore_stream?: boolean;
  /** Delay before the response headers (ms). */
  delay_ms?: number;
  /** Delay between stream chunks (ms). */
  chunk_delay_ms?: number;
  /** Never respond (until the server closes). */
  hang?: boolean;
  /**
   * Stream: hold the last chunk back until this promise settles (tests that see output arrive
   * while the model is still streaming).
   */
  hold_last_chunk?: Promise<unknown>;
  /**
   * Stream exactly these SSE events instead of chunks built from the fields above: an object is
   * sent as `data: <json>`, a string is written verbatim (e.g. `"event: error\ndata: {...}\n\n"`).
   * `data: [DONE]` follows unless `omit_done`.
   */
  raw_chunks?: (string | Record<string, unknown>)[];
  /** With `raw_chunks`: end the stream without `data: [DONE]`. */
  omit_done?: boolean;
  /** Content type of an error reply (default: `text/plain` for a string body, else JSON). */
  error_content_type?: string;
  /**
   * Tool-call `index` habits: `distinct` (OpenAI, default), `zero` (every call at index 0,
   * told apart only by a new `id`), `absent` (no `index` field at all).
   */
  tool_call_indexes?: "distinct" | "zero" | "absent";
}

/**
 * A per-request rule: when `when(request)` holds, `reply` answers it and no scripted reply is
 * consumed. Rules are checked in order; `times` limits how often a rule fires (default: always).
 */
export interface RequestRule {
  when(req: RecordedRequest): boolean;
  reply: ScriptedReply | ((req: RecordedRequest) => ScriptedReply);
  times?: number;
}

/** A request the server received (chat completions only). */
export interface RecordedRequest {
  /** 0-based position among chat-completions requests. */
  index: number;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body (or the raw text when it is not JSON). */
  body: unknown;
  stream: boolean;
  /** `performance.timeOrigin + performance.now()` when the request arrived (epoch ms). */
  time: number;
}

export type Script =
  | ScriptedReply[]
  | ((req: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>);

export interface ModelServerOptions {
  script: Script;
  /** Loop an array script forever (benchmarks). */
  repeat?: boolean;
  /** Called as each chat request arrives (before its reply is produced). */
  onRequest?: (req: RecordedRequest) => void;
  /** Checked before the script for every chat request (see {@link RequestRule}). */
  rules?: RequestRule[];
  /** Extra fields of the `scripted` entry of `GET /v1/models` (e.g. vLLM `max_model_len`). */
  modelMeta?: Record<string, unknown>;
}

export interface ModelServer {
  /** `http://127.0.0.1:PORT/v1` */
  baseURL: string;
  port: number;
  requests: RecordedRequest[];
  /** Ends open streams and hanging requests, then stops the server. */
  close(): Promise<void>;
}

const MODEL_ID = "scripted";

/** Starts a scripted server on 127.0.0.1 with an ephemeral port. */
export function startModelServer(opts: ModelServerOptions): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  const conns = new Set<Deno.Conn>();
  const tasks = new Set<Promise<void>>();
  let nextIndex = 0;
  const fired = new Map<RequestRule, number>();
  let scripted = 0;

  const handle = async (req: RawRequest): Promise<Output> => {
    const path = req.target.split("?")[0];
    if (req.method === "GET" && path === "/v1/models") {
      return json(200, {
        object: "list",
        data: [{
          id: MODEL_ID,
          object: "model",
          created: 0,
          owned_by: "coyote-tests",
          ...opts.modelMeta,
        }],
      });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return json(404, errorBody(`no route for ${req.method} ${path}`, "not_found"));
    }
    const raw = new TextDecoder().decode(req.body);
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch { /* recorded as text */ }
    const b = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
    const index = nextIndex++;
    const rec: RecordedRequest = {
      index,
      path,
      headers: req.headers,
      body,
      stream: b.stream === true,
      time: req.time,
    };
    requests.push(rec);
    opts.onRequest?.(rec);

    let reply: ScriptedReply | undefined;
    const rule = matchRule(opts.rules, rec, fired);
    if (rule) reply = rule;
    else if (typeof opts.script === "function") {
      reply = await opts.script(rec, index);
    } else if (opts.script.length > 0) {
      // Requests answered by a rule do not consume a scripted reply.
      const at = scripted++;
      reply = opts.repeat ? opts.script[at % opts.script.length] : opts.script[at];
    }
    if (!reply) {
      return json(
        500,
        errorBody(`script exhausted: request #${index} has no scripted reply`, "server_error"),
      );
    }
    if (reply.hang) {
      await waitAborted(closing.signal);
      return { kind: "drop" };
    }
    if (reply.delay_ms) await sleep(reply.delay_ms, closing.signal);

    const extra = reply.headers ?? {};
    if (reply.status && (reply.status >= 400 || reply.error_body !== undefined)) {
      const errBody = reply.error_body ?? errorBody(
        `scripted error ${reply.status}`,
        reply.status === 429 ? "rate_limit_exceeded" : "server_error",
      );
      return json(
        reply.status,
        errBody,
        reply.error_content_type ? { "content-type": reply.error_content_type, ...extra } : extra,
      );
    }
    const model = typeof b.model === "string" ? b.model : MODEL_ID;
    const usage = reply.usage ?? estimateUsage(b.messages, reply);
    if (!rec.stream || reply.ignore_stream) {
      return json(200, completionObject(reply, index, model, usage), extra);
    }
    const includeUsage = (b.stream_options as { include_usage?: boolean } | undefined)
      ?.include_usage === true;
    const chunks = reply.raw_chunks
      ? [...reply.raw_chunks]
      : streamChunks(reply, index, model, includeUsage ? usage : undefined);
    return { kind: "sse", chunks, reply, headers: extra };
  };

  const serveConn = async (conn: Deno.Conn) => {
    const reader = new RequestReader(conn);
    try {
      while (!closing.signal.aborted) {
        const req = await reader.next();
        if (!req) break;
        const out = await handle(req);
        if (closing.signal.aborted) break;
        const keep = await writeOutput(conn, out, closing.signal);
        if (!keep || req.headers["connection"]?.toLowerCase() === "close") break;
      }
    } catch {
      // Client went away, bad request, or the server is closing.
    } finally {
      conns.delete(conn);
      try {
        conn.close();
      } catch { /* already closed */ }
    }
  };

  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const acceptLoop = (async () => {
    try {
      for await (const conn of listener) {
        // Small writes (SSE chunks) must not wait for Nagle + delayed ACK (~40 ms each).
        (conn as Deno.TcpConn).setNoDelay?.(true);
        conns.add(conn);
        const t = serveConn(conn);
        tasks.add(t);
        t.finally(() => tasks.delete(t));
      }
    } catch { /* listener closed */ }
  })();

  let closed: Promise<void> | undefined;
  return Promise.resolve({
    baseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close() {
      closed ??= (async () => {
        closing.abort();
        try {
          listener.close();
        } catch { /* already closed */ }
        for (const c of conns) {
          try {
            c.close();
          } catch { /* already closed */ }
        }
        await acceptLoop;
        await Promise.allSettled([...tasks]);
      })();
      return closed;
    },
  });
}

interface RawRequest {
  method: string;
  target: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: Uint8Array;
  time: number;
}

type Output =
  | { kind: "json"; status: number; body: unknown; headers: Record<string, string> }
  | { kind: "sse"; chunks: unknown[]; reply: ScriptedReply; headers: Record<string, string> }
  | { kind: "drop" };

const CRLF2 = [13, 10, 13, 10];

/** Reads HTTP/1.1 requests (Content-Length or chunked bodies) from one connection. */
class RequestReader {
  #buf = new Uint8Array(0);
  constructor(private conn: Deno.Conn) {}

  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(64 * 1024);
    const n = await this.conn.read(chunk);
    if (n === null) return false;
    const merged = new Uint8Array(this.#buf.length + n);
    merged.set(this.#buf);
    merged.set(chunk.subarray(0, n), this.#buf.length);
    this.#buf = merged;
    return true;
  }

  #take(n: number): Uint8Array {
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.slice(n);
    return out;
  }

  async #line(): Promise<string> {
    for (;;) {
      const i = this.#buf.indexOf(10);
      if (i >= 0) return new TextDecoder().decode(this.#take(i + 1)).trimEnd();
      if (!(await this.#fill())) throw new Error("connection closed mid-request");
    }
  }

  async #bytes(n: number): Promise<Uint8Array> {
    while (this.#buf.length < n) {
      if (!(await this.#fill())) throw new Error("connection closed mid-body");
    }
    return this.#take(n);
  }

  /** The next request, or null when the client closed the connection cleanly. */
  async next(): Promise<RawRequest | null> {
    let end: number;
    for (;;) {
      end = indexOfSeq(this.#buf, CRLF2);
      if (end >= 0) break;
      if (!(await this.#fill())) {
        if (this.#buf.length === 0) return null;
        throw new Error("connection closed mid-headers");
      }
    }
    const head = new TextDecoder().decode(this.#take(end + 4)).split("\r\n");
    const [method, target] = head[0].split(" ");
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const c = line.indexOf(":");
      if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
    }
    let body: Uint8Array;
    if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) {
      const parts: Uint8Array[] = [];
      for (;;) {
        const size = parseInt(await this.#line(), 16);
        if (!size) {
          // trailers until an empty line
          while ((await this.#line()) !== "");
          break;
        }
        parts.push(await this.#bytes(size));
        await this.#bytes(2);
      }
      body = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let off = 0;
      for (const p of parts) {
        body.set(p, off);
        off += p.length;
      }
    } else {
      body = await this.#bytes(Number(headers["content-length"] ?? 0));
    }
    return { method, target, headers, body, time: performance.timeOrigin + performance.now() };
  }
}

function indexOfSeq(buf: Uint8Array, seq: number[]): number {
  outer: for (let i = 0; i + seq.length <= buf.length; i++) {
    for (let j = 0; j < seq.length; j++) if (buf[i + j] !== seq[j]) continue outer;
    return i;
  }
  return -1;
}

const REASONS: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

function head(status: number, headers: Record<string, string>): Uint8Array {
  const lines = [`HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n");
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  for (let off = 0; off < data.length;) off += await conn.write(data.subarray(off));
}

/** Writes one response; resolves false when the connection must be closed. */
async function writeOutput(conn: Deno.Conn, out: Output, closing: AbortSignal): Promise<boolean> {
  const enc = new TextEncoder();
  if (out.kind === "drop") return false;
  if (out.kind === "json") {
    const text = typeof out.body === "string";
    const body = enc.encode(text ? out.body as string : JSON.stringify(out.body));
    const h = head(out.status, {
      "content-type": text ? "text/plain" : "application/json",
      ...out.headers,
      "content-length": String(body.length),
    });
    const all = new Uint8Array(h.length + body.length);
    all.set(h);
    all.set(body, h.length);
    await writeAll(conn, all);
    return true;
  }
  const { reply, chunks } = out;
  await writeAll(
    conn,
    head(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "transfer-encoding": "chunked",
      ...out.headers,
    }),
  );
  const frame = (s: string) => {
    const data = enc.encode(s);
    const pre = enc.encode(data.length.toString(16) + "\r\n");
    const buf = new Uint8Array(pre.length + data.length + 2);
    buf.set(pre);
    buf.set(data, pre.length);
    buf.set([13, 10], pre.length + data.length);
    return buf;
  };
  const cut = reply.cut_after_chunks;
  let sent = 0;
  for (const ch of chunks) {
    if (reply.stream_error && sent >= reply.stream_error.after_chunks) {
      const ev = frame(`data: ${JSON.stringify({ error: reply.stream_error.error })}\n\n`);
      const end = new Uint8Array(ev.length + 5);
      end.set(ev);
      end.set(enc.encode("0\r\n\r\n"), ev.length);
      await writeAll(conn, end);
      return true;
    }
    if (cut !== undefined && sent >= cut) {
      if (!reply.cut_clean) return false; // abrupt: no terminating chunk, connection closed
      await writeAll(conn, enc.encode("0\r\n\r\n"));
      return true;
    }
    if (sent > 0 && reply.chunk_delay_ms) await sleep(reply.chunk_delay_ms, closing);
    if (reply.hold_last_chunk && sent === chunks.length - 1) {
      await Promise.race([
        reply.hold_last_chunk.catch(() => {}),
        new Promise((r) => closing.addEventListener("abort", r, { once: true })),
      ]);
    }
    if (closing.aborted) return false;
    await writeAll(conn, frame(typeof ch === "string" ? ch : `data: ${JSON.stringify(ch)}\n\n`));
    sent++;
  }
  if (reply.omit_done) {
    await writeAll(conn, enc.encode("0\r\n\r\n"));
    return true;
  }
  const done = frame("data: [DONE]\n\n");
  const end = new Uint8Array(done.length + 5);
  end.set(done);
  end.set(enc.encode("0\r\n\r\n"), done.length);
  await writeAll(conn, end);
  return true;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Output {
  return { kind: "json", status, body, headers };
}

function errorBody(message: string, type: string) {
  return { error: { message, type, param: null, code: type } };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function waitAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
}

function argsText(a: ScriptedToolCall["arguments"]): string {
  return typeof a === "string" ? a : JSON.stringify(a);
}

function estimateUsage(messages: unknown, reply: ScriptedReply): ScriptedUsage {
  const prompt = Math.ceil(JSON.stringify(messages ?? []).length / 4);
  const out = (reply.text ?? "").length + (reply.reasoning ?? "").length +
    (reply.tool_calls ?? []).reduce((n, t) => n + t.name.length + argsText(t.arguments).length, 0);
  const completion = Math.ceil(out / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
}

function finishReason(reply: ScriptedReply): string {
  return reply.finish_reason ?? (reply.tool_calls?.length ? "tool_calls" : "stop");
}

function toolCallId(reply: ScriptedReply, req: number, i: number): string {
  return reply.tool_calls?.[i]?.id ?? `call_${req}_${i}`;
}

function completionObject(
  reply: ScriptedReply,
  index: number,
  model: string,
  usage: ScriptedUsage,
) {
  const message: Record<string, unknown> = { role: "assistant", content: reply.text ?? null };
  if (reply.reasoning) message[reply.reasoning_field ?? "reasoning_content"] = reply.reasoning;
  if (reply.tool_calls?.length) {
    message.tool_calls = reply.tool_calls.map((t, i) => ({
      id: toolCallId(reply, index, i),
      type: "function",
      function: { name: t.name, arguments: argsText(t.arguments) },
    }));
  }
  return {
    id: `chatcmpl-scripted-${index}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason(reply), logprobs: null }],
    usage,
  };
}

function pieces(s: string, size: number): string[] {
  const n = Math.max(1, Math.floor(size));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

/** The `data:` payloads of one streamed reply, in order (without `[DONE]`). */
function streamChunks(
  reply: ScriptedReply,
  index: number,
  model: string,
  usage: ScriptedUsage | undefined,
): unknown[] {
  const id = `chatcmpl-scripted-${index}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const size = reply.chunk_size ?? 4;
  const out: unknown[] = [chunk({ role: "assistant", content: "" })];
  const field = reply.reasoning_field ?? "reasoning_content";
  for (const p of pieces(reply.reasoning ?? "", size)) out.push(chunk({ [field]: p }));
  for (const p of pieces(reply.text ?? "", size)) out.push(chunk({ content: p }));

  const calls = (reply.tool_calls ?? []).map((t, i) => {
    const args = argsText(t.arguments);
    const split = reply.split_arguments ?? Math.min(8, Math.max(1, Math.ceil(args.length / 3)));
    const parts = pieces(args, split);
    const habit = reply.tool_call_indexes ?? "distinct";
    const at = (d: Record<string, unknown>) =>
      habit === "absent" ? d : { index: habit === "zero" ? 0 : i, ...d };
    const first = at({
      id: toolCallId(reply, index, i),
      type: "function",
      function: { name: t.name, arguments: "" },
    });
    return [first, ...parts.map((p) => at({ function: { arguments: p } }))];
  });
  if (reply.interleave_tool_calls) {
    const longest = Math.max(0, ...calls.map((c) => c.length));
    for (let k = 0; k < longest; k++) {
      for (const c of calls) if (c[k]) out.push(chunk({ tool_calls: [c[k]] }));
    }
  } else {
    for (const c of calls) for (const d of c) out.push(chunk({ tool_calls: [d] }));
  }
  out.push(chunk({}, finishReason(reply)));
  if (usage) out.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  return out;
}

function matchRule(
  rules: RequestRule[] | undefined,
  req: RecordedRequest,
  fired: Map<RequestRule, number>,
): ScriptedReply | undefined {
  for (const r of rules ?? []) {
    const n = fired.get(r) ?? 0;
    if (r.times !== undefined && n >= r.times) continue;
    if (!r.when(req)) continue;
    fired.set(r, n + 1);
    return typeof r.reply === "function" ? r.reply(req) : r.reply;
  }
  return undefined;
}

type Msg = {
  role?: string;
  content?: unknown;
  tool_calls?: unknown[];
  [k: string]: unknown;
};

/**
 * The script "run these shell commands in one response, then say `done`": one reply whose
 * `tool_calls` are `execute_command` calls (the key of `commands` is the call id), then a text
 * reply. Shared by the sandbox attack tests.
 */
export function commandBatch(commands: Record<string, string>): ScriptedReply[] {
  return [
    {
      tool_calls: Object.entries(commands).map(([id, command]) => ({
        id,
        name: "execute_command",
        arguments: { command },
      })),
    },
    { text: "done" },
  ];
}

/** The `messages` of a recorded request ([] when absent). */
export function requestMessages(req: RecordedRequest): Msg[] {
  const m = (req.body as { messages?: unknown } | null)?.messages;
  return Array.isArray(m) ? m as Msg[] : [];
}

/**
 * Ready-made rules that make the scripted server as strict as real ones. Each error reply uses
 * the body shape of the server family it mimics.
 */
export const serverRules = {
  /** Mistral-style: HTTP 422, FastAPI detail list, when the body has `field` (e.g. `stream_options`). */
  rejectsField(field: string): RequestRule {
    return {
      when: (r) => !!r.body && typeof r.body === "object" && field in (r.body as object),
      reply: {
        status: 422,
        error_body: {
          object: "error",
          message: {
            detail: [{
              type: "extra_forbidden",
              loc: ["body", field],
              msg: "Extra inputs are not permitted",
            }],
          },
          type: "invalid_request_message_error",
        },
      },
    };
  },
  /**
   * DeepSeek thinking mode: HTTP 400 when an assistant message with `tool_calls` comes back
   * without its reasoning in `field`.
   */
  requiresReasoningBack(
    field: "reasoning_content" | "reasoning" = "reasoning_content",
  ): RequestRule {
    return {
      when: (r) =>
        requestMessages(r).some((m) =>
          m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0 &&
          typeof m[field] !== "string"
        ),
      reply: {
        status: 400,
        error_body: {
          error: {
            message: `Missing \`${field}\` field in the assistant message at message index 2. ` +
              "The reasoning content in thinking mode must be passed back to the API.",
            type: "invalid_request_error",
          },
        },
      },
    };
  },
  /** OpenAI-style: HTTP 400 for an assistant message with neither content nor tool calls. */
  rejectsEmptyAssistant(): RequestRule {
    return {
      when: (r) =>
        requestMessages(r).some((m) =>
          m.role === "assistant" && !(Array.isArray(m.tool_calls) && m.tool_calls.length) &&
          (m.content === null || m.content === undefined || m.content === "")
        ),
      reply: {
        status: 400,
        error_body: {
          error: {
            message:
              "Invalid value for 'content': expected a string, got null. (messages: assistant message must have content or tool_calls)",
            type: "invalid_request_error",
          },
        },
      },
    };
  },
  /** Chat templates that insist roles alternate (vLLM/TGI with Mistral or Llama templates). */
  requiresAlternatingRoles(): RequestRule {
    return {
      when: (r) => {
        const roles = requestMessages(r).map((m) => m.role).filter((x) =>
          x === "user" || x === "assistant"
        );
        return roles.some((x, i) => i > 0 && x === "user" && roles[i - 1] === "user");
      },
      reply: {
        status: 400,
        error_body: {
          object: "error",
          message: "Conversation roles must alternate user/assistant/user/assistant/...",
          type: "BadRequestError",
          code: 400,
        },
      },
    };
  },
  /** A text-only model (vLLM wording): HTTP 400 for any `image_url` part. */
  rejectsImages(): RequestRule {
    return {
      when: (r) => JSON.stringify(requestMessages(r)).includes('"image_url"'),
      reply: {
        status: 400,
        error_body: {
          object: "error",
          message: "This model does not support image input (image_url content parts).",
          type: "BadRequestError",
          code: 400,
        },
      },
    };
  },
  /**
   * A window of `tokens` (estimated as characters / 4 of the messages): larger prompts get the
   * vLLM/OpenAI HTTP 400 `context_length_exceeded` naming the window, or HTTP 413 when `status`
   * is 413 (a proxy's body limit, plain text).
   */
  contextWindow(tokens: number, status: 400 | 413 = 400): RequestRule {
    const size = (r: RecordedRequest) => Math.ceil(JSON.stringify(requestMessages(r)).length / 4);
    return {
      when: (r) => size(r) > tokens,
      reply: (r) =>
        status === 413 ? { status: 413, error_body: "413 Request Entity Too Large" } : {
          status: 400,
          error_body: {
            error: {
              message: `This model's maximum context length is ${tokens} tokens. However, ` +
                `your messages resulted in ${
                  size(r)
                } tokens. Please reduce the length of the messages.`,
              type: "invalid_request_error",
              param: "messages",
              code: "context_length_exceeded",
            },
          },
        },
    };
  },
};

function parseArgs(args: string[]): { script: ScriptedReply[]; repeat: boolean } {
  let script: ScriptedReply[] | undefined;
  let repeat = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--repeat") repeat = true;
    else if (a === "--script") {
      const file = args[++i];
      if (!file) throw new Error("--script needs a file");
      script = JSON.parse(Deno.readTextFileSync(file));
    } else if (a === "--script-json") {
      script = JSON.parse(args[++i] ?? "");
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!Array.isArray(script)) {
    throw new Error("usage: model_server.ts --script FILE.json | --script-json JSON [--repeat]");
  }
  return { script, repeat };
}

if (import.meta.main) {
  try {
    const { script, repeat } = parseArgs(Deno.args);
    const enc = new TextEncoder();
    const write = (o: unknown) => Deno.stdout.writeSync(enc.encode(JSON.stringify(o) + "\n"));
    const server = await startModelServer({
      script,
      repeat,
      onRequest: (r) => write({ event: "request", index: r.index, time: r.time, path: r.path }),
    });
    write({ baseURL: server.baseURL });
  } catch (e) {
    console.error(`model_server: ${e instanceof Error ? e.message : e}`);
    Deno.exit(2);
  }
}
