/**
 * The after-command cleanup of the OS sandbox (docs/permissions.md "The OS sandbox"): protected
 * paths a command created are removed (git dirs not named `.git` are moved to the quarantine), and
 * the tool result names each with why; new dot-entries are quarantined and changed ones flagged
 * (the dot-entry rule, {@link reviewDotEntries}; docs/permissions.md "New dot-entries").
 * @module
 */
import type { Policy } from "../policy.ts";
import { compilePath, GlobEngineNotLoaded } from "../rules.ts";
import {
  DOT_ENTRY_LIMIT,
  findProtected,
  isGitDirEntries,
  PROTECTED_SCAN_LIMIT,
  runsLaterPath,
} from "./protected.ts";
import type { NodeModulesWatch } from "./node_modules_scan.ts";
import { bytecodeCleanup, hostRunCleanup } from "./host_run.ts";
import { copyBudget, movedAway, quarantine, quarantineUnreadable } from "./quarantine.ts";
import { loaderOf } from "./startup_sources.ts";
import { gitProgramLine, gitProgramState } from "./git_programs.ts";

export { quarantine };

const GIT_DIR_WHY =
  "a git dir (HEAD, objects/, refs/): git runs its hooks and core.fsmonitor when started in it";

/** Why a protected path is protected, for the cleanup message (model and user read it). */
function protectedWhy(rel: string, abs: string, reasons: ReadonlyMap<string, string>): string {
  const name = rel.slice(rel.lastIndexOf("/") + 1).toLowerCase();
  const r = reasons.get(abs);
  if (r) return r;
  if (name === ".git") return "git runs its hooks and core.fsmonitor";
  if (isGitDir(abs)) return GIT_DIR_WHY;
  if (name === ".coyote") return "Coyote loads plugins and rules from it";
  if (name === ".mcp.json") return "Coyote starts its MCP servers";
  const m = runsLaterPath(abs);
  return m ? `protected as ${m}: another tool runs it later` : "protected";
}

/** True when `p` is a folder git takes for a git dir (./protected.ts `isGitDirEntries`). */
function isGitDir(p: string): boolean {
  try {
    return isGitDirEntries([...Deno.readDirSync(p)], p);
  } catch {
    return false;
  }
}

/** Entries a git dir may hold (git's repository layout, gitrepository-layout(5)). */
const GIT_DIR_ENTRIES = new Set([
  "HEAD",
  "config",
  "config.worktree",
  "description",
  "hooks",
  "info",
  "objects",
  "refs",
  "packed-refs",
  "logs",
  "index",
  "FETCH_HEAD",
  "ORIG_HEAD",
  "MERGE_HEAD",
  "CHERRY_PICK_HEAD",
  "REVERT_HEAD",
  "BISECT_LOG",
  "COMMIT_EDITMSG",
  "commondir",
  "gitdir",
  "worktrees",
  "modules",
  "branches",
  "remotes",
  "shallow",
  "lfs",
  "rr-cache",
  "sequencer",
  "rebase-merge",
  "rebase-apply",
  "AUTO_MERGE",
  "MERGE_MSG",
  "MERGE_MODE",
  "fsmonitor--daemon",
  "fsmonitor--daemon.ipc",
  "sharedindex",
]);

