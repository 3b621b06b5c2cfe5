/**
 * The permission policy: the single source of truth for what Coyote may do,
 * with three views derived from it (docs/permissions.md):
 *
 * (a) guard decisions for tool accesses ({@link Policy.evaluate}): commands,
 *     file reads and writes, network hosts, environment variables, tools;
 * (b) the Deno Worker permission set of each plugin
 *     ({@link Policy.workerPermissions});
 * (c) the `deno run` / `deno compile` flags of Coyote itself
 *     ({@link Policy.denoFlags}).
 *
 * Rules (`Kind(pattern)`, see rules.ts) come from the config file
 * (`permissions: {allow, ask, deny}`), from `--allow RULE` / `--deny RULE`
 * flags and from the session (`allow_always` / `reject_always`). Decisions
 * combine as deny > ask > allow; a matching rule beats the defaults, except
 * that protected paths (`.git/` internals, Coyote's config and data dirs, the
 * workspace's `.coyote/` and `.mcp.json`) are only writable through an
 * explicit allow rule.
 *
 * This module is the façade: it builds the policy, holds its rules and
 * caches ({@link PolicyCore}, context.ts) and hands them to the modules that
 * decide each kind of access — paths.ts (reads and writes), net.ts, names.ts
 * (env, tools), command.ts / walk.ts / arguments.ts / git.ts (command
 * lines) — and to the views: grant.ts (b), flags.ts (c), show.ts
 * (`policy show`). Its public types live in types.ts and are re-exported
 * here. The OS sandbox (core/policy/sandbox/, view (d)) is derived
 * from this class and sits above it; nothing here imports it.
 * @module
 */
import type { PluginPermissions } from "../../sdk/mod.ts";
import type { Decision, GuardVerdict } from "../protocol/types.ts";
import { parseRule, PolicyError, primeGlobEngine, resolvePath, type Rule } from "./rules.ts";
import { guardOnlyPathRule, type PolicyCore } from "./context.ts";
import type { GuardPart, PolicyAccess, PolicyInput, PolicyOptions, WorkerGrant } from "./types.ts";
import { aggregate, q } from "./verdict.ts";
import { pathPart } from "./paths.ts";
import { netPart } from "./net.ts";
import { namePart, toolPart } from "./names.ts";
import { modeCommandParts, needsFullParser } from "./command.ts";
import { loadShellParser, shellParserLoaded } from "./shell/parse.ts";
import { workerPermissions } from "./grant.ts";
import { denoFlags, flagFor } from "./flags.ts";
import { describe } from "./show.ts";
import { applyMode, type PermissionMode } from "./mode.ts";

export { PolicyError } from "./rules.ts";
export type { Rule } from "./rules.ts";
export type { GuardPart, PolicyAccess, PolicyInput, PolicyOptions, WorkerGrant } from "./types.ts";
export { MAX_COMMAND_LENGTH } from "./command.ts";
export {
  isPermissionMode,
  MODE_DESCRIPTIONS,
  PERMISSION_MODES,
  type PermissionMode,
} from "./mode.ts";

/**
 * The effective permission policy of one workspace. Create with
 * {@link Policy.create}; derive a copy for another workspace with
 * {@link Policy.forWorkspace}.
 */
export class Policy {
  readonly workspace: string;
  readonly configDir: string;
  readonly dataDir?: string;
  readonly home: string;
  readonly dangerouslySkipPermissions: boolean;
  readonly configPath?: string;
  /** The rules, their compiled matchers and the real-path cache, for the module functions. */
  readonly #core: PolicyCore;
  /** The glob engine's load, started when a rule needing it entered (rules.ts `primeGlobEngine`). */
  #globs?: Promise<void>;

