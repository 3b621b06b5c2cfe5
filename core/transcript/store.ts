/**
 * Session store: every run is a session kept as an append-only JSONL transcript
 * at `<dataDir>/sessions/<id>.jsonl`.
 *
 * Line shapes (one JSON object per line, `type` discriminates):
 * - `{type:"session", id, cwd, created, model, agent, name?, parent?, agent_id?, parent_agent_id?}`
 *   — header, first line (`parent` = the parent session's id for a sub-agent's transcript).
 * - `{type:"message", message, interrupted?}` — one OpenAI chat message of the model history
 *   (`interrupted: true` when a stream was cut or cancelled mid-answer; the partial text is kept).
 * - `{type:"update", update}` — one engine event (ACP `SessionUpdate`) for replay; consecutive
 *   chunks of the same kind are coalesced before they are written.
 * - `{type:"turn_end", stopReason, usage, error?, rejected?}` — the end of a turn. `rejected: true`
 *   when the server refused the turn's request (HTTP 400 for an image to a text-only model, a
 *   prompt over the window): the turn's messages are then not part of the model history on load
 *   (the events stay for replay; the user can send the prompt again).
 * - `{type:"tool_result_update", tool_call_id, content}` — the new content of an earlier tool
 *   message (shrunk after a context overflow); applied on load.
 *
 * Every line is written with one synchronous append write, so a crash leaves a
 * readable file; a torn last line is skipped on load. Secrets (API keys,
 * Authorization headers) are never part of any line.
 * @module
 */
import type { EngineEvent, StopReason, TurnUsage } from "../protocol/types.ts";
import { osaDistance } from "../util/text.ts";
import { isEmptyAssistant } from "../provider/messages.ts";
import { byCodeUnit } from "../util/text.ts";

/** An OpenAI Chat Completions message as kept in the model history. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  // deno-lint-ignore no-explicit-any
  content: string | null | any[];
  tool_calls?: {
    id: string;
    type: "function";
    function: { name: string; arguments: string };
    /** Provider data sent back with the call (Gemini `thought_signature`). */
    extra_content?: Record<string, unknown>;
  }[];
  tool_call_id?: string;
  /** Reasoning of an assistant message, in the field the server sent it in (DeepSeek, vLLM). */
  reasoning_content?: string;
  /** Reasoning of an assistant message (OpenRouter, Ollama convention). */
  reasoning?: string;
  /** Structured reasoning blocks (OpenRouter `reasoning_details`), sent back unchanged. */
  reasoning_details?: Record<string, unknown>[];
}

export interface SessionHeader {
  type: "session";
  id: string;
  cwd: string;
  created: string;
  model: string;
  agent: string;
  name?: string;
  /** A sub-agent's transcript: the parent session's id, this agent's id, the parent's agent id. */
  parent?: string;
  agent_id?: string;
  parent_agent_id?: string;
}

export type TranscriptLine =
  | SessionHeader
  | { type: "message"; message: ChatMessage; interrupted?: boolean }
  | { type: "update"; update: EngineEvent }
  | {
    type: "turn_end";
    stopReason: StopReason;
    usage: TurnUsage;
    error?: { code: string; message: string };
    rejected?: boolean;
  }
  | { type: "tool_result_update"; tool_call_id: string; content: string }
  /** A graph run's state after a node (`--verbose`; core/graph/runner.ts); ignored on load. */
  | { type: "graph_state"; node: string; state: unknown }
  /**
   * Context compaction (core/engine/compact.ts): the model history from here on is `messages`;
   * `turn_start` is where the running turn's messages begin in it.
   */
  | { type: "compaction"; messages: ChatMessage[]; turn_start: number; summary: string };

/** A loaded transcript. */
export interface LoadedSession {
  header: SessionHeader;
  messages: ChatMessage[];
  updates: EngineEvent[];
  /** Lines that could not be parsed (a torn last line after a crash). */
  skipped: number;
}

/** Listing entry (see `SessionInfo` in core/session/runtime.ts). */
export interface StoredSessionInfo {
  id: string;
  cwd: string;
  name?: string;
  created: string;
  /** ISO-8601 mtime of the transcript. */
  updated: string;
  /** First user prompt (one line, ≤ 80 chars). */
  title: string;
  path: string;
  agent?: string;
  /** Sub-agent transcripts: the parent session's id and the agent instance id. */
  parent?: string;
  agent_id?: string;
}

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

