/**
 * The git dirs of a workspace and the code git runs from them (docs/permissions.md "The OS
 * sandbox"): the `core.hooksPath` folder and included config files of every repository in it —
 * the workspace's own, nested repositories, submodules (`modules/`, recursively), linked worktrees
 * (attack pass 4 classes 3 and 6) — read the way git reads them, and git's own test of what a git
 * dir is ({@link isGitDirEntries}, attack pass 4: an embedded bare repository). Used by the scan
 * of ./protected.ts and by the file tools (core/policy/paths.ts).
 * @module
 */

import { resolvePath } from "../rules.ts";
import { gitDirOf } from "../shell/programs/git_repo.ts";

/**
 * Every value of `core.hooksPath` and every included file, in the order git reads them, from one
 * config file (`include.path`, `includeIf.<cond>.path` — conditions are not evaluated: an
 * `includeIf` counts as included, which can only protect more). Relative include paths are
 * against the including file's folder, `~/` against the home.
 */
function hooksPathValues(
  file: string,
  home: string,
  depth = 0,
  out: string[] = [],
  includes?: string[],
): string[] {
  if (depth > 10) return out;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    return out;
  }
  let section = "";
  const dir = file.slice(0, file.lastIndexOf("/")) || "/";
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const sec = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$/.exec(line);
    if (sec) {
      section = sec[1].toLowerCase();
      line = sec[2];
      if (!line) continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const key = kv[1].toLowerCase();
    const value = kv[2].replace(/\s+[#;].*$/, "").trim().replace(/^"(.*)"$/, "$1");
    if (section === "core" && key === "hookspath") out.push(value);
    else if ((section === "include" || section === "includeif") && key === "path" && value) {
      const inc = value.startsWith("~/") ? home + value.slice(1) : resolvePath(value, dir, home);
      includes?.push(inc);
      hooksPathValues(inc, home, depth + 1, out, includes);
    }
  }
  return out;
}

/** The config files git reads for the repository whose git dir is `dir`, lowest precedence first. */
function gitConfigFiles(dir: string | undefined, home: string): string[] {
  const files: string[] = [];
  const env = (k: string) => Deno.env.get(k);
  if (!env("GIT_CONFIG_NOSYSTEM")) files.push(env("GIT_CONFIG_SYSTEM") ?? "/etc/gitconfig");
  const global = env("GIT_CONFIG_GLOBAL");
  if (global !== undefined) files.push(global);
  else {
    files.push(`${env("XDG_CONFIG_HOME") ?? `${home}/.config`}/git/config`);
    files.push(`${home}/.gitconfig`);
  }
  if (dir) {
    let common = dir;
    try {
      common = resolvePath(Deno.readTextFileSync(`${dir}/commondir`).trim(), dir, "/");
    } catch { /* not a linked worktree */ }
    files.push(`${common}/config`);
    // extensions.worktreeConfig: the worktree's own config.worktree comes last.
    files.push(`${dir}/config.worktree`);
  }
  return files;
}

/** The hooks folder of the repository at `root` with git dir `dir`, when it lies inside `ws`. */
function hooksOf(dir: string, root: string, ws: string, home: string): string | undefined {
  const v = gitConfigFiles(dir, home).flatMap((f) => hooksPathValues(f, home)).at(-1);
  if (!v) return undefined;
  const abs = resolvePath(v, root, home);
  return abs.startsWith(ws + "/") ? abs : undefined;
}

/** The files the configs of git dir `dir` include that lie inside `ws`. */
function includesOf(dir: string, ws: string, home: string): string[] {
  const includes: string[] = [];
  for (const f of gitConfigFiles(dir, home)) hooksPathValues(f, home, 0, [], includes);
  return [...new Set(includes)].filter((p) => p.startsWith(ws + "/"));
}

/**
 * The folder the `core.hooksPath` of the repository at `root` names (git runs its hooks from
 * there, outside the sandbox), resolved against `root`, when it lies inside `ws` (default: `root`;
 * a nested repository's may name a folder anywhere in the workspace). Read as git does,
 * the last value winning: the system config (`/etc/gitconfig`, `GIT_CONFIG_SYSTEM`), the global
 * ones (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, `GIT_CONFIG_GLOBAL`), the repository's
 * `config` (a linked worktree's common dir) and the worktree's `config.worktree`, each with its
 * `include.path` / `includeIf.*.path` files. A relative value (husky's `.husky/_`) is relative
 * to the repository root, also when set globally.
 */
export function hooksPathDir(root: string, ws = root): string | undefined {
  const home = Deno.env.get("HOME") ?? "/";
  const dir = gitDirOf(root);
  return dir ? hooksOf(dir, root, ws, home) : undefined;
}

/**
 * The files git includes into the configuration of the repository at `root` (`include.path`,
 * `includeIf.<cond>.path`, followed through included files; from the same files as
 * {@link hooksPathDir} reads) that lie inside `ws` (default `root`), existing or not (attack
 * trial 2 item 2: a workspace file `.git/config` includes, overwritten with `core.fsmonitor`, ran
 * on the host's next `git status`). Protected like the config itself: read-only in the sandbox,
 * removed when a command creates one, asked about by the file tools (core/policy/paths.ts).
 */
export function gitIncludedFiles(root: string, ws = root): string[] {
  const home = Deno.env.get("HOME") ?? "/";
  const dir = gitDirOf(root);
  return dir ? includesOf(dir, ws, home) : [];
}

/**
 * True when the folder whose entries are `entries` is a git dir by git's own test
 * (`is_git_directory` in setup.c): a `HEAD` file or symlink and either `objects/` and `refs/`
 * folders or a `commondir` file (a linked worktree's git dir). Git runs the hooks and
 * `core.fsmonitor` of such a folder when started in it (a bare repository: attack pass 4).
 * `dir`, the folder's path, lets symlinked `objects`/`refs` be followed as git does; without it
 * only real folders count.
 */
export function isGitDirEntries(entries: readonly Deno.DirEntry[], dir?: string): boolean {
  let head = false, objects = false, refs = false, common = false;
  // git's test follows symlinks (stat): `objects` and `refs` may be links to folders (fifth
  // attacker pass: `ln -s ../.git/objects evil/objects`). Known only when `dir` is given.
  const folder = (e: Deno.DirEntry) => {
    if (e.isDirectory) return true;
    if (!e.isSymlink || dir === undefined) return false;
    try {
      return Deno.statSync(`${dir}/${e.name}`).isDirectory;
    } catch {
      return false;
    }
  };
  for (const e of entries) {
    if (e.name === "HEAD") head = e.isFile || e.isSymlink;
    else if (e.name === "objects") objects = folder(e);
    else if (e.name === "refs") refs = folder(e);
    else if (e.name === "commondir") common = e.isFile;
  }
  return head && ((objects && refs) || common);
}

const readDir = (d: string): Deno.DirEntry[] => {
  try {
    return [...Deno.readDirSync(d)];
  } catch {
    return [];
  }
};

/**
 * Hooks folders and included files of the repositories a git dir `dir` holds as submodules
 * (`modules/<name>/`, names may contain `/`, recursively: a submodule's submodules), each module
 * rooted at its `core.worktree` — what `git -C <submodule>` reads (attack pass 4 class 6).
 */
function moduleHooks(dir: string, ws: string, home: string, out: Map<string, string>, depth = 0) {
  if (depth > 8) return;
  const walk = (d: string, level: number) => {
    if (level > 8) return;
    const entries = readDir(d);
    if (isGitDirEntries(entries, d)) {
      const wt = readGitKey(`${d}/config`, "core", "worktree");
      if (wt) {
        const root = resolvePath(wt, d, home);
        const h = hooksOf(d, root, ws, home);
        if (h) out.set(h, `the core.hooksPath of the submodule ${root}: git runs its hooks`);
      }
      for (const f of includesOf(d, ws, home)) {
        out.set(f, "included by a submodule's git config (include.path)");
      }
      moduleHooks(d, ws, home, out, depth + 1);
      return;
    }
    for (const e of entries) if (e.isDirectory) walk(`${d}/${e.name}`, level + 1);
  };
  walk(`${dir}/modules`, 0);
}

/** The last value of `section.key` in one config file (no includes), or undefined. */
function readGitKey(file: string, section: string, key: string): string | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    return undefined;
  }
  let sec = "", value: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    const m = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$/.exec(line);
    if (m) {
      sec = m[1].toLowerCase();
      line = m[2];
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (kv && sec === section && kv[1].toLowerCase() === key) {
      value = kv[2].replace(/\s+[#;].*$/, "").trim().replace(/^"(.*)"$/, "$1");
    }
  }
  return value;
}

/**
 * Every repository's `core.hooksPath` folder and included config files inside `ws`, with why:
 * the workspace's own repository, every nested repository or checked-out submodule the last
 * scan of `ws` met (a `.git` folder or file at any depth: ./protected.ts `findProtected`), and the
 * submodules in their git dirs' `modules/` (attack pass 4 class 3: a nested `vendor/lib` with
 * `core.hooksPath=.githooks`). Linked worktrees inside `ws` are met by their `.git` file (their
 * `config.worktree` is read). Existing or not.
 */
export function repoHooks(ws: string, repos: Iterable<string> = [ws]): Map<string, string> {
  const home = Deno.env.get("HOME") ?? "/";
  const out = new Map<string, string>();
  for (const root of repos) {
    const dir = gitDirOf(root);
    if (!dir) continue;
    const top = root === ws;
    const h = hooksOf(dir, root, ws, home);
    if (h && !out.has(h)) {
      out.set(
        h,
        top
          ? "the repository's core.hooksPath: git runs its hooks"
          : `the core.hooksPath of the nested repository ${
            root.slice(ws.length + 1)
          }: git runs its hooks`,
      );
    }
    for (const f of includesOf(dir, ws, home)) {
      if (!out.has(f)) {
        out.set(
          f,
          top
            ? "included by the repository's git config (include.path): git reads core.fsmonitor and hooks from it"
            : `included by the git config of ${
              root.slice(ws.length + 1)
            } (include.path): git reads core.fsmonitor and hooks from it`,
        );
      }
    }
    moduleHooks(dir, ws, home, out);
  }
  return out;
}

/** Per workspace, the repositories (roots holding a `.git`) its last ./protected.ts `findProtected` met. */
const lastRepos = new Map<string, string[]>();

/** Records the repositories (roots holding a `.git`) a scan of `ws` met, for {@link repoHooksFor}. */
export function rememberRepos(ws: string, repos: string[]): void {
  lastRepos.set(ws, repos);
}

/**
 * The hooks folders and included files of every repository in `ws` that covers `p` (its
 * ancestors holding a `.git`) or that the last scan of `ws` met, with why — for the file tools
 * (core/policy/paths.ts), which do not walk the workspace.
 */
export function repoHooksFor(ws: string, p: string): Map<string, string> {
  const repos = new Set([ws, ...(lastRepos.get(ws) ?? [])]);
  if (p.startsWith(ws + "/")) {
    let d = p.slice(0, p.lastIndexOf("/"));
    while (d.length > ws.length) {
      try {
        Deno.lstatSync(`${d}/.git`);
        repos.add(d);
      } catch { /* none */ }
      d = d.slice(0, d.lastIndexOf("/"));
    }
  }
  return repoHooks(ws, repos);
}

/** {@link gitTracks}'s answers per workspace, valid while the index's stamp holds. */
const trackedCache = new Map<string, { stamp: string; rels: Map<string, boolean> }>();

/** The index file of the repository `root` is in (its own, a linked worktree's, a parent's). */
function indexOf(root: string): string | undefined {
  for (let d = root; d; d = d.slice(0, d.lastIndexOf("/"))) {
    const g = gitDirOf(d);
    if (g) return `${g}/index`;
  }
  return undefined;
}

/**
 * True when git tracks a path under `rel/` (relative to the workspace `root`): `git ls-files`, run
 * on the host with `core.fsmonitor` off, so every index format (v4's path-prefix compression,
 * split indexes) and linked worktrees (the index in the common dir's `worktrees/<name>/`) are read
 * by git itself. No repository at or above `root`: false. git missing or failing for another
 * reason: true (a `CACHEDIR.TAG` is then not honoured — fail closed). Answers are cached per
 * workspace until the index's inode, size or mtime moves.
 */
export function gitTracks(root: string, rel: string): boolean {
  const index = indexOf(root);
  if (!index) return false;
  let stamp = "none";
  try {
    const st = Deno.statSync(index);
    stamp = `${st.ino}:${st.size}:${st.mtime?.getTime()}`;
  } catch { /* no index yet: git answers (nothing tracked) */ }
  let c = trackedCache.get(root);
  if (!c || c.stamp !== stamp) trackedCache.set(root, c = { stamp, rels: new Map() });
  const hit = c.rels.get(rel);
  if (hit !== undefined) return hit;
  let tracked = true;
  try {
    const o = new Deno.Command("git", {
      args: [
        "--literal-pathspecs",
        "-c",
        "core.fsmonitor=false",
        "ls-files",
        "-z",
        "--",
        `${rel}/`,
      ],
      cwd: root,
      env: { GIT_OPTIONAL_LOCKS: "0" },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (o.success) tracked = o.stdout.length > 0;
  } catch { /* no git: fail closed */ }
  c.rels.set(rel, tracked);
  return tracked;
}
