/**
 * Permission rules: parsing of the `Kind(pattern)` syntax (after Claude Code's
 * permission rules, see docs/permissions.md) and the matchers behind them.
 *
 * Kinds (case-insensitive): `Execute` (alias `Bash`), `Read`, `Write` (alias
 * `Edit`), `Net`, `Env`, `Tool`. A bare kind (`Execute`) matches everything of
 * that kind; `Kind(*)` is the same.
 *
 * This module has no shell parser in it and stays cheap to import. Its only
 * run-time dependency, npm `picomatch` (path globs), is loaded lazily — it is
 * CommonJS, and the first CommonJS module costs Deno's CJS loader bootstrap
 * (~15 ms of start-up). Invariant ({@link compilePath}): a pattern with none
 * of the characters picomatch can read as glob syntax ({@link GLOB_SYNTAX})
 * is compiled without picomatch, exactly as picomatch would (the path and
 * everything below it); any other pattern needs the engine
 * ({@link loadGlobEngine}), which every owner of rules starts loading the
 * moment such a rule enters and every async entry point awaits
 * (`Policy.globsReady`). A glob compiled before the engine has loaded throws
 * {@link GlobEngineNotLoaded}, which callers turn into a refusal (fail closed).
 * @module
 */
import { isAbsolute, join, normalize, resolve } from "../util/path.ts";

/** A guard decision; precedence deny > ask > allow. */
export type RuleDecision = "allow" | "ask" | "deny";
/** Canonical rule kinds. */
export type RuleKind = "execute" | "read" | "write" | "net" | "env" | "tool";

/** The canonical spelling of each kind, used when a rule is printed. */
export const KIND_NAMES: Record<RuleKind, string> = {
  execute: "Execute",
  read: "Read",
  write: "Write",
  net: "Net",
  env: "Env",
  tool: "Tool",
};

const KIND_ALIASES: Record<string, RuleKind> = {
  execute: "execute",
  bash: "execute",
  read: "read",
  write: "write",
  edit: "write",
  net: "net",
  env: "env",
  tool: "tool",
};

/**
 * A rule that cannot be parsed or a permissions list of the wrong shape. The
 * message names the rule text and where it came from (`--allow flag`,
 * `config /path/config.yaml permissions.deny[2]`, `session`). Treated as a
 * usage/config error (exit code 2) by the CLI.
 */
export class PolicyError extends Error {
  override name = "PolicyError";
}

/** One parsed rule. `pattern` is undefined for a bare kind (matches everything). */
export interface Rule {
  decision: RuleDecision;
  kind: RuleKind;
  /** The pattern inside the parentheses, trimmed; undefined = everything. */
  pattern?: string;
  /** The rule as written by the user. */
  text: string;
  /** Where the rule came from, e.g. `--deny flag`, `config ~/.config/coyote/config.yaml permissions.allow[0]`. */
  source: string;
  /** Execute rules recorded by "allow always": `*` is literal (the exact command, not a glob). */
  exact?: boolean;
}

/** Prints a rule canonically: `Execute(git push:*)`, `Net`. */
export function ruleText(r: Pick<Rule, "kind" | "pattern">): string {
  return r.pattern === undefined ? KIND_NAMES[r.kind] : `${KIND_NAMES[r.kind]}(${r.pattern})`;
}

const RULE_RE = /^\s*([A-Za-z]+)\s*(?:\(([\s\S]*)\))?\s*$/;
const HOST_RE =
  /^(\*|(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_*-]+)*\.?|\[[0-9A-Fa-f:.]+\])(:(\d{1,5}|\*))?$/;
const ENV_RE = /^[A-Za-z_*?][A-Za-z0-9_*?]*$/;
const TOOL_RE = /^[A-Za-z0-9_*?.-]+$/;

/**
 * A bare tool name or glob given without a kind (`mcp__github__*`, `web_*`): the rule the user
 * most likely meant, as `; did you mean Tool(…)?`; "" when the text does not look like that.
 */
