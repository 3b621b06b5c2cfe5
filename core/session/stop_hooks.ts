/**
 * The stop hooks of a session (config.yaml `hooks.stop` and plugins' stop hooks,
 * core/extensions/hooks/stop.ts): they run last when the agent is about to end its turn, after
 * the supervisor's reminders and todo auto-continuation had nothing to add. Like Claude Code's
 * `Stop` they are the root agent's (a hook that asks for a commit must not send twenty read-only
 * explore children back to work); a sub-agent runs the `SubagentStop` hooks instead
 * (core/session/hooks.ts `stopHookSpecs`). A block reaches the turn's stream as an
 * `agent_thought_chunk` (`_meta.coyote.event: "stop_hook"`) and a `hook` event.
 * @module
 */
import type { EngineEvent, HookEvent } from "../protocol/types.ts";
import { claudeMode, stopHookSpecs } from "./hooks.ts";
import { DEFAULT_MAX_BLOCKS, StopHookGate } from "../extensions/hooks/stop.ts";
import type { CommandSandbox } from "../policy/sandbox/mod.ts";
import { transcriptPath } from "../transcript/store.ts";
import type { Workspace } from "./workspace.ts";

/** What a session's stop hooks run against. */
export interface StopHookSource {
  ws: Workspace;
  /** A sub-agent: its `SubagentStop` hooks instead of the `Stop` ones. */
  child: boolean;
  /** The session's OS sandbox (a plugin's hook runs inside it). */
  sandbox: CommandSandbox;
  sessionId: string;
  /** The current agent's name. */
  agent(): string;
  /** Emits an event into the running turn's stream (stamped like the engine's own), if any. */
  emit(ev: EngineEvent): void;
  /** Emits a `hook` event (core/protocol/types.ts `HookEvent`) the same way. */
  emitHook?(ev: HookEvent): void;
  /** Coyote's permission mode, if known (sent as Claude Code's `permission_mode`). */
  mode?(): string | undefined;
  log(line: string): void;
}

/**
 * The session's stop-hook gate (reset at the start of each turn) and its step: the reason to
 * continue the turn with, or null to let it end.
 */
export function sessionStopHooks(
  s: StopHookSource,
): { gate: StopHookGate; step: (signal: AbortSignal) => Promise<string | null> } {
  const { ws, sandbox, log } = s;
  const app = ws.app;
  const cwd = ws.cwd;
  const id = s.sessionId;
  const specs = stopHookSpecs(ws, sandbox, s.child);
  const stopHooks = new StopHookGate(
    specs,
    (app.workspace?.userConfig?.hooks ?? app.config?.hooks)?.max_stop_blocks ??
      DEFAULT_MAX_BLOCKS,
  );
  const event = s.child ? "SubagentStop" : "Stop";
  const stopHookStep = (signal: AbortSignal) =>
    stopHooks.check(
      {
        hook_event_name: event,
        permission_mode: claudeMode(s.mode?.()),
        session_id: id,
        agent: s.agent(),
        cwd,
        transcript_path: transcriptPath(app.dataDir, id),
      },
      signal,
      (e) => {
        s.emit({
          sessionUpdate: "agent_thought_chunk",
          content: { type: "text", text: `stop hook: ${e.reason}\n` },
          _meta: { coyote: { event: "stop_hook", ...e } },
        });
        s.emitHook?.({
          sessionUpdate: "hook",
          hookEventName: event,
          command: e.hook,
          source: specs.find((h) => h.command === e.hook)?.source ?? "config",
          decision: "block",
          reason: e.reason,
        });
      },
      log,
    );
  return { gate: stopHooks, step: stopHookStep };
}
