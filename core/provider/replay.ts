/**
 * `--replay FILE`: a `fetch` that answers every provider request from a recording
 * (core/provider/tape_format.ts) and never touches the network.
 *
 * Matching: a chat request is served by the first unused recorded exchange whose request body
 * is equal to it after normalisation — the workspace and home directories as their marks, every
 * ISO-8601 timestamp (`2026-12-02T01:06:57.123Z`, the agents' `{{__now__}}`) as `<time>`, session
 * ids (UUIDs) and the 8-hex tails of agent ids (`explore-1a2b3c4d`) as `<id>`, known secrets as
 * `[redacted]`. The ids of a matched request are paired with the recorded ones, and the answers
 * served after it carry this run's ids (a recorded `agent__send` reaches this run's child). Matching by content rather than by position keeps concurrent sub-agents
 * (whose requests interleave differently from run to run) replayable; equal requests are served
 * in recorded order, so a recorded 429 comes before its retry. A request with no equal recorded
 * one is a divergence: it is answered with HTTP 409 (`x-should-retry: false`), which the provider
 * reports as a rejected request (`bad_request`, exit code 1), and the message names the request's
 * number in this run, the recorded request it is closest to (the longest common run of messages)
 * and the first field that differs, with both values. The `GET /models` lookup takes the
 * recorded ones in order (a 404 when there are none: the window stays unknown, as offline).
 * The URL is not compared (a CI job has no provider configured; the recording's model and base
 * URL are the defaults then, core/session/workspace.ts).
 * @module
 */
import {
  kindOf,
  markPaths,
  TAPE_FORMAT,
  TAPE_VERSION,
  type TapeContext,
  TapeError,
  type TapeExchange,
  type TapeHeader,
  unmarkPaths,
} from "./tape_format.ts";

/** A loaded recording: its exchanges and which of them this process used. */
export interface Tape {
  file: string;
  header: TapeHeader;
  /** By `n`. */
  exchanges: TapeExchange[];
  used: Set<TapeExchange>;
  /** Chat requests made so far in this run. */
  chatRequests: number;
  /** A divergence was reported. */
  diverged: boolean;
  /** Recorded session/agent ids → this run's (see `learnIds`). */
  ids: Map<string, string>;
}

const tapes = new Map<string, Tape>();

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : undefined;

/** Checks one exchange line; the message names the line and the field. */
function checkExchange(v: unknown, where: string): TapeExchange {
  const x = obj(v);
  const bad = (field: string, want: string) =>
    new TapeError(`${where}: \`${field}\` must be ${want}`);
  if (!x || x.type !== "exchange") throw bad("type", '"exchange"');
  if (typeof x.n !== "number" || !Number.isInteger(x.n) || x.n < 1) {
    throw bad("n", "a positive integer");
  }
  if (x.kind !== "chat" && x.kind !== "models") throw bad("kind", '"chat" or "models"');
  const req = obj(x.request);
  if (!req || typeof req.url !== "string" || typeof req.method !== "string") {
    throw bad("request", "an object with method and url");
  }
  const res = obj(x.response);
  if (res) {
    if (typeof res.status !== "number") throw bad("response.status", "a number");
    if (!Array.isArray(res.body) || res.body.some((p) => typeof p !== "string")) {
      throw bad("response.body", "a list of strings");
    }
    if (res.end !== "done" && res.end !== "error" && res.end !== "aborted") {
      throw bad("response.end", '"done", "error" or "aborted"');
    }
    if (res.headers !== undefined && !obj(res.headers)) {
      throw bad("response.headers", "an object");
    }
  } else if (!obj(x.error) || typeof obj(x.error)!.message !== "string") {
    throw bad("response", "an object (or `error` with a message)");
  }
  return x as unknown as TapeExchange;
}

/**
 * Reads and checks a record file (once per process and path).
 * @throws TapeError naming the file, and the line and field that is wrong.
 */
