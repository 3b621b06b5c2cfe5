/**
 * The REPL's side of the permission modes (issue 18, docs/modes.md): the prompt shows the mode
 * when it is not `auto` (`plan › `), Shift+Tab steps to the next mode ({@link ModeKeys.cycle}),
 * `/mode` switches (core/frontends/slash/mode.ts), and leaving `plan` with an answer on screen
 * offers the hand-over: Enter on the empty prompt sends that plan as the next prompt.
 * @module
 */
import type { PermissionMode } from "../../policy/mode.ts";
import type { AgentSession } from "../../session/types.ts";
import { lastAnswer, modeLine, nextMode, planPrompt } from "../slash/mode.ts";

/** The REPL's mode state: the plan waiting for Enter, and what the prompt shows. */
export class ModeKeys {
  /** The prompt that runs the plan written in plan mode, until the user types something else. */
  pendingPlan = "";
  /**
   * The answer of the last turn that ended (`end_turn`) in plan mode since plan mode was entered:
   * only that is a plan to hand over (an earlier answer, or a cancelled one, is not).
   */
  #planAnswer = "";

  constructor(
    private readonly styles: {
      bold(t: string): string;
      yellow(t: string): string;
      dim(t: string): string;
    },
  ) {}

  /** The prompt for `mode` in front of `base` (`plan › `; `auto` shows nothing). */
  prompt(mode: PermissionMode | undefined, base: string): string {
    return mode && mode !== "auto" ? this.styles.bold(this.styles.yellow(`${mode} `)) + base : base;
  }

  /** Shift+Tab: the next mode; returns the lines to show. */
  cycle(session: AgentSession): string[] {
    const before = session.mode;
    session.setMode(nextMode(before));
    return this.changed(session, before);
  }

  /**
   * After a switch from `before`: the line naming the new mode, and — leaving `plan` with an
   * answer written — the hand-over offer.
   */
  changed(session: AgentSession, before: PermissionMode): string[] {
    const lines = [
      `${modeLine(session.mode)} ${this.styles.dim("(Shift+Tab: next mode)")}`,
    ];
    this.pendingPlan = "";
    if (session.mode === "plan" && before !== "plan") this.#planAnswer = "";
    if (before === "plan" && session.mode !== "plan") {
      const plan = this.#planAnswer;
      this.#planAnswer = "";
      if (plan) {
        this.pendingPlan = planPrompt(plan);
        lines.push(
          this.styles.dim(
            "Press Enter on the empty prompt to carry out the plan above, or type something else.",
          ),
        );
      }
    }
    return lines;
  }

  /** After each turn: an answer finished in plan mode is the plan a switch away can hand over. */
  turnEnded(session: AgentSession, stopReason: string): void {
    if (session.mode !== "plan") return;
    this.#planAnswer = stopReason === "end_turn" ? lastAnswer(session) : "";
  }

  /** The plan prompt to run for an empty entry, once; "" when none waits. */
  take(): string {
    const p = this.pendingPlan;
    this.pendingPlan = "";
    return p;
  }
}
