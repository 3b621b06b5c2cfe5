/**
 * `--record FILE` / `--replay FILE`: the entry point core/session/workspace.ts loads (only when
 * one of the flags is given); the format is ./tape_format.ts, recording ./record.ts, replaying
 * ./replay.ts (each loaded only for its flag).
 * @module
 */
import type { TapeContext, TapeHeader, TapeOptions } from "./tape_format.ts";
export { TapeError } from "./tape_format.ts";

/**
 * The `fetch` of a workspace's provider for `--record` or `--replay` (one of them).
 * @throws TapeError for a replay file that cannot be read or is not a record (naming file and
 *   line), or a record file that cannot be created.
 */
export async function tapeFetch(opts: TapeOptions, ctx: TapeContext): Promise<typeof fetch> {
  if (opts.replay) return (await import("./replay.ts")).replayFetch(opts.replay, ctx);
  return (await import("./record.ts")).recordFetch(opts.record!, ctx);
}

/**
 * The header of a replay file (model and base URL a run without a configured provider uses).
 * @throws TapeError as {@link tapeFetch} does.
 */
export async function tapeHeader(file: string): Promise<TapeHeader> {
  return (await import("./replay.ts")).loadTape(file).header;
}
