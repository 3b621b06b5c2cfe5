/**
 * A root session's checkpoints (issue 18, docs/modes.md "Checkpoints and rewind"): before the
 * first call of a turn that may change the workspace (a tool not marked `readOnly`: file tools,
 * `execute_command`, `agent__spawn`, plugin and MCP tools — core/engine/execute.ts calls
 * `beforeChange`), the workspace is checkpointed once (./store.ts). The checkpoint's id goes into
 * the transcript (`{type:"checkpoint", id}`) and the event stream (a `checkpoint` event), and the
 * turn's ids into its `turn_ended.checkpoints`. Calls of one turn that start together wait for the
 * same checkpoint. A checkpoint that cannot be taken (past the size limit, no git, a git failure)
 * is a `checkpoint` event with `skipped` and one warning on stderr per session; the turn goes on.
 * After the first checkpoint the store watches the workspace for changes (./watch.ts) until the
 * session closes ({@link TurnCheckpointer.close}).
 * Loaded by core/session/conversation.ts at the first change of a session.
 * @module
 */
import type { CheckpointEvent } from "../../protocol/types.ts";
import type { TranscriptWriter } from "../../transcript/writer.ts";
import { type CheckpointLimits, CheckpointSkipped, CheckpointStore } from "./store.ts";

/** Config `checkpoints:` (core/config/config.ts). */
export interface CheckpointSettings {
  enabled?: boolean;
  max_files?: number;
  max_mb?: number;
}

/** The limits of config `checkpoints:`. */
export function limitsOf(s: CheckpointSettings | undefined): Partial<CheckpointLimits> {
  return {
    ...(s?.max_files ? { maxFiles: s.max_files } : {}),
    ...(s?.max_mb ? { maxBytes: s.max_mb * 1024 * 1024 } : {}),
  };
}

/** What core/session/conversation.ts drives. */
export interface TurnCheckpointer {
  /** Checkpoints the workspace unless this turn already did (or tried). Never throws. */
  beforeChange(): Promise<void>;
  /** The ids of the turn's checkpoints; the next call starts a new turn. */
  endTurn(): string[];
  /** The workspace's store (for rewinds), or why there is none. */
  store(): Promise<CheckpointStore>;
  /** Ends the store's change detector (the session closes). */
  close(): Promise<void>;
}

export function turnCheckpointer(o: {
  dataDir: string;
  cwd: string;
  sessionId: string;
  settings?: CheckpointSettings;
  transcript: TranscriptWriter;
  emit: (ev: CheckpointEvent) => void;
  log: (line: string) => void;
}): TurnCheckpointer {
  let store: Promise<CheckpointStore> | null = null;
  const open = () => store ??= CheckpointStore.open(o.dataDir, o.cwd, limitsOf(o.settings));
  let taking: Promise<void> | null = null;
  let ids: string[] = [];
  let warned = false;
  let closed = false;
  const take = async () => {
    const t0 = performance.now();
    const ms = () => Math.round(performance.now() - t0);
    try {
      const s = await open();
      const id = await s.create(`checkpoint of session ${o.sessionId}`);
      // From now on the store watches the workspace: the next turns stage only what changed
      // (./watch.ts), its baseline scan runs while the model works.
      if (!closed) void s.watch();
      ids.push(id);
      o.transcript.checkpoint(id);
      o.emit({ sessionUpdate: "checkpoint", checkpointId: id, ms: ms() });
    } catch (e) {
      if (e instanceof CheckpointSkipped && /git is not installed/.test(e.message)) store = null;
      const why = (e as Error)?.message ?? String(e);
      if (!warned) {
        warned = true;
        o.log(`coyote: warning: no checkpoint of the workspace (no rewind of this turn): ${why}`);
      }
      o.emit({ sessionUpdate: "checkpoint", skipped: why, ms: ms() });
    }
  };
  return {
    beforeChange() {
      if (o.settings?.enabled === false) return Promise.resolve();
      return taking ??= take();
    },
    endTurn() {
      const out = ids;
      ids = [];
      taking = null;
      return out;
    },
    store: open,
    async close() {
      closed = true;
      if (store) await (await store.catch(() => null))?.close();
    },
  };
}
