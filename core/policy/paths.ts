/**
 * Reads and writes of a path (view (a), docs/permissions.md): the decision for
 * one absolute path ({@link pathPart}) — Read/Write rules (deny > ask >
 * allow), then the defaults: inside the workspace is allowed, outside asks;
 * protected paths (any `.git/`, `.coyote/` or `.mcp.json` at any depth, any
 * case; Coyote's config and data dirs) are only writable through an explicit
 * allow rule; a process's environment or memory (`/proc/<pid>/environ`) and
 * the credential stores the OS sandbox hides (./home.ts) ask before a read.
 *
 * A path is judged as written and by its real path (symlinks resolved, a
 * dangling one by its target: {@link realPath}); the worse decision wins. A
 * `..` after a symbolic link is resolved the way the kernel does
 * ({@link physical}, {@link resolveAll}). Paths are absolute; file-system
 * errors never throw here (an unknown real path is the path itself).
 * @module
 */
import { maskCredentialLines, readSmallText } from "./sandbox/secret_lines.ts";
import { basename, dirname, normalize } from "../util/path.ts";
import { isInside, pathsOverlap, resolvePath, type Rule } from "./rules.ts";
import { type Level, matcher, type PolicyCore, rulesOf } from "./context.ts";
import { HIDDEN_HOME_PATHS } from "./home.ts";
import { isGitDirEntries, repoHooksFor, runsLaterPath } from "./sandbox/protected.ts";
import { startupSourcesFor } from "./sandbox/startup_sources.ts";
import { isRepoGitDir } from "./sandbox/git_dir_tree.ts";
import type { GuardPart } from "./types.ts";
import { by, SEVERITY } from "./verdict.ts";
import { planWritePart } from "./mode.ts";

function pathRuleMatches(core: PolicyCore, r: Rule, p: string): boolean {
  return r.pattern === undefined || matcher(core, r).test(p);
}

/**
 * Real path of `p`: symlinks resolved on the longest existing prefix, and a
 * dangling symlink on the way judged by its target (a repository may ship
 * `notes.txt -> /outside/file`; writing `notes.txt` creates the outside
 * file). `p` when unknown.
 */
export function realPath(core: PolicyCore, p: string, cache = false): string {
  const hit = cache ? core.real.get(p) : undefined;
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
  if (cache) core.real.set(p, out);
  return out;
}

/**
 * `target` resolved against `cwd` the way the kernel does: a `..` after a
 * symbolic link leaves the link's target, not the link's folder
 * (`link/../x` with `link -> /outside/d` is `/outside/x`).
 */
export function physical(core: PolicyCore, target: string, cwd: string): string {
  let raw = target;
  if (raw === "~" || raw.startsWith("~/")) raw = core.home + raw.slice(1);
  if (!raw.startsWith("/")) raw = `${cwd}/${raw}`;
  let out = "";
  for (const seg of raw.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out = dirname(realPath(core, out || "/"));
    else out = `${out === "/" ? "" : out}/${seg}`;
  }
  return out || "/";
}

/** `target` against `cwd`: the lexical path, and the physical one when they may differ. */
export function resolveAll(core: PolicyCore, target: string, cwd: string): string[] {
  const abs = resolvePath(target, cwd, core.home);
  if (!target.split("/").includes("..")) return [abs];
  const phys = physical(core, target, cwd);
  return phys === abs ? [abs] : [abs, phys];
}

/**
 * Why a write of `p` asks as code other tools run later (sandbox/protected.ts `RUNS_LATER` at any
 * depth; the `core.hooksPath` folder and included config files of the workspace's repository, of
 * a nested repository or submodule above `p` or met by the sandbox's last scan: `repoHooksFor`;
 * a folder the write would make a git dir), if it does.
 */
function runsLaterWrite(core: PolicyCore, p: string): string | undefined {
  for (const [h, why] of repoHooksFor(core.workspace, p)) {
    if (isInside(p, h)) return `inside ${h}: ${why}`;
  }
  const loaded = startupSourcesFor(core.workspace).get(p);
  if (loaded) return loaded;
  const g = gitDirWrite(core.workspace, p);
  if (g) {
    return `inside ${g}, which is (or this write makes) a git dir (HEAD, objects/, refs/: git runs its hooks and core.fsmonitor)`;
  }
  const m = runsLaterPath(p);
  return m ? `protected as ${m}` : undefined;
}