function bareNameHint(t: string): string {
  if (!TOOL_RE.test(t)) return "";
  if (t.includes("__") || (/[*?]/.test(t) && t.includes("_"))) return `; did you mean Tool(${t})?`;
  if (/[*?]/.test(t)) return `; did you mean Tool(${t}) (tools) or Execute(${t}) (commands)?`;
  return "";
}

/**
 * Parses one rule. Throws {@link PolicyError} naming the rule and `source`
 * when the kind is unknown, the parentheses are unbalanced, or the pattern is
 * empty or malformed for its kind.
 */
export function parseRule(text: unknown, decision: RuleDecision, source: string): Rule {
  if (typeof text !== "string") {
    throw new PolicyError(
      `invalid permission rule ${
        JSON.stringify(text)
      } (from ${source}): expected a string like "Execute(npm test)"`,
    );
  }
  const bad = (why: string) =>
    new PolicyError(`invalid permission rule "${text}" (from ${source}): ${why}`);
  const m = RULE_RE.exec(text);
  if (!m) {
    throw bad(
      "expected Kind or Kind(pattern), e.g. Execute(npm run test:*), Read(~/.ssh/**), Net(api.github.com)" +
        bareNameHint(text.trim()),
    );
  }
  const kind = KIND_ALIASES[m[1].toLowerCase()];
  if (!kind) {
    throw bad(
      `unknown kind "${m[1]}" (expected Execute, Bash, Read, Write, Edit, Net, Env or Tool)`,
    );
  }
  let pattern: string | undefined = m[2]?.trim();
  if (m[2] !== undefined && !pattern) {
    throw bad("empty pattern; write the bare kind to match everything");
  }
  if (pattern === "*" || (kind !== "execute" && pattern === "**")) pattern = undefined;
  if (pattern !== undefined) {
    switch (kind) {
      case "execute":
        if (pattern.includes("\0")) throw bad("a command pattern cannot contain NUL");
        break;
      case "read":
      case "write":
        if (pattern.includes("\0")) throw bad("a path pattern cannot contain NUL");
        if (pattern.startsWith("!")) {
          throw bad("negated path patterns are not supported; use a deny or allow rule");
        }
        break;
      case "net":
        // `Net(unix:/path)`: one unix socket the sandbox lets commands reach (./sandbox/seccomp.ts).
        if (pattern.startsWith("unix:")) {
          if (!/^unix:\/[^\0*?]*$/.test(pattern)) {
            throw bad(
              "expected unix: and an absolute socket path, e.g. unix:/run/user/1000/docker.sock",
            );
          }
          break;
        }
        if (!HOST_RE.test(pattern)) {
          throw bad(
            "expected a host name with an optional :port, e.g. api.github.com, *.npmjs.org, localhost:8080",
          );
        }
        break;
      case "env":
        if (!ENV_RE.test(pattern)) {
          throw bad(
            "expected an environment variable name (globs allowed), e.g. GITHUB_TOKEN, AWS_*",
          );
        }
        break;
      case "tool":
        if (!TOOL_RE.test(pattern)) {
          throw bad("expected a tool name (globs allowed), e.g. mcp__github__*");
        }
        break;
    }
  }
  return { decision, kind, pattern, text: text.trim(), source };
}

// ---------------------------------------------------------------------------
// Star matching with unknown text (command patterns, env names, tool names, hosts)

/**
 * Marks a character of a command word whose value is unknown before the shell
 * runs (a `$VAR`, `$(…)`, an unquoted glob character). See {@link starMatch}.
 */
export const WILD = "\u0000";

/** A compiled star pattern: literal runs separated by `*` (index `-1`). */
type StarToken = string | null;

function compileStar(pattern: string): StarToken[] {
  const out: StarToken[] = [];
  let lit = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length && pattern[i + 1] === "*") {
      lit += "*";
      i++;
    } else if (c === "*") {
      if (lit) out.push(...lit);
      lit = "";
      if (out[out.length - 1] !== null) out.push(null);
    } else lit += c;
  }
  if (lit) out.push(...lit);
  return out;
}

/**
 * Matches `text` against a compiled star pattern.
 *
 * `mode = "strict"`: a {@link WILD} character in the text can only be covered
 * by a `*` of the pattern (used for allow rules: an unknown value is allowed
 * only where the rule allows anything).
 * `mode = "possible"`: a WILD character may stand for any run of text
 * (including none), so the result is "could this match for some value" (used
 * for deny and ask rules: fail closed).
 *
 * Dynamic programming over (pattern position, text position): O(|p|·|t|).
 */
