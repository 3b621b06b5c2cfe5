/**
 * The OS sandbox's view (a) of the guard: auto-allow (docs/permissions.md "Auto-allow yields").
 * In mode `auto` with the sandbox active, a command the guard would ask about only by default
 * runs without asking; deny rules, explicit ask rules, the rules a not-understood command yields
 * to and the `Read`/`Write` rules only the guard enforces still decide.
 * @module
 */
import type { GuardVerdict } from "../../protocol/types.ts";
import type { ToolAccess } from "../../../sdk/mod.ts";
import type { PermissionMode } from "../mode.ts";

/** The part of the policy the engine calls (core/engine/mod.ts `PolicyLike`). */
export interface GuardLike {
  evaluate(access: ToolAccess): Promise<GuardVerdict>;
  addRule(decision: "allow" | "deny" | "ask", rule: string, source?: string): void;
  /** A `Read`/`Write` rule only the guard enforces (core/policy/policy.ts `guardOnlyRule`). */
  guardOnlyRule?(): { text: string; source?: string } | undefined;
}

/**
 * Test-only: true when `COYOTE_TEST_MODE=1` and `COYOTE_TEST_GUARD=allow` are both set — the
 * guard then allows every access, so tests can prove the sandbox holds without the parser
 * (docs/permissions.md). Never set these outside tests.
 */
export function guardForcedAllow(): boolean {
  return Deno.env.get("COYOTE_TEST_MODE") === "1" && Deno.env.get("COYOTE_TEST_GUARD") === "allow";
}

/**
 * The guard as the engine sees it with a sandbox: `ask` verdicts of `execute` accesses that no
 * explicit rule decided become `allow` when the sandbox is active and the permission mode
 * (`mode()`, read at each decision; core/policy/mode.ts; without it, `auto` when `autoAllow`)
 * is `auto`. Deny verdicts and explicit
 * `ask` rules are unchanged; other accesses are unchanged.
 */
export function sandboxGuard(
  policy: GuardLike,
  /** The session's sandbox status (./mod.ts `SandboxStatus`): whether it is on and auto-allows. */
  status: { active: boolean; autoAllow: boolean },
  mode: () => PermissionMode = () => status.autoAllow ? "auto" : "accept-edits",
): GuardLike {
  const forced = guardForcedAllow();
  return {
    async evaluate(access) {
      if (forced) {
        return { decision: "allow", reason: "test mode: guard forced to allow", access };
      }
      const v = await policy.evaluate(access);
      if (
        status.active && mode() === "auto" && access.type === "execute" &&
        v.decision === "ask" && (v.rule === undefined || v.rule === "default")
      ) {
        // A rule the sandbox cannot carry (a `Read`/`Write` glob, a `Read` ask): what the guard
        // asks about may reach it, so the question stays (issue 16, sixth attacker pass).
        const y = policy.guardOnlyRule?.();
        if (y) {
          return {
            ...v,
            rule: y.text,
            reason:
              `${v.reason}; ${y.text} is enforced by the guard alone (the OS sandbox cannot carry it), so auto-allow yields`,
          };
        }
        return {
          ...v,
          decision: "allow",
          reason: `runs inside the OS sandbox (mode auto); the guard alone would ask: ${v.reason}`,
        };
      }
      return v;
    },
    addRule: (d, r, s) => policy.addRule(d, r, s),
  };
}
