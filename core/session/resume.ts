/**
 * Continuing a stored session (`--continue`, `--session ID`, ACP `session/load`): its
 * transcript loaded (core/transcript/load.ts; nothing is re-executed), with a note when it was
 * started in another directory and a count of unreadable lines, and its history fitted to the
 * model's window (tool results capped, core/engine/context.ts).
 * @module
 */
import { loadSession } from "../transcript/load.ts";
import type { ChatMessage, LoadedSession } from "../transcript/types.ts";
import { capToolResults, toolOutputCap } from "../engine/context.ts";
import { UsageError, type Workspace } from "./workspace.ts";

/**
 * Loads stored session `id` to continue it; `child`: a sub-agent's (no note about its
 * directory).
 * @throws UsageError when there is no stored session with that id.
 */
export async function loadToResume(
  ws: Workspace,
  id: string,
  child: boolean,
): Promise<LoadedSession> {
  const cwd = ws.cwd;
  const log = (l: string) => ws.log(l);
  const resumed = await loadSession(ws.app.dataDir, id);
  if (!resumed) throw new UsageError(`no stored session with id ${id}`);
  if (!child && resumed.header.cwd !== cwd) {
    log(
      `coyote: note: session ${resumed.header.id} was started in ${resumed.header.cwd}; ` +
        `continuing it in ${cwd}`,
    );
  }
  if (resumed.skipped) {
    log(`coyote: skipped ${resumed.skipped} unreadable line(s) of session ${id}`);
  }
  return resumed;
}

/** A loaded history with tool results capped for the model's window (core/engine/context.ts). */
export function fitHistory(
  messages: ChatMessage[],
  info: { contextWindow: number; maxOutputTokens?: number },
): ChatMessage[] {
  return capToolResults(messages, toolOutputCap(info.contextWindow, info.maxOutputTokens));
}