function starMatchCompiled(p: StarToken[], t: string, mode: "strict" | "possible"): boolean {
  const m = p.length;
  const n = t.length;
  // reach[i] for the current j: can pattern prefix i match text prefix j?
  let cur = new Uint8Array(m + 1);
  cur[0] = 1;
  // epsilon closure along the pattern (stars and, in possible mode, wild eating pattern chars)
  const close = (row: Uint8Array, j: number) => {
    for (let i = 0; i < m; i++) {
      if (!row[i]) continue;
      if (p[i] === null) row[i + 1] = 1;
      else if (mode === "possible" && j > 0 && t[j - 1] === WILD && row[i]) {
        // the previous wild char may also stand for this pattern char
        row[i + 1] = 1;
      }
    }
  };
  close(cur, 0);
  for (let j = 1; j <= n; j++) {
    const c = t[j - 1];
    const next = new Uint8Array(m + 1);
    for (let i = 0; i <= m; i++) {
      if (!cur[i]) continue;
      if (i < m && p[i] === null) next[i] = 1; // star eats c
      if (i < m && p[i] !== null && p[i] === c && c !== WILD) next[i + 1] = 1;
      if (c === WILD && mode === "possible") {
        next[i] = 1; // wild expands to nothing more
        if (i < m) next[i + 1] = 1; // wild stands for pattern char (or star)
      }
    }
    close(next, j);
    cur = next;
  }
  return cur[m] === 1;
}

const starCache = new Map<string, StarToken[]>();
function compiled(pattern: string): StarToken[] {
  let c = starCache.get(pattern);
  if (!c) {
    c = compileStar(pattern);
    if (starCache.size > 2000) starCache.clear();
    starCache.set(pattern, c);
  }
  return c;
}

/** Star-glob match of `text` (may contain {@link WILD}) against `pattern` (`*` = any run, `\*` = a star). */
export function starMatch(
  pattern: string,
  text: string,
  mode: "strict" | "possible" = "strict",
): boolean {
  return starMatchCompiled(compiled(pattern), text, mode);
}

/**
 * How an Execute rule matches a simple command given as its words joined by
 * single spaces (after env-prefix assignments are stripped). Returns `"yes"`
 * for a certain match, `"maybe"` when only unknown (WILD) text could make it
 * match, `"no"` otherwise. `possible` enables the "maybe" answer (deny/ask).
 *
 * Pattern forms: `git status` (exact), `npm run test:*` (Claude Code prefix
 * form: the words `npm run test` followed by anything or nothing), `git *`
 * (a trailing ` *` also matches the bare `git`), `*` anywhere = any text.
 */
export function commandMatch(
  pattern: string | undefined,
  command: string,
  possible: boolean,
): "yes" | "maybe" | "no" {
  if (pattern === undefined) return "yes";
  const alts = commandAlternatives(pattern);
  for (const a of alts) if (starMatch(a, command, "strict")) return "yes";
  if (possible) { for (const a of alts) if (starMatch(a, command, "possible")) return "maybe"; }
  return "no";
}

const altCache = new Map<string, string[]>();
function commandAlternatives(pattern: string): string[] {
  let alts = altCache.get(pattern);
  if (alts) return alts;
  const p = pattern.replace(/\s+/g, " ");
  if (p.endsWith(":*") && !p.endsWith("\\:*")) {
    const base = p.slice(0, -2).trimEnd();
    alts = [base, `${base} *`];
  } else if (p.endsWith(" *") && p.length > 2) alts = [p, p.slice(0, -2)];
  else alts = [p];
  if (altCache.size > 2000) altCache.clear();
  altCache.set(pattern, alts);
  return alts;
}

/**
 * The program a deny rule `prog:*` / `prog *` / bare `Execute` forbids entirely
 * (mapped to `--deny-run=prog`); undefined when the rule depends on arguments.
 */
