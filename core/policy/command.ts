/**
 * A whole command line (view (a), the `execute` access): an empty line is
 * allowed; a line longer than {@link MAX_COMMAND_LENGTH} characters, or one
 * the shell parser cannot parse, asks (fail closed; allowed under
 * `--dangerously-skip-permissions` when no deny rule could apply); an
 * `Execute` rule naming the exact line (as "allow always" records it) decides
 * it first; then every part is decided by the script walk (walk.ts).
 *
 * The parser (npm mvdan-sh) loads on first use: a line of plain words takes
 * the fast path of shell/parse.ts unless it may run a nested shell string
 * ({@link needsFullParser}); the caller loads the parser before
 * {@link commandParts} when needed.
 * @module
 */
import { hasRules, type Level, type PolicyCore, rulesOf } from "./context.ts";
import { scriptParts } from "./walk.ts";
import { yieldNote, yieldsTo } from "./yields.ts";
import { parseShell } from "./shell/parse.ts";
import { lexSimple } from "./shell/fast_path.ts";
import type { GuardPart } from "./types.ts";
import { by, clip, q } from "./verdict.ts";
import { applyMode } from "./mode.ts";

/**
 * The policy a command is judged by: in plan mode (./mode.ts) without `Execute` allow rules and
 * without `--dangerously-skip-permissions`, so only what the read-only defaults allow runs; then
 * {@link applyMode} turns what would ask into a deny. The guard (policy.ts) and the worker grants'
 * `run` (grant.ts) both use it.
 */
export function commandView(core: PolicyCore): PolicyCore {
  return core.mode !== "plan" ? core : {
    ...core,
    dangerouslySkipPermissions: false,
    rules: core.rules.filter((r) => !(r.kind === "execute" && r.decision === "allow")),
  };
}

/** The parts of `command` under the policy's mode ({@link commandView}, ./mode.ts `applyMode`). */
export function modeCommandParts(core: PolicyCore, command: string): GuardPart[] {
  return applyMode(
    core.mode,
    commandParts(commandView(core), command),
    true,
    core.dangerouslySkipPermissions,
  );
}

/** Commands longer than this are not parsed; they ask (fail closed). */
export const MAX_COMMAND_LENGTH = 4000;

/** Fallback for a command that cannot be analysed: ask (or allow under skip when no deny rule could apply). */
function unanalysable(core: PolicyCore, command: string, why: string): GuardPart[] {
  const subject = clip(command.replace(/\s+/g, " ").trim(), 80);
  if (
    core.dangerouslySkipPermissions &&
    !hasRules(core, ["execute", "read", "write", "env"], ["deny"])
  ) {
    return [{
      decision: "allow",
      reason: `--dangerously-skip-permissions allows ${q(subject)} (${why})`,
      rule: "default",
      subject,
    }];
  }
  // bash runs a script it cannot parse up to the bad token (`rm -rf x\n}`), so a rule that
  // restricts commands must hold: the question carries it and the sandbox's auto-allow, which
  // lifts only default questions, yields (issue 16, sixth attacker pass).
  const y = yieldsTo(core, core.dangerouslySkipPermissions ? "skip" : "full");
  return [{
    decision: "ask",
    reason: `${why}; the guard asks (fail closed) for ${q(subject)}${y ? yieldNote(y) : ""}`,
    rule: y?.text ?? "default",
    subject,
  }];
}

export function commandParts(core: PolicyCore, command: string): GuardPart[] {
  if (!command.trim()) {
    return [{ decision: "allow", reason: "empty command", rule: "default", subject: "" }];
  }
  if (command.length > MAX_COMMAND_LENGTH) {
    return unanalysable(
      core,
      command,
      `the command is ${command.length} characters long (limit ${MAX_COMMAND_LENGTH})`,
    );
  }
  const res = parseShell(command, core.home);
  if (!res.ok) {
    return unanalysable(core, command, `the shell parser cannot parse it (${res.error})`);
  }

  const parts: GuardPart[] = [];
  const whole = command.replace(/\s+/g, " ").trim();
  let level: Level = core.dangerouslySkipPermissions ? "skip" : "full";
  let approved = false;
  for (const r of rulesOf(core, "execute")) {
    if (r.pattern === undefined || r.pattern.replace(/\s+/g, " ") !== whole) continue;
    if (r.decision === "deny") {
      return [{
        decision: "deny",
        reason: `${by(r)} denies this command line`,
        rule: r.text,
        subject: whole,
      }];
    }
    if (r.decision === "ask") {
      parts.push({
        decision: "ask",
        reason: `${by(r)} asks before this command line`,
        rule: r.text,
        subject: whole,
      });
    } else if (level === "full") {
      parts.push({
        decision: "allow",
        reason: `${by(r)} allows this command line`,
        rule: r.text,
        subject: whole,
      });
      level = "explicit";
      approved = true;
    }
  }
  scriptParts(core, res.script, { depth: 0, cwds: [core.workspace], level, approved }, parts);
  if (!parts.length) {
    parts.push({
      decision: "allow",
      reason: "nothing to run (assignments only)",
      rule: "default",
      subject: whole,
    });
  }
  return parts;
}

const NESTED_SHELLS = new Set([
  "bash",
  "sh",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "busybox",
  "eval",
]);

/**
 * True when `command` needs mvdan-sh: the plain-word fast path cannot lex it,
 * or it may run a nested shell string (`bash -c`, `eval`) that could.
 */
export function needsFullParser(command: string): boolean {
  if (command.length > MAX_COMMAND_LENGTH) return false;
  const fast = lexSimple(command);
  if (!fast) return true;
  return fast.commands.some((c) => c.words.some((w) => NESTED_SHELLS.has(w)));
}
