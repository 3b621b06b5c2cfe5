/**
 * Incoming-line limit of the ACP server. The SDK's `ndJsonStream` ends the whole connection
 * (and with it every session) when one line exceeds its 32 MiB buffer; {@link limitLines}
 * sits in front of it, drops an oversized line and answers it with a JSON-RPC `-32600`
 * error carrying the request's `id` when it can be found in the line's first or last
 * 4 KiB (else `id: null`), so the client's request does not hang and the agent keeps running.
 * @module
 */

/** Largest accepted line in bytes (the ACP SDK's `DEFAULT_MAX_MESSAGE_BYTES`, 32 MiB). */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

const EDGE = 4096;
const NL = 0x0a;

/** Details of a refused line. */
export interface OversizedLine {
  /** The request id found in the line, or `null`. */
  id: string | number | null;
  /** Bytes of the line (without its newline). */
  bytes: number;
}

/**
 * Re-chunks `input` into whole lines (each ending in `\n`; a last line without newline is
 * passed on at the end) and drops every line longer than `maxBytes`, calling `onOversized`.
 */
export function limitLines(
  input: ReadableStream<Uint8Array>,
  maxBytes: number,
  onOversized: (line: OversizedLine) => void,
): ReadableStream<Uint8Array> {
  let parts: Uint8Array[] = [];
  let len = 0;
  let dropping = false;
  let head = new Uint8Array(0);
  let tail = new Uint8Array(0);
  const concat = (list: Uint8Array[], total: number) => {
    const out = new Uint8Array(total);
    let o = 0;
    for (const p of list) out.set(p, o), o += p.length;
    return out;
  };
  const keepTail = (seg: Uint8Array) => {
    const both = concat(
      [tail, seg.subarray(Math.max(0, seg.length - EDGE))],
      0 +
        tail.length + Math.min(seg.length, EDGE),
    );
    tail = both.subarray(Math.max(0, both.length - EDGE));
  };
  const startDropping = () => {
    dropping = true;
    const all = concat(parts, len);
    head = all.slice(0, EDGE);
    tail = all.slice(Math.max(0, all.length - EDGE));
    parts = [];
  };
  const endLine = (ctrl: TransformStreamDefaultController<Uint8Array>, withNl: boolean) => {
    if (dropping) {
      onOversized({ id: findId(head, tail), bytes: len });
      dropping = false;
      head = tail = new Uint8Array(0);
    } else if (len > 0 || withNl) {
      if (withNl) parts.push(new Uint8Array([NL]));
      ctrl.enqueue(concat(parts, len + (withNl ? 1 : 0)));
    }
    parts = [];
    len = 0;
  };
  const add = (seg: Uint8Array) => {
    if (!seg.length) return;
    len += seg.length;
    if (dropping) return keepTail(seg);
    parts.push(seg.slice());
    if (len > maxBytes) startDropping();
  };
  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctrl) {
        let start = 0;
        let nl;
        while ((nl = chunk.indexOf(NL, start)) >= 0) {
          add(chunk.subarray(start, nl));
          endLine(ctrl, true);
          start = nl + 1;
        }
        add(chunk.subarray(start));
      },
      flush(ctrl) {
        endLine(ctrl, false);
      },
    }),
  );
}

/**
 * The top-level `"id"` of a JSON-RPC object from the first bytes of its text (a small scanner
 * tracking strings and nesting), else from a trailing `"id": VALUE}` in the last bytes.
 */
export function findId(head: Uint8Array, tail: Uint8Array): string | number | null {
  const dec = new TextDecoder();
  const h = dec.decode(head);
  let depth = 0;
  for (let i = 0; i < h.length; i++) {
    const c = h[i];
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === '"') {
      let j = i + 1;
      while (j < h.length && h[j] !== '"') j += h[j] === "\\" ? 2 : 1;
      const key = h.slice(i + 1, j);
      i = j;
      if (depth === 1 && key === "id") {
        const m = /^\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")/.exec(h.slice(j + 1));
        if (m) return JSON.parse(m[1]);
      }
    }
  }
  const t = dec.decode(tail);
  const m = /"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")\s*}\s*$/.exec(t);
  return m ? JSON.parse(m[1]) : null;
}

/** The JSON-RPC error line answering a refused oversized message. */
export function oversizedError(line: OversizedLine, maxBytes: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: line.id,
    error: {
      code: -32600,
      message:
        `Invalid request: the message is over the ${maxBytes}-byte limit (${line.bytes} bytes) and was not processed`,
      data: { maxMessageBytes: maxBytes, bytes: line.bytes },
    },
  }) + "\n";
}
