/**
 * `fs_read`: a window of a text file's lines, numbered `cat -n` style, streamed from disk (or
 * taken from an ACP client's buffer); a non-UTF-8 file is decoded whole and its encoding named.
 * The model-facing description is `read.txt`.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { decodeBytes, type Encoding, encodingName } from "./text.ts";
import { describeFsError, displayPath, resolvePath, specialFile, toolError } from "./paths.ts";
import { cutLine, numbered, READ_MAX_LINE } from "./lines.ts";
import { remember, stampOf } from "./stamps.ts";
import description from "./read.txt" with { type: "text" };

/** Default and maximum line window of `fs_read`. */
export const READ_DEFAULT_LIMIT = 2000;
/** Output budget of one `fs_read` call (chars); past it the window ends early. */
export const READ_MAX_CHARS = 100_000;

/** Window of lines read from a file. */
interface Window {
  lines: string[];
  /** Lines seen (the total when `more` is false). */
  seen: number;
  more: boolean;
  binary: boolean;
  /** True when the char budget (not `limit`) ended the window. */
  capped: boolean;
}

/**
 * Streams a file from disk and returns lines `offset … offset+limit-1`
 * (1-based) without loading the rest: a 500 MB file costs only the bytes up
 * to the window's end. Binary = a NUL byte in the first 8 KiB.
 */
async function readWindowFromDisk(abs: string, offset: number, limit: number): Promise<Window> {
  using file = await Deno.open(abs, { read: true });
  const buf = new Uint8Array(64 * 1024);
  const dec = new TextDecoder();
  const lines: string[] = [];
  const last = offset + limit - 1;
  let lineNo = 1;
  let cur = "";
  let curLen = 0;
  let chars = 0;
  let first = true;
  let capped = false;
  const finish = (): boolean => {
    // Returns true when the window is complete.
    if (lineNo >= offset && lineNo <= last) {
      const out = cutLine(cur, curLen);
      if (chars + out.length > READ_MAX_CHARS && lines.length > 0) {
        capped = true;
        return true;
      }
      lines.push(out);
      chars += out.length + 8;
    }
    lineNo++;
    cur = "";
    curLen = 0;
    return lineNo > last;
  };
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    const bytes = buf.subarray(0, n);
    if (first) {
      first = false;
      if (bytes.subarray(0, 8192).indexOf(0) !== -1) {
        return { lines: [], seen: 0, more: false, binary: true, capped: false };
      }
    }
    const text = dec.decode(bytes, { stream: true });
    let start = 0;
    while (true) {
      const nl = text.indexOf("\n", start);
      const piece = nl === -1 ? text.slice(start) : text.slice(start, nl);
      if (lineNo >= offset && lineNo <= last && cur.length <= READ_MAX_LINE) {
        // A little past the cut, so cutLine sees whole characters around it.
        cur += piece.slice(0, READ_MAX_LINE + 64 - cur.length);
      }
      curLen += piece.length;
      if (nl === -1) break;
      if (cur.endsWith("\r")) cur = cur.slice(0, -1);
      if (finish()) {
        // Window complete: is there anything after it?
        const rest = nl + 1 < text.length || (await file.read(buf)) !== null;
        return { lines, seen: lineNo - 1, more: rest || capped, binary: false, capped };
      }
      start = nl + 1;
    }
  }
  const tail = dec.decode();
  cur += tail;
  curLen += tail.length;
  if (curLen > 0) finish();
  return { lines, seen: lineNo - 1, more: false, binary: false, capped };
}

/** Same window over text already in memory (ACP client buffers). */
function readWindowFromText(text: string, offset: number, limit: number): Window {
  if (text.slice(0, 8192).includes("\0")) {
    return { lines: [], seen: 0, more: false, binary: true, capped: false };
  }
  const all = text.split("\n");
  if (all.length > 0 && all[all.length - 1] === "") all.pop();
  const lines: string[] = [];
  let chars = 0;
  let capped = false;
  const end = Math.min(all.length, offset - 1 + limit);
  for (let i = offset - 1; i < end; i++) {
    const raw = all[i].endsWith("\r") ? all[i].slice(0, -1) : all[i];
    const out = cutLine(raw);
    if (chars + out.length > READ_MAX_CHARS && lines.length > 0) {
      capped = true;
      break;
    }
    lines.push(out);
    chars += out.length + 8;
  }
  const shownEnd = offset - 1 + lines.length;
  return { lines, seen: all.length, more: shownEnd < all.length, binary: false, capped };
}

