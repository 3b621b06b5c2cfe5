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
 * @module
 */
import type { PluginPermissions, ToolAccess } from "../../sdk/mod.ts";
import type { Decision, GuardVerdict } from "../protocol/types.ts";
import { basename, dirname, normalize } from "node:path";
import { HIDDEN_HOME_PATHS } from "./sandbox/profile.ts";
import {
  commandMatch,
  compilePath,
  GlobEngineNotLoaded,
  hostMatch,
  isInside,
  KIND_NAMES,
  parseRule,
  type PathMatcher,
  pathsOverlap,
  PolicyError,
  primeGlobEngine,
  resolvePath,
  type Rule,
  type RuleDecision,
  type RuleKind,
  ruleText,
  splitHost,
  starMatch,
  wholeProgram,
  WILD,
} from "./rules.ts";
import { activeHook, gitDirOf, readGitConfig, SAFE_GIT_CONFIG } from "./shell/programs/git_repo.ts";
import {
  cdTarget,
  classify,
  dangerousEnvName,
  gitNormalized,
  gitRepoHost,
  safePrefixName,
  secretName,
} from "./shell/commands.ts";
import { readPaths } from "./shell/read_paths.ts";
import { loadShellParser, parseShell, shellParserLoaded } from "./shell/parse.ts";
import { lexSimple } from "./shell/fast_path.ts";
import type { ShellGlob, ShellScript } from "./shell/script.ts";

export { PolicyError } from "./rules.ts";
export type { Rule } from "./rules.ts";

/** The `permissions` block of the config file. */
export interface PolicyInput {
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

export interface PolicyOptions {
  /** Absolute workspace root (relative rule paths resolve against it). */
  workspace: string;
  /** Coyote's config dir: never written without an explicit allow rule. */
  configDir: string;
  /** Coyote's data dir (sessions): never written without an explicit allow rule. */
  dataDir?: string;
  /** Home directory for `~` (default `$HOME`). */
  home?: string;
  /** `--dangerously-skip-permissions`: allow everything except explicit deny rules. */
  dangerouslySkipPermissions?: boolean;
  /** Path of the config file the `permissions` block came from (named in errors and `describe()`). */
  configPath?: string;
}

export interface WorkerGrant {
  /** Deno Worker `deno.permissions`, every key explicit. */
  permissions: Deno.PermissionOptionsObject;
  refused: { permission: keyof PluginPermissions; value: string; rule: string; message: string }[];
}

/** Everything the guard can be asked about: the SDK's {@link ToolAccess} plus environment variables. */
export type PolicyAccess = ToolAccess | { type: "env"; name: string };

/**
 * One part of a verdict: a simple command, a redirection, a path argument, a
 * variable. `subject` is the sub-command or path it is about.
 */
export interface GuardPart {
  decision: Decision;
  reason: string;
  /** The rule text that decided, or `default` when a default did. */
  rule?: string;
  subject: string;
}

/** Commands longer than this are not parsed; they ask (fail closed). */
export const MAX_COMMAND_LENGTH = 4000;
/** Directory entries a glob argument may make the guard examine before it asks. */
const GLOB_LIMIT = 2000;
/** Nesting limit for `bash -c '…'` / `eval` strings parsed recursively. */
const MAX_DEPTH = 4;

const SEVERITY: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };
// `/dev/fd/<WILD>` is a process substitution `<(…)` / `>(…)` (its command is checked on its own).
const SPECIAL_FILES = new RegExp(`^/dev/(null|stdout|stderr|stdin|tty|zero|fd/(\\d+|${WILD}))$`);
/**
 * Source text of a simple command whose unknown (WILD) words may be run-time
 * values (`$X`, `$(…)`, backticks, brace expansion, `~user`, extended globs)
 * rather than plain filename globs (`*.ts`) or process substitutions.
 */
