/**
 * The `fs` tool pack: `fs_read`, `fs_ls`, `fs_glob`, `fs_grep`, `fs_write`,
 * `fs_patch` (issue 2, "Core tools"; names and arguments are a contract).
 *
 * Paths are relative to the session cwd unless absolute. Reads and writes go
 * through the ACP client (`ctx.host.readTextFile` / `writeTextFile`) when it
 * offers them, else through Deno's fs. `fs_ls`, `fs_glob` and `fs_grep`
 * respect `.gitignore` (see `walk.ts`) and always skip `.git/`; they read
 * the disk directly (a client's unsaved buffers are seen by `fs_read` and
 * `fs_patch` only).
 * User-level failures (missing file, ambiguous patch, bad regex) come back as
 * `{content, isError: true}`; nothing is thrown for them.
 *
 * Edits change only what was asked (issue 10; text.ts): a file keeps its encoding (UTF-8 with or
 * without a BOM, UTF-16, or Latin-1 byte for byte — `fs_read` names a non-UTF-8 encoding) and its
 * line ending (new text in a CRLF file gets CRLF); an edit that would change no byte is an error,
 * not "Patched"; a missing `old_string` that matches after normalising line endings, trailing
 * whitespace, tabs/spaces or the Unicode form is reported as such.
 * @module
 */
import { z } from "zod";
import { definePlugin, defineTool } from "../../sdk/mod.ts";
import {
  decodeBytes,
  dominantEol,
  encodeText,
  type Encoding,
  encodingName,
  nearMiss,
  type TextFile,
  UnencodableError,
  withEol,
} from "./text.ts";
import type { ToolAccess, ToolContext, ToolResult } from "../../sdk/mod.ts";
import {
  describeFsError,
  displayPath,
  resolvePath,
  specialFile,
  toolError,
  writeText,
} from "./paths.ts";
import { listDir, walkFiles } from "./walk.ts";
import { buildSpec, grepTree } from "./grep_engine.ts";

/** Default and maximum line window of `fs_read`. */
export const READ_DEFAULT_LIMIT = 2000;
/** Lines longer than this (chars) are cut in `fs_read` output. */
export const READ_MAX_LINE = 2000;
/** Output budget of one `fs_read` call (chars); past it the window ends early. */
export const READ_MAX_CHARS = 100_000;
/** Entries shown by `fs_ls`. */
export const LS_LIMIT = 1000;
/** Paths shown by `fs_glob`. */
export const GLOB_LIMIT = 500;
/** Matches shown by `fs_grep`, and its output budget in chars. */
export const GREP_LIMIT = 500;
export const GREP_MAX_CHARS = 40_000;

type PicomatchFn = (
  glob: string,
  opts?: Record<string, unknown>,
) => (path: string) => boolean;
let picomatchMod:
  | { pm: PicomatchFn; scan: (g: string) => { base: string; glob: string } }
  | undefined;
/** npm `picomatch`, loaded lazily (kept out of the start-up path). */
async function picomatch() {
  if (!picomatchMod) {
    const mod = await import("picomatch");
    // deno-lint-ignore no-explicit-any
    const pm = ((mod as any).default ?? mod) as PicomatchFn & {
      scan: (g: string) => { base: string; glob: string };
    };
    picomatchMod = { pm, scan: (g) => pm.scan(g) };
  }
  return picomatchMod;
}

function numbered(n: number, text: string): string {
  return `${String(n).padStart(6)}\t${text}`;
}