/**
 * The folder above `p` inside `ws` that is a git dir by git's test (`HEAD`, `objects/`,
 * `refs/`) once `p` is written, if any: an embedded bare repository written file by file.
 */
function gitDirWrite(ws: string, p: string): string | undefined {
  if (!p.startsWith(ws + "/")) return undefined;
  const has = (x: string, dir: boolean) => {
    try {
      const st = Deno.statSync(x);
      return dir ? st.isDirectory : st.isFile;
    } catch {
      return false;
    }
  };
  let d = p.slice(0, p.lastIndexOf("/"));
  while (d.length > ws.length) {
    const sub = (n: string) => p === `${d}/${n}` || p.startsWith(`${d}/${n}/`);
    const head = p === `${d}/HEAD` || has(`${d}/HEAD`, false);
    if (
      head && (sub("objects") || has(`${d}/objects`, true)) &&
      (sub("refs") || has(`${d}/refs`, true))
    ) {
      return d;
    }
    d = d.slice(0, d.lastIndexOf("/"));
  }
  return undefined;
}

/**
 * Why `p` is protected from writes, if it is: any `.git/` (a hook or
 * `core.fsmonitor` runs code), any `.coyote/` or `.mcp.json` at any depth
 * (Coyote loads plugins, skills and MCP servers from the folder it starts
 * in, which may be a sub-folder), Coyote's config and data dirs (not a
 * workspace inside the data dir: a sub-agent's worktree). Names
 * compare case-insensitively: on macOS and Windows `.COYOTE/` is `.coyote/`.
 */
