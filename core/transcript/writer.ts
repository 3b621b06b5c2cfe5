/**
 * Writing a session transcript (`<dataDir>/sessions/<id>.jsonl`, line shapes in
 * core/transcript/types.ts): {@link TranscriptWriter} creates one with its header line (also off
 * the main thread, for sub-agents), or opens one to continue it, and appends lines. Every line is
 * written with one synchronous append write, so a crash leaves a readable file (a torn last line
 * is skipped on load, core/transcript/load.ts); consecutive text chunks of one kind are coalesced
 * into one `update` line. A failed write stops recording with one warning, never the session.
 * @module
 */
import type { EngineEvent, StopReason, TurnUsage } from "../protocol/types.ts";
import type { ChatMessage, SessionHeader, TranscriptLine } from "./types.ts";
import { sessionsDir } from "./store.ts";

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

  /** Records a checkpoint taken in this turn (core/session/checkpoints/). */
  checkpoint(id: string): void {
    this.flush();
    this.#write({ type: "checkpoint", id });
  }

  /** Records a coordinator's gate decision (see {@link TranscriptLine} `gate`). */
  gate(data: { event: string; [k: string]: unknown }): void {
    this.flush();
    this.#write({ ...data, type: "gate" });
  }

  /** Records a rewind (see {@link TranscriptLine}): the conversation from `turn` on is dropped on load. */
  rewind(r: { turn?: number; files?: { restored: string; undo: string } }): void {
    this.flush();
    this.#write({ type: "rewind", ...r });
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
