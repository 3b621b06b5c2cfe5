/**
 * Session store: every run is a session kept as an append-only JSONL transcript
 * at `<dataDir>/sessions/<id>.jsonl` (line shapes in core/transcript/types.ts; written by
 * core/transcript/writer.ts, loaded by core/transcript/load.ts).
 *
 * This module holds where transcripts are ({@link sessionsDir}, {@link transcriptPath}), session
 * ids (new ones, the shortest unique prefixes), what a user's reference (`--session REF`)
 * resolves to — with the nearest ids when it matches nothing —, the listing of stored sessions
 * (header, first prompt, mtime; newest first), removal (also of a session that never got a model
 * reply, {@link removeUnanswered}), and local-time display.
 * @module
 */
import { osaDistance } from "../util/text.ts";
import { byCodeUnit } from "../util/text.ts";
import type { SessionHeader, StoredSessionInfo, TranscriptLine } from "./types.ts";

/**
 * A new session id: a random UUID (v4, RFC 9562 §5.4). Random rather than time-prefixed, so
 * that the 8-character prefixes users type (`--session 1f0c9a2b`) do not collide between
 * sessions started close together (issue 10).
 */
export function newSessionId(): string {
  return crypto.randomUUID();
}

/** Shortest prefix length (≥ 8) at which every id of `ids` is unique; map id → prefix. */
export function shortIds(ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const id of ids) {
    let n = Math.min(8, id.length);
    while (n < id.length && ids.some((o) => o !== id && o.startsWith(id.slice(0, n)))) n++;
    out.set(id, id.slice(0, n));
  }
  return out;
}

/** True when `ref` looks like (a prefix of) a session id: 8+ hex digits, dashes allowed. */
export function isIdShaped(ref: string): boolean {
  return /^[0-9a-f][0-9a-f-]{7,35}$/i.test(ref) && ref.replace(/-/g, "").length >= 8;
}

/** Why a `--session` / `sessions rm` reference did not resolve (message lists near matches). */
export class SessionRefError extends Error {
  override name = "UsageError";
}

/**
 * Resolves what a user typed for a session (`--session REF`, `coyote sessions rm REF`) against
 * the stored sessions (newest first): an exact id, else a unique id prefix of 8+ characters,
 * else the newest session named REF. Returns `{id}` or, for a name that matches nothing,
 * `{name}` (a new session gets that name).
 * @throws SessionRefError when REF is an ambiguous prefix, or is id-shaped and matches nothing
 *   (the message lists the nearest stored ids, so a typo never starts a new session).
 */
export function resolveSessionRef(
  list: StoredSessionInfo[],
  ref: string,
  what = "--session",
): { id: string } | { name: string } {
  const exact = list.find((s) => s.id === ref);
  if (exact) return { id: exact.id };
  const lower = ref.toLowerCase();
  const byPrefix = ref.length >= 8 ? list.filter((s) => s.id.startsWith(lower)) : [];
  if (byPrefix.length === 1) return { id: byPrefix[0].id };
  const named = list.find((s) => s.name === ref);
  if (named) return { id: named.id };
  if (byPrefix.length > 1) {
    throw new SessionRefError(
      `${what} ${ref} matches ${byPrefix.length} stored sessions (${
        byPrefix.map((s) => s.id).join(", ")
      }); give more of the id`,
    );
  }
  if (isIdShaped(ref)) {
    const near = nearSessions(list, lower);
    throw new SessionRefError(
      `no stored session has the id ${ref}` +
        (near.length
          ? `; nearest: ${near.map((s) => `${s.id} (${s.title || "untitled"})`).join(", ")}`
          : list.length
          ? "; `coyote --list-sessions --all` shows the stored ones"
          : "; there are no stored sessions"),
    );
  }
  return { name: ref };
}

