/**
 * When the guard yields (docs/permissions.md "Auto-allow yields"): the rule a command it does not
 * fully understand asks with ({@link yieldsTo}), the note its reason carries, and the part a
 * variable set for a command adds ({@link codeVariablePart}). Split from ./walk.ts.
 * @module
 */
import type { Rule } from "./rules.ts";
import {
  guardOnlyPathRule,
  type Level,
  type PolicyCore,
  rulesOf,
  type ScriptCtx,
} from "./context.ts";
import type { GuardPart } from "./types.ts";
import { by, q } from "./verdict.ts";
import { CODE_VARIABLE, SAFE_VARIABLE } from "./shell/programs/runners.ts";

export const yieldNote = (r: Rule) =>
  `; the guard cannot see what it runs and ${
    by(r)
  } restricts what commands do, so it asks (auto-allow yields)`;

/**
 * The rule a command the guard does not fully understand yields to: the first `Execute` deny
 * rule, or (not under `--dangerously-skip-permissions`) the first `Execute` ask rule, else the
 * first `Read`/`Write` rule only the guard enforces (./context.ts `guardOnlyPathRule`);
 * undefined when there is none. Its part asks with this rule, so the OS sandbox's auto-allow (which lifts only
 * default asks, sandbox/mod.ts `sandboxGuard`) does not run it and headless denies it.
 */
export function yieldsTo(core: PolicyCore, level: Level): Rule | undefined {
  const ex = rulesOf(core, "execute");
  return ex.find((r) => r.decision === "deny") ??
    (level === "skip" ? undefined : ex.find((r) => r.decision === "ask")) ??
    guardOnlyPathRule(core, level);
}

/** A variable that runs code (`CODE_VARIABLE`) or, unless `readOnly`, is not `SAFE_VARIABLE`: yields. */
export function codeVariablePart(
  core: PolicyCore,
  name: string,
  display: string,
  ctx: ScriptCtx,
  level: Level,
  parts: GuardPart[],
  readOnly: boolean | (() => boolean) = false,
): void {
  if (ctx.approved) return;
  const known = CODE_VARIABLE.test(name);
  if (!known && (!/^[A-Z][A-Z0-9_]*$/.test(name) || SAFE_VARIABLE.test(name))) return;
  if (!known && (typeof readOnly === "function" ? readOnly() : readOnly)) return;
  const y = yieldsTo(core, level);
  if (!y) return;
  parts.push({
    decision: "ask",
    reason: `${q(display)}: ${name} ${
      known
        ? "makes programs run a command or load code"
        : "is not a variable the guard knows to be harmless (programs read options from such variables)"
    }${yieldNote(y)}`,
    rule: y.text,
    subject: display,
  });
}