function protectedPath(core: PolicyCore, p: string): string | undefined {
  if (/(^|\/)\.git(\/|$)/i.test(p)) return "a .git/ directory";
  if (/(^|\/)\.coyote(\/|$)/i.test(p)) {
    return "a .coyote/ folder (plugins, skills, MCP servers Coyote loads)";
  }
  if (/(^|\/)\.mcp\.json(\/|$)/i.test(p)) return "a .mcp.json file (it starts MCP servers)";
  const lower = p.toLowerCase();
  for (
    const [dir, what] of [[core.configDir, "Coyote's config dir"], [
      core.dataDir,
      "Coyote's data dir",
    ]] as const
  ) {
    if (!dir) continue;
    // A workspace inside the data dir (a sub-agent's git worktree, core/session/child_dir.ts)
    // is writable as any workspace; the rest of the data dir stays protected.
    if (dir === core.dataDir && insideWorkspace(core, p) && inDataDir(core, core.workspace)) {
      continue;
    }
    for (const d of [dir, realPath(core, dir, true)]) {
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
function secretRead(p: string): string | undefined {
  if (/^\/proc\/[^/]+\/(task\/[^/]+\/)?(environ|mem|auxv)$/.test(p)) {
    return "a process's environment or memory (it holds Coyote's secrets)";
  }
  return undefined;
}

/**
 * Why reading `p` would reveal credentials the OS sandbox hides from commands by default
 * (core/policy/home.ts `HIDDEN_HOME_PATHS`: `~/.ssh`, `~/.aws`, `~/.netrc`, …, and
 * Coyote's config and data dirs) — they matter when the workspace contains them (Coyote
 * started in `~`), where reads are otherwise allowed. Not when the workspace lies inside one
 * (the sandbox does not hide it then either).
 */
function credentialRead(core: PolicyCore, p: string): string | undefined {
  const roots: [string | undefined, string][] = [
    ...HIDDEN_HOME_PATHS.map((
      h,
    ): [string, string] => [`${core.home}/${h}`, "a credential store"]),
    [core.configDir, "Coyote's config dir (it holds the provider key)"],
    [core.dataDir, "Coyote's data dir"],
  ];
  for (const [root, what] of roots) {
    if (!root) continue;
    if (isInside(core.workspace, root)) continue;
    if (isInside(p, root)) return `${what} (${root})`;
  }
  return undefined;
}

/**
 * Why reading `p` would show a credential line the OS sandbox masks from commands
 * (./sandbox/secret_lines.ts; ./sandbox/profile.ts masks the same set): a file in `/etc`; a git
 * dir's `config` / `config.worktree` — in a `.git` folder at any depth, in a submodule's or
 * linked worktree's git dir below one (`.git/modules/<name>/`, `.git/worktrees/<name>/`), or in a
 * folder that is a git dir by git's test (an embedded bare repository); Mercurial's `.hg/hgrc`
 * and Jujutsu's `.jj/repo/config.toml` — whose text holds a credential by the value rule. Reads
 * the file only for those paths.
 */
function maskedRead(p: string): string | undefined {
  const base = p.slice(p.lastIndexOf("/") + 1);
  const dir = p.slice(0, p.lastIndexOf("/")) || "/";
  let what: string | undefined;
  if (p.startsWith("/etc/")) what = "a system config file";
  else if (/\/\.hg\/hgrc$/i.test(p)) what = "a Mercurial config";
  else if (/\/\.jj\/repo\/config\.toml$/i.test(p)) what = "a Jujutsu config";
  else if (base === "config" || base === "config.worktree") {
    if (isRepoGitDir(dir)) what = "a git config";
    else {
      try {
        if (isGitDirEntries([...Deno.readDirSync(dir)], dir)) what = "a git config";
      } catch { /* not a folder */ }
    }
  }
  if (!what) return undefined;
  const text = readSmallText(p);
  return text !== undefined && maskCredentialLines(text) ? what : undefined;
}

/** Whether `p` lies strictly inside Coyote's data dir (as given or as its real path). */
function inDataDir(core: PolicyCore, p: string): boolean {
  const d = core.dataDir;
  return !!d && [d, realPath(core, d, true)].some((x) => p !== x && isInside(p, x));
}

function insideWorkspace(core: PolicyCore, p: string): boolean {
  return isInside(p, core.workspace) || isInside(p, realPath(core, core.workspace, true));
}

/**
 * Decides a read or write of absolute path `abs` (and of its real path, when
 * a symlink leads elsewhere; the worse decision wins).
 * `level`: `full` = rules and defaults; `explicit` = rules and protected
 * paths only (an undecided path is allowed); `skip` = deny rules only.
 */
export function pathPart(
  core: PolicyCore,
  kind: "read" | "write",
  abs: string,
  level: Level,
): GuardPart {
  const lvl: Level = core.dangerouslySkipPermissions ? "skip" : level;
  const first = pathPartOne(core, kind, abs, lvl);
  first.kind = kind;
  if (first.decision === "deny") return first;
  // Plan mode (./mode.ts) writes nothing, whatever the rules or --dangerously-skip-permissions say.
  if (kind === "write" && core.mode === "plan") return planWritePart(abs, "writing");
  const real = realPath(core, abs);
  if (real === abs) return first;
  const second = pathPartOne(core, kind, real, lvl);
  if (SEVERITY[second.decision] > SEVERITY[first.decision]) {
    return {
      ...second,
      reason: `${second.reason} (${abs} resolves to ${real})`,
      subject: abs,
      kind,
    };
  }
  return first;
}

function pathPartOne(core: PolicyCore, kind: "read" | "write", p: string, level: Level): GuardPart {
  let deny: Rule | undefined, ask: Rule | undefined, allow: Rule | undefined;
  for (const r of core.rules) {
    if (r.kind !== kind) continue;
    if (r.decision === "deny" ? deny : r.decision === "ask" ? ask : allow) continue;
    if (!pathRuleMatches(core, r, p)) continue;
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
  const secret = secretRead(p);
  if (secret && !(allow && matcher(core, allow).base.startsWith("/proc"))) {
    return {
      decision: "ask",
      reason: `${p} is ${secret}; the guard asks unless a rule names /proc (Read(${p}))`,
      rule: "default",
      subject: p,
    };
  }
  const cred = kind === "read" && !allow ? credentialRead(core, p) : undefined;
  if (cred) {
    return {
      decision: "ask",
      reason:
        `${p} is inside ${cred}, which the guard asks about (and the OS sandbox hides) unless a Read allow rule covers it`,
      rule: "default",
      subject: p,
    };
  }
  const masked = kind === "read" && !allow ? maskedRead(p) : undefined;
  if (masked) {
    return {
      decision: "ask",
      reason:
        `${p} is ${masked} holding a credential line, which the guard asks about (and the OS sandbox masks) unless a Read allow rule covers it`,
      rule: "default",
      subject: p,
    };
  }
  const prot = kind === "write" ? protectedPath(core, p) : undefined;
  if (prot && !allow) {
    return {
      decision: "deny",
      reason:
        `${p} is inside ${prot}, which is never written without an explicit allow rule; add --allow 'Write(${p})' to permit it`,
      rule: "default",
      subject: p,
    };
  }
  const later = kind === "write" && !allow ? runsLaterWrite(core, p) : undefined;
  if (later) {
    return {
      decision: "ask",
      reason:
        `${p} is ${later}, which another tool runs later without asking (outside the OS sandbox); the guard asks (allow with --allow 'Write(${p})')`,
      rule: "default",
      subject: p,
    };
  }
  const startup = kind === "write" && !allow ? startupFileYield(core, p, level) : undefined;
  if (startup) return startup;
  const store = kind === "read" ? objectStoreRule(core, p) : undefined;
  if (store) {
    return {
      decision: "ask",
      reason: `${p} is git's object store, which holds stored copies of the files ${
        by(store)
      } covers (the OS sandbox does not hide it), so reading it asks (auto-allow yields)`,
      rule: store.text,
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
  if (insideWorkspace(core, p)) {
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

/**
 * The first `Read` deny or ask rule that may cover a file of the repository whose object store
 * holds `p` (`<top>/.git/objects` or below, a submodule's `.git/modules/…/objects`),
 * or undefined (eighth attacker pass). git's commands meet the rules on what they print
 * (./git.ts `gitContentParts`); any other program given such a path reads the compressed copies
 * itself: `printf '\x1f\x8b\x08\0\0\0\0\0' | cat - .git/objects/5c/bb82… | gzip -dc` printed
 * a file that `Read(secret.txt)` hides from the sandbox.
 */
function objectStoreRule(core: PolicyCore, p: string): Rule | undefined {
  const m = /^(.*?)\/\.git\/(?:.*\/)?objects(?:\/|$)/.exec(p);
  if (!m) return undefined;
  const top = m[1] || "/";
  return core.rules.find((r) =>
    r.kind === "read" && r.decision !== "allow" &&
    (r.pattern === undefined || pathsOverlap(matcher(core, r).base, top))
  );
}

/**
 * Files and folders of the home that shells and programs load code from when they start, relative
 * to the home: shell start-up files (bash, zsh, ksh, fish), readline's `.inputrc`, Python's user
 * site (`.local/lib/python*`), PATH folders (`bin/`, `.local/bin/`), configuration that names
 * programs (`.gitconfig`, `.config/git/`, `.npmrc`, `.ssh/config`).
 */
export const HOME_STARTUP =
  /^(\.(bashrc|bash_profile|bash_login|bash_logout|profile|zshenv|zshrc|zprofile|zlogin|zlogout|kshrc|mkshrc|inputrc|gitconfig|npmrc)|\.config\/(fish|git|zsh)(\/.*)?|\.local\/lib\/python[^/]*(\/.*)?|\.local\/bin(\/.*)?|bin(\/.*)?|\.ssh\/config)$/;

/**
 * A write of `p` to a start-up place of the home ({@link HOME_STARTUP}) while an `Execute` deny
 * or ask rule exists: asks with that rule (issue 16, tenth attacker pass — code planted there runs
 * for a plain `bash -i` or `git status` the guard allows). Inside the OS sandbox the home is
 * read-only, so this matters where the home is writable: Coyote started in `~` (the home is the
 * workspace) or a `Write` rule opens it.
 */
function startupFileYield(core: PolicyCore, p: string, level: Level): GuardPart | undefined {
  if (!core.home || core.home === "/" || !p.startsWith(`${core.home}/`)) return undefined;
  if (!HOME_STARTUP.test(p.slice(core.home.length + 1))) return undefined;
  const ex = rulesOf(core, "execute");
  const y = ex.find((r) => r.decision === "deny") ??
    (level === "skip" ? undefined : ex.find((r) => r.decision === "ask"));
  if (!y) return undefined;
  return {
    decision: "ask",
    reason:
      `${p} is a file shells or programs load code from when they start (a start-up file, Python's user site, a PATH folder, a config naming programs); ${y.text} restricts what commands run, so the guard asks (auto-allow yields)`,
    rule: y.text,
    subject: p,
  };
}
