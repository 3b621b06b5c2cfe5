/**
 * `coyote rewind [SESSION] [--to TURN|CHECKPOINT] [--files-only|--conversation-only] [--list]`
 * (issue 18, docs/modes.md "Checkpoints and rewind"): a stored session (default: the latest of
 * this directory) back to before a turn (default: its last) — its workspace's files from the
 * checkpoint store and its conversation (a `rewind` line appended to the transcript), the same
 * rewind as `/rewind` (core/session/checkpoints/rewind.ts). The files it restores are listed on
 * stdout before they change, then the checkpoint that undoes it. Exit 0 when done, 2 for a session
 * or turn that does not exist, 1 when git fails.
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import { safeText } from "../../util/terminal_safe.ts";
import { stdout, usageExit } from "./output.ts";

export async function rewindCommand(app: AppOptions, args: string[]): Promise<number> {
  const { listStoredSessions, resolveSessionRef, transcriptPath } = await import(
    "../../transcript/store.ts"
  );
  const { parseTranscript } = await import("../../transcript/load.ts");
  const { TranscriptWriter } = await import("../../transcript/writer.ts");
  const { rewind, turnList, RewindError } = await import("../../session/checkpoints/rewind.ts");
  const { CheckpointStore } = await import("../../session/checkpoints/store.ts");
  const { limitsOf } = await import("../../session/checkpoints/turns.ts");
  const { changesText, outcomeText } = await import("../rewind_command.ts");

  let to: string | undefined;
  let ref: string | undefined;
  const flag = (f: string) => args.includes(f);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--to") to = args[++i];
    else if (!args[i].startsWith("--")) ref = args[i];
  }
  const all = await listStoredSessions(app.dataDir);
  let id: string;
  if (ref !== undefined) {
    let r;
    try {
      r = resolveSessionRef(all, ref, "rewind");
    } catch (e) {
      return await usageExit((e as Error).message, false);
    }
    if (!("id" in r)) {
      return await usageExit(`rewind: no stored session has the id or name ${ref}`, false);
    }
    id = r.id;
  } else {
    const latest = all.find((s) => s.cwd === app.cwd && !s.parent);
    if (!latest) return await usageExit(`rewind: no stored session for ${app.cwd}`, false);
    id = latest.id;
  }
  const path = transcriptPath(app.dataDir, id);
  const loaded = parseTranscript(await Deno.readTextFile(path));
  if (!loaded) return await usageExit(`rewind: ${path} is not a transcript`, false);
  const turns = loaded.turns ?? [];
  if (flag("--list")) {
    // Named first (short id, title, folder): the latest session of a folder is not always the
    // one a user has in mind.
    const info = all.find((s) => s.id === id);
    const title = info?.name ? `[${info.name}] ${info.title}` : info?.title;
    stdout(
      turns.length
        ? safeText(
          `session ${id.slice(0, 8)}${
            title ? ` "${title}"` : ""
          } (${loaded.header.cwd}), ${turns.length} turn${turns.length === 1 ? "" : "s"}:\n${
            turnList(turns).join("\n")
          }`,
        ) + "\n"
        : `session ${id} has no turns\n`,
    );
    return 0;
  }
  const cwd = loaded.header.cwd;
  const store = () => CheckpointStore.open(app.dataDir, cwd, limitsOf(app.config.checkpoints));
  const w: { writer?: import("../../transcript/writer.ts").TranscriptWriter } = {};
  try {
    const o = await rewind({
      store,
      turns,
      record: (line) => (w.writer ??= TranscriptWriter.open(path)).rewind(line),
    }, {
      to,
      files: !flag("--conversation-only"),
      conversation: !flag("--files-only"),
      preview: (changes) => stdout(`${changesText(changes)}\n`),
    });
    const short = id.slice(0, 8);
    stdout(
      `session ${short} (${safeText(cwd)}): ${
        o.turn === undefined
          ? `files set back to checkpoint ${safeText(to ?? "")}`
          : `rewound to before turn ${o.turn}`
      }\n` +
        `${outcomeText(o, (u) => `coyote rewind ${short} --to ${u.slice(0, 12)} --files-only`)}\n`,
    );
    return 0;
  } catch (e) {
    if (e instanceof RewindError) return await usageExit(e.message, "coyote rewind --help");
    Deno.stderr.writeSync(
      new TextEncoder().encode(`coyote: rewind failed: ${safeText((e as Error).message)}\n`),
    );
    return 1;
  } finally {
    w.writer?.close();
  }
}