function cutLine(line: string, fullLength = line.length): string {
  if (fullLength <= READ_MAX_LINE) return line;
  return `${line.slice(0, READ_MAX_LINE)} … [line truncated: ${fullLength} chars]`;
}

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
        cur += piece.slice(0, READ_MAX_LINE + 1 - cur.length);
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
  description:
    "Read a text file. Returns lines numbered `cat -n` style (1-based). Reads up to 2000 lines; use offset/limit for more. Lines over 2000 chars are cut.",
  input: z.object({
    path: z.string().describe("File path (relative to the working directory, or absolute)"),
    offset: z.number().int().min(1).optional().describe("First line to read, 1-based"),
    limit: z.number().int().min(1).optional().describe("Number of lines (default 2000)"),
  }),
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
        win = readWindowFromText(await ctx.host.readTextFile(abs), offset, limit);
      } else {
        const st = await Deno.stat(abs);
        if (st.isDirectory) return toolError(`${shown} is a directory; use fs_ls to list it`);
        const special = await specialFile(abs, shown);
        if (special) return toolError(special);
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

/** `fs_ls {path?}`: one folder's entries, folders with a trailing `/`. */
export const fsLsTool = defineTool({
  name: "fs_ls",
  description:
    "List a directory (default: working directory). Folders end with /. Entries ignored by .gitignore and .git/ are hidden.",
  input: z.object({
    path: z.string().optional().describe("Directory path (default .)"),
  }),
  kind: "read",
  readOnly: true,
  title: (i) => `List ${i.path ?? "."}`,
  access: (i) => [{ type: "read", path: i.path ?? "." }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path ?? ".");
    const shown = displayPath(ctx.cwd, abs);
    let listed;
    try {
      const st = await Deno.stat(abs);
      if (!st.isDirectory) return toolError(`${shown} is a file, not a directory; use fs_read`);
      listed = await listDir(abs, ctx.cwd);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    const { entries, hidden } = listed;
    const lines = entries.slice(0, LS_LIMIT).map((e) => e.isDir ? `${e.name}/` : e.name);
    if (entries.length > LS_LIMIT) {
      lines.push(`[${entries.length - LS_LIMIT} more entries not shown]`);
    }
    if (hidden > 0) lines.push(`[${hidden} entries hidden by .gitignore or .git]`);
    if (entries.length === 0) lines.unshift(`${shown} is empty`);
    return {
      content: lines.join("\n"),
      locations: [{ path: abs }],
      rawOutput: { path: abs, entries: entries.length, hidden },
    };
  },
});

/**
 * What `fs_glob` reads: its `path`, and — when the pattern is absolute, starts with `~` or
 * climbs with `..` — the folder the pattern's literal head names (`/etc/*` reads `/etc`,
 * `../x/**` reads `../x`); a `..` after a glob segment may lead anywhere (judged as `/`).
 * The pattern is judged, not only `path` (issue 11 §2).
 */
export function globAccesses(pattern: string, path?: string): ToolAccess[] {
  const base = path ?? ".";
  const out: ToolAccess[] = [{ type: "read", path: base }];
  const segs = pattern.split("/");
  if (!pattern.startsWith("/") && !pattern.startsWith("~") && !segs.includes("..")) return out;
  const lit: string[] = [];
  for (const seg of segs) {
    if (/[*?[\]{}()!+@]/.test(seg)) break;
    lit.push(seg);
  }
  const head = lit.join("/") || (pattern.startsWith("/") ? "/" : ".");
  const abs = pattern.startsWith("/") || pattern.startsWith("~");
  const target = segs.slice(lit.length).includes("..")
    ? "/"
    : abs
    ? head
    : `${base.replace(/\/+$/, "")}/${head}`;
  out.push({ type: "read", path: target });
  return out;
}

/**
 * `fs_glob {pattern, path?}`: files matching a glob (npm picomatch, `dot`
 * files included) under `path`, most recently modified first (as Claude
 * Code's Glob: the files being worked on come first), ties by path. At most
 * {@link GLOB_LIMIT} shown. Matching is against the path relative to `path`.
 */
export const fsGlobTool = defineTool({
  name: "fs_glob",
  description:
    "Find files by glob (e.g. **/*.ts, src/**/test_*.py), relative to path (default .). Respects .gitignore. Newest first; max 500.",
  input: z.object({
    pattern: z.string().min(1).describe("Glob pattern"),
    path: z.string().optional().describe("Directory to search (default .)"),
  }),
  kind: "search",
  readOnly: true,
  title: (i) => `Glob ${i.pattern}${i.path ? ` in ${i.path}` : ""}`,
  access: (i) => globAccesses(i.pattern, i.path),
  async run(input, ctx): Promise<ToolResult> {
    let pattern = input.pattern;
    let root = resolvePath(ctx.cwd, input.path ?? ".");
    const { pm, scan } = await picomatch();
    if (pattern.startsWith("/")) {
      const s = scan(pattern);
      root = s.base || "/";
      pattern = s.glob || "**";
    }
    const shown = displayPath(ctx.cwd, root);
    try {
      const st = await Deno.stat(root);
      if (!st.isDirectory) return toolError(`${shown} is not a directory`);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    const isMatch = pm(pattern, { dot: true });
    const base = scan(pattern).base; // folder prefix every match lies under
    // Prune folders no match can lie in: outside the pattern's literal base,
    // or deeper than a pattern without `**` (or braces) can reach.
    const maxDepth = /\*\*|[{}]/.test(pattern) ? Infinity : pattern.split("/").length - 1;
    const enterDir = (rel: string) =>
      rel.split("/").length <= maxDepth &&
      (base === "" || rel === base || base.startsWith(rel + "/") || rel.startsWith(base + "/"));
    const cut = root.endsWith("/") ? root.length : root.length + 1;
    const found: { abs: string; mtime: number }[] = [];
    const COLLECT = 20_000;
    let total = 0;
    for await (const batch of walkFiles(root, { cwd: ctx.cwd, signal: ctx.signal, enterDir })) {
      for (const abs of batch) {
        if (!isMatch(abs.slice(cut))) continue;
        total++;
        if (found.length < COLLECT) found.push({ abs, mtime: 0 });
      }
    }
    if (ctx.signal.aborted) return toolError("cancelled");
    for (const f of found) {
      try {
        f.mtime = Deno.lstatSync(f.abs).mtime?.getTime() ?? 0;
      } catch { /* vanished */ }
    }
    found.sort((a, b) => b.mtime - a.mtime || (a.abs < b.abs ? -1 : a.abs > b.abs ? 1 : 0));
    if (total === 0) return { content: `No files match ${input.pattern} in ${shown}` };
    const lines = found.slice(0, GLOB_LIMIT).map((f) => displayPath(ctx.cwd, f.abs));
    if (total > GLOB_LIMIT) {
      lines.push(
        `[showing ${GLOB_LIMIT} of ${total} matches, newest first; narrow the pattern or path]`,
      );
    }
    return { content: lines.join("\n"), rawOutput: { matches: total } };
  },
});

/** `fs_grep {pattern, path?, glob?, ignore_case?}`: `path:line:text` lines; see `grep_engine.ts`. */
export const fsGrepTool = defineTool({
  name: "fs_grep",
  description:
    "Search file contents with a regex (JavaScript syntax). Output: path:line:text. Respects .gitignore, skips binary files; max 500 matches.",
  input: z.object({
    pattern: z.string().min(1).describe("Regular expression"),
    path: z.string().optional().describe("File or directory to search (default .)"),
    glob: z.string().optional().describe("Only files matching this glob, e.g. *.ts or src/**/*.py"),
    ignore_case: z.boolean().optional().describe("Case-insensitive search"),
  }),
  kind: "search",
  readOnly: true,
  title: (i) => `Grep ${i.pattern}${i.path ? ` in ${i.path}` : ""}`,
  access: (i) => [{ type: "read", path: i.path ?? "." }],
  async run(input, ctx): Promise<ToolResult> {
    let spec;
    try {
      spec = buildSpec({ pattern: input.pattern, ignoreCase: input.ignore_case, maxLine: 250 });
    } catch (err) {
      return toolError((err as Error).message);
    }
    const root = resolvePath(ctx.cwd, input.path ?? ".");
    const shown = displayPath(ctx.cwd, root);
    try {
      await Deno.stat(root);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    let filter: ((rel: string) => boolean) | undefined;
    if (input.glob) {
      const { pm } = await picomatch();
      // Like `rg -g`: a glob without `/` matches the file name at any depth.
      const isMatch = pm(input.glob, { dot: true, basename: !input.glob.includes("/") });
      filter = (rel) => isMatch(rel);
    }
    let outcome;
    try {
      outcome = await grepTree({
        root,
        cwd: ctx.cwd,
        spec,
        filter,
        limit: GREP_LIMIT,
        signal: ctx.signal,
      });
    } catch (err) {
      if (ctx.signal.aborted) return toolError("cancelled");
      throw err;
    }
    if (outcome.hits.length === 0) {
      return {
        content: `No matches for /${input.pattern}/ in ${shown}${
          input.glob ? ` (glob ${input.glob})` : ""
        }`,
        rawOutput: { matches: 0, files: outcome.filesSearched },
      };
    }
    const lines: string[] = [];
    let chars = 0;
    let cutByChars = false;
    let lastAbs = "";
    let lastShown = "";
    for (const h of outcome.hits) {
      if (h.path !== lastAbs) {
        lastAbs = h.path;
        lastShown = displayPath(ctx.cwd, h.path);
      }
      const line = `${lastShown}:${h.line}:${h.text}`;
      if (chars + line.length > GREP_MAX_CHARS) {
        cutByChars = true;
        break;
      }
      chars += line.length + 1;
      lines.push(line);
    }
    if (outcome.truncated || cutByChars) {
      lines.push(`[stopped after ${lines.length} matches; narrow the pattern, path or glob]`);
    }
    return {
      content: lines.join("\n"),
      rawOutput: {
        matches: outcome.hits.length,
        truncated: outcome.truncated || cutByChars,
        files: outcome.filesSearched,
      },
    };
  },
});

function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/**
 * Reads the current file with its encoding and line ending (plugins/fs/text.ts), or null when it
 * does not exist. Through an ACP client's `fs` (editor buffers) the text is taken as UTF-8.
 * Other errors throw.
 */
async function readExisting(ctx: ToolContext, abs: string): Promise<TextFile | null> {
  try {
    if (ctx.host?.readTextFile) {
      const text = await ctx.host.readTextFile(abs);
      return { text, encoding: "utf-8", eol: dominantEol(text) };
    }
    return decodeBytes(await Deno.readFile(abs));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Writes `text` back in the file's encoding (UTF-8 for new files and editor buffers). */
async function writeFaithful(
  ctx: ToolContext,
  abs: string,
  text: string,
  encoding: Encoding,
): Promise<void> {
  if (encoding === "utf-8" || ctx.host?.writeTextFile) return await writeText(ctx, abs, text);
  const bytes = encodeText(text, encoding);
  const dir = abs.slice(0, abs.lastIndexOf("/")) || "/";
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeFile(abs, bytes);
}

/** `fs_write {path, content}`: writes the whole file, creating parent folders; result carries a diff. */
export const fsWriteTool = defineTool({
  name: "fs_write",
  description:
    "Write a whole file (creates parent folders, overwrites). Prefer fs_patch for edits.",
  input: z.object({
    path: z.string().describe("File path"),
    content: z.string().describe("Full new content"),
  }),
  kind: "edit",
  title: (i) => `Write ${i.path}`,
  access: (i) => [{ type: "write", path: i.path }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path);
    const shown = displayPath(ctx.cwd, abs);
    const special = ctx.host?.readTextFile ? null : await specialFile(abs, shown);
    if (special) return toolError(special);
    let old: TextFile | null;
    let content = input.content;
    try {
      old = await readExisting(ctx, abs);
      // An existing file keeps its line ending and encoding (a CRLF file stays CRLF).
      if (old?.eol === "\r\n") content = withEol(content, "\r\n");
      await writeFaithful(ctx, abs, content, old?.encoding ?? "utf-8");
    } catch (err) {
      if (err instanceof UnencodableError) return toolError(`Not written: ${err.message}`);
      return toolError(describeFsError(err, shown));
    }
    const verb = old === null ? "Created" : "Wrote";
    const kept = old && old.encoding !== "utf-8"
      ? `; kept its ${encodingName(old.encoding)} encoding`
      : "";
    return {
      content: `${verb} ${shown} (${countLines(content)} lines${kept})`,
      diffs: [{ path: abs, oldText: old?.text ?? null, newText: content }],
      locations: [{ path: abs }],
    };
  },
});

function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** A few numbered lines of `text` around `[from, to)` (char offsets), for the model to check its edit. */
function snippet(text: string, from: number, to: number): { body: string; line: number } {
  const before = text.slice(0, from);
  const line = before.split("\n").length;
  const lines = text.split("\n");
  const endLine = text.slice(0, Math.max(from, to)).split("\n").length;
  const a = Math.max(1, line - 2);
  const b = Math.min(lines.length, endLine + 2, a + 12);
  const out: string[] = [];
  for (let i = a; i <= b; i++) out.push(numbered(i, cutLine(lines[i - 1].replace(/\r$/, ""))));
  return { body: out.join("\n"), line };
}

/**
 * `fs_patch {path, old_string, new_string, replace_all?}`: exact string
 * replacement (as Claude Code's Edit). Fails when `old_string` is missing,
 * occurs more than once without `replace_all`, or equals `new_string`.
 * When the file uses CRLF and the strings use LF, they are matched as CRLF.
 */
export const fsPatchTool = defineTool({
  name: "fs_patch",
  description:
    "Replace an exact string in a file. old_string must match exactly once (add surrounding lines to disambiguate) unless replace_all is true.",
  input: z.object({
    path: z.string().describe("File path"),
    old_string: z.string().describe("Exact text to replace"),
    new_string: z.string().describe("Replacement text"),
    replace_all: z.boolean().optional().describe("Replace every occurrence"),
  }),
  kind: "edit",
  title: (i) => `Edit ${i.path}`,
  access: (i) => [{ type: "write", path: i.path }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path);
    const shown = displayPath(ctx.cwd, abs);
    let { old_string: oldStr, new_string: newStr } = input;
    if (oldStr === "") {
      return toolError("old_string is empty; use fs_write to create or overwrite a file");
    }
    if (oldStr === newStr) {
      return toolError("old_string and new_string are identical; nothing to change");
    }
    const special = ctx.host?.readTextFile ? null : await specialFile(abs, shown);
    if (special) return toolError(special);
    let file: TextFile | null;
    try {
      file = await readExisting(ctx, abs);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    if (file === null) return toolError(`File not found: ${shown} (use fs_write to create it)`);
    const oldText = file.text;
    let count = countOccurrences(oldText, oldStr);
    if (
      count === 0 && oldText.includes("\r\n") && !oldStr.includes("\r\n") && oldStr.includes("\n")
    ) {
      const crlf = oldStr.replaceAll("\n", "\r\n");
      const n = countOccurrences(oldText, crlf);
      if (n > 0) {
        oldStr = crlf;
        count = n;
      }
    }
    // New text takes the file's line ending (no mixed endings in a CRLF file, no CR in an LF one).
    if (newStr.includes("\n")) newStr = withEol(newStr, file.eol);
    if (count === 0) {
      const hint = nearMiss(oldText, input.old_string);
      return toolError(`old_string not found in ${shown}${hint ? `: ${hint}` : ""}`);
    }
    if (count > 1 && !input.replace_all) {
      return toolError(
        `old_string occurs ${count} times in ${shown}; pass replace_all or add context`,
      );
    }
    const first = oldText.indexOf(oldStr);
    // split/join and slicing, not String#replace: `$&` in new_string must stay literal.
    const newText = input.replace_all
      ? oldText.split(oldStr).join(newStr)
      : oldText.slice(0, first) + newStr + oldText.slice(first + oldStr.length);
    if (newText === oldText) {
      return toolError(
        `Nothing changed in ${shown}: old_string and new_string differ only in line endings, and the file keeps its ${
          file.eol === "\r\n" ? "CRLF" : "LF"
        } line endings`,
      );
    }
    try {
      await writeFaithful(ctx, abs, newText, file.encoding);
    } catch (err) {
      if (err instanceof UnencodableError) return toolError(`Not patched: ${err.message}`);
      return toolError(describeFsError(err, shown));
    }
    const snip = snippet(newText, first, first + newStr.length);
    const what = count === 1 ? "1 occurrence" : `${count} occurrences`;
    return {
      content: `Patched ${shown}: replaced ${what}. Around line ${snip.line}:\n${snip.body}`,
      diffs: [{ path: abs, oldText, newText }],
      locations: [{ path: abs, line: snip.line }],
    };
  },
});

/** The `fs` plugin: every tool above. */
export const fsPlugin = definePlugin({
  name: "fs",
  version: "1.0.0",
  description: "Read, list, find, search and edit files in the workspace.",
  tools: [fsReadTool, fsLsTool, fsGlobTool, fsGrepTool, fsWriteTool, fsPatchTool],
});

export default fsPlugin;
