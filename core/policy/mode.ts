/**
 * Permission modes (issue 18, docs/modes.md "Permission modes"): one field of the policy that
 * says how much a run may do without asking. Every view reads it:
 *
 * | mode           | file writes in the workspace | commands                                      |
 * | -------------- | ---------------------------- | --------------------------------------------- |
 * | `plan`         | denied (everywhere)          | read-only ones only; any other is denied      |
 * | `default`      | ask                          | ask (read-only ones allowed)                  |
 * | `accept-edits` | allowed                      | ask (read-only ones allowed)                  |
 * | `auto`         | allowed                      | allowed inside an active OS sandbox           |
 *
 * Rules still decide first in every mode except `plan`: a deny rule denies, an ask rule asks, an
 * allow rule allows. `plan` is read-only whatever the rules or `--dangerously-skip-permissions`
 * say: a write (a file tool, a redirection, a plugin's write grant) is denied, and a command is
 * judged without `Execute` allow rules — only what the defaults know as read-only runs; anything
 * that would ask is denied. Reads, network and tool accesses keep their decisions.
 *
 * Where each view applies it: paths.ts `pathPart` (plan denies writes; so do the worker grants,
 * grant.ts), {@link applyMode} (the guard's per-part verdicts: plan turns asks into denies,
 * default asks before default-allowed writes), sandbox/mod.ts `sandboxGuard` (auto-allow only in
 * `auto`), sandbox/profile.ts (plan mounts the workspace read-only). The Deno flags of Coyote
 * itself (flags.ts) do not change: Coyote writes its transcript in every mode.
 *
 * The default mode of a run that names none is `auto` — what Coyote did before modes existed —
 * or `accept-edits` when the config says `sandbox: {auto_allow: false}` (its old spelling).
 * @module
 */
import type { GuardPart } from "./types.ts";

/** The permission modes, in the order Shift+Tab cycles them in the REPL. */
export const PERMISSION_MODES = ["default", "accept-edits", "plan", "auto"] as const;
export type PermissionMode = typeof PERMISSION_MODES[number];

/** How wide each mode is (a narrower mode may replace a wider one, never the reverse). */
export const MODE_WIDTH: Record<PermissionMode, number> = {
  plan: 0,
  default: 1,
  "accept-edits": 2,
  auto: 3,
};

/** One line per mode, for `--help`, `/mode`, ACP `availableModes` and `policy show`. */
export const MODE_DESCRIPTIONS: Record<PermissionMode, string> = {
  plan: "read-only: no file writes, only read-only commands; the agent writes a plan",
  default: "asks before file writes and commands (read-only commands run)",
  "accept-edits": "file writes inside the workspace without asking; commands ask",
  auto: "file writes in the workspace and commands inside the OS sandbox without asking",
};

/** The rule name a mode's own decision carries (`GuardPart.rule`). */
export const PLAN_RULE = "mode plan";
export const DEFAULT_RULE = "mode default";

/** True when `v` names a mode. */
export function isPermissionMode(v: unknown): v is PermissionMode {
  return typeof v === "string" && (PERMISSION_MODES as readonly string[]).includes(v);
}

/** The error text for a value that is not a mode: `expected plan, default, accept-edits or auto`. */
export function modeExpected(got: unknown): string {
  return `expected plan, default, accept-edits or auto, got ${JSON.stringify(got)}`;
}

/** The mode of a run: the flag, else the config's `mode:`, else from `sandbox.auto_allow`. */
export function resolveMode(
  flag: PermissionMode | undefined,
  config: PermissionMode | undefined,
  autoAllow: boolean,
): PermissionMode {
  return flag ?? config ?? (autoAllow ? "auto" : "accept-edits");
}

/** The narrower of two modes (`plan` < `default` < `accept-edits` < `auto`). */
export function narrower(a: PermissionMode, b: PermissionMode | undefined): PermissionMode {
  return b !== undefined && MODE_WIDTH[b] < MODE_WIDTH[a] ? b : a;
}

/** The part plan mode puts in place of a write of `p`. */
export function planWritePart(p: string, verb: string): GuardPart {
  return {
    decision: "deny",
    reason:
      `plan mode is read-only: ${verb} ${p} is refused (switch the mode with Shift+Tab, /mode or --mode to make changes)`,
    rule: PLAN_RULE,
    subject: p,
    kind: "write",
  };
}

/**
 * The guard's parts under `mode` (the execute parts of plan mode are already evaluated without
 * `Execute` allow rules, policy.ts): plan denies whatever would ask except a read; default asks
 * before a write the defaults allow. `skip` (`--dangerously-skip-permissions`) keeps the parts
 * of the other modes.
 */
export function applyMode(
  mode: PermissionMode,
  parts: GuardPart[],
  execute: boolean,
  skip: boolean,
): GuardPart[] {
  if (mode === "plan") {
    return parts.map((p) => {
      if (p.decision === "ask" && p.kind !== "read" && (execute || p.kind === "write")) {
        return {
          ...p,
          decision: "deny",
          reason:
            `plan mode runs only read-only commands and writes nothing: ${p.reason} (switch the mode with Shift+Tab, /mode or --mode to run it)`,
          rule: PLAN_RULE,
        };
      }
      return p;
    });
  }
  if (mode === "default" && !skip) {
    return parts.map((p) =>
      p.kind === "write" && p.decision === "allow" && p.rule === "default"
        ? {
          ...p,
          decision: "ask",
          reason:
            `default mode asks before writing ${p.subject} (accept-edits and auto allow writes inside the workspace)`,
          rule: DEFAULT_RULE,
        }
        : p
    );
  }
  return parts;
}