export function wholeProgram(pattern: string): string | undefined {
  const m = /^([A-Za-z0-9_.+\/-]+)(?::\*| \*)$/.exec(pattern.trim());
  return m ? m[1] : undefined;
}

// ---------------------------------------------------------------------------
// Paths

/** Expands `~` / `~/x` to `home`, resolves relative paths against `base`, normalises. */
export function resolvePath(p: string, base: string, home: string): string {
  let q = p;
  if (q === "~") q = home;
  else if (q.startsWith("~/")) q = join(home, q.slice(2));
  if (!isAbsolute(q)) q = resolve(base, q);
  return normalize(q).replace(/(.)\/+$/, "$1");
}

// ---------------------------------------------------------------------------
// The glob engine (npm picomatch), loaded on demand

type Picomatch = ((glob: string, opts?: { dot?: boolean }) => (path: string) => boolean) & {
  scan(glob: string): { isGlob: boolean; base: string; glob: string };
};

/**
 * Every character picomatch 4 `scan()` can read as glob syntax: `*`, `?`,
 * `[`/`]`, braces, parentheses, the negation `!`, the extglob leaders `+`/`@`
 * (and `*?!`) before `(`, and the escape `\\` — plus `|` (alternation inside
 * parentheses), to be conservative. A pattern without any of them is literal
 * for picomatch (`scan().isGlob === false`) whatever its context.
 */
export const GLOB_SYNTAX = /[*?[\]{}()!+@\\|]/;

let engine: Picomatch | undefined;
let engineLoading: Promise<void> | undefined;

/** True once npm picomatch has loaded (globs compile synchronously from then on). */
export function globEngineLoaded(): boolean {
  return engine !== undefined;
}

/**
 * Loads npm picomatch (once per process; later calls return the same promise).
 * Never rejects: a failed load leaves the engine unloaded, so glob compiles keep
 * failing closed ({@link GlobEngineNotLoaded}), and the next call retries.
 */
export function loadGlobEngine(): Promise<void> {
  if (engine) return Promise.resolve();
  engineLoading ??= import("picomatch").then(
    (mod) => {
      // deno-lint-ignore no-explicit-any
      engine = ((mod as any).default ?? mod) as Picomatch;
    },
    () => {
      engineLoading = undefined;
    },
  );
  return engineLoading;
}

/** Thrown by {@link compilePath} for a glob when picomatch has not loaded yet. */
export class GlobEngineNotLoaded extends Error {
  constructor(readonly pattern: string) {
    super(`the glob engine has not loaded yet; cannot compile ${pattern}`);
    this.name = "GlobEngineNotLoaded";
  }
}

/**
 * The absolute form of a Read/Write pattern: `~` = home, relative = against
 * the workspace (a leading `./` dropped), repeated slashes collapsed.
 */
export function absolutePattern(pattern: string, workspace: string, home: string): string {
  let abs: string;
  if (pattern === "~" || pattern.startsWith("~/")) abs = home + pattern.slice(1);
  else if (pattern.startsWith("/")) abs = pattern;
  else abs = `${workspace.replace(/\/+$/, "")}/${pattern.replace(/^\.\//, "")}`;
  return abs.replace(/\/{2,}/g, "/");
}

/** True when compiling `pattern` (see {@link compilePath}) needs the glob engine. */
export function needsGlobEngine(pattern: string, workspace: string, home: string): boolean {
  return GLOB_SYNTAX.test(absolutePattern(pattern, workspace, home));
}

/**
 * Starts loading the glob engine when any Read/Write rule in `rules` (not an
 * `exact` session rule) has a pattern that needs it; returns the promise to
 * await, or undefined when nothing needs it (or it has loaded).
 */
export function primeGlobEngine(
  rules: Iterable<Rule>,
  workspace: string,
  home: string,
): Promise<void> | undefined {
  if (engine) return undefined;
  for (const r of rules) {
    if (r.kind !== "read" && r.kind !== "write") continue;
    if (r.pattern === undefined || r.exact) continue;
    if (needsGlobEngine(r.pattern, workspace, home)) return loadGlobEngine();
  }
  return undefined;
}

