/**
 * `--record FILE`: a `fetch` that passes every provider request through to the network and
 * writes the exchange to FILE as it ends (the format is core/provider/tape_format.ts). The response Coyote
 * reads is a copy of the one received, chunk for chunk, so recording changes nothing about a run.
 * One file per process: every workspace (ACP sessions in several directories) appends to it.
 * Lines are written synchronously, so a run that ends (or exits) never loses a finished exchange.
 * @module
 */
import {
  cleanUrl,
  KEPT_HEADERS,
  kindOf,
  markPaths,
  TAPE_FORMAT,
  TAPE_VERSION,
  type TapeContext,
  TapeError,
  type TapeExchange,
  type TapeHeader,
} from "./tape_format.ts";

interface Writer {
  file: Deno.FsFile;
  /** Requests sent so far (the next one is `n + 1`). */
  n: number;
}

const writers = new Map<string, Writer>();
const enc = new TextEncoder();

function writerFor(path: string, ctx: TapeContext): Writer {
  let w = writers.get(path);
  if (w) return w;
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { write: true, create: true, truncate: true });
  } catch (e) {
    throw new TapeError(`--record ${path}: cannot create the file: ${(e as Error).message}`);
  }
  const header: TapeHeader = {
    format: TAPE_FORMAT,
    version: TAPE_VERSION,
    created: new Date().toISOString(),
    ...(ctx.model ? { model: ctx.model } : {}),
    ...(ctx.baseURL ? { base_url: cleanUrl(ctx.baseURL) } : {}),
  };
  writeLine(file, ctx.redact(JSON.stringify(header)));
  writers.set(path, w = { file, n: 0 });
  return w;
}

function writeLine(file: Deno.FsFile, line: string): void {
  const bytes = enc.encode(line + "\n");
  for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
}

/** The message of a failed fetch or body read, with its cause (as core/provider/retry.ts reads it). */
export function errorMessage(e: unknown): string {
  const err = e as { message?: string; cause?: { message?: string } };
  const msg = typeof err?.message === "string" ? err.message : String(e);
  const cause = err?.cause?.message;
  return cause && !msg.includes(cause) ? `${msg} (${cause})` : msg;
}

const isAbort = (e: unknown) => (e as { name?: string })?.name === "AbortError";

/** Body text split after each blank line (an SSE event per piece); joined, the text itself. */
export function splitEvents(text: string): string[] {
  return text ? text.split(/(?<=\r?\n\r?\n)/) : [];
}

/** The recording `fetch` for `path` (see the module doc). @throws TapeError */
export function recordFetch(path: string, ctx: TapeContext): typeof fetch {
  const w = writerFor(path, ctx);
  const write = (x: TapeExchange) => {
    try {
      writeLine(w.file, ctx.redact(markPaths(JSON.stringify(x), ctx)));
    } catch (e) {
      ctx.log(`coyote: --record ${path}: cannot write: ${(e as Error).message}`);
    }
  };
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const n = ++w.n;
    const url = input instanceof Request ? input.url : String(input);
    const raw = typeof init?.body === "string" ? init.body : undefined;
    let body: unknown = raw;
    try {
      if (raw !== undefined) body = JSON.parse(raw);
    } catch { /* kept as text */ }
    const request = {
      method: init?.method ?? "GET",
      url: cleanUrl(url),
      ...(body !== undefined ? { body } : {}),
    };
    const base = { type: "exchange" as const, n, kind: kindOf(url), request };
    let res: Response;
    try {
      res = await fetch(input, init);
    } catch (e) {
      write({
        ...base,
        error: { message: errorMessage(e), ...(isAbort(e) ? { name: "AbortError" } : {}) },
      });
      throw e;
    }
    const headers: Record<string, string> = {};
    for (const h of KEPT_HEADERS) {
      const v = res.headers.get(h);
      if (v !== null) headers[h] = v;
    }
    const head = { status: res.status, status_text: res.statusText, headers };
    if (!res.body) {
      write({ ...base, response: { ...head, body: [], end: "done" } });
      return res;
    }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let text = "";
    let written = false;
    const finish = (end: "done" | "error" | "aborted", error?: string) => {
      if (written) return;
      written = true;
      text += dec.decode();
      write({
        ...base,
        response: { ...head, body: splitEvents(text), end, ...(error ? { error } : {}) },
      });
    };
    const copy = new ReadableStream<Uint8Array>({
      async pull(c) {
        try {
          const { value, done } = await reader.read();
          if (done) {
            finish("done");
            c.close();
            return;
          }
          text += dec.decode(value, { stream: true });
          c.enqueue(value);
        } catch (e) {
          if (isAbort(e) || init?.signal?.aborted) finish("aborted");
          else finish("error", errorMessage(e));
          c.error(e);
        }
      },
      cancel(reason) {
        finish("aborted");
        return reader.cancel(reason);
      },
    });
    return new Response(copy, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}