export function loadTape(file: string): Tape {
  const hit = tapes.get(file);
  if (hit) return hit;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch (e) {
    throw new TapeError(`--replay ${file}: cannot read the file: ${(e as Error).message}`);
  }
  const lines = text.split("\n");
  let header: TapeHeader | undefined;
  const exchanges: TapeExchange[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim()) continue;
    const where = `--replay ${file}:${i + 1}`;
    let v: unknown;
    try {
      v = JSON.parse(lines[i]);
    } catch (e) {
      throw new TapeError(`${where}: not JSON (${(e as Error).message})`);
    }
    if (!header) {
      const h = obj(v);
      if (h?.format !== TAPE_FORMAT) {
        throw new TapeError(
          `${where}: not a Coyote recording (the first line must be {"format":"${TAPE_FORMAT}",` +
            `"version":${TAPE_VERSION},…}, as --record writes it)`,
        );
      }
      if (h.version !== TAPE_VERSION) {
        throw new TapeError(
          `${where}: recording format version ${JSON.stringify(h.version)}; ` +
            `this Coyote reads version ${TAPE_VERSION}`,
        );
      }
      header = h as unknown as TapeHeader;
      continue;
    }
    exchanges.push(checkExchange(v, where));
  }
  if (!header) throw new TapeError(`--replay ${file}: the file is empty (no recording header)`);
  exchanges.sort((a, b) => a.n - b.n);
  const tape: Tape = {
    file,
    header,
    exchanges,
    used: new Set(),
    chatRequests: 0,
    diverged: false,
    ids: new Map(),
  };
  tapes.set(file, tape);
  return tape;
}

const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g;
/** A session id (UUID) or the 8-hex tail of an agent id (`explore-1a2b3c4d`). */
const IDS =
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<=[a-z0-9]-)[0-9a-f]{8}(?![0-9a-f-])/g;

/** Timestamps as `<time>`, session and agent ids as `<id>` in every string of `v`. */
function normalise(v: unknown): unknown {
  if (typeof v === "string") return v.replace(ISO_TIME, "<time>").replace(IDS, "<id>");
  if (Array.isArray(v)) return v.map(normalise);
  const o = obj(v);
  if (!o) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) out[k] = normalise(x);
  return out;
}

/** The path of the first difference between `a` (recorded) and `b` (this run), or null. */
export function firstDiff(
  a: unknown,
  b: unknown,
  path: (string | number)[] = [],
): (string | number)[] | null {
  if (a === b) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= a.length || i >= b.length) return [...path, i];
      const d: (string | number)[] | null = firstDiff(a[i], b[i], [...path, i]);
      if (d) return d;
    }
    return null;
  }
  const oa = obj(a), ob = obj(b);
  if (oa && ob) {
    for (const k of new Set([...Object.keys(oa), ...Object.keys(ob)])) {
      if (!(k in oa) || !(k in ob)) return [...path, k];
      const d: (string | number)[] | null = firstDiff(oa[k], ob[k], [...path, k]);
      if (d) return d;
    }
    return null;
  }
  return path;
}

/** `messages[2].content` for a path. */
export function pathText(path: (string | number)[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : i ? `.${p}` : p).join("") ||
    "the body";
}

function at(v: unknown, path: (string | number)[]): unknown {
  let cur = v;
  for (const p of path) cur = (cur as Record<string | number, unknown> | undefined)?.[p];
  return cur;
}

/** Short quotes of the two values around the first differing character. */
function excerpts(a: unknown, b: unknown): [string, string] {
  if (typeof a === "string" && typeof b === "string") {
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    const from = Math.max(0, i - 12);
    const cut = (s: string) =>
      (from ? "…" : "") + JSON.stringify(s.slice(from, from + 40)) +
      (s.length > from + 40 ? "…" : "");
    return [cut(a), cut(b)];
  }
  const show = (v: unknown) => {
    if (v === undefined) return "nothing";
    const t = JSON.stringify(v) ?? String(v);
    return t.length > 50 ? t.slice(0, 50) + "…" : t;
  };
  return [show(a), show(b)];
}

/** How many leading messages two bodies share (the closeness of a recorded request). */
function commonMessages(a: unknown, b: unknown): number {
  const ma = obj(a)?.messages, mb = obj(b)?.messages;
  if (!Array.isArray(ma) || !Array.isArray(mb)) return 0;
  let i = 0;
  while (i < ma.length && i < mb.length && !firstDiff(ma[i], mb[i])) i++;
  return i;
}

const abortError = () => new DOMException("The signal has been aborted", "AbortError");

/** Resolves when `signal` aborts (never without one). */
function aborted(signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    signal?.addEventListener("abort", () => resolve(), { once: true });
  });
}

/**
 * Pairs the ids of a matched recorded request with this run's (same places, other values), so
 * the recorded answer can name this run's sub-agents (`agent__send {"agent_id": …}`).
 */
function learnIds(rec: unknown, live: unknown, ids: Map<string, string>): void {
  if (typeof rec === "string" && typeof live === "string") {
    if (rec === live) return;
    const a = rec.match(IDS) ?? [], b = live.match(IDS) ?? [];
    if (a.length === b.length) a.forEach((id, i) => id !== b[i] && ids.set(id, b[i]));
    return;
  }
  if (Array.isArray(rec) && Array.isArray(live)) {
    rec.forEach((x, i) => learnIds(x, live[i], ids));
    return;
  }
  const a = obj(rec), b = obj(live);
  if (a && b) { for (const k of Object.keys(a)) learnIds(a[k], b[k], ids); }
}

