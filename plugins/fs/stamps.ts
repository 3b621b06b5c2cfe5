/**
 * Read stamps: what a session last saw of each file, so that `fs_write` never overwrites a change
 * made on disk after the agent read the file (issue 18, "No lost edits").
 *
 * A stamp is taken by `fs_read` (any window of the file counts as reading it) and renewed by
 * `fs_write` and `fs_patch` after they write. `fs_write` over an existing file compares the file as
 * it is now with the session's stamp and refuses when there is none (never read) or when the content
 * differs; the refusal names what changed (size, modification time). Stamps are kept in memory per
 * `ToolContext.sessionId` (one conversation; a sub-agent has its own), so a resumed session reads a
 * file again before overwriting it.
 *
 * Content is compared by SHA-256 of the bytes (of the UTF-8 text through an ACP client's `fs`); a
 * file over {@link HASH_MAX_BYTES} is compared by size and modification time only.
 * @module
 */
import type { ToolContext } from "../../sdk/mod.ts";

/** Largest file whose content is hashed for its stamp (bytes); larger ones use size + mtime. */
export const HASH_MAX_BYTES = 16 * 1024 * 1024;

/** What a session saw of a file. */
export interface ReadStamp {
  /** Size in bytes. */
  size: number;
  /** Modification time (ms since the epoch); null through an ACP client's `fs`. */
  mtimeMs: number | null;
  /** SHA-256 (hex) of the bytes; null past {@link HASH_MAX_BYTES}. */
  hash: string | null;
  /** When the stamp was taken (ms since the epoch). */
  at: number;
}

const bySession = new Map<string, Map<string, ReadStamp>>();

function stampsOf(ctx: ToolContext): Map<string, ReadStamp> {
  const key = ctx.sessionId ?? "";
  let m = bySession.get(key);
  if (!m) bySession.set(key, m = new Map());
  return m;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The stamp of a file whose bytes are `bytes` (null: read them from disk when small enough).
 * Through an ACP client (`ctx.host.readTextFile`) there is no stat: `mtimeMs` is null.
 */
export async function stampOf(
  ctx: ToolContext,
  abs: string,
  bytes: Uint8Array | null,
): Promise<ReadStamp> {
  let mtimeMs: number | null = null;
  let size = bytes?.length ?? 0;
  if (!ctx.host?.readTextFile) {
    const st = await Deno.stat(abs);
    mtimeMs = st.mtime?.getTime() ?? null;
    if (!bytes) {
      size = st.size;
      if (st.size <= HASH_MAX_BYTES) bytes = await Deno.readFile(abs);
    }
  }
  const hash = bytes && bytes.length <= HASH_MAX_BYTES ? await sha256(bytes) : null;
  return { size, mtimeMs, hash, at: Date.now() };
}

/** Records what the session now knows of `abs`. */
export function remember(ctx: ToolContext, abs: string, stamp: ReadStamp): void {
  stampsOf(ctx).set(abs, stamp);
}

/** The session's stamp of `abs`, if it read or wrote it. */
export function recalled(ctx: ToolContext, abs: string): ReadStamp | undefined {
  return stampsOf(ctx).get(abs);
}

/** True when `now` has the content the stamp saw. */
export function sameContent(seen: ReadStamp, now: ReadStamp): boolean {
  if (seen.hash !== null && now.hash !== null) return seen.hash === now.hash;
  return seen.size === now.size && seen.mtimeMs === now.mtimeMs;
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19) + " UTC";

/**
 * Why an overwrite of the existing file `shown` must not happen, or null when the session's
 * stamp matches `now`. The text names what changed: "size 12→20 bytes, modified 23:41:07 UTC".
 */
export function staleWrite(
  ctx: ToolContext,
  abs: string,
  shown: string,
  now: ReadStamp,
): string | null {
  const seen = recalled(ctx, abs);
  if (!seen) {
    return `Not written: ${shown} exists and you have not read it in this session; ` +
      `fs_read it first (or use fs_patch for an exact edit)`;
  }
  if (sameContent(seen, now)) return null;
  const what: string[] = [];
  if (seen.size !== now.size) what.push(`size ${seen.size}→${now.size} bytes`);
  else what.push(`content differs (same size, ${now.size} bytes)`);
  if (now.mtimeMs !== null && now.mtimeMs !== seen.mtimeMs) {
    what.push(`modified ${clock(now.mtimeMs)}`);
  }
  return `Not written: ${shown} changed on disk since you read it at ${clock(seen.at)}: ` +
    `${what.join(", ")}; the file was left as it is. fs_read it again and redo your change on ` +
    `the current content`;
}

/** Renews the stamp after this session wrote `text` to `abs` (re-read from disk, or the text sent to the client). */
export async function rememberWritten(ctx: ToolContext, abs: string, text: string): Promise<void> {
  const bytes = ctx.host?.readTextFile ? new TextEncoder().encode(text) : null;
  remember(ctx, abs, await stampOf(ctx, abs, bytes));
}