  private constructor(rules: Rule[], opts: PolicyOptions) {
    this.workspace = resolvePath(opts.workspace, "/", "/");
    this.home = resolvePath(opts.home ?? Deno.env.get("HOME") ?? "/", "/", "/");
    this.configDir = resolvePath(opts.configDir, this.workspace, this.home);
    this.dataDir = opts.dataDir ? resolvePath(opts.dataDir, this.workspace, this.home) : undefined;
    this.dangerouslySkipPermissions = !!opts.dangerouslySkipPermissions;
    this.configPath = opts.configPath;
    this.#core = {
      workspace: this.workspace,
      configDir: this.configDir,
      dataDir: this.dataDir,
      home: this.home,
      dangerouslySkipPermissions: this.dangerouslySkipPermissions,
      configPath: this.configPath,
      mode: opts.mode ?? "auto",
      rules,
      paths: new Map(),
      real: new Map(),
    };
    this.#globs = primeGlobEngine(rules, this.workspace, this.home);
  }

  /**
   * Resolves once every path glob among the rules can be compiled (npm
   * picomatch loads lazily, only when a rule has glob syntax; see rules.ts).
   * Every async entry point that may compile a rule awaits this first
   * ({@link evaluate}, sandbox creation, worker grants); the synchronous
   * views ({@link decide}, {@link workerPermissions}, {@link denoFlags}) fail
   * closed on a glob they cannot compile yet. Never rejects.
   */
  globsReady(): Promise<void> {
    return this.#globs ?? Promise.resolve();
  }

  /**
   * Builds the policy from the config file's `permissions` block and the
   * `--allow` / `--deny` flags.
   * @throws PolicyError naming the rule and its source (config key or flag)
   *   when a rule is malformed or a list is not a list of strings.
   */
  static create(
    config: PolicyInput,
    flags: { allow: string[]; deny: string[] },
    opts: PolicyOptions,
  ): Policy {
    const rules: Rule[] = [];
    const where = `config ${opts.configPath ?? "file"}`;
    if (
      config !== undefined && config !== null &&
      (typeof config !== "object" || Array.isArray(config))
    ) {
      throw new PolicyError(
        `${where}: "permissions" must be a mapping with allow, ask and deny lists`,
      );
    }
    for (const decision of ["deny", "ask", "allow"] as const) {
      const list = config?.[decision];
      if (list === undefined || list === null) continue;
      if (!Array.isArray(list)) {
        throw new PolicyError(
          `${where}: permissions.${decision} must be a list of rules, e.g. ["Execute(npm test)"]`,
        );
      }
      list.forEach((t, i) =>
        rules.push(parseRule(t, decision, `${where} permissions.${decision}[${i}]`))
      );
    }
    for (const t of flags?.deny ?? []) rules.push(parseRule(t, "deny", "--deny flag"));
    for (const t of flags?.allow ?? []) rules.push(parseRule(t, "allow", "--allow flag"));
    return new Policy(rules, opts);
  }

  /** The same rules for another workspace (relative rule paths re-resolve against `cwd`). */
  forWorkspace(cwd: string): Policy {
    if (resolvePath(cwd, this.workspace, this.home) === this.workspace) return this;
    return new Policy([...this.#core.rules], {
      workspace: resolvePath(cwd, this.workspace, this.home),
      configDir: this.configDir,
      dataDir: this.dataDir,
      home: this.home,
      dangerouslySkipPermissions: this.dangerouslySkipPermissions,
      configPath: this.configPath,
      mode: this.mode,
    });
  }

  /** The permission mode in effect (./mode.ts): `plan`, `default`, `accept-edits` or `auto`. */
  get mode(): PermissionMode {
    return this.#core.mode;
  }

  /**
   * Switches the permission mode for the rest of the session (REPL Shift+Tab and `/mode`, ACP
   * `session/set_mode`). Every view reads the mode when it decides, so the next access, command
   * and sandbox profile follow it; a plugin process started earlier keeps its worker grant (the
   * guard still decides each of its calls).
   */
  setMode(mode: PermissionMode): void {
    this.#core.mode = mode;
  }

  /**
   * Adds a rule for the rest of the session (`allow_always` / `reject_always`).
   * An `Execute(…)` rule whose pattern is a whole command line (the engine
   * passes `Execute(<command>)`) also matches exactly that command line.
   * @throws PolicyError when the rule is malformed.
   */
  addRule(decision: Decision, rule: string, source = "session"): void {
    const r = parseRule(rule, decision, source);
    // "allow always" / "reject always" record exactly what was asked: a command's `*` is not a
    // wildcard, and a path rule covers that path only (not what lies beneath it).
    if (source === "session" && ["execute", "read", "write"].includes(r.kind)) r.exact = true;
    this.#core.rules.push(r);
    this.#globs = primeGlobEngine([r], this.workspace, this.home) ?? this.#globs;
  }

  /** The rules in effect, in the order they were added (config, flags, session). */
  rules(): readonly Rule[] {
    return this.#core.rules;
  }

  /**
   * The first `Read`/`Write` rule the OS sandbox cannot enforce (./context.ts
   * `guardOnlyPathRule`): while one exists, the sandbox's auto-allow lifts no question
   * (sandbox/mod.ts `sandboxGuard`).
   */
  guardOnlyRule(): Rule | undefined {
    return guardOnlyPathRule(this.#core, this.#core.dangerouslySkipPermissions ? "skip" : "full");
  }

  /**
   * Decides one access. Commands are parsed (the shell parser loads on first
   * use) and every part is decided on its own; the verdict is the worst part
   * (deny > ask > allow) and its `reason` names the deciding rule or default
   * and the offending sub-command or path.
   */
  async evaluate(access: PolicyAccess): Promise<GuardVerdict> {
    return aggregate(await this.evaluateParts(access), access);
  }

  /** The per-part verdicts behind {@link evaluate} (for display). Never empty. */
  async evaluateParts(access: PolicyAccess): Promise<GuardPart[]> {
    if (this.#globs) await this.#globs;
    if (access.type === "execute") {
      const command = String(access.command ?? "");
      if (!shellParserLoaded() && needsFullParser(command)) await loadShellParser();
      // Plan mode judges a command by the read-only defaults alone (./mode.ts).
      return modeCommandParts(this.#core, command);
    }
    return applyMode(
      this.#core.mode,
      [decideAccess(this.#core, access)],
      false,
      this.dangerouslySkipPermissions,
    );
  }

  /**
   * Decides a non-command access synchronously (read, write, net, env, tool).
   * @throws TypeError for `execute` (use {@link evaluate}).
   */
  decide(access: Exclude<PolicyAccess, { type: "execute" }>): GuardVerdict {
    return aggregate(
      applyMode(
        this.#core.mode,
        [decideAccess(this.#core, access)],
        false,
        this.dangerouslySkipPermissions,
      ),
      access,
    );
  }

  // -------------------------------------------------------------------------
  // View (b): plugin worker permissions (grant.ts)

  /**
   * The Deno Worker permission set of a plugin: each declared entry is granted
   * only when the policy allows that access (and, for a directory, everything
   * beneath it); anything else is refused with a message naming the plugin,
   * the permission, the value and the rule or default. Every Deno permission
   * key is explicit; `sys`, `ffi` and `import` are always false. Relative
   * declared paths resolve against the workspace; `~` is the home directory.
   */
  workerPermissions(declared: PluginPermissions, pluginName: string): WorkerGrant {
    return workerPermissions(this.#core, declared, pluginName);
  }

  // -------------------------------------------------------------------------
  // View (c): Deno flags (flags.ts)

  /**
   * How a deny rule maps to a Deno flag: the flag value, or why it stays
   * guard-only (globs, argument-specific command patterns, bare kinds that
   * would stop Coyote itself).
   */
  flagFor(r: Rule): { flag?: string; value?: string; note: string } {
    return flagFor(this.#core, r);
  }

  /**
   * Flags for `deno run` / `deno compile` of Coyote itself: `--no-prompt`, the
   * allow flags the binary needs, and `--deny-read=`/`--deny-write=`/
   * `--deny-net=`/`--deny-env=`/`--deny-run=` for literal deny rules.
   */
  denoFlags(): string[] {
    return denoFlags(this.#core);
  }

  /** Human-readable effective policy: rules with sources, defaults and the derived Deno flags. */
  describe(): string {
    return describe(this.#core);
  }
}

/** Decides a non-command access (read, write, net, env, tool) at the full level. */
function decideAccess(core: PolicyCore, access: PolicyAccess): GuardPart {
  switch (access.type) {
    case "read":
    case "write": {
      const abs = resolvePath(String(access.path), core.workspace, core.home);
      return pathPart(core, access.type, abs, "full");
    }
    case "net":
      return netPart(core, String(access.host));
    case "env":
      return namePart(core, "env", String(access.name), "full") ??
        {
          decision: "ask",
          reason: `the default policy asks before reading environment variable ${access.name}`,
          rule: "default",
          subject: access.name,
        };
    case "tool":
      return toolPart(core, String(access.name));
    default:
      return {
        decision: "ask",
        reason: `unknown access type ${q(String((access as { type: string }).type))}`,
        rule: "default",
        subject: "?",
      };
  }
}