const DYNAMIC_TEXT = /[$`]|\{[^}]*(,|\.\.)|~[^/\s]|[@!+*?]\(/;

/** Default Deno flags of the binary: no prompts, the permissions Coyote needs. */
const BASE_FLAGS = [
  "--no-prompt",
  "--allow-read",
  "--allow-write",
  "--allow-net",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
];

type Level = "full" | "explicit" | "skip";

interface ScriptCtx {
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
}

const q = (s: string) => JSON.stringify(s.replaceAll(WILD, "…"));
const clip = (s: string, n = 160) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
const by = (r: Rule) => `rule ${r.text} (from ${r.source})`;

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
  #rules: Rule[];
  #paths = new Map<Rule, PathMatcher>();
  #real = new Map<string, string>();
  /** The glob engine's load, started when a rule needing it entered (rules.ts `primeGlobEngine`). */
  #globs?: Promise<void>;

  private constructor(rules: Rule[], opts: PolicyOptions) {
    this.#rules = rules;
    this.workspace = resolvePath(opts.workspace, "/", "/");
    this.home = resolvePath(opts.home ?? Deno.env.get("HOME") ?? "/", "/", "/");
    this.configDir = resolvePath(opts.configDir, this.workspace, this.home);
    this.dataDir = opts.dataDir ? resolvePath(opts.dataDir, this.workspace, this.home) : undefined;
    this.dangerouslySkipPermissions = !!opts.dangerouslySkipPermissions;
    this.configPath = opts.configPath;
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
    return new Policy([...this.#rules], {
      workspace: resolvePath(cwd, this.workspace, this.home),
      configDir: this.configDir,
      dataDir: this.dataDir,
      home: this.home,
      dangerouslySkipPermissions: this.dangerouslySkipPermissions,
      configPath: this.configPath,
    });
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
    this.#rules.push(r);
    this.#globs = primeGlobEngine([r], this.workspace, this.home) ?? this.#globs;
  }

  /** The rules in effect, in the order they were added (config, flags, session). */
  rules(): readonly Rule[] {
    return this.#rules;
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
      return this.#commandParts(command);
    }
    return [this.#decideAccess(access)];
  }

  /**
   * Decides a non-command access synchronously (read, write, net, env, tool).
   * @throws TypeError for `execute` (use {@link evaluate}).
   */
  decide(access: Exclude<PolicyAccess, { type: "execute" }>): GuardVerdict {
    return aggregate([this.#decideAccess(access)], access);
  }

  // -------------------------------------------------------------------------
  // Non-command accesses

  #decideAccess(access: PolicyAccess): GuardPart {
    switch (access.type) {
      case "read":
      case "write": {
        const abs = resolvePath(String(access.path), this.workspace, this.home);
        return this.#pathPart(access.type, abs, "full");
      }
      case "net":
        return this.#netPart(String(access.host));
      case "env":
        return this.#namePart("env", String(access.name), "full") ??
          {
            decision: "ask",
            reason: `the default policy asks before reading environment variable ${access.name}`,
            rule: "default",
            subject: access.name,
          };
      case "tool":
        return this.#toolPart(String(access.name));
      default:
        return {
          decision: "ask",
          reason: `unknown access type ${q(String((access as { type: string }).type))}`,
          rule: "default",
          subject: "?",
        };
    }
  }

  #rulesOf(kind: RuleKind): Rule[] {
    return this.#rules.filter((r) => r.kind === kind);
  }

  /**
   * The compiled matcher of a Read/Write rule (cached). A glob met before the
   * glob engine has loaded (only a synchronous view racing a rule just added
   * can: {@link globsReady}) gets a fail-closed stand-in, not cached: a deny or
   * ask rule matches every path (its base is `/`, so it overlaps everything),
   * an allow rule matches none, and no Deno flag is derived from it.
   */
  #matcher(r: Rule): PathMatcher {
    let m = this.#paths.get(r);
    if (!m) {
      if (r.exact) {
        const abs = resolvePath(r.pattern!, this.workspace, this.home);
        m = { absolute: abs, literal: true, base: abs, test: (p) => p === abs };
      } else {
        try {
          m = compilePath(r.pattern!, this.workspace, this.home);
        } catch (e) {
          if (!(e instanceof GlobEngineNotLoaded)) throw e;
          const matchAll = r.decision !== "allow";
          return { absolute: e.pattern, literal: false, base: "/", test: () => matchAll };
        }
      }
      this.#paths.set(r, m);
    }
    return m;
  }

  #pathRuleMatches(r: Rule, p: string): boolean {
    return r.pattern === undefined || this.#matcher(r).test(p);
  }

  /**
   * Real path of `p`: symlinks resolved on the longest existing prefix, and a
   * dangling symlink on the way judged by its target (a repository may ship
   * `notes.txt -> /outside/file`; writing `notes.txt` creates the outside
   * file). `p` when unknown.
   */
  #realPath(p: string, cache = false): string {
    const hit = cache ? this.#real.get(p) : undefined;
    if (hit !== undefined) return hit;
    // `/proc/self/cwd`, `/proc/$$/root`… name the shell's view, not Coyote's: never resolved here
    // (they stay outside the workspace).
    if (p === "/proc" || p.startsWith("/proc/")) return p;
    let cur = p;
    let tail = "";
    let out = p;
    for (let i = 0, links = 0; i < 256; i++) {
      try {
        const real = Deno.realPathSync(cur);
        out = tail ? `${real === "/" ? "" : real}/${tail}` : real;
        break;
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound) && !(e instanceof Deno.errors.NotADirectory)) {
          break;
        }
        if (cur === "/") break;
        // A dangling symlink: continue from its target.
        let target: string | undefined;
        try {
          if (Deno.lstatSync(cur).isSymlink) target = Deno.readLinkSync(cur);
        } catch { /* missing */ }
        if (target !== undefined && links++ < 40) {
          cur = normalize(target.startsWith("/") ? target : `${dirname(cur)}/${target}`)
            .replace(/(.)\/+$/, "$1");
          continue;
        }
        tail = tail ? `${basename(cur)}/${tail}` : basename(cur);
        cur = dirname(cur);
      }
    }
    // Only the fixed roots (workspace, config and data dirs) are cached: a
    // path's real location can change between two checks (a new symlink).
    if (cache) this.#real.set(p, out);
    return out;
  }

  /**
   * `target` resolved against `cwd` the way the kernel does: a `..` after a
   * symbolic link leaves the link's target, not the link's folder
   * (`link/../x` with `link -> /outside/d` is `/outside/x`).
   */
  #physical(target: string, cwd: string): string {
    let raw = target;
    if (raw === "~" || raw.startsWith("~/")) raw = this.home + raw.slice(1);
    if (!raw.startsWith("/")) raw = `${cwd}/${raw}`;
    let out = "";
    for (const seg of raw.split("/")) {
      if (seg === "" || seg === ".") continue;
      if (seg === "..") out = dirname(this.#realPath(out || "/"));
      else out = `${out === "/" ? "" : out}/${seg}`;
    }
    return out || "/";
  }

  /** `target` against `cwd`: the lexical path, and the physical one when they may differ. */
  #resolveAll(target: string, cwd: string): string[] {
    const abs = resolvePath(target, cwd, this.home);
    if (!target.split("/").includes("..")) return [abs];
    const phys = this.#physical(target, cwd);
    return phys === abs ? [abs] : [abs, phys];
  }

  /**
   * Why `p` is protected from writes, if it is: any `.git/` (a hook or
   * `core.fsmonitor` runs code), any `.coyote/` or `.mcp.json` at any depth
   * (Coyote loads plugins, skills and MCP servers from the folder it starts
   * in, which may be a sub-folder), Coyote's config and data dirs. Names
   * compare case-insensitively: on macOS and Windows `.COYOTE/` is `.coyote/`.
   */
  #protected(p: string): string | undefined {
    if (/(^|\/)\.git(\/|$)/i.test(p)) return "a .git/ directory";
    if (/(^|\/)\.coyote(\/|$)/i.test(p)) {
      return "a .coyote/ folder (plugins, skills, MCP servers Coyote loads)";
    }
    if (/(^|\/)\.mcp\.json(\/|$)/i.test(p)) return "a .mcp.json file (it starts MCP servers)";
    const lower = p.toLowerCase();
    for (
      const [dir, what] of [[this.configDir, "Coyote's config dir"], [
        this.dataDir,
        "Coyote's data dir",
      ]] as const
    ) {
      if (!dir) continue;
      for (const d of [dir, this.#realPath(dir, true)]) {
        if (isInside(p, d) || isInside(lower, d.toLowerCase())) return `${what} (${dir})`;
      }
    }
    return undefined;
  }

  /**
   * Why reading `p` reveals secrets although a broad Read rule may cover it:
   * the environment (or memory) of a process — `/proc/self/environ`,
   * `/proc/$PPID/environ` hold Coyote's own variables, the provider key among
   * them. Only an allow rule naming `/proc` itself lifts it.
   */
  #secretRead(p: string): string | undefined {
    if (/^\/proc\/[^/]+\/(task\/[^/]+\/)?(environ|mem|auxv)$/.test(p)) {
      return "a process's environment or memory (it holds Coyote's secrets)";
    }
    return undefined;
  }

  /**
   * Why reading `p` would reveal credentials the OS sandbox hides from commands by default
   * (core/policy/sandbox/profile.ts `HIDDEN_HOME_PATHS`: `~/.ssh`, `~/.aws`, `~/.netrc`, …, and
   * Coyote's config and data dirs) — they matter when the workspace contains them (Coyote
   * started in `~`), where reads are otherwise allowed. Not when the workspace lies inside one
   * (the sandbox does not hide it then either).
   */
  #credentialRead(p: string): string | undefined {
    const roots: [string | undefined, string][] = [
      ...HIDDEN_HOME_PATHS.map((
        h,
      ): [string, string] => [`${this.home}/${h}`, "a credential store"]),
      [this.configDir, "Coyote's config dir (it holds the provider key)"],
      [this.dataDir, "Coyote's data dir"],
    ];
    for (const [root, what] of roots) {
      if (!root) continue;
      if (isInside(this.workspace, root)) continue;
      if (isInside(p, root)) return `${what} (${root})`;
    }
    return undefined;
  }

  #insideWorkspace(p: string): boolean {
    return isInside(p, this.workspace) || isInside(p, this.#realPath(this.workspace, true));
  }

  /**
   * Decides a read or write of absolute path `abs` (and of its real path, when
   * a symlink leads elsewhere; the worse decision wins).
   * `level`: `full` = rules and defaults; `explicit` = rules and protected
   * paths only (an undecided path is allowed); `skip` = deny rules only.
   */
  #pathPart(kind: "read" | "write", abs: string, level: Level): GuardPart {
    const lvl: Level = this.dangerouslySkipPermissions ? "skip" : level;
    const first = this.#pathPartOne(kind, abs, lvl);
    if (first.decision === "deny") return first;
    const real = this.#realPath(abs);
    if (real === abs) return first;
    const second = this.#pathPartOne(kind, real, lvl);
    if (SEVERITY[second.decision] > SEVERITY[first.decision]) {
      return { ...second, reason: `${second.reason} (${abs} resolves to ${real})`, subject: abs };
    }
    return first;
  }

  #pathPartOne(kind: "read" | "write", p: string, level: Level): GuardPart {
    let deny: Rule | undefined, ask: Rule | undefined, allow: Rule | undefined;
    for (const r of this.#rules) {
      if (r.kind !== kind) continue;
      if (r.decision === "deny" ? deny : r.decision === "ask" ? ask : allow) continue;
      if (!this.#pathRuleMatches(r, p)) continue;
      if (r.decision === "deny") deny = r;
      else if (r.decision === "ask") ask = r;
      else allow = r;
    }
    const verb = kind === "read" ? "reading" : "writing";
    if (deny) {
      return {
        decision: "deny",
        reason: `${by(deny)} denies ${verb} ${p}`,
        rule: deny.text,
        subject: p,
      };
    }
    if (level === "skip") {
      return {
        decision: "allow",
        reason: `--dangerously-skip-permissions allows ${verb} ${p}`,
        rule: "default",
        subject: p,
      };
    }
    const secret = this.#secretRead(p);
    if (secret && !(allow && this.#matcher(allow).base.startsWith("/proc"))) {
      return {
        decision: "ask",
        reason: `${p} is ${secret}; the guard asks unless a rule names /proc (Read(${p}))`,
        rule: "default",
        subject: p,
      };
    }
    const cred = kind === "read" && !allow ? this.#credentialRead(p) : undefined;
    if (cred) {
      return {
        decision: "ask",
        reason:
          `${p} is inside ${cred}, which the guard asks about (and the OS sandbox hides) unless a Read allow rule covers it`,
        rule: "default",
        subject: p,
      };
    }
    const prot = kind === "write" ? this.#protected(p) : undefined;
    if (prot && !allow) {
      return {
        decision: "deny",
        reason:
          `${p} is inside ${prot}, which is never written without an explicit allow rule; add --allow 'Write(${p})' to permit it`,
        rule: "default",
        subject: p,
      };
    }
    if (ask) {
      return {
        decision: "ask",
        reason: `${by(ask)} asks before ${verb} ${p}`,
        rule: ask.text,
        subject: p,
      };
    }
    if (allow) {
      return {
        decision: "allow",
        reason: `${by(allow)} allows ${verb} ${p}`,
        rule: allow.text,
        subject: p,
      };
    }
    if (level === "explicit") {
      return {
        decision: "allow",
        reason: `no rule restricts ${verb} ${p}`,
        rule: "default",
        subject: p,
      };
    }
    if (this.#insideWorkspace(p)) {
      return {
        decision: "allow",
        reason: `${kind}s inside the workspace are allowed by default (${p})`,
        rule: "default",
        subject: p,
      };
    }
    return {
      decision: "ask",
      reason: `the default policy asks for ${kind}s outside the workspace (${p})`,
      rule: "default",
      subject: p,
    };
  }

  #netPart(hostPort: string): GuardPart {
    let deny: Rule | undefined, ask: Rule | undefined, allow: Rule | undefined;
    for (const r of this.#rulesOf("net")) {
      if (!hostMatch(r.pattern, hostPort)) continue;
      if (r.decision === "deny") deny ??= r;
      else if (r.decision === "ask") ask ??= r;
      else allow ??= r;
    }
    const s = hostPort;
    if (deny) {
      return {
        decision: "deny",
        reason: `${by(deny)} denies network access to ${s}`,
        rule: deny.text,
        subject: s,
      };
    }
    if (this.dangerouslySkipPermissions) {
      return {
        decision: "allow",
        reason: `--dangerously-skip-permissions allows network access to ${s}`,
        rule: "default",
        subject: s,
      };
    }
    if (ask) {
      return {
        decision: "ask",
        reason: `${by(ask)} asks before network access to ${s}`,
        rule: ask.text,
        subject: s,
      };
    }
    if (allow) {
      return {
        decision: "allow",
        reason: `${by(allow)} allows network access to ${s}`,
        rule: allow.text,
        subject: s,
      };
    }
    return {
      decision: "ask",
      reason: `the default policy asks before network access (${s})`,
      rule: "default",
      subject: s,
    };
  }

  /** Env or Tool rules for `name`; undefined when no rule matches (and not skipping). */
  #namePart(kind: "env" | "tool", name: string, level: Level): GuardPart | undefined {
    let deny: Rule | undefined, ask: Rule | undefined, allow: Rule | undefined;
    for (const r of this.#rulesOf(kind)) {
      if (r.pattern !== undefined && !starMatch(r.pattern.replace(/\?/g, "*"), name, "strict")) {
        continue;
      }
      if (r.decision === "deny") deny ??= r;
      else if (r.decision === "ask") ask ??= r;
      else allow ??= r;
    }
    const what = kind === "env" ? `environment variable ${name}` : `tool ${name}`;
    if (deny) {
      return {
        decision: "deny",
        reason: `${by(deny)} denies ${what}`,
        rule: deny.text,
        subject: name,
      };
    }
    if (this.dangerouslySkipPermissions || level === "skip") {
      return {
        decision: "allow",
        reason: `--dangerously-skip-permissions allows ${what}`,
        rule: "default",
        subject: name,
      };
    }
    if (ask) {
      return {
        decision: "ask",
        reason: `${by(ask)} asks before using ${what}`,
        rule: ask.text,
        subject: name,
      };
    }
    if (allow) {
      return {
        decision: "allow",
        reason: `${by(allow)} allows ${what}`,
        rule: allow.text,
        subject: name,
      };
    }
    return undefined;
  }

  #toolPart(name: string): GuardPart {
    const p = this.#namePart("tool", name, "full");
    if (p) return p;
    if (name.startsWith("mcp__")) {
      return {
        decision: "ask",
        reason: `the default policy asks before calling MCP tool ${name}`,
        rule: "default",
        subject: name,
      };
    }
    return {
      decision: "allow",
      reason: `tools other than MCP tools are allowed by default (${name})`,
      rule: "default",
      subject: name,
    };
  }

  // -------------------------------------------------------------------------
  // Commands

  #hasRules(kinds: RuleKind[], decisions: RuleDecision[]): boolean {
    return this.#rules.some((r) => kinds.includes(r.kind) && decisions.includes(r.decision));
  }

  /** Fallback for a command that cannot be analysed: ask (or allow under skip when no deny rule could apply). */
  #unanalysable(command: string, why: string): GuardPart[] {
    const subject = clip(command.replace(/\s+/g, " ").trim(), 80);
    if (
      this.dangerouslySkipPermissions &&
      !this.#hasRules(["execute", "read", "write", "env"], ["deny"])
    ) {
      return [{
        decision: "allow",
        reason: `--dangerously-skip-permissions allows ${q(subject)} (${why})`,
        rule: "default",
        subject,
      }];
    }
    return [{
      decision: "ask",
      reason: `${why}; the guard asks (fail closed) for ${q(subject)}`,
      rule: "default",
      subject,
    }];
  }

  #commandParts(command: string): GuardPart[] {
    if (!command.trim()) {
      return [{ decision: "allow", reason: "empty command", rule: "default", subject: "" }];
    }
    if (command.length > MAX_COMMAND_LENGTH) {
      return this.#unanalysable(
        command,
        `the command is ${command.length} characters long (limit ${MAX_COMMAND_LENGTH})`,
      );
    }
    const res = parseShell(command, this.home);
    if (!res.ok) {
      return this.#unanalysable(command, `the shell parser cannot parse it (${res.error})`);
    }

    const parts: GuardPart[] = [];
    const whole = command.replace(/\s+/g, " ").trim();
    let level: Level = this.dangerouslySkipPermissions ? "skip" : "full";
    let approved = false;
    for (const r of this.#rulesOf("execute")) {
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
    this.#scriptParts(res.script, { depth: 0, cwds: [this.workspace], level, approved }, parts);
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

  /**
   * The working directories `script` may leave the shell in, given the
   * candidates `cwds` (null = unknown): every `cd`/`pushd` (also behind
   * `builtin`/`command`, and inside a literal `eval` string) adds its
   * targets; `popd`, `cd -`, an unknown target, a non-literal `eval`,
   * `source`, and a relative target that `CDPATH` may redirect make it
   * unknown. A target with `..` also adds its physical resolution (`cd -P`).
   */
  #cwdsAfter(script: ShellScript, cwds: string[] | null, depth = 0): string[] | null {
    if (cwds === null) return null;
    let out: string[] | null = [...cwds];
    const cdpath = cdpathSet();
    for (const c of script.commands) {
      if (out === null) break;
      const name = c.words[0];
      if (name === "eval" || name === "source" || name === ".") {
        const src = name === "eval" && !c.words.some((w) => w.includes(WILD))
          ? c.words.slice(1).join(" ")
          : undefined;
        const sub = src !== undefined && depth < MAX_DEPTH ? safeParse(src, this.home) : undefined;
        out = sub?.ok ? this.#cwdsAfter(sub.script, out, depth + 1) : null;
        continue;
      }
      const target = cdTarget(c.words);
      if (target === undefined) continue;
      if (
        target.includes(WILD) ||
        (cdpath && !/^(\/|~|\.\.?(\/|$))/.test(target))
      ) {
        out = null;
        break;
      }
      const next: string[] = [];
      for (const d of out) {
        next.push(resolvePath(target, d, this.home));
        if (target.split("/").includes("..")) next.push(this.#physical(target, d));
      }
      out.push(...next);
      out = [...new Set(out)];
      if (out.length > 16) out = null;
    }
    return out;
  }

  #scriptParts(script: ShellScript, outer: ScriptCtx, parts: GuardPart[]): void {
    // Working directories a relative path may be resolved against (cd/pushd/popd anywhere).
    const ctx: ScriptCtx = { ...outer, cwds: this.#cwdsAfter(script, outer.cwds) };
    for (const h of script.hazards ?? []) {
      // The user approved this exact line; under --dangerously-skip-permissions only a
      // deny rule the hidden code might hit keeps the question.
      if (ctx.approved) continue;
      if (ctx.level === "skip" && !this.#hasRules(["execute", "read", "write"], ["deny"])) continue;
      parts.push({
        decision: "ask",
        reason: `${q(clip(h.text, 80))} is ${h.what}, which Bash evaluates as code; the guard asks`,
        rule: "default",
        subject: clip(h.text, 80),
      });
    }
    if (ctx.level === "full") {
      for (const g of script.globs ?? []) this.#globReadParts(g, ctx, parts);
    }

    for (const c of script.commands) {
      this.#simpleParts(c.words, c.assigns, c.text, ctx, ctx.level, parts);
    }

    for (const d of script.decls) {
      for (const n of d.names) {
        const p = this.#envSetPart(n, d.text, ctx.level);
        if (p) parts.push(p);
      }
      if (
        ctx.level === "full" && (!d.names.length || d.flags.some((f) => /^-[a-zA-Z]*p/.test(f)))
      ) {
        parts.push({
          decision: "ask",
          reason: `${q(d.text)} prints shell variables (may contain secrets)`,
          rule: "default",
          subject: d.text,
        });
      }
    }

    for (const r of script.redirects) {
      if (r.access === "none" || r.target === undefined) continue;
      // An explicitly allowed command line (or a command run by one) keeps its redirections
      // to the rules and protected paths; otherwise the defaults apply too.
      const level: Level = this.dangerouslySkipPermissions ? "skip" : ctx.level;
      if (r.access === "write" || r.access === "readwrite") {
        this.#pathTargetParts("write", r.target, r.text, ctx, level, parts, "redirection");
      }
      if (r.access === "read" || r.access === "readwrite") {
        this.#pathTargetParts("read", r.target, r.text, ctx, level, parts, "redirection");
      }
    }

    const envRules = this.#hasRules(["env"], ["deny", "ask"]);
    for (const p of script.params) {
      if (p.name === undefined) {
        if (envRules && (ctx.level !== "skip" || this.#hasRules(["env"], ["deny"]))) {
          parts.push({
            decision: "ask",
            reason:
              "an indirect variable expansion (${!x}) may read a restricted environment variable",
            rule: "default",
            subject: "${!…}",
          });
        }
        continue;
      }
      const part = this.#namePart("env", p.name, ctx.level);
      if (part) {
        if (part.decision !== "allow") {
          parts.push({ ...part, reason: `${part.reason} ($${p.name} is expanded)` });
        }
        continue;
      }
      // A variable whose name looks secret (`$GITHUB_TOKEN`) would be shown to the model.
      if (ctx.level !== "skip" && !ctx.approved && secretName(p.name)) {
        parts.push({
          decision: "ask",
          reason:
            `$${p.name} looks like a secret (its name); the default policy asks before expanding it (allow with Env(${p.name}))`,
          rule: "default",
          subject: `$${p.name}`,
        });
      }
    }
  }

  /** Decides one simple command (and what it runs) at `level`, appending parts. */
  #simpleParts(
    words: string[],
    assigns: string[],
    text: string,
    ctx: ScriptCtx,
    level: Level,
    parts: GuardPart[],
    dynamic?: boolean,
    findItems = false,
  ): void {
    const display = clip(text || words.join(" ").replaceAll(WILD, "…"));
    // May an unknown word be a run-time value (not a filename glob)?
    const dyn = dynamic ?? DYNAMIC_TEXT.test(text);
    for (const a of assigns) {
      // `IFS= read -r line`: IFS only changes how `read` splits its input (Bash does not import
      // IFS from the environment, so it cannot reach another program).
      if (a === "IFS" && /^(read|mapfile|readarray)$/.test(words[0] ?? "")) continue;
      const p = this.#envSetPart(a, display, level, ctx);
      if (p) parts.push(p);
    }
    if (!words.length) return;
    const name = words[0];
    const line = words.join(" ");
    const base = name.includes("/") && !name.includes(WILD)
      ? [basename(name), ...words.slice(1)]
      : undefined;
    // Deny and ask rules also see the command with its global options removed
    // (`git --no-pager -c a.b=c push` is `git push`); for other programs, leading
    // options (and the word after each) are skipped as a possible match.
    const gw = base ?? words;
    let norm = gitNormalized(gw);
    // An alias in the repository's configuration (`[alias] p = push`) makes `git p` another command.
    const sub = gw[0] === "git" ? (norm ?? gw)[1] : undefined;
    if (
      sub && !sub.includes(WILD) && this.#hasRules(["execute"], ["deny", "ask"]) &&
      this.#gitConfig()?.has(`alias.${sub.toLowerCase()}`)
    ) {
      norm = ["git", WILD, ...(norm ?? gw).slice(2)];
    }
    const sure = [base, norm].filter((w): w is string[] => !!w).map((w) => w.join(" "));
    const possible = optionSkips(base ?? words).map((w) => w.join(" "));
    // An environment prefix not on the short safe list makes allow rules not match.
    const prefixed = assigns.find((a) => !safePrefixName(a));

    let deny: Rule | undefined,
      maybeDeny: Rule | undefined,
      ask: Rule | undefined,
      allow: Rule | undefined;
    for (const r of this.#rulesOf("execute")) {
      if (r.decision === "allow") {
        if (!allow && !prefixed && commandMatch(execPattern(r), line, false) === "yes") allow = r;
        continue;
      }
      let m = commandMatch(execPattern(r), line, true);
      for (const alt of sure) {
        if (m === "yes") break;
        const m2 = commandMatch(execPattern(r), alt, true);
        if (m2 === "yes" || m === "no") m = m2;
      }
      for (const alt of possible) {
        if (m !== "no") break;
        if (commandMatch(execPattern(r), alt, true) !== "no") m = "maybe";
      }
      if (m === "no") continue;
      if (r.decision === "deny") {
        if (m === "yes") deny ??= r;
        else maybeDeny ??= r;
      } else ask ??= r;
    }
    if (deny) {
      parts.push({
        decision: "deny",
        reason: `${by(deny)} denies ${q(display)}`,
        rule: deny.text,
        subject: display,
      });
      return;
    }
    if (maybeDeny) {
      parts.push({
        decision: "ask",
        reason: `${q(display)} may match ${
          by(maybeDeny)
        } (part of it is only known at run time, or options precede its subcommand)`,
        rule: maybeDeny.text,
        subject: display,
      });
    }
    if (ask && level !== "skip") {
      parts.push({
        decision: "ask",
        reason: `${by(ask)} asks before ${q(display)}`,
        rule: ask.text,
        subject: display,
      });
    }
    if (name.includes(WILD)) {
      if (level === "full" && !allow) {
        parts.push({
          decision: "ask",
          reason: `the command name of ${q(display)} is only known at run time`,
          rule: "default",
          subject: display,
        });
      } else if (allow) {
        parts.push({
          decision: "allow",
          reason: `${by(allow)} allows ${q(display)}`,
          rule: allow.text,
          subject: display,
        });
      }
      return;
    }

    const c = classify(words);
    let inner: Level = level;
    if (allow) {
      parts.push({
        decision: "allow",
        reason: `${by(allow)} allows ${q(display)}`,
        rule: allow.text,
        subject: display,
      });
      if (inner === "full") inner = "explicit";
    } else if (level === "skip") {
      parts.push({
        decision: "allow",
        reason: `--dangerously-skip-permissions allows ${q(display)}`,
        rule: "default",
        subject: display,
      });
    } else if (level === "full") {
      if (c.allowed && name === "git") {
        const why = this.#gitUnsafe(ctx);
        if (why) {
          c.allowed = false;
          c.reason = why;
        }
      }
      parts.push({
        decision: c.allowed ? "allow" : "ask",
        reason: c.allowed
          ? `${c.reason}: ${q(display)}`
          : `${q(display)}: ${c.reason}; the default policy asks`,
        rule: "default",
        subject: display,
      });
      if (c.allowed) this.#readPathParts(words, display, ctx, dyn, findItems, parts);
    }

    if (level !== "skip" || this.#hasRules(["env"], ["deny"])) {
      for (const n of c.sets ?? []) {
        const p = this.#envSetPart(n, display, level, ctx);
        if (p) parts.push(p);
      }
    }
    for (const repo of c.net ?? []) {
      const p = this.#gitNetPart(repo, display, level);
      // A line approved as it is ("allow always") lifts the default question, not a Net rule.
      if (ctx.approved && p.rule === "default") continue;
      parts.push(p);
    }
    for (const i of c.inner) {
      const unknownArgs = dyn || !!i.unknownArgs;
      this.#simpleParts(i.words, i.assigns, "", ctx, inner, parts, unknownArgs, !!i.findItems);
    }
    for (const s of c.scripts) {
      let sub: ReturnType<typeof parseShell> | undefined;
      try {
        sub = s.src === null ? undefined : parseShell(s.src, this.home);
      } catch (e) {
        sub = { ok: false, error: (e as Error).message };
      }
      if (s.src === null || !sub?.ok || ctx.depth + 1 >= MAX_DEPTH) {
        const why = s.src === null
          ? `${s.via} runs a string only known at run time`
          : !sub?.ok
          ? `the shell parser cannot parse the string run by ${s.via} (${
            sub && !sub.ok ? sub.error : ""
          })`
          : `${s.via} is nested too deeply`;
        if (
          inner === "full" ||
          this.#hasRules(
            ["execute", "read", "write", "env"],
            inner === "skip" ? ["deny"] : ["deny", "ask"],
          )
        ) {
          parts.push({
            decision: "ask",
            reason: `${q(display)}: ${why}; the guard asks (fail closed)`,
            rule: "default",
            subject: display,
          });
        }
        continue;
      }
      this.#scriptParts(sub.script, {
        depth: ctx.depth + 1,
        cwds: ctx.cwds,
        level: inner,
        approved: ctx.approved,
      }, parts);
    }
    const wlevel: Level = inner;
    for (const w of c.writes) {
      this.#pathTargetParts("write", w, display, ctx, wlevel, parts, "argument");
    }
    this.#argParts(words, c.readOnly, display, ctx, level === "skip" ? "skip" : "explicit", parts);
    if (!c.readOnly && !c.net && name !== "git") this.#urlParts(words, display, parts);
  }

  /**
   * Why a read-only git command is not safe here, if it is not: git reads the
   * configuration of the repository it discovers from its working directory,
   * and a repository config (`core.fsmonitor`, `core.pager`, …) can run
   * commands. Only the workspace's own `.git/` is protected from the agent's
   * writes, so read-only git is allowed only in the workspace root of a
   * repository and without `cd` (a planted bare repository elsewhere in the
   * workspace would otherwise be picked up).
   */
  #gitUnsafe(ctx: ScriptCtx): string | undefined {
    if (!ctx.cwds || ctx.cwds.length !== 1 || ctx.cwds[0] !== this.workspace) {
      return "git after cd may pick up a repository configuration written in the workspace";
    }
    if (!this.#gitDir()) {
      return "the workspace has no .git/, so git may read a repository configuration written in the workspace";
    }
    // A repository's own configuration can make git run programs (core.fsmonitor on
    // `git status`, diff.*.textconv on `git log -p`, filter.* on `git diff`, …). A hostile
    // repository may ship it: only configurations of known-harmless keys are trusted.
    const cfg = this.#gitConfig();
    if (!cfg) return "the workspace's git configuration cannot be read";
    // Even `git status` runs hooks: it may rewrite the index, which runs `post-index-change`.
    // A repository may ship `.git/hooks/`; only the `*.sample` files `git init` writes are inert.
    const hook = this.#gitHook();
    if (hook) return `the repository has a hook (${hook}), which read-only git commands may run`;
    for (const k of cfg.keys()) {
      if (!SAFE_GIT_CONFIG.test(k)) {
        return `the repository's git configuration sets ${
          k.replace("\u0000", "")
        }, which may make git run a program`;
      }
    }
    return undefined;
  }

  /**
   * Setting variable `name` for a command: Env rules, and dangerous names
   * (PATH, LD_*, HOME, GIT_*, PS4, …) ask by default — unless the whole
   * command line was approved as it is ({@link ScriptCtx.approved}).
   */
  #envSetPart(
    name: string,
    display: string,
    level: Level,
    ctx?: ScriptCtx,
  ): GuardPart | undefined {
    const p = this.#namePart("env", name, level);
    if (p) {
      return p.decision === "allow"
        ? undefined
        : { ...p, reason: `${p.reason} (set by ${q(display)})`, subject: display };
    }
    if (level === "skip" || ctx?.approved || !dangerousEnvName(name)) return undefined;
    return {
      decision: "ask",
      reason: `${
        q(display)
      } sets ${name}, which changes which program runs, what it loads or what the shell evaluates; the default policy asks (allow with Env(${name}))`,
      rule: "default",
      subject: display,
    };
  }

  /**
   * URLs in the arguments of a command that is not read-only (`curl https://h/x`,
   * `deno run https://h/m.ts`, `pip install git+https://h/r`) are checked against `Net` deny and
   * ask rules, so `--deny 'Net(h)'` holds even when an `Execute` rule allows the program. (The
   * default "Net asks" is not applied here: the command itself already asks unless a rule allows
   * it.)
   */
  #urlParts(words: string[], display: string, parts: GuardPart[]): void {
    if (!this.#hasRules(["net"], ["deny", "ask"])) return;
    for (const w of words.slice(1)) {
      const m = /(?:^|[=+@])([a-z][a-z0-9+.-]*):\/\/([^/?#\s]*)/i.exec(w);
      if (!m) continue;
      const hostPort = m[2].replace(/^[^@]*@/, "");
      if (!hostPort || hostPort.includes(WILD)) {
        const deny = this.#rulesOf("net").find((r) => r.decision !== "allow");
        parts.push({
          decision: "ask",
          reason: `${q(display)} names a URL whose host is only known at run time and ${
            deny ? by(deny) : "a Net rule"
          } restricts hosts`,
          rule: deny?.text ?? "default",
          subject: display,
        });
        continue;
      }
      const p = this.#netPart(hostPort);
      if (p.decision !== "allow" && p.rule !== "default") {
        parts.push({ ...p, reason: `${p.reason} — URL in ${q(display)}`, subject: display });
      }
    }
  }

  /**
   * A git repository argument as a `Net` decision (`git ls-remote URL`,
   * `git fetch origin`): a URL's host, a remote's URL from the workspace's
   * git configuration, nothing for a local path; unknown hosts ask (and are
   * denied by a bare `Net` deny rule).
   */
  #gitNetPart(repo: string, display: string, level: Level): GuardPart {
    if (repo === "") {
      // No repository named: git uses the branch's remote (or all of them): judge every remote.
      const names = [...(this.#gitConfig()?.keys() ?? [])]
        .map((k) => /^remote\.(.+)\.url$/.exec(k)?.[1])
        .filter((n): n is string => !!n);
      if (!names.length) return this.#gitNetPart(WILD, display, level);
      return worstPart(names.map((n) => this.#gitNetPart(n, display, level)));
    }
    let host = gitRepoHost(repo);
    if (host === "") host = this.#gitRemoteHost(repo);
    if (host === null) {
      return {
        decision: "allow",
        reason: `${q(display)} uses a local repository`,
        rule: "default",
        subject: display,
      };
    }
    const s = host === WILD ? "a host only known from configuration or at run time" : host;
    if (host === WILD) {
      const deny = this.#rulesOf("net").find((r) => r.decision === "deny");
      const p: GuardPart = deny && deny.pattern === undefined
        ? {
          decision: "deny",
          reason: `${by(deny)} denies network access`,
          rule: deny.text,
          subject: s,
        }
        : level === "skip" && !deny
        ? {
          decision: "allow",
          reason: `--dangerously-skip-permissions allows ${s}`,
          rule: "default",
          subject: s,
        }
        : {
          decision: "ask",
          reason: `network access to ${s}`,
          rule: deny?.text ?? "default",
          subject: s,
        };
      return {
        ...p,
        reason: `${p.reason} — ${q(display)} connects to a remote repository`,
        subject: display,
      };
    }
    const p = this.#netPart(host);
    return {
      ...p,
      reason: `${p.reason} — ${q(display)} connects to a remote repository`,
      subject: display,
    };
  }

  /** The host of remote `name` per the workspace's `.git/config` (null for a local path, WILD when unknown). */
  #gitRemoteHost(name: string): string | null {
    const cfg = this.#gitConfig();
    const url = cfg?.get(`remote.${name}.url`);
    if (!url) return WILD;
    const h = gitRepoHost(url);
    return h === "" ? WILD : h;
  }

  /** The workspace repository's own configuration (see {@link readGitConfig}). */
  #gitConfig(): Map<string, string> | undefined {
    return readGitConfig(this.workspace);
  }

  /** The first hook of the workspace repository read-only commands may run (see {@link activeHook}). */
  #gitHook(): string | undefined {
    return activeHook(this.workspace);
  }

  #gitDir(): string | undefined {
    return gitDirOf(this.workspace);
  }

  /** Decides a path a command writes or reads (redirect target, tee file), for every candidate cwd. */
  #pathTargetParts(
    kind: "read" | "write",
    target: string,
    display: string,
    ctx: ScriptCtx,
    level: Level,
    parts: GuardPart[],
    what: string,
  ): void {
    if (SPECIAL_FILES.test(target)) return;
    const sock = /^\/dev\/(tcp|udp)\/([^/]+)\/([^/]+)$/.exec(target);
    if (sock || /^\/dev\/(tcp|udp)\//.test(target)) {
      // Bash opens a network connection for these redirections.
      const host = sock && !target.includes(WILD) ? `${sock[2]}:${sock[3]}` : "*";
      const p = host === "*"
        ? {
          decision: "ask" as const,
          reason: `a network connection to a host only known at run time`,
          rule: "default",
          subject: display,
        }
        : this.#netPart(host);
      // A line approved as it is ("allow always") lifts the default question, not a Net rule.
      if (ctx.approved && p.rule === "default" && !this.#hasRules(["net"], ["deny", "ask"])) return;
      if (p.decision !== "allow" || level === "full") {
        parts.push({
          ...p,
          reason: `${p.reason} — bash ${what} in ${q(display)} opens a network connection`,
          subject: display,
        });
      }
      return;
    }
    if (target.includes(WILD) || (!target.startsWith("/") && ctx.cwds === null)) {
      const relevant = level === "full" ||
        this.#hasRules([kind], level === "skip" ? ["deny"] : ["deny", "ask"]) ||
        (kind === "write" && level !== "skip");
      if (relevant) {
        parts.push({
          decision: "ask",
          reason: `${q(display)} ${
            kind === "write" ? "writes" : "reads"
          } a path only known at run time (${q(target)})`,
          rule: "default",
          subject: display,
        });
      }
      return;
    }
    for (const cwd of ctx.cwds ?? [this.workspace]) {
      for (const abs of this.#resolveAll(target, cwd)) {
        const p = this.#pathPart(kind, abs, level);
        if (p.decision === "allow" && level !== "full") continue;
        parts.push({ ...p, reason: `${p.reason} — ${what} in ${q(display)}`, subject: display });
      }
    }
  }

  /**
   * The default "reads outside the workspace ask" (as for `fs_read`) applied to
   * the paths a command the default policy allows reads ({@link readPaths}:
   * file operands, `--file=PATH` values, start paths, the working directory of
   * a bare `ls`), against every candidate working directory. `Read` allow rules
   * cover a path; `/dev/null` and the other {@link SPECIAL_FILES} and `-`
   * (stdin) are not reads of a file. An unknown word asks (fail closed), except
   * a plain filename glob (`dynamic` false) whose directory part is checked
   * instead; `dynamic` is true when an unknown word may be a run-time value.
   * Explicit Read deny/ask rules on the words are {@link #argParts}' job.
   */
  #readPathParts(
    words: string[],
    display: string,
    ctx: ScriptCtx,
    dynamic: boolean,
    findItems: boolean,
    parts: GuardPart[],
  ): void {
    const paths = readPaths(words);
    if (!paths) return;
    const unknown = (why: string) =>
      parts.push({
        decision: "ask",
        reason: `${
          q(display)
        } reads ${why}; the default policy asks for reads outside the workspace`,
        rule: "default",
        subject: display,
      });
    for (const w of paths) {
      if (w === "-" || SPECIAL_FILES.test(w)) continue;
      let target = w;
      // A `find -exec` `{}`: beneath find's start paths, which are checked on find itself.
      const found = findItems && w === WILD;
      if (found) target = ".";
      else if (w.includes(WILD)) {
        const at = w.indexOf(WILD);
        const after = w.slice(w.lastIndexOf("/", at) + 1).split("/");
        // A glob segment starting with "." may match "..".
        if (
          dynamic || after.includes("..") ||
          after.some((s) => s.startsWith(".") && s.includes(WILD))
        ) {
          unknown(`a path only known at run time (${q(w)})`);
          return;
        }
        const head = w.slice(0, at);
        target = head.includes("/") ? head.slice(0, head.lastIndexOf("/")) || "/" : ".";
      }
      if (!target.startsWith("/") && ctx.cwds === null) {
        unknown(`${q(w)} relative to a working directory only known at run time`);
        return;
      }
      for (const cwd of ctx.cwds ?? [this.workspace]) {
        for (const abs of this.#resolveAll(target, cwd)) {
          if (SPECIAL_FILES.test(abs)) {
            continue;
          }
          let p = this.#pathPart("read", abs, "full");
          if (p.decision === "allow" && w !== target && !found) {
            // A glob inside the workspace may match a symbolic link that leads outside.
            const matches = this.#globMatches(resolvePath(w, cwd, this.home));
            if (!matches) {
              unknown(`${q(w)}, a glob matching more than ${GLOB_LIMIT} paths`);
              return;
            }
            for (const m of matches) {
              const mp = this.#pathPart("read", m, "full");
              if (mp.decision !== "allow") {
                p = mp;
                break;
              }
            }
          }
          if (p.decision === "allow") continue;
          // Explicit rules on a word as written are reported by #argParts.
          if (p.rule !== "default" && target === w) continue;
          parts.push({
            ...p,
            reason: `${p.reason} — ${
              w !== target ? q(w) : words.includes(w) ? "argument" : "working directory"
            } of ${q(display)}`,
            subject: display,
          });
        }
      }
    }
  }

  /**
   * A filename glob lists its directory (`echo /*`, `printf '%s\n' ~/.ssh/*`,
   * `for f in ../x/*`): the default "reads outside the workspace ask" applies
   * to the directories it may list, as for `ls` (issue 11 §2). A glob whose
   * other parts are run-time values, or whose `..`/dot segments may climb
   * out, asks.
   */
  #globReadParts(g: ShellGlob, ctx: ScriptCtx, parts: GuardPart[]): void {
    const display = g.text.replaceAll(WILD, "*");
    const before = parts.length;
    // What matters is the directories listed: the glob without its last segment
    // (`*` lists `.`; `*/*` lists every folder `*` matches, a link leading out among them).
    const cut = g.text.lastIndexOf("/");
    // With run-time parts (`$X/*`, `{/etc,/root}/*`) the folder itself is unknown.
    const dir = g.dynamic ? g.text : cut < 0 ? "." : cut === 0 ? "/" : g.text.slice(0, cut);
    this.#readPathParts(["ls", "-d", "--", dir], display, ctx, g.dynamic, false, parts);
    for (let i = before; i < parts.length; i++) {
      parts[i] = {
        ...parts[i],
        reason: `${parts[i].reason} (the glob ${q(display)} lists a directory)`,
      };
    }
  }

  /**
   * The existing paths a filename glob (absolute, WILD for its unknown parts)
   * may match, segment by segment, with the directories matched on the way:
   * WILD matches any run of characters, a superset of `*`, `?` and `[…]`. Undefined when more than
   * {@link GLOB_LIMIT} directory entries would have to be examined.
   */
  #globMatches(pattern: string): string[] | undefined {
    const segs = pattern.split("/").slice(1);
    let cur = [""];
    const all: string[] = [];
    let seen = 0;
    for (const seg of segs) {
      const next: string[] = [];
      if (!seg.includes(WILD)) {
        for (const d of cur) next.push(`${d}/${seg}`);
      } else {
        const parts = seg.split(WILD);
        for (const d of cur) {
          try {
            for (const e of Deno.readDirSync(d || "/")) {
              if (++seen > GLOB_LIMIT) return undefined;
              if (wildMatch(parts, e.name)) next.push(`${d}/${e.name}`);
            }
          } catch { /* not a readable directory: no matches */ }
        }
        // Every match counts, also a directory further segments look inside.
        all.push(...next);
      }
      cur = next;
      if (!cur.length) break;
    }
    return [...all, ...cur];
  }

  /**
   * Path-like arguments of a command checked against explicit Read rules (and
   * Write rules plus protected paths when the command is not read-only).
   */
  #argParts(
    words: string[],
    readOnly: boolean,
    display: string,
    ctx: ScriptCtx,
    level: Level,
    parts: GuardPart[],
  ): void {
    const decisions: RuleDecision[] = level === "skip" ? ["deny"] : ["deny", "ask"];
    const kinds: ("read" | "write")[] = readOnly ? ["read"] : ["read", "write"];
    const anyRules = this.#hasRules(kinds, decisions);
    const checkProtected = !readOnly && level !== "skip";
    if (!anyRules && !checkProtected) return;
    let operandsOnly = false;
    for (const w of words.slice(1)) {
      let a = w;
      if (a === "--" && !operandsOnly) {
        operandsOnly = true;
        continue;
      }
      // After `--` every word is an operand; a word like `-/../../x` may be one too.
      if (a.startsWith("-") && !operandsOnly && !a.includes("/")) {
        const eq = a.indexOf("=");
        if (eq < 0) continue;
        a = a.slice(eq + 1);
      } else if (a.startsWith("-") && !operandsOnly && a.includes("=")) {
        a = a.slice(a.indexOf("=") + 1);
      }
      if (!a) continue;
      if (a.includes(WILD) || (!a.startsWith("/") && ctx.cwds === null)) {
        if (!anyRules) continue;
        // Fail closed only when some rule could see this unknown path.
        const prefix = a.split(WILD)[0];
        const overlaps = this.#rules.some((r) =>
          kinds.includes(r.kind as "read") && decisions.includes(r.decision) &&
          (r.pattern === undefined || !prefix.startsWith("/") ||
            pathsOverlap(this.#matcher(r).base, prefix.replace(/\/[^/]*$/, "") || "/"))
        );
        if (overlaps) {
          parts.push({
            decision: "ask",
            reason: `${q(display)} names a path only known at run time (${
              q(a)
            }) and path rules are in effect`,
            rule: "default",
            subject: display,
          });
          return;
        }
        continue;
      }
      for (const cwd of ctx.cwds ?? [this.workspace]) {
        for (const abs of this.#resolveAll(a, cwd)) {
          for (const kind of kinds) {
            const p = this.#pathPart(kind, abs, level === "skip" ? "skip" : "explicit");
            if (p.decision === "allow") continue;
            if (kind === "write" && p.rule === "default" && !checkProtected) continue;
            parts.push({
              ...p,
              reason: `${p.reason} — argument of ${q(display)}`,
              subject: display,
            });
          }
        }
      }
    }
  }

  // -------------------------------------------------------------------------
  // View (b): plugin worker permissions

  /**
   * The Deno Worker permission set of a plugin: each declared entry is granted
   * only when the policy allows that access (and, for a directory, everything
   * beneath it); anything else is refused with a message naming the plugin,
   * the permission, the value and the rule or default. Every Deno permission
   * key is explicit; `sys`, `ffi` and `import` are always false. Relative
   * declared paths resolve against the workspace; `~` is the home directory.
   */
  workerPermissions(declared: PluginPermissions, pluginName: string): WorkerGrant {
    const refused: WorkerGrant["refused"] = [];
    const grant = {
      read: [] as string[],
      write: [] as string[],
      net: [] as string[],
      run: [] as string[],
      env: [] as string[],
    };
    const refuse = (
      permission: keyof PluginPermissions,
      value: string,
      rule: string,
      why: string,
      hint?: string,
    ) =>
      refused.push({
        permission,
        value,
        rule,
        message: `plugin "${pluginName}" declares ${permission} ${
          JSON.stringify(value)
        } but ${why}${hint ? `; ${hint}` : ""}`,
      });
    const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

    for (const kind of ["read", "write"] as const) {
      for (const v of list(declared?.[kind])) {
        if (typeof v !== "string" || !v) {
          refuse(kind, String(v), "default", "the value is not a path");
          continue;
        }
        const abs = resolvePath(v, this.workspace, this.home);
        const r = this.#subtreePart(kind, abs);
        if (r.decision === "allow") grant[kind].push(abs);
        else refuse(kind, v, r.rule ?? "default", r.why, r.hint);
      }
    }
    for (const v of list(declared?.net)) {
      const s = String(v);
      if (typeof v !== "string" || !v || v.includes("*") || v.includes("/")) {
        refuse(
          "net",
          s,
          "default",
          "net entries must be host names with an optional :port (no wildcards, no URLs)",
        );
        continue;
      }
      const p = this.#netPart(v);
      const { host, port } = splitHost(v);
      const conflict = port === undefined &&
        this.#rulesOf("net").find((r) =>
          r.decision !== "allow" && r.pattern !== undefined &&
          splitHost(r.pattern).port !== undefined && hostMatch(splitHost(r.pattern).host, host)
        );
      if (p.decision === "allow" && !conflict) grant.net.push(v);
      else if (conflict && p.decision === "allow") {
        refuse(
          "net",
          v,
          conflict.text,
          `${by(conflict)} restricts a port of it`,
          "declare host:port",
        );
      } else {refuse(
          "net",
          v,
          p.rule ?? "default",
          this.#phrase(p),
          p.rule === "default" ? `add --allow 'Net(${v})' to grant it` : undefined,
        );}
    }
    for (const v of list(declared?.run)) {
      if (typeof v !== "string" || !v || /\s/.test(v) || v.includes(WILD)) {
        refuse("run", String(v), "default", "run entries must be program names or paths");
        continue;
      }
      const r = this.#programPart(v);
      if (r.decision === "allow") grant.run.push(v);
      else {
        refuse(
          "run",
          v,
          r.rule ?? "default",
          `the guard ${
            r.decision === "deny" ? "denies" : "asks before"
          } running it with arbitrary arguments (${r.reason})`,
          r.rule === "default" ? `add --allow 'Execute(${v}:*)' to grant it` : undefined,
        );
      }
    }
    for (const v of list(declared?.env)) {
      if (typeof v !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) {
        refuse("env", String(v), "default", "env entries must be variable names");
        continue;
      }
      const p = this.#namePart("env", v, "full");
      if (p?.decision === "allow") grant.env.push(v);
      else if (p) refuse("env", v, p.rule ?? "default", this.#phrase(p));
      else {refuse(
          "env",
          v,
          "default",
          "the policy asks before reading environment variables",
          `add --allow 'Env(${v})' to grant it`,
        );}
    }
    const perm = (xs: string[]) => (xs.length ? [...new Set(xs)] : false);
    return {
      permissions: {
        read: perm(grant.read),
        write: perm(grant.write),
        net: perm(grant.net),
        run: perm(grant.run),
        env: perm(grant.env),
        sys: false,
        ffi: false,
        import: false,
      },
      refused,
    };
  }

  /** A refusal phrase from a part: `rule X (from …) denies it` / `the policy asks for reads outside the workspace`. */
  #phrase(p: GuardPart): string {
    if (p.rule && p.rule !== "default") {
      const r = this.#rules.find((x) => x.text === p.rule);
      return `${r ? by(r) : `rule ${p.rule}`} ${p.decision === "deny" ? "denies" : "asks for"} it`;
    }
    return p.reason.replace(/^the default policy/, "the policy");
  }

  /** Can the whole subtree at `abs` be granted? */
  #subtreePart(
    kind: "read" | "write",
    abs: string,
  ): { decision: Decision; rule?: string; why: string; hint?: string } {
    const verb = kind === "read" ? "reads" : "writes";
    const hintAllow = `add --allow '${KIND_NAMES[kind]}(${abs === "/" ? "" : abs}/**)' to grant it`;
    let isFile = false;
    try {
      isFile = Deno.statSync(abs).isFile;
    } catch { /* missing or unreadable: treat as a directory */ }
    const probes = isFile ? [abs] : [abs, `${abs === "/" ? "" : abs}/\u0001probe`];
    for (const p of probes) {
      const part = this.#pathPart(kind, p, "full");
      if (part.decision === "allow") continue;
      if (part.rule && part.rule !== "default") {
        return { decision: part.decision, rule: part.rule, why: this.#phrase(part) };
      }
      const why = /outside the workspace/.test(part.reason)
        ? `the policy asks for ${verb} outside the workspace`
        : part.reason.replace(/ \([^)]*\); add .*$/, "").replace(/\(\/.*?\)$/, "").trim();
      return { decision: part.decision, rule: "default", why, hint: hintAllow };
    }
    // Nothing beneath it may be restricted: Deno permissions cannot carve holes.
    for (const r of isFile ? [] : this.#rulesOf(kind)) {
      if (r.decision === "allow" || r.pattern === undefined) continue;
      const m = this.#matcher(r);
      if (isInside(m.base, abs) || (!m.literal && isInside(abs, m.base))) {
        return {
          decision: r.decision,
          rule: r.text,
          why: `${by(r)} ${
            r.decision === "deny" ? "denies" : "asks for"
          } part of it (a worker grant cannot exclude a sub-path)`,
          hint: "declare a narrower path",
        };
      }
    }
    if (kind === "write" && !isFile) {
      const roots = [
        `${this.workspace}/.git`,
        `${this.workspace}/.coyote`,
        `${this.workspace}/.mcp.json`,
        this.configDir,
        this.dataDir,
      ].filter((
        x,
      ): x is string => !!x);
      for (const root of roots) {
        if (!isInside(root, abs) || root === abs) continue;
        const part = this.#pathPart("write", `${root}/\u0001probe`, "full");
        if (part.decision !== "allow") {
          return {
            decision: part.decision,
            rule: part.rule ?? "default",
            why:
              `it contains ${root}, which is never written without an explicit allow rule (a worker grant cannot exclude a sub-path)`,
            hint: "declare a narrower path",
          };
        }
      }
    }
    return { decision: "allow", why: "allowed" };
  }

  /**
   * May `program` run with any arguments? View (b) `run` asks the guard itself
   * about `program "$@"` (arguments unknown), so the two views agree by
   * construction: path deny rules, argument-specific deny rules and the
   * default read-only table all apply.
   */
  #programPart(program: string): GuardPart {
    const parts: GuardPart[] = [];
    const level: Level = this.dangerouslySkipPermissions ? "skip" : "full";
    this.#simpleParts(
      [program, WILD],
      [],
      `${program} …`,
      { depth: 0, cwds: [this.workspace], level },
      level,
      parts,
      true,
    );
    return worstPart(parts);
  }

  // -------------------------------------------------------------------------
  // View (c): Deno flags

  /**
   * How a deny rule maps to a Deno flag: the flag value, or why it stays
   * guard-only (globs, argument-specific command patterns, bare kinds that
   * would stop Coyote itself).
   */
  flagFor(r: Rule): { flag?: string; value?: string; note: string } {
    if (r.decision !== "deny") return { note: `${r.decision} rules are guard-only` };
    switch (r.kind) {
      case "read":
      case "write": {
        if (r.pattern === undefined) {
          return { note: "guard-only: a Deno-level deny of every path would stop Coyote itself" };
        }
        const m = this.#matcher(r);
        if (m.flagPath) {
          return {
            flag: `--deny-${r.kind}`,
            value: m.flagPath,
            note: `--deny-${r.kind}=${m.flagPath}`,
          };
        }
        return { note: "guard-only: Deno flags take literal paths, not globs" };
      }
      case "net": {
        if (r.pattern === undefined) {
          return {
            note: "guard-only: a Deno-level deny of all hosts would stop Coyote reaching its model",
          };
        }
        if (/[*]/.test(r.pattern)) {
          return { note: "guard-only: Deno flags take literal hosts, not globs" };
        }
        const v = r.pattern.toLowerCase();
        return { flag: "--deny-net", value: v, note: `--deny-net=${v}` };
      }
      case "env":
        if (r.pattern === undefined) {
          return {
            note: "guard-only: a Deno-level deny of all variables would stop Coyote itself",
          };
        }
        if (/[*?]/.test(r.pattern)) {
          return { note: "guard-only: Deno flags take literal names, not globs" };
        }
        return { flag: "--deny-env", value: r.pattern, note: `--deny-env=${r.pattern}` };
      case "execute": {
        if (r.pattern === undefined) {
          return { flag: "--deny-run", note: "--deny-run (no programs at all)" };
        }
        const prog = wholeProgram(r.pattern);
        if (prog && !prog.includes(",")) {
          return { flag: "--deny-run", value: prog, note: `--deny-run=${prog}` };
        }
        return { note: "guard-only: the rule depends on the command's arguments" };
      }
      case "tool":
        return { note: "guard-only: tools are not a Deno permission" };
    }
  }

  /**
   * Flags for `deno run` / `deno compile` of Coyote itself: `--no-prompt`, the
   * allow flags the binary needs, and `--deny-read=`/`--deny-write=`/
   * `--deny-net=`/`--deny-env=`/`--deny-run=` for literal deny rules.
   */
  denoFlags(): string[] {
    const flags = [...BASE_FLAGS];
    const values = new Map<string, string[] | null>();
    for (const r of this.#rules) {
      const f = this.flagFor(r);
      if (!f.flag) continue;
      if (f.value === undefined) values.set(f.flag, null);
      else if (values.get(f.flag) !== null) {
        const xs = values.get(f.flag) ?? [];
        if (!xs.includes(f.value)) xs.push(f.value);
        values.set(f.flag, xs);
      }
    }
    for (const flag of ["--deny-read", "--deny-write", "--deny-net", "--deny-env", "--deny-run"]) {
      if (!values.has(flag)) continue;
      const xs = values.get(flag);
      flags.push(xs === null ? flag : `${flag}=${xs!.join(",")}`);
    }
    return flags;
  }

  /** Human-readable effective policy: rules with sources, defaults and the derived Deno flags. */
  describe(): string {
    const lines: string[] = [];
    lines.push("Coyote permission policy (deny > ask > allow)");
    lines.push(`  workspace:  ${this.workspace}`);
    lines.push(
      `  config dir: ${this.configDir}${
        this.configPath ? ` (config file ${this.configPath})` : ""
      }`,
    );
    if (this.dataDir) lines.push(`  data dir:   ${this.dataDir}`);
    if (this.dangerouslySkipPermissions) {
      lines.push(
        "  mode:       --dangerously-skip-permissions (everything is allowed except explicit deny rules)",
      );
    }
    lines.push("");
    lines.push("Rules:");
    if (!this.#rules.length) lines.push("  (none; the defaults below decide)");
    const order: RuleDecision[] = ["deny", "ask", "allow"];
    for (const d of order) {
      for (const r of this.#rules.filter((x) => x.decision === d)) {
        lines.push(`  ${d.padEnd(5)}  ${ruleText(r)}`);
        lines.push(`         from ${r.source}; ${this.flagFor(r).note}`);
      }
    }
    lines.push("");
    lines.push("Defaults:");
    lines.push(
      "  Execute  read-only commands allowed (ls, cat, head, tail, wc, grep, rg, find without -exec/-delete,",
    );
    lines.push(
      "           git status|diff|log|show|branch…); every other command asks; commands the parser cannot",
    );
    lines.push(`           analyse or longer than ${MAX_COMMAND_LENGTH} characters ask`);
    lines.push(
      "  Read     inside the workspace allowed; outside asks (fs_read, and what read-only commands read:",
    );
    lines.push("           cat ~/.ssh/id_rsa, ls /, grep -r x /etc ask)");
    lines.push(
      "  Write    inside the workspace allowed; outside asks; any .git/, .coyote/ or .mcp.json (any depth,",
    );
    lines.push(
      "           any case), the config dir and the data dir are denied unless an allow rule matches",
    );
    lines.push("  Net      asks (also git fetch/pull/push/clone/ls-remote, git remote show)");
    lines.push(
      "  Env      asks; expanding a variable whose name looks secret ($GITHUB_TOKEN) asks",
    );
    lines.push("  Tool     mcp__* asks; other tools allowed");
    lines.push("");
    lines.push("Deno flags (deno run / deno compile):");
    lines.push(`  ${this.denoFlags().join(" ")}`);
    return lines.join("\n") + "\n";
  }
}

