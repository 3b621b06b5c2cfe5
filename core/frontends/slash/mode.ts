/**
 * `/mode [name]` for every frontend (issue 18, docs/modes.md "Permission modes"): without a
 * name it shows the session's permission mode and the others; with one it switches
 * (`AgentSession.setMode`, core/policy/mode.ts). The REPL's Shift+Tab steps through the same
 * modes ({@link nextMode}). Leaving `plan` hands the plan over: {@link lastAnswer} is the
 * agent's last answer, which the REPL offers to run as the next prompt ({@link planPrompt}).
 * @module
 */
import type { AgentSession } from "../../session/types.ts";
import {
  isPermissionMode,
  MODE_DESCRIPTIONS,
  PERMISSION_MODES,
  type PermissionMode,
} from "../../policy/mode.ts";

/** What `/mode` did: the text to show, and the modes before and after a switch. */
export interface ModeOutcome {
  text: string;
  before?: PermissionMode;
  after?: PermissionMode;
}

/** The mode after `mode` in the Shift+Tab cycle (default → accept-edits → plan → auto → …). */
export function nextMode(mode: PermissionMode): PermissionMode {
  return PERMISSION_MODES[(PERMISSION_MODES.indexOf(mode) + 1) % PERMISSION_MODES.length];
}

/** One line naming `mode` and what it allows. */
export function modeLine(mode: PermissionMode): string {
  return `mode: ${mode} — ${MODE_DESCRIPTIONS[mode]}`;
}

/** `/mode [name]`: shows or switches; an unknown name lists the modes and changes nothing. */
export function modeCommand(session: AgentSession, args: string): ModeOutcome {
  const want = args.trim();
  if (!want) {
    return {
      text: [
        modeLine(session.mode),
        "",
        ...PERMISSION_MODES.map((m) =>
          `${m === session.mode ? "*" : " "} ${m.padEnd(12)} ${MODE_DESCRIPTIONS[m]}`
        ),
        "",
        "Switch with /mode NAME (the REPL: Shift+Tab).",
      ].join("\n"),
    };
  }
  if (!isPermissionMode(want)) {
    return {
      text: `unknown mode "${want}": expected ${PERMISSION_MODES.join(", ")}`,
    };
  }
  const before = session.mode;
  session.setMode(want);
  return { text: modeLine(want), before, after: want };
}

/**
 * The agent's last answer in `session` (its text after the last user message), or "" when
 * there is none: the plan a `plan`-mode turn wrote.
 */
export function lastAnswer(session: AgentSession): string {
  const h = session.history();
  let text = "";
  for (const u of h) {
    const e = u as { sessionUpdate?: string; content?: { type?: string; text?: string } };
    if (e.sessionUpdate === "user_message_chunk") text = "";
    else if (e.sessionUpdate === "agent_message_chunk" && e.content?.type === "text") {
      text += e.content.text ?? "";
    }
  }
  return text.trim();
}

/** The prompt that runs a plan written in plan mode (sent when the user accepts the hand-over). */
export function planPrompt(plan: string): string {
  return `Carry out the plan you wrote above, step by step (permission mode changed from plan):\n\n${plan}`;
}