/** Largest non-UTF-8 file fs_read decodes whole (bytes). */
export const NON_UTF8_MAX = 32 * 1024 * 1024;

/**
 * The encoding of a file from its first 64 KiB: a BOM (UTF-8, UTF-16), valid UTF-8, or Latin-1
 * for anything else (plugins/fs/text.ts). A UTF-8 sequence cut at the sample's end still counts as
 * UTF-8.
 */
async function sniffEncoding(abs: string): Promise<Encoding> {
  const f = await Deno.open(abs, { read: true });
  try {
    const buf = new Uint8Array(64 * 1024);
    let n = 0;
    while (n < buf.length) {
      const r = await f.read(buf.subarray(n));
      if (r === null) break;
      n += r;
    }
    const head = buf.subarray(0, n);
    if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return "utf-8-bom";
    if (head[0] === 0xff && head[1] === 0xfe) return "utf-16le";
    if (head[0] === 0xfe && head[1] === 0xff) return "utf-16be";
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
      return "utf-8";
    } catch {
      return "latin-1";
    }
  } finally {
    f.close();
  }
}

/** `fs_read {path, offset?, limit?}`: numbered lines (`cat -n` style), see module doc. */
export const fsReadTool = defineTool({
  name: "fs_read",
  description,
  input: fsInput("fs_read"),
  kind: "read",
  readOnly: true,
  title: (i) => `Read ${i.path}`,
  access: (i) => [{ type: "read", path: i.path }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path);
    const shown = displayPath(ctx.cwd, abs);
    const offset = input.offset ?? 1;
    const limit = input.limit ?? READ_DEFAULT_LIMIT;
    let win: Window;
    let encodingNote = "";
    try {
      if (ctx.host?.readTextFile) {
        const text = await ctx.host.readTextFile(abs);
        win = readWindowFromText(text, offset, limit);
        remember(ctx, abs, await stampOf(ctx, abs, new TextEncoder().encode(text)));
      } else {
        const st = await Deno.stat(abs);
        if (st.isDirectory) return toolError(`${shown} is a directory; use fs_ls to list it`);
        const special = await specialFile(abs, shown);
        if (special) return toolError(special);
        // The session's read stamp (stamps.ts), taken before the read: a change racing the read
        // then shows as a stale stamp, never as content the agent is thought to have seen.
        const stamp = await stampOf(ctx, abs, null);
        const enc = await sniffEncoding(abs);
        if (enc === "utf-8") win = await readWindowFromDisk(abs, offset, limit);
        else {
          // Not UTF-8: decode the whole file as it is (Latin-1 byte for byte, or UTF-16) and say so.
          if (st.size > NON_UTF8_MAX) {
            return toolError(
              `${shown} is not UTF-8 (looks like ${
                encodingName(enc)
              }) and is over ${NON_UTF8_MAX} bytes; not shown`,
            );
          }
          const f = decodeBytes(await Deno.readFile(abs));
          win = readWindowFromText(f.text, offset, limit);
          encodingNote = `\n[${shown} is ${
            encodingName(f.encoding)
          }, not UTF-8: shown decoded; fs_patch and fs_write keep its encoding]`;
        }
        remember(ctx, abs, stamp);
      }
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    const locations = [{ path: abs, line: offset }];
    if (win.binary) {
      return {
        content: `${shown} is a binary file (NUL byte in its first 8 KiB); not shown.`,
        locations,
      };
    }
    if (win.lines.length === 0) {
      if (win.seen === 0) return { content: `${shown} is empty (0 lines).`, locations };
      return toolError(`offset ${offset} is past the end of ${shown} (${win.seen} lines)`);
    }
    const body = win.lines.map((l, i) => numbered(offset + i, l)).join("\n");
    const next = offset + win.lines.length;
    let footer = "";
    if (win.more) {
      footer = win.capped
        ? `\n[output capped at ${READ_MAX_CHARS} chars; continue with offset=${next}]`
        : `\n[more lines follow; continue with offset=${next}]`;
    }
    return {
      content: body + footer + encodingNote,
      locations,
      rawOutput: { path: abs, offset, lines: win.lines.length, more: win.more },
    };
  },
});
