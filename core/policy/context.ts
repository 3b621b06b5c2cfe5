/**
 * The evaluation context: what every evaluation module and view of the policy
 * reads ({@link PolicyCore}: the resolved roots, the rule list, the caches),
 * the evaluation levels ({@link Level}), the state of a shell-script walk
 * ({@link ScriptCtx}), and the rule lookups they share ({@link rulesOf},
 * {@link hasRules}, {@link matcher}).
 *
 * The `Policy` façade (core/policy/policy.ts) owns one `PolicyCore` and passes
 * it to the module functions; nothing outside `core/policy/` sees it. Paths in
 * it are absolute and normalized (rules.ts `resolvePath`).
 * @module
 */
import {
  compilePath,
  GlobEngineNotLoaded,
  type PathMatcher,
  resolvePath,
  type Rule,
  type RuleDecision,
  type RuleKind,
} from "./rules.ts";
import type { PermissionMode } from "./mode.ts";

/** The state of one policy the evaluation functions share (private to the `Policy` façade). */
export interface PolicyCore {
  readonly workspace: string;
  readonly configDir: string;
  readonly dataDir?: string;
  readonly home: string;
  readonly dangerouslySkipPermissions: boolean;
  readonly configPath?: string;
  /** The permission mode (./mode.ts); `Policy.setMode` changes it for the rest of the session. */
  mode: PermissionMode;
  /** The rules in effect, in the order they were added (config, flags, session); `addRule` appends. */
  readonly rules: Rule[];
  /** Compiled matchers of Read/Write rules ({@link matcher}). */
  readonly paths: Map<Rule, PathMatcher>;
  /** Real paths of the fixed roots (workspace, config and data dirs; paths.ts `realPath`). */
  readonly real: Map<string, string>;
}

/**
 * How much of the policy applies: `full` = rules and defaults; `explicit` =
 * rules and protected paths only (an undecided access is allowed); `skip` =
 * deny rules only (`--dangerously-skip-permissions`).
 */
export type Level = "full" | "explicit" | "skip";

export interface ScriptCtx {
  depth: number;
  /** Candidate working directories (null = unknown, after `cd $X`). */
  cwds: string[] | null;
  level: Level;
  /**
   * True when an allow rule names this exact command line (as "allow always"
   * records it): the user saw and approved the whole line, so default asks
   * about its environment prefixes and code-evaluating constructs are lifted
   * (deny and ask rules still apply).
   */
  approved?: boolean;
  /**
   * A `GIT_*` variable the script sets or exports for later commands (`export GIT_DIR=x; git …`):
   * git may then read other paths than its words name (core/policy/git.ts `gitContentParts`).
   */
  gitEnv?: string;
  /**
   * True for a command run in a folder other than `cwds` names (`find -execdir`/`-okdir`, `sudo
   * -D`; tenth attacker pass): a folder beneath them, so `git` there is git after `cd`
   * (core/policy/git.ts). Paths it names are resolved against `cwds` unless they climb (`..`).
   */
  elsewhere?: boolean;
}

export function rulesOf(core: PolicyCore, kind: RuleKind): Rule[] {
  return core.rules.filter((r) => r.kind === kind);
}

export function hasRules(core: PolicyCore, kinds: RuleKind[], decisions: RuleDecision[]): boolean {
  return core.rules.some((r) => kinds.includes(r.kind) && decisions.includes(r.decision));
}

/**
 * The compiled matcher of a Read/Write rule (cached). A glob met before the
 * glob engine has loaded (only a synchronous view racing a rule just added
 * can: `Policy.globsReady`) gets a fail-closed stand-in, not cached: a deny or
 * ask rule matches every path (its base is `/`, so it overlaps everything),
 * an allow rule matches none, and no Deno flag is derived from it.
 */
export function matcher(core: PolicyCore, r: Rule): PathMatcher {
  let m = core.paths.get(r);
  if (!m) {
    if (r.exact) {
      const abs = resolvePath(r.pattern!, core.workspace, core.home);
      m = { absolute: abs, literal: true, base: abs, test: (p) => p === abs };
    } else {
      try {
        m = compilePath(r.pattern!, core.workspace, core.home);
      } catch (e) {
        if (!(e instanceof GlobEngineNotLoaded)) throw e;
        const matchAll = r.decision !== "allow";
        return { absolute: e.pattern, literal: false, base: "/", test: () => matchAll };
      }
    }
    core.paths.set(r, m);
  }
  return m;
}

/**
 * The first `Read`/`Write` rule the OS sandbox cannot enforce, so only the guard does (issue 16,
 * sixth attacker pass; docs/permissions.md "Auto-allow yields"): a `Read` ask rule (the sandbox
 * cannot ask; what is read reaches the model for good), a `Read` or `Write` deny rule that is a glob (`Read(secret*)`,
 * `Write(**\/keep.txt)`: the sandbox hides or mounts whole paths; ./sandbox/profile.ts lists
 * them as guard-only). While one exists, a command the guard does not fully understand may
 * reach what it names, so auto-allow yields to it. `skip`: deny rules only; `kind`: that kind only.
 */
export function guardOnlyPathRule(
  core: PolicyCore,
  level?: Level,
  kind?: "read" | "write",
): Rule | undefined {
  return core.rules.find((r) => {
    if (r.kind !== "read" && r.kind !== "write") return false;
    if (kind && r.kind !== kind) return false;
    if (r.decision === "allow" || (level === "skip" && r.decision !== "deny")) return false;
    if (r.kind === "read" && r.decision === "ask") return true;
    // A `Write` ask rule does not yield: a write is undone by a checkpoint (`/rewind`), and
    // "ask before editing docs" (`Write(**\/*.md)`) would end auto-allow for every command.
    if (r.kind === "write" && r.decision === "ask") return false;
    if (r.pattern === undefined) return true;
    // What the sandbox can carry is the matcher's flag path (`/x`, `/x/**`); a glob has none.
    return !matcher(core, r).flagPath;
  });
}