/** `2026-11-30 14:05` in the local time zone (`TZ` respected) for an ISO-8601 time. */
export function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${
    p(d.getMinutes())
  }`;
}

const ID_RE = /^[A-Za-z0-9_.-]{1,128}$/;

export function sessionsDir(dataDir: string): string {
  return `${dataDir}/sessions`;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Sessions folders made by {@link TranscriptWriter.createAsync} in this process. */
const madeDirs = new Set<string>();

/** Appends lines to one transcript file. Chunk events are coalesced until the kind changes. */
export class TranscriptWriter {
  /** Null while the file of {@link createAsync} is being created. */
  #file: Deno.FsFile | null;
  /** Lines written before the file existed, in order (see {@link createAsync}). */
  #queued: Uint8Array[] = [];
  /** Resolves once the file exists (or could not be created). */
  ready: Promise<void> = Promise.resolve();
  #enc = new TextEncoder();
  #pending: EngineEvent | null = null;
  #pendingSince = 0;
  closed = false;
  /** Set after a write failed; later lines are dropped. */
  failed = false;

  private constructor(file: Deno.FsFile | null, readonly path: string) {
    this.#file = file;
  }

  /** Creates a new transcript with its header line. */
  static create(dataDir: string, header: Omit<SessionHeader, "type">): TranscriptWriter {
    const dir = sessionsDir(dataDir);
    Deno.mkdirSync(dir, { recursive: true });
    const path = `${dir}/${header.id}.jsonl`;
    const file = Deno.openSync(path, { append: true, create: true });
    const w = new TranscriptWriter(file, path);
    w.#write({ type: "session", ...header });
    return w;
  }

  /**
   * Like {@link create}, but the file is created off the main thread and after the current
   * task: creating a file can take milliseconds on a busy disk, and a sub-agent's first model
   * request must not wait for it (nor for its siblings' files). Lines written before the file
   * exists are kept in memory and written, in order and in one write, as soon as it does (so a
   * crash within those first milliseconds loses what was queued: the header and the first
   * events of the turn, never a later line).
   */
  static createAsync(dataDir: string, header: Omit<SessionHeader, "type">): TranscriptWriter {
    const dir = sessionsDir(dataDir);
    const path = `${dir}/${header.id}.jsonl`;
    const w = new TranscriptWriter(null, path);
    w.#write({ type: "session", ...header });
    w.ready = (async () => {
      // After the current task: a parent spawning many sub-agents opens their transcripts once
      // their first model requests are on their way, not in between.
      await new Promise((r) => setTimeout(r, 0));
      try {
        // The sessions folder is made once per process (sub-agents open many transcripts);
        // if it vanished since, it is made again.
        const openIt = () => Deno.open(path, { append: true, create: true });
        if (!madeDirs.has(dir)) {
          await Deno.mkdir(dir, { recursive: true });
          madeDirs.add(dir);
        }
        let file: Deno.FsFile;
        try {
          file = await openIt();
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
          await Deno.mkdir(dir, { recursive: true });
          file = await openIt();
        }
        if (w.closed && !w.#queued.length) return file.close();
        w.#file = file;
        const queued = w.#queued;
        w.#queued = [];
        if (queued.length) w.#put(concat(queued));
        if (w.closed) file.close();
      } catch (e) {
        w.#fail(e);
      }
    })();
    return w;
  }

  /** Opens an existing transcript for appending (a torn last line is closed off first). */
  static open(path: string): TranscriptWriter {
    const file = Deno.openSync(path, { append: true, read: true });
    const w = new TranscriptWriter(file, path);
    const size = file.statSync().size;
    if (size > 0) {
      const last = new Uint8Array(1);
      file.seekSync(size - 1, Deno.SeekMode.Start);
      file.readSync(last);
      // Terminate a torn line so the next record starts on a fresh line.
      if (last[0] !== 10) file.writeSync(w.#enc.encode("\n"));
    }
    return w;
  }

  #write(line: TranscriptLine): void {
    if (this.closed || this.failed) return;
    const bytes = this.#enc.encode(JSON.stringify(line) + "\n");
    if (!this.#file) this.#queued.push(bytes);
    else this.#put(bytes);
  }

  /** One synchronous append write of a whole line. */
  #put(bytes: Uint8Array): void {
    if (this.failed || !this.#file) return;
    try {
      let off = 0;
      while (off < bytes.length) off += this.#file.writeSync(bytes.subarray(off));
    } catch (e) {
      this.#fail(e);
    }
  }

  /** A full disk or a vanished file must not end the session: stop recording, say so once. */
  #fail(e: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.#queued = [];
    console.error(
      `coyote: warning: transcript ${this.path} is no longer written: ${(e as Error).message}`,
    );
  }

  /** Writes a model-history message. */
  message(message: ChatMessage, interrupted = false): void {
    this.flush();
    this.#write(
      interrupted ? { type: "message", message, interrupted } : { type: "message", message },
    );
  }

  /** Records an engine event (chunks are merged with the previous chunk of the same kind). */
  /** Records a graph's state after a node (`--verbose`). */
  graphState(node: string, state: unknown): void {
    this.flush();
    this.#write({ type: "graph_state", node, state });
  }

  update(ev: EngineEvent): void {
    const kind = ev.sessionUpdate;
    if (
      (kind === "agent_message_chunk" || kind === "agent_thought_chunk") &&
      ev.content.type === "text"
    ) {
      const p = this.#pending;
      if (p && p.sessionUpdate === kind && p.content.type === "text") {
        p.content = { type: "text", text: p.content.text + ev.content.text };
        if (Date.now() - this.#pendingSince > 500) this.flush();
        return;
      }
      this.flush();
      this.#pending = { sessionUpdate: kind, content: { type: "text", text: ev.content.text } };
      this.#pendingSince = Date.now();
      return;
    }
    this.flush();
    this.#write({ type: "update", update: ev });
  }

  /** Ends a turn; `rejected` keeps the turn's messages out of the history on load. */
  turnEnd(
    stopReason: StopReason,
    usage: TurnUsage,
    error?: { code: string; message: string },
    rejected = false,
  ): void {
    this.flush();
    this.#write({
      type: "turn_end",
      stopReason,
      usage,
      ...(error ? { error } : {}),
      ...(rejected ? { rejected } : {}),
    });
  }

  /** Records new content for an earlier tool message (a result shrunk after an overflow). */
  toolResultUpdate(toolCallId: string, content: string): void {
    this.flush();
    this.#write({ type: "tool_result_update", tool_call_id: toolCallId, content });
  }

  /** Records a compaction: the whole new model history (see {@link TranscriptLine}). */
  compaction(messages: ChatMessage[], turnStart: number, summary: string): void {
    this.flush();
    this.#write({ type: "compaction", messages, turn_start: turnStart, summary });
  }

  /** Writes the coalesced chunk, if any. */
  flush(): void {
    const p = this.#pending;
    if (!p) return;
    this.#pending = null;
    // A chunk that was continued must not be written twice: it is only written here.
    this.#write({ type: "update", update: p });
  }

  /** Closes the file (a file still being created is closed once its queued lines are in). */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    if (this.#file) {
      try {
        this.#file.close();
      } catch { /* already closed */ }
    }
  }
}

/** Parses a transcript's text. Unparseable lines (a torn tail) are counted and skipped. */
export function parseTranscript(text: string): LoadedSession | null {
  let header: SessionHeader | null = null;
  const messages: ChatMessage[] = [];
  const updates: EngineEvent[] = [];
  let skipped = 0;
  let turnStart = 0;
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    let line: TranscriptLine;
    try {
      line = JSON.parse(raw);
    } catch {
      skipped++;
      continue;
    }
    if (!line || typeof line !== "object") {
      skipped++;
      continue;
    }
    if (line.type === "session" && !header) header = line;
    else if (line.type === "message" && line.message) messages.push(line.message);
    else if (line.type === "update" && line.update) updates.push(line.update);
    else if (line.type === "turn_end") {
      // A rejected turn's messages would be rejected again: they leave the model history.
      if (line.rejected) messages.length = turnStart;
      turnStart = messages.length;
    } else if (line.type === "compaction" && Array.isArray(line.messages)) {
      messages.splice(0, messages.length, ...line.messages);
      turnStart = Math.min(line.turn_start ?? messages.length, messages.length);
    } else if (line.type === "tool_result_update" && typeof line.content === "string") {
      for (const m of messages) {
        if (m.role === "tool" && m.tool_call_id === line.tool_call_id) m.content = line.content;
      }
    }
  }
  if (!header) return null;
  return { header, messages: repairHistory(messages), updates, skipped };
}

/**
 * Makes a loaded history valid for the Chat Completions API: every assistant
 * `tool_calls` entry needs a `tool` reply (a crash mid-tool leaves none), so a
 * missing reply is filled in as an interrupted tool error; a `tool` message that answers no
 * preceding call, and an assistant message with neither content nor tool calls (older
 * transcripts stored reasoning-only turns as `content: null`), are dropped.
 */
export function repairHistory(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (isEmptyAssistant(m) || m.role === "tool") continue;
    out.push(m);
    if (m.role === "assistant" && m.tool_calls?.length) {
      const answered = new Set<string>();
      let j = i + 1;
      const ids = new Set(m.tool_calls.map((tc) => tc.id));
      while (j < messages.length && messages[j].role === "tool") {
        const id = messages[j].tool_call_id ?? "";
        if (ids.has(id) && !answered.has(id)) out.push(messages[j]);
        answered.add(id);
        j++;
      }
      for (const tc of m.tool_calls) {
        if (!answered.has(tc.id)) {
          out.push({
            role: "tool",
            tool_call_id: tc.id,
            content: "error: interrupted before this tool call finished",
          });
        }
      }
      i = j - 1;
    }
  }
  return out;
}

export async function loadSession(dataDir: string, id: string): Promise<LoadedSession | null> {
  if (!ID_RE.test(id)) return null;
  let text: string;
  try {
    text = await Deno.readTextFile(`${sessionsDir(dataDir)}/${id}.jsonl`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  return parseTranscript(text);
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
