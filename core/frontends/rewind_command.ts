/**
 * `/rewind` in the REPL and over ACP, and the text `coyote rewind` prints (issue 18, docs/modes.md
 * "Checkpoints and rewind"; the rewind itself is core/session/checkpoints/rewind.ts):
 *
 * - `/rewind` lists the conversation's turns with their checkpoints (the REPL: picks one, then
 *   files, conversation or both);
 * - `/rewind N` (a turn number) or `/rewind ID` (a checkpoint id) restores the files and the
 *   conversation to before that turn; `files` / `conversation` after it restores only that
 *   (`/rewind 2 files`; `--files-only` and `--conversation-only` work too).
 *
 * What the restore changes is shown before it is made, then the checkpoint that undoes it.
 * @module
 */
import type { AgentSession } from "../session/types.ts";
import type { RewindOutcome, RewindRequest } from "../session/checkpoints/rewind.ts";
import type { RestoreChange } from "../session/checkpoints/store.ts";
import { safeText } from "../util/terminal_safe.ts";

/** `/rewind` arguments → a request, or an error message. */
export function parseRewindArgs(args: string): RewindRequest | { error: string } {
  const r: RewindRequest = {};
  for (const w of args.split(/\s+/).filter(Boolean)) {
    if (w === "files" || w === "--files-only") r.conversation = false;
    else if (w === "conversation" || w === "--conversation-only") r.files = false;
    else if (w === "both") continue;
    else if (r.to === undefined && /^(\d+|[0-9a-f]{7,40})$/i.test(w)) r.to = w;
    else {
      return {
        error: `/rewind: unexpected "${w}"; usage: /rewind [TURN|CHECKPOINT] [files|conversation]`,
      };
    }
  }
  if (r.files === false && r.conversation === false) {
    return { error: "/rewind: choose files or conversation (or neither, for both)" };
  }
  return r;
}

/** The summary shown before a restore: one line per file (added, modified, deleted, renamed). */
export function changesText(changes: RestoreChange[]): string {
  return `restoring ${changes.length} file(s):\n${lines(changes).join("\n")}`;
}

function lines(changes: RestoreChange[]): string[] {
  return changes.map((c) => {
    const what = c.status === "renamed" ? `${c.from} → ${c.path}` : c.path;
    const mode = c.mode ? ` (mode ${c.mode.from} → ${c.mode.to})` : "";
    return `  ${c.status.padEnd(9)} ${safeText(what)}${mode}`;
  });
}

/** What a rewind did, in one or two lines; `undo` is how to undo it (`coyote rewind … --to ID`). */
export function outcomeText(o: RewindOutcome, undo: (id: string) => string): string {
  const out: string[] = [];
  if (o.cancelled) return "rewind cancelled: nothing changed";
  if (o.restored) {
    out.push(
      o.changes.length
        ? `files restored to checkpoint ${o.restored.slice(0, 12)} (undo: ${undo(o.undo!)})`
        : `files already as at checkpoint ${o.restored.slice(0, 12)}: nothing to restore`,
    );
  }
  if (o.note) out.push(o.note);
  if (o.conversation) out.push(`conversation rewound: it now ends before turn ${o.turn}`);
  return out.join("\n");
}

/**
 * A picker: shows `choices` under `title`, resolves the picked id (null: cancelled);
 * `opts.digitsPickIds`: a digit picks the choice of that id (./slash/picker.ts).
 */
export type Choose = (
  title: string,
  choices: { id: string; label: string }[],
  opts?: { digitsPickIds?: boolean },
) => Promise<string | null>;

/**
 * Runs `/rewind args` on a live session; `say` shows text (the summary before the restore). With
 * `choose` (the REPL on a terminal), a bare `/rewind` picks the turn, then files, conversation
 * or both; without it (ACP) a bare `/rewind` lists the turns.
 */
export async function rewindSlashCommand(
  session: AgentSession,
  args: string,
  say: (text: string) => void | Promise<void>,
  choose?: Choose,
): Promise<void> {
  if (!session.rewind) return void await say("/rewind: this session has no checkpoints");
  const req = parseRewindArgs(args);
  if ("error" in req) return void await say(req.error);
  const { turnList } = await import("../session/checkpoints/rewind.ts");
  try {
    if (!args.trim() && choose) {
      const { turns } = await session.rewind({ list: true });
      if (!turns.length) return void await say("nothing to rewind: no turns yet");
      const lines = turnList(turns);
      const turn = await choose(
        "Rewind to before which turn? (↑/↓ or number, Enter picks, Esc cancels)",
        lines.map((l, i) => ({
          id: String(i + 1),
          label: `turn ${i + 1}: ${safeText(l.replace(/^\s*\d+\.\s*/, ""))}`,
        })).reverse(),
        // Newest first, but `3` is turn 3 as in `/rewind 3`, not the third line.
        { digitsPickIds: true },
      );
      if (!turn) return;
      const what = await choose("Restore what?", [
        { id: "both", label: "files and conversation" },
        { id: "files", label: "files only (keep the conversation)" },
        { id: "conversation", label: "conversation only (keep the files)" },
      ]);
      if (!what) return;
      req.to = turn;
      if (what === "files") req.conversation = false;
      if (what === "conversation") req.files = false;
    } else if (!args.trim()) {
      const { turns } = await session.rewind({ list: true });
      return void await say(
        turns.length
          ? `${
            turnList(turns).map((l) => safeText(l)).join("\n")
          }\n/rewind N restores files and conversation to before turn N (/rewind N files, /rewind N conversation)`
          : "nothing to rewind: no turns yet",
      );
    }
    const o = await session.rewind({
      ...req,
      preview: async (changes) => void await say(changesText(changes)),
    });
    await say(outcomeText(o, (id) => `/rewind ${id.slice(0, 12)}`));
  } catch (e) {
    await say(`/rewind: ${safeText((e as Error)?.message ?? String(e))}`);
  }
}
