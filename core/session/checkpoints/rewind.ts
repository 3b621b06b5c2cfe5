/**
 * Rewind (issue 18, docs/modes.md "Checkpoints and rewind"): back to before a turn — the
 * workspace's files (the first checkpoint taken at or after that turn, ./store.ts), the
 * conversation (a `rewind` transcript line: the turn and every later one are gone on load,
 * core/transcript/load.ts; no line is rewritten), or both. One plan for every frontend:
 * `coyote rewind` (core/frontends/cli/rewind.ts) on a stored session, `/rewind` in the REPL and
 * over ACP on the live one ({@link rewindLive}).
 *
 * The restore shows its changes before it makes them (`preview`) and is checkpointed first: the
 * outcome's `undo` is the checkpoint of the workspace as it was (`coyote rewind --to <undo>`
 * restores it).
 * @module
 */
import type { EngineEvent } from "../../protocol/types.ts";
import type { ChatMessage, StoredTurn } from "../../transcript/types.ts";
import type { TranscriptWriter } from "../../transcript/writer.ts";
import { parseTranscript } from "../../transcript/load.ts";
import { CheckpointError, type CheckpointStore, type RestoreChange } from "./store.ts";

/** What to rewind. */
export interface RewindRequest {
  /**
   * A turn number (1-based, as `turnList` shows them) or a checkpoint id (a unique prefix of 7+
   * hex digits); default: the last turn. A checkpoint of no turn (a restore's `undo`) restores
   * files only.
   */
  to?: string;
  /** Restore the files (default true). */
  files?: boolean;
  /** Rewind the conversation (default true). */
  conversation?: boolean;
  /** Sees the restore's changes before they are made; `false` cancels the whole rewind. */
  preview?: (changes: RestoreChange[]) => boolean | void | Promise<boolean | void>;
}

/** What a rewind did. */
export interface RewindOutcome {
  /** The turn it went back before (the conversation now ends before it, if `conversation`). */
  turn?: number;
  /** The checkpoint the files were restored to. */
  restored?: string;
  /** The checkpoint of the workspace before the restore (restore it to undo). */
  undo?: string;
  changes: RestoreChange[];
  /** True when the conversation was rewound. */
  conversation: boolean;
  /** True when `preview` said no: nothing changed. */
  cancelled?: boolean;
  /** Why files were not restored, when they were asked for and were not. */
  note?: string;
}

/** A `--to` that names no turn or checkpoint; the message says what exists. */
export class RewindError extends Error {
  override name = "UsageError";
}

/** The turn list of a conversation as `/rewind` and `coyote rewind --list` show it. */
export function turnList(turns: StoredTurn[]): string[] {
  return turns.map((t, i) => {
    const p = t.prompt.replace(/\s+/g, " ").trim();
    const cp = t.checkpoints.length ? `checkpoint ${t.checkpoints[0].slice(0, 12)}` : "no changes";
    return `${String(i + 1).padStart(3)}. ${
      p.length > 60 ? p.slice(0, 59) + "…" : p || "(empty)"
    }  [${cp}]`;
  });
}

/**
 * Rewinds per `r` (see the module doc). `record` appends the `rewind` transcript line.
 * @throws RewindError for a `to` that names nothing; CheckpointError when git fails.
 */
export async function rewind(
  s: {
    store: () => Promise<CheckpointStore>;
    turns: StoredTurn[];
    record: (line: { turn?: number; files?: { restored: string; undo: string } }) => void;
  },
  r: RewindRequest,
): Promise<RewindOutcome> {
  const wantFiles = r.files !== false;
  let wantConversation = r.conversation !== false;
  const turns = s.turns;
  let turn: number | undefined;
  let target: string | undefined;
  let note: string | undefined;
  const to = r.to?.trim();
  if (to === undefined || to === "") {
    if (!turns.length) throw new RewindError("nothing to rewind: this session has no turns yet");
    turn = turns.length;
  } else if (/^\d+$/.test(to)) {
    turn = Number(to);
    if (turn < 1 || turn > turns.length) {
      throw new RewindError(
        turns.length
          ? `no turn ${to}: this session has turns 1 to ${turns.length}`
          : "nothing to rewind: this session has no turns yet",
      );
    }
  } else if (/^[0-9a-f]{7,40}$/i.test(to)) {
    const low = to.toLowerCase();
    const i = turns.findIndex((t) => t.checkpoints.some((c) => c.startsWith(low)));
    if (i >= 0) {
      turn = i + 1;
      target = turns[i].checkpoints.find((c) => c.startsWith(low));
    } else {
      try {
        target = await (await s.store()).resolve(to);
      } catch (e) {
        if (e instanceof CheckpointError) throw new RewindError(e.message);
        throw e;
      }
      wantConversation = false;
    }
  } else {
    throw new RewindError(`--to ${to}: expected a turn number or a checkpoint id`);
  }
  if (turn !== undefined && target === undefined) {
    target = turns.slice(turn - 1).flatMap((t) => t.checkpoints)[0];
  }
  const out: RewindOutcome = { changes: [], conversation: false, ...(turn ? { turn } : {}) };
  let files: { restored: string; undo: string } | undefined;
  if (wantFiles && target) {
    const st = await s.store();
    const res = await st.restore(target, `before rewinding to ${target}`, r.preview);
    if (res.cancelled) return { ...out, changes: res.changes, cancelled: true };
    out.changes = res.changes;
    out.restored = target;
    out.undo = res.undo;
    files = { restored: target, undo: res.undo };
  } else if (wantFiles) {
    note =
      `no checkpoint at or after turn ${turn}: the agent changed no file since, nothing to restore`;
  }
  if (wantConversation && turn !== undefined) {
    s.record({ turn, ...(files ? { files } : {}) });
    out.conversation = true;
  } else if (files) s.record({ files });
  return note ? { ...out, note } : out;
}

/**
 * Rewinds a live session (`/rewind` in the REPL and over ACP): the turns are read from its
 * transcript, and after a conversation rewind the engine's history and events are the
 * transcript's again.
 */
export async function rewindLive(
  live: {
    transcript: TranscriptWriter;
    engine: { messages: ChatMessage[]; updates: EngineEvent[]; running: boolean };
    store: () => Promise<CheckpointStore>;
  },
  r: RewindRequest & { list?: boolean },
): Promise<RewindOutcome & { turns: StoredTurn[] }> {
  if (live.engine.running) throw new RewindError("a turn is running; rewind after it ends");
  const load = async () => {
    await live.transcript.ready;
    live.transcript.flush();
    return parseTranscript(await Deno.readTextFile(live.transcript.path));
  };
  const before = await load();
  const turns = before?.turns ?? [];
  if (r.list) return { changes: [], conversation: false, turns };
  const out = await rewind(
    { store: live.store, turns, record: (l) => live.transcript.rewind(l) },
    r,
  );
  if (out.conversation) {
    const after = await load();
    if (after) {
      live.engine.messages.splice(0, live.engine.messages.length, ...after.messages);
      live.engine.updates.splice(0, live.engine.updates.length, ...after.updates);
    }
  }
  return { ...out, turns };
}