/** Stored sessions whose id (same length prefix) is within a few edits of `ref`, nearest first. */
function nearSessions(list: StoredSessionInfo[], ref: string): StoredSessionInfo[] {
  const limit = Math.max(2, Math.floor(ref.length / 4));
  return list
    .map((s) => ({ s, d: osaDistance(ref, s.id.slice(0, ref.length)) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d)
    .slice(0, 5)
    .map((x) => x.s);
}

/** Deletes a stored session's transcript. Returns false when there was none. */
export async function removeSession(dataDir: string, id: string): Promise<boolean> {
  if (!ID_RE.test(id)) return false;
  try {
    await Deno.remove(transcriptPath(dataDir, id));
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/**
 * Removes a stored session that holds no model reply, and says whether it did: a transcript of
 * only its header, the user's prompts, Coyote's own notes (a thought chunk with `_meta.coyote`)
 * and the ends of turns that failed before the model answered — a run that never reached the
 * model server (connection refused, HTTP 401, 404, 5xx) — so `--list-sessions`
 * does not fill with rows of failed runs. Any other line keeps it: an assistant or tool message,
 * a model event, a checkpoint, a compaction, a rewind, a graph state, a gate, a turn the user
 * cancelled (they may continue the prompt they typed), and a turn the server read and refused (`rejected`: a 400 or an overflow, recorded so `--continue` leaves it
 * out). A file that cannot be read or parsed is kept.
 */
export async function removeUnanswered(dataDir: string, id: string): Promise<boolean> {
  if (!ID_RE.test(id)) return false;
  const path = transcriptPath(dataDir, id);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return false;
  }
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    let line: TranscriptLine;
    try {
      line = JSON.parse(raw);
    } catch {
      return false;
    }
    if (!promptOnly(line)) return false;
  }
  return await removeSession(dataDir, id);
}

/** True for a transcript line that records no model reply (see {@link removeUnanswered}). */
function promptOnly(line: TranscriptLine): boolean {
  if (line.type === "session") return true;
  // A turn the user cancelled keeps the session: they typed the prompt and may continue it.
  if (line.type === "turn_end") return !line.rejected && line.stopReason !== "cancelled";
  if (line.type === "message") return line.message.role === "user";
  if (line.type !== "update") return false;
  const u = line.update as { sessionUpdate: string; _meta?: { coyote?: unknown } };
  return u.sessionUpdate === "user_message_chunk" ||
    (u.sessionUpdate === "agent_thought_chunk" && u._meta?.coyote !== undefined);
}

/** `2026-11-30 14:05` in the local time zone (`TZ` respected) for an ISO-8601 time. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${
    p(d.getMinutes())
  }`;
}

/** What may name a stored session (its transcript file `<id>.jsonl`). */
export const ID_RE = /^[A-Za-z0-9_.-]{1,128}$/;

export function sessionsDir(dataDir: string): string {
  return `${dataDir}/sessions`;
}

export function transcriptPath(dataDir: string, id: string): string {
  return `${sessionsDir(dataDir)}/${id}.jsonl`;
}

/** Reads the header, first prompt and mtime of every stored session (newest first). */
export async function listStoredSessions(
  dataDir: string,
  filter: { cwd?: string; name?: string } = {},
): Promise<StoredSessionInfo[]> {
  const dir = sessionsDir(dataDir);
  const out: StoredSessionInfo[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = Array.from(Deno.readDirSync(dir));
  } catch {
    return [];
  }
  await Promise.all(entries.map(async (e) => {
    if (!e.isFile || !e.name.endsWith(".jsonl")) return;
    const path = `${dir}/${e.name}`;
    try {
      const info = await readHead(path);
      if (!info) return;
      if (filter.cwd && info.cwd !== filter.cwd) return;
      if (filter.name !== undefined && info.name !== filter.name) return;
      out.push(info);
    } catch {
      // unreadable file: not a session
    }
  }));
  out.sort((a, b) => byCodeUnit(b.updated, a.updated) || byCodeUnit(b.id, a.id));
  return out;
}

async function readHead(path: string): Promise<StoredSessionInfo | null> {
  const f = await Deno.open(path, { read: true });
  try {
    const st = await f.stat();
    const buf = new Uint8Array(Math.min(st.size, 64 * 1024));
    let n = 0;
    while (n < buf.length) {
      const r = await f.read(buf.subarray(n));
      if (r === null) break;
      n += r;
    }
    const text = new TextDecoder().decode(buf.subarray(0, n));
    let header: SessionHeader | null = null;
    let title = "";
    for (const raw of text.split("\n")) {
      if (!raw.trim()) continue;
      let line: TranscriptLine;
      try {
        line = JSON.parse(raw);
      } catch {
        continue;
      }
      if (line.type === "session" && !header) header = line;
      else if (line.type === "message" && line.message.role === "user") {
        title = contentText(line.message.content);
        break;
      }
    }
    if (!header) return null;
    title = title.replace(/\s+/g, " ").trim();
    if (title.length > 80) title = title.slice(0, 79) + "…";
    return {
      id: header.id,
      cwd: header.cwd,
      name: header.name,
      created: header.created,
      updated: (st.mtime ?? new Date()).toISOString(),
      title,
      path,
      agent: header.agent,
      ...(header.parent ? { parent: header.parent } : {}),
      ...(header.agent_id ? { agent_id: header.agent_id } : {}),
    };
  } finally {
    f.close();
  }
}

// deno-lint-ignore no-explicit-any
function contentText(c: string | null | any[]): string {
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (p?.type === "text" ? p.text : "")).join(" ");
  return "";
}