/** A compiled path rule: absolute pattern plus a matcher. */
export interface PathMatcher {
  /** Absolute pattern (after `~` and workspace resolution). */
  absolute: string;
  /** True when the pattern has no glob characters: it matches the path and everything below it. */
  literal: boolean;
  /** The literal directory the glob starts at (picomatch `scan().base`), absolute. */
  base: string;
  /** The literal path a Deno `--deny-*` flag can carry, if any (`/x` for `/x` and `/x/**`). */
  flagPath?: string;
  test(path: string): boolean;
}

/**
 * Compiles a Read/Write pattern: `~` = home, relative = against the
 * workspace, absolute as is; globs via picomatch with `dot: true` (so `**`
 * reaches dot-files like `.ssh`). A pattern without glob characters matches
 * the path and everything beneath it; `dir/**` also matches `dir` itself.
 *
 * A pattern with no {@link GLOB_SYNTAX} character is compiled without
 * picomatch (the same result as its literal branch); any other needs the
 * engine loaded ({@link loadGlobEngine}).
 * @throws GlobEngineNotLoaded when the pattern needs picomatch and it has not
 *   loaded: callers refuse (fail closed) rather than guess.
 */
export function compilePath(pattern: string, workspace: string, home: string): PathMatcher {
  const abs = absolutePattern(pattern, workspace, home);
  if (!GLOB_SYNTAX.test(abs)) return literalMatcher(abs);
  if (!engine) throw new GlobEngineNotLoaded(abs);
  const scan = engine.scan(abs);
  if (!scan.isGlob) return literalMatcher(abs);
  const base = normalize(scan.base || "/");
  const re = engine(abs, { dot: true });
  let flagPath: string | undefined;
  if (scan.glob === "**" && !base.includes(",")) flagPath = base;
  const isBaseToo = scan.glob === "**";
  return {
    absolute: abs,
    literal: false,
    base,
    flagPath,
    test: (p) => re(p) || (isBaseToo && p === base),
  };
}

/** picomatch's literal case: the path itself and everything below it. */
function literalMatcher(abs: string): PathMatcher {
  const lit = normalize(abs).replace(/(.)\/+$/, "$1");
  const prefix = lit === "/" ? "/" : lit + "/";
  return {
    absolute: lit,
    literal: true,
    base: lit,
    flagPath: lit.includes(",") ? undefined : lit,
    test: (p) => p === lit || p.startsWith(prefix),
  };
}

/** True when `a` and `b` are the same path or one contains the other. */
export function pathsOverlap(a: string, b: string): boolean {
  const within = (x: string, y: string) =>
    x === y || y === "/" || x.startsWith(y.endsWith("/") ? y : y + "/");
  return within(a, b) || within(b, a);
}

/** True when `p` is `dir` or inside it. */
export function isInside(p: string, dir: string): boolean {
  return p === dir || dir === "/" || p.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

// ---------------------------------------------------------------------------
// Hosts

/** Splits `host[:port]` (IPv6 in brackets) into lower-case host and port. */
export function splitHost(hostPort: string): { host: string; port?: string } {
  let h = hostPort.trim().toLowerCase();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//.exec(h);
  if (scheme) {
    h = h.slice(scheme[0].length).split(/[/?#]/)[0];
    h = h.replace(/^[^@]*@/, "");
  }
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    const port = h.slice(end + 1).startsWith(":") ? h.slice(end + 2) : undefined;
    return { host: h.slice(0, end + 1), port: port || undefined };
  }
  const i = h.lastIndexOf(":");
  if (i > 0 && h.indexOf(":") === i) {
    return { host: h.slice(0, i).replace(/\.$/, ""), port: h.slice(i + 1) || undefined };
  }
  return { host: h.replace(/\.$/, "") };
}

/** Matches a `Net` pattern (`host`, `*.host`, `host:port`, `*`) against `host[:port]`. */
export function hostMatch(pattern: string | undefined, hostPort: string): boolean {
  if (pattern === undefined) return true;
  const p = splitHost(pattern);
  const a = splitHost(hostPort);
  if (p.port !== undefined && p.port !== "*" && p.port !== a.port) return false;
  if (p.host === "*") return true;
  return starMatch(p.host, a.host);
}