/** The star pattern of an Execute rule (`*` escaped for exact session rules). */
function execPattern(r: Rule): string | undefined {
  return r.exact && r.pattern !== undefined ? r.pattern.replaceAll("*", "\\*") : r.pattern;
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
function needsFullParser(command: string): boolean {
  if (command.length > MAX_COMMAND_LENGTH) return false;
  const fast = lexSimple(command);
  if (!fast) return true;
  return fast.commands.some((c) => c.words.some((w) => NESTED_SHELLS.has(w)));
}

/**
 * Variants of a command with leading options skipped (`npm --registry x
 * publish` → `npm publish`, `npm x publish`): each option word, and the word
 * after an option without `=` (it may be its value), may be dropped. Used
 * for a "may match" of deny and ask rules only.
 */
function optionSkips(words: string[]): string[][] {
  if (words.length < 3 || !words[1].startsWith("-") || words[1] === "--") return [];
  const out: string[][] = [];
  let i = 1;
  while (i < words.length && i < 8) {
    const a = words[i];
    if (!a.startsWith("-")) break;
    i++;
    out.push([words[0], ...words.slice(i)]);
    if (!a.includes("=") && i < words.length && !words[i].startsWith("-")) {
      out.push([words[0], ...words.slice(i + 1)]);
      // the next word may be a value or the subcommand: continue past it only as a value
      if (i + 1 < words.length && words[i + 1].startsWith("-")) i++;
    }
  }
  return out;
}

/** True when `CDPATH` is set for the commands Coyote runs (then `cd name` may go elsewhere). */
function cdpathSet(): boolean {
  try {
    return !!Deno.env.get("CDPATH") || /(^|:)cdable_vars(:|$)/.test(Deno.env.get("BASHOPTS") ?? "");
  } catch {
    return true; // cannot tell: fail closed
  }
}

/** {@link parseShell} that never throws (the parser may not be loaded for a fast-path line). */
function safeParse(src: string, home: string): ReturnType<typeof parseShell> {
  try {
    return parseShell(src, home);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** Worst part wins (deny > ask > allow); the reason names the deciding rule or default and the sub-command. */
function worstPart(parts: GuardPart[]): GuardPart {
  // Worst decision; among equals, an explicit rule beats a default, and a
  // definite finding beats a "only known at run time" one.
  const rank = (p: GuardPart) =>
    SEVERITY[p.decision] * 4 + (p.rule && p.rule !== "default" ? 2 : 0) +
    (/only known at run time/.test(p.reason) ? 0 : 1);
  let worst = parts[0];
  for (const p of parts) if (rank(p) > rank(worst)) worst = p;
  return worst;
}

function aggregate(parts: GuardPart[], access: PolicyAccess): GuardVerdict {
  const worst = worstPart(parts);
  const same = parts.filter((p) => p.decision === worst.decision && p !== worst).length;
  let reason = worst.reason;
  if (worst.decision !== "allow" && same > 0) {
    reason += ` (and ${same} more part${same > 1 ? "s" : ""} ${
      worst.decision === "deny" ? "denied" : "asking"
    })`;
  }
  return {
    decision: worst.decision,
    reason,
    ...(worst.rule ? { rule: worst.rule } : {}),
    access: access as ToolAccess,
  };
}

/**
 * Whether `name` is `parts` joined by runs of any characters (a glob segment split at WILD).
 * Linear: the first part is a prefix, the last a suffix, each one between found leftmost in
 * order — a regular expression `^a.*a.*…b$` backtracks for minutes on a long file name the
 * model can create, and the guard would block the event loop while judging the command.
 */
function wildMatch(parts: string[], name: string): boolean {
  const first = parts[0], last = parts[parts.length - 1];
  if (parts.length === 1) return name === first;
  if (!name.startsWith(first)) return false;
  let pos = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const at = name.indexOf(parts[i], pos);
    if (at < 0) return false;
    pos = at + parts[i].length;
  }
  return name.length - last.length >= pos && name.endsWith(last);
}