/** `text` with each recorded id this run knows under another value replaced by it. */
function mapIds(text: string, ids: Map<string, string>): string {
  return ids.size ? text.replace(IDS, (id) => ids.get(id) ?? id) : text;
}

/** The recorded response of `x`, with this run's directories and ids put back. */
async function serve(
  x: TapeExchange,
  ctx: TapeContext,
  signal: AbortSignal | null | undefined,
  ids: Map<string, string> = new Map(),
): Promise<Response> {
  if (signal?.aborted) throw abortError();
  if (!x.response) {
    if (x.error?.name === "AbortError") {
      await aborted(signal);
      throw abortError();
    }
    throw new TypeError(unmarkPaths(x.error?.message ?? "replayed failure", ctx));
  }
  const r = x.response;
  const enc = new TextEncoder();
  const pieces = r.body.map((p) => enc.encode(mapIds(unmarkPaths(p, ctx), ids)));
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      if (signal?.aborted) return c.error(abortError());
      if (i < pieces.length) return c.enqueue(pieces[i++]);
      if (r.end === "done") return c.close();
      if (r.end === "error") return c.error(new TypeError(r.error ?? "the stream broke off"));
      await aborted(signal);
      c.error(abortError());
    },
  });
  return new Response(body, {
    status: r.status,
    statusText: r.status_text ?? "",
    headers: r.headers ?? {},
  });
}

/** The answer to a diverging request: an HTTP 409 the provider reports and does not retry. */
function divergence(message: string): Response {
  return new Response(
    JSON.stringify({ error: { message, type: "replay_mismatch", code: "replay_mismatch" } }),
    {
      status: 409,
      statusText: "Conflict",
      headers: { "content-type": "application/json", "x-should-retry": "false" },
    },
  );
}

/** The replaying `fetch` for `file` (see the module doc). @throws TapeError (./tape_format.ts). */
export function replayFetch(file: string, ctx: TapeContext): typeof fetch {
  const tape = loadTape(file);
  warnUnusedAtExit(tape);
  return (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    const signal = init?.signal;
    const free = tape.exchanges.filter((x) => !tape.used.has(x) && x.kind === kindOf(url));
    if (kindOf(url) === "models") {
      const x = free[0];
      if (!x) return Promise.resolve(new Response("{}", { status: 404 }));
      tape.used.add(x);
      return serve(x, ctx, signal);
    }
    const k = ++tape.chatRequests;
    const raw = typeof init?.body === "string" ? init.body : "";
    let exact: unknown = raw;
    try {
      exact = JSON.parse(ctx.redact(markPaths(raw, ctx)));
    } catch { /* compared as text */ }
    const live = normalise(exact);
    let best: { x: TapeExchange; common: number } | undefined;
    for (const x of free) {
      const rec = normalise(x.request.body);
      if (!firstDiff(rec, live)) {
        tape.used.add(x);
        learnIds(x.request.body, exact, tape.ids);
        return serve(x, ctx, signal, tape.ids);
      }
      const common = commonMessages(rec, live);
      if (!best || common > best.common) best = { x, common };
    }
    let message: string;
    if (!best) {
      const total = tape.exchanges.filter((x) => x.kind === "chat").length;
      message = `replay: request ${k} is not in the recording: all ${total} recorded ` +
        `model requests were used (${file})`;
    } else {
      const rec = normalise(best.x.request.body);
      const path = firstDiff(rec, live)!;
      const [was, now] = excerpts(at(rec, path), at(live, path));
      const ordinal = tape.exchanges.filter((x) => x.kind === "chat").indexOf(best.x) + 1;
      message = `replay: request ${k} differs from recorded request ${ordinal} at ` +
        `${pathText(path)}: recorded ${was}, got ${now} (${file})`;
    }
    tape.diverged = true;
    ctx.log(`coyote: ${message}`);
    return Promise.resolve(divergence(message));
  };
}

const warned = new Set<Tape>();

/** At exit, one stderr line when recorded chat requests were never asked for. */
function warnUnusedAtExit(tape: Tape): void {
  if (warned.has(tape)) return;
  warned.add(tape);
  globalThis.addEventListener("unload", () => {
    const left = tape.exchanges.filter((x) => x.kind === "chat" && !tape.used.has(x)).length;
    if (!left || tape.diverged) return;
    try {
      Deno.stderr.writeSync(
        new TextEncoder().encode(
          `coyote: replay: ${left} recorded model request${left > 1 ? "s were" : " was"} ` +
            `not asked for (${tape.file})\n`,
        ),
      );
    } catch { /* stderr gone */ }
  });
}