/** True when every entry of folder `p` is one a git dir holds ({@link GIT_DIR_ENTRIES}). */
function gitDirOnly(p: string): boolean {
  try {
    for (const e of Deno.readDirSync(p)) {
      if (!GIT_DIR_ENTRIES.has(e.name) && !e.name.startsWith("sharedindex.")) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** A path's identity: device and inode (`lstat`), or undefined when it does not exist. */
function identity(p: string): string | undefined {
  try {
    const st = Deno.lstatSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * What the cleanup compares against: each protected path that exists before the command with its
 * identity (device and inode — not size and mtime: a file is read-only in the sandbox, and an edit
 * the user makes on the host meanwhile must not count as the command's), and the folders the scan
 * did not examine (it stopped at {@link PROTECTED_SCAN_LIMIT}).
 */
export interface ProtectedBefore {
  ids: ReadonlyMap<string, string>;
  unchecked: readonly string[];
  /**
   * The dot-entries the scan fingerprinted before the command (./protected.ts `ScanExtras.dots`);
   * without it the dot-entry rule is off.
   */
  dots?: ReadonlyMap<string, string>;
  /** The folders the scan before the command could not read (./protected.ts `ScanExtras.unreadable`). */
  unreadable?: readonly string[];
  /** The folders whose `CACHEDIR.TAG` the scan before the command honoured. */
  cacheTags?: ReadonlySet<string>;
  /** The entries with names that are not valid UTF-8 before the command (not folders). */
  undecodable?: readonly string[];
  /**
   * The host-run entries before the command (./protected.ts `ScanExtras.hostRun`); reviewed
   * with the dot-entry rule (./host_run.ts).
   */
  hostRun?: ReadonlyMap<string, string>;
  /** The workspace's top-level entries before the command, name → identity (device and inode). */
  top?: ReadonlyMap<string, string>;
  /** The repository's program-running git settings before the command (./git_programs.ts). */
  git?: ReadonlyMap<string, string>;
}

/** {@link ProtectedBefore} of the paths a profile's scan found (core/policy/sandbox/profile.ts). */
export function protectedBefore(
  paths: readonly string[],
  unchecked: readonly string[] = [],
  dots?: ReadonlyMap<string, string>,
  more: {
    unreadable?: readonly string[];
    undecodable?: readonly string[];
    cacheTags?: ReadonlySet<string>;
    hostRun?: ReadonlyMap<string, string>;
    ws?: string;
  } = {},
) {
  const ids = new Map<string, string>();
  for (const p of paths) {
    const id = identity(p);
    if (id) ids.set(p, id);
  }
  const { ws, ...rest } = more;
  let top: Map<string, string> | undefined;
  if (ws) {
    top = new Map();
    try {
      for (const e of Deno.readDirSync(ws)) {
        const id = identity(`${ws}/${e.name}`);
        if (id) top.set(e.name, id);
      }
    } catch { /* no workspace listing: every top-level folder past the caps counts as new */ }
  }
  const git = ws ? gitProgramState(ws) : undefined;
  return { ids, unchecked, dots, ...rest, top, git } satisfies ProtectedBefore;
}

/**
 * Removes every protected path (`.git`, `.coyote`, `.mcp.json`, the code other tools run later
 * of ./protected.ts, any case, any depth — `node_modules/` included, ./node_modules_scan.ts) that
 * a sandboxed command created in the workspace — paths that were not in `before` (the scan the
 * command's profile was derived from), or that are there with another identity (device and
 * inode: the original was moved or removed and something new put in its place — attack trial 2
 * item 1; ./bwrap.ts makes the parents mount points so this cannot happen under bwrap, the check
 * holds wherever it could) — and that no `Write` allow rule names. Never removes what existed
 * before: a path whose identity is one of `before`'s (an original that moved) is left and
 * named with where it was. The folders a scan did not examine (it stopped at its limit) are named
 * too. They cannot be
 * mounted read-only before they exist (the mount point would have to be created on the host),
 * and git or Coyote would load them outside the sandbox later: hooks and `core.fsmonitor` in a
 * `.git`, plugins and permission rules in `.coyote/`, servers in `.mcp.json` — also in a
 * sub-folder, where Coyote or git may be started next. Names each removed path with why;
 * undefined when nothing was created.
 */
export function removeCreated(
  policy: Policy,
  ws: string,
  before: ProtectedBefore,
  watch?: NodeModulesWatch,
): string | undefined {
  // A glob that cannot compile yet (npm picomatch still loading) allows nothing: fail closed.
  const compiles = (r: { pattern?: string }, p: string) => {
    try {
      return compilePath(r.pattern!, policy.workspace, policy.home).test(p);
    } catch (e) {
      if (e instanceof GlobEngineNotLoaded) return false;
      throw e;
    }
  };
  const allowed = (p: string) =>
    policy.rules().some((r) =>
      r.kind === "write" && r.decision === "allow" && r.pattern !== undefined && compiles(r, p)
    );
  const removed: string[] = [];
  const kept: string[] = [];
  const roots: string[] = [];
  const unchecked: string[] = [];
  const reasons = new Map<string, string>();
  const dots = before.dots ? new Map<string, string>() : undefined;
  const unreadable: string[] = [];
  const undecodable: string[] = [];
  const dotsSkipped: string[] = [];
  const hostRun = before.dots && before.hostRun ? new Map<string, string>() : undefined;
  const extras = {
    reasons,
    dots,
    dotsTruncated: false,
    dotsSkipped,
    unreadable,
    undecodable,
    hostRun,
    hostRunTruncated: false,
    honourTags: before.cacheTags ?? new Set<string>(),
  };
  // Coyote's own config and data dirs are hidden from commands (a read-only tmpfs): what is new
  // there when they lie in the workspace (`coyote` started in `~`) Coyote wrote, not the command.
  // Not for a workspace inside one (a child's worktree in the data dir: its commands write there).
  const under = (p: string, d: string) => p === d || p.startsWith(`${d}/`);
  const ours = (p: string) =>
    [policy.dataDir, policy.configDir].some((d) => !!d && under(p, d) && !under(ws, d));
  const found = findProtected(ws, undefined, roots, unchecked, extras).filter((p) => !ours(p));
  for (const m of [reasons, dots, hostRun]) {
    for (const k of m?.keys() ?? []) if (ours(k)) m!.delete(k);
  }
  for (const l of [unreadable, undecodable, unchecked, dotsSkipped]) {
    for (let i = l.length - 1; i >= 0; i--) if (ours(l[i])) l.splice(i, 1);
  }
  const inNodeModules = (watch?.created(roots) ?? []).filter((p) => !ours(p));
  for (const [h, why] of watch?.createdHooks(ws) ?? []) {
    reasons.set(h, why);
    inNodeModules.push(h);
  }
  const qid = `${new Date().toISOString().replace(/[:.]/g, "-")}-${
    crypto.randomUUID().slice(0, 8)
  }`;
  // One copy budget for everything this command's cleanup takes out (./quarantine.ts).
  const budget = copyBudget();
  const quarantined: [string, string][] = [];
  const originals = new Map([...before.ids].map(([p, id]) => [id, p]));
  const moved: string[] = [];
  const replaced = new Set<string>();
  for (const p of [...found, ...inNodeModules]) {
    const id = identity(p);
    const was = before.ids.get(p);
    if (was !== undefined && was === id) continue;
    const from = id && originals.get(id);
    if (from) {
      // Existed before the command, elsewhere: the user's own, never removed.
      moved.push(`${from} → ${p}`);
      continue;
    }
    if (was !== undefined) replaced.add(p);
    // Loaded by a start-up file the command made (removed itself): nothing loads it any more.
    const loader = loaderOf(ws, p);
    if (allowed(p) || (loader && !before.ids.has(loader))) {
      watch?.keep(p);
      continue;
    }
    // A git dir that is not named `.git` (a bare repository made at run time) may be an existing
    // folder turned into one: moved to the quarantine (nothing lost), not deleted.
    if (p === `${ws}/HEAD`) {
      // The workspace made a git dir (./protected.ts): its HEAD to the quarantine.
      const to = quarantine(p, ws, policy.dataDir, qid, budget);
      if (to) {
        removed.push(p);
        quarantined.push([p, to]);
      } else kept.push(p);
      continue;
    }
    if (!/(^|\/)\.git$/i.test(p) && isGitDir(p)) {
      if (!reasons.has(p)) reasons.set(p, GIT_DIR_WHY);
      // A folder with entries no git dir has (an existing folder of the user's, turned into a
      // git dir): only its HEAD goes, which is enough for git not to take it for one.
      const whole = gitDirOnly(p);
      if (!whole) reasons.set(p, `${reasons.get(p)}; only its HEAD was moved`);
      const to = quarantine(whole ? p : `${p}/HEAD`, ws, policy.dataDir, qid, budget);
      if (to) {
        watch?.forget(p);
        removed.push(p);
        quarantined.push([p, to]);
      } else kept.push(p);
      continue;
    }
    try {
      Deno.removeSync(p, { recursive: true });
      watch?.forget(p);
      removed.push(p);
    } catch {
      /* could not remove: the guard still protects it */ kept.push(p);
    }
  }
  const rel = (p: string) => p.slice(ws.length + 1) || ".";
  const where = (to: string) => movedAway(to) ? `moved to ${to}` : to;
  const out: string[] = [];
  if (removed.length) {
    const first = rel(removed[0]);
    const rule = /(^|\/)\.mcp\.json$/i.test(first) ? first : `${first}/**`;
    const lines = removed.map((p) =>
      `  ${rel(p)} (${protectedWhy(rel(p), p, reasons)}${
        replaced.has(p) ? "; the original was moved or removed and this put in its place" : ""
      }${
        quarantined.find(([q]) => q === p)
          ? `; ${where(quarantined.find(([q]) => q === p)![1])}`
          : ""
      })`
    );
    out.push(
      `the OS sandbox removed ${removed.length} protected path${
        removed.length > 1 ? "s" : ""
      } the command created (they would run code outside the sandbox later):\n${
        lines.join("\n")
      }\nallow one with --allow 'Write(${rule})'`,
    );
  }
  for (const p of replaced) {
    if (moved.some((m) => m.startsWith(`${p} → `))) continue;
    out.push(
      `the original ${
        rel(p)
      } was moved out of the workspace, renamed to an unprotected name or deleted`,
    );
  }
  if (moved.length) {
    out.push(
      `protected paths that existed before the command moved (left in place, not removed):\n${
        moved.map((m) => `  ${m.split(" → ").map(rel).join(" → ")}`).join("\n")
      }`,
    );
  }
  const capMoved: [string, string][] = [];
  // Past the scan caps: a top-level folder the command made (not there before, or another one in
  // its place) that holds what the scan did not check is quarantined whole (fifth attacker pass).
  if (before.top && (unchecked.length || dotsSkipped.length)) {
    const tops = new Set<string>();
    for (const p of [...unchecked, ...dotsSkipped]) {
      const name = p.slice(ws.length + 1).split("/")[0];
      const id = name && identity(`${ws}/${name}`);
      if (id && before.top.get(name) !== id && isDirPath(`${ws}/${name}`)) tops.add(name);
    }
    for (const name of [...tops].sort()) {
      const p = `${ws}/${name}`;
      if (allowed(p)) continue;
      const to = quarantine(p, ws, policy.dataDir, qid, budget);
      if (to) capMoved.push([p, to]);
    }
    if (capMoved.length) {
      const gone = (d: string) => capMoved.some(([p]) => d === p || d.startsWith(p + "/"));
      for (let i = unchecked.length - 1; i >= 0; i--) {
        if (gone(unchecked[i])) unchecked.splice(i, 1);
      }
      out.push(
        `the OS sandbox's checks stopped at their caps (${PROTECTED_SCAN_LIMIT} folders, ${DOT_ENTRY_LIMIT} dot-entries); ${capMoved.length} new top-level folder${
          capMoved.length > 1 ? "s" : ""
        } the command made could not be checked whole and ${
          capMoved.length > 1 ? "were" : "was"
        } moved to quarantine:\n${capMoved.map(([p, to]) => `  ${rel(p)} → ${to}`).join("\n")}`,
      );
    }
  }
  if (before.dots && dots) {
    // Python bytecode first (a cache: removed, not quarantined; dot-folders' too).
    const pyc = before.hostRun && hostRun
      ? bytecodeCleanup(before.hostRun, hostRun, allowed, rel)
      : { lines: [], removed: [] };
    out.push(...pyc.lines);
    const review = reviewDotEntries(
      before.dots,
      dots,
      [...removed, ...capMoved.map(([p]) => p), ...pyc.removed],
      allowed,
    );
    const moved: [string, string][] = [];
    const failed: string[] = [];
    for (const p of review.created) {
      const to = quarantine(p, ws, policy.dataDir, qid, budget);
      if (to) moved.push([p, to]);
      else failed.push(p);
    }
    if (moved.length) {
      const first = rel(moved[0][0]);
      out.push(
        `the OS sandbox moved ${moved.length} new dot-file${
          moved.length > 1 ? "s/folders" : "/folder"
        } the command created to quarantine (tools load settings, hooks and tasks from dot-entries and may run them later, outside the sandbox):\n${
          moved.map(([p, to]) => `  ${rel(p)} → ${to}`).join("\n")
        }\nwrite it with the file tools instead, or allow it with --allow 'Write(${first}${
          isDirPath(moved[0][1]) ? "/**" : ""
        })'`,
      );
    }
    if (failed.length) {
      out.push(
        `new dot-entries the command created that the OS sandbox could not quarantine, delete or make inert (still in the workspace; the user should delete them before any tool runs there): ${
          failed.slice(0, 20).map(rel).join(", ")
        }${failed.length > 20 ? `, … (+${failed.length - 20} more)` : ""}`,
      );
    }
    const flagged = review.changed;
    if (flagged.length) {
      out.push(
        `dot-files the command changed (kept; the user should review them — another tool may run them later, outside the sandbox): ${
          flagged.slice(0, 20).map(rel).join(", ")
        }${flagged.length > 20 ? `, … (+${flagged.length - 20} more)` : ""}`,
      );
    }
    if (review.ignores.length) {
      out.push(
        `ignore lists the command created, changed or removed (kept; the user should review them — they decide what git status shows): ${
          review.ignores.slice(0, 20).map(rel).join(", ")
        }${review.ignores.length > 20 ? `, … (+${review.ignores.length - 20} more)` : ""}`,
      );
    }
    if (extras.dotsTruncated) {
      out.push(
        `the OS sandbox reviewed the first ${DOT_ENTRY_LIMIT} dot-entries only; new or changed ones past that were not checked`,
      );
    }
    if (before.hostRun && hostRun) {
      // Inside the folders kept above (inert, CACHEDIR.TAG, non-dot): what loaders run later.
      const gone = [
        ...removed,
        ...capMoved.map(([p]) => p),
        ...moved.map(([p]) => p),
        ...pyc.removed,
      ];
      out.push(
        ...hostRunCleanup(
          before.hostRun,
          hostRun,
          gone,
          (p) => allowed(p) || dots.has(p),
          (p) => quarantine(p, ws, policy.dataDir, qid, budget),
          rel,
          extras.hostRunTruncated,
        ).lines,
      );
    }
  }
  const git = before.git && gitProgramLine(before.git, gitProgramState(ws));
  if (git) out.push(git);
  const newUndecodable = undecodable.filter((p) => !(before.undecodable ?? []).includes(p));
  if (newUndecodable.length) {
    // Sixth attacker pass: a file no check can name (a `.pth` or workflow loaded by a glob).
    const moved: [string, string][] = [];
    const left: string[] = [];
    for (const p of newUndecodable.slice(0, 50)) {
      const to = quarantineUnreadable(p, ws, policy.dataDir, qid, budget);
      if (to) moved.push([p, to]);
      else left.push(p);
    }
    left.push(...newUndecodable.slice(50));
    if (moved.length) {
      out.push(
        `the OS sandbox moved ${moved.length} new file${
          moved.length > 1 ? "s" : ""
        } whose name is not valid UTF-8 to quarantine (no check can name it, and a tool that loads files by pattern would still load it):\n${
          moved.map(([p, to]) => `  ${rel(p)} → ${to}`).join("\n")
        }`,
      );
    }
    if (left.length) {
      out.push(
        `new files whose name is not valid UTF-8, not checked (the user should review them): ${
          left.slice(0, 10).map(rel).join(", ")
        }${left.length > 10 ? `, … (+${left.length - 10} more)` : ""}`,
      );
    }
  }
  if (unreadable.length) {
    // Fifth attacker pass: a folder the scan cannot read hides its subtree from every check.
    const was = new Set(before.unreadable ?? []);
    const moved: [string, string][] = [];
    const left: string[] = [];
    for (const p of unreadable) {
      const to = was.has(p) ? undefined : quarantineUnreadable(p, ws, policy.dataDir, qid, budget);
      if (to) moved.push([p, to]);
      else left.push(p);
    }
    if (moved.length) {
      out.push(
        `the OS sandbox moved ${moved.length} new folder${
          moved.length > 1 ? "s" : ""
        } it could not read (a name that is not valid UTF-8, or no permission to list it) to quarantine — nothing in it could be checked:\n${
          moved.map(([p, to]) => `  ${rel(p)} → ${to}`).join("\n")
        }`,
      );
    }
    if (left.length) {
      out.push(
        `folders the OS sandbox could not read (not checked for created protected paths; the user should review them): ${
          left.slice(0, 10).map(rel).join(", ")
        }${left.length > 10 ? `, … (+${left.length - 10} more)` : ""}`,
      );
    }
  }
  const notChecked = [...new Set([...before.unchecked, ...unchecked])];
  if (notChecked.length) {
    out.push(
      `the OS sandbox's check for created protected paths stopped at ${PROTECTED_SCAN_LIMIT} folders; ${notChecked.length} folder${
        notChecked.length > 1 ? "s were" : " was"
      } not checked (a .git, .envrc, … the command made there was not removed): ${
        notChecked.slice(0, 10).map(rel).join(", ")
      }${notChecked.length > 10 ? `, … (+${notChecked.length - 10} more)` : ""}`,
    );
  }
  return out.length ? out.join("\n") : undefined;
}

const isDirPath = (p: string) => {
  try {
    return Deno.lstatSync(p).isDirectory;
  } catch {
    return false;
  }
};

/**
 * The dot-entry rule (docs/permissions.md "New dot-entries"): compares the dot-entries of two
 * scans (./protected.ts `ScanExtras.dots`, path → fingerprint). `created`: paths in `after` only,
 * topmost first (a new folder, not every file in it), not inside a path the protected cleanup
 * already removed (`removed`) and not named by a `Write` allow rule (`allowed`); `changed`:
 * paths in both whose fingerprint (inode, size, mtime; a folder's inode) differs; `ignores`:
 * `.gitignore` files created, changed or removed (never in the other two: inert, but they can
 * hide what a command wrote from `git status`).
 */
export function reviewDotEntries(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  removed: readonly string[],
  allowed: (p: string) => boolean,
): { created: string[]; changed: string[]; ignores: string[] } {
  const created: string[] = [];
  const changed: string[] = [];
  const ignores: string[] = [];
  const under = (p: string, roots: readonly string[]) =>
    roots.some((r) => p === r || p.startsWith(r + "/"));
  for (const p of [...after.keys()].sort()) {
    if (under(p, removed) || under(p, created)) continue;
    const was = before.get(p);
    if (/(^|\/)\.gitignore$/i.test(p)) {
      // Never quarantined (inert), but flagged: it can hide a planted file from `git status`.
      if (was !== after.get(p) && !allowed(p)) ignores.push(p);
      continue;
    }
    if (was === undefined) {
      if (!allowed(p)) created.push(p);
    } else if (was !== after.get(p) && !allowed(p)) changed.push(p);
  }
  // An ignore list the command removed.
  for (const p of before.keys()) {
    if (/(^|\/)\.gitignore$/i.test(p) && !after.has(p) && !allowed(p)) ignores.push(p);
  }
  return { created, changed, ignores };
}
