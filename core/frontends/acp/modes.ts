/**
 * ACP session modes (issue 18, docs/acp.md "Session modes", docs/modes.md): Coyote's permission
 * modes (core/policy/mode.ts) as the ACP `modes` of a session — `{currentModeId, availableModes}`
 * in the `session/new`, `session/load` and `session/resume` responses, `session/set_mode` to
 * switch, and a `current_mode_update` `session/update` whenever the mode changes (a
 * `session/set_mode`, or the `/mode` slash command).
 *
 * `session/set_mode` with a mode id that is not a permission mode but an agent name is still
 * accepted as the `agent` config option (what it meant before modes existed). Leaving `plan`
 * over ACP just switches the mode: the client's next prompt (e.g. "go ahead") runs the plan
 * with the conversation that holds it.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentSession } from "../../session/runtime.ts";
import {
  isPermissionMode,
  MODE_DESCRIPTIONS,
  PERMISSION_MODES,
  type PermissionMode,
} from "../../policy/mode.ts";

/** Display names of the modes (ACP `SessionMode.name`). */
const NAMES: Record<PermissionMode, string> = {
  plan: "Plan",
  default: "Default",
  "accept-edits": "Accept edits",
  auto: "Auto",
};

/** The ACP `modes` of a session. */
export function sessionModes(session: AgentSession): acp.SessionModeState {
  return {
    currentModeId: session.mode,
    availableModes: PERMISSION_MODES.map((id) => ({
      id,
      name: NAMES[id],
      description: MODE_DESCRIPTIONS[id],
    })),
  };
}

/**
 * Switches `session` to `mode` and tells the client with a `current_mode_update` (also when the
 * mode did not change: the client asked, it gets the state). Returns the previous mode.
 */
export async function switchMode(
  notify: (sessionId: string, update: acp.SessionUpdate) => Promise<void>,
  session: AgentSession,
  mode: PermissionMode,
): Promise<PermissionMode> {
  const before = session.mode;
  session.setMode(mode);
  await notify(session.id, { sessionUpdate: "current_mode_update", currentModeId: mode });
  return before;
}

export { isPermissionMode };
