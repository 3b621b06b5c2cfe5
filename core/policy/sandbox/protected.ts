/**
 * Protected names inside the workspace at every depth (docs/permissions.md "The OS sandbox"):
 * `.git`, `.coyote`, `.mcp.json`, and the code other tools run later ({@link RUNS_LATER}, the
 * `core.hooksPath` folder), compared case-insensitively. Git runs hooks and
 * `core.fsmonitor` from the `.git` of the folder it runs in, and Coyote started in a sub-folder
 * loads that folder's `.coyote/` (plugins, permission rules) and `.mcp.json` (servers) — trusted
 * when a parent folder is — so a sandboxed command must not write one at ANY depth: existing ones
 * are mounted read-only ({@link findProtected} feeds `deriveProfile`), and the ones a command
 * creates are removed after it (core/policy/sandbox/mod.ts compares a scan before and after).
 *
 * The scan walks directories only (symlinks are not followed, protected folders are not
 * entered) and stops after {@link PROTECTED_SCAN_LIMIT} directories (the folders it did not
 * examine are reported to the caller, and the cleanup's result names them). `node_modules` folders are
 * not walked by it (they are big): their paths are reported to the caller, and
 * ./node_modules_scan.ts finds what a command created inside them.
 *
 * Fourth attacker pass: the `core.hooksPath` folder of every repository the scan meets (nested
 * repositories, submodules, their `modules/`: {@link repoHooks}) and every folder that is a git
 * dir by git's test ({@link isGitDirEntries}) are protected too, and the same scan fingerprints
 * dot-entries for the dot-entry rule of ./cleanup.ts ({@link ScanExtras}, {@link INERT_DOT_NAMES}).
 * @module
 */

import { resolvePath } from "../rules.ts";
import { gitDirOf } from "../shell/programs/git_repo.ts";

/** Names Coyote and git load code or rules from (lower case). */
export const PROTECTED_NAMES: ReadonlySet<string> = new Set([".git", ".coyote", ".mcp.json"]);

/**
 * Code other tools run later without the user naming it (issue 16 §3), at any depth, compared
 * case-insensitively: git hooks managers (`.husky/`), direnv (`.envrc`), editors' auto-run files
 * (`.vscode/tasks.json` with `runOn: folderOpen`, `.vscode/settings.json`, `.vscode/launch.json`,
 * `.idea/runConfigurations`, `.devcontainer/`) and other agents' settings and hooks
 * (`.claude/settings*.json`, `.gemini/settings.json`, `.cursor/`, `.codex/`, …), hook runners'
 * configs, package managers' project configs that run code (`.npmrc`, `.yarnrc.yml`, …). A pattern is a name
 * or `folder/name`; `*` matches any run of characters within a name. The directory the
 * repository's `core.hooksPath` names is protected too ({@link hooksPathDir}).
 */
export const RUNS_LATER: readonly string[] = [
  ".husky",
  ".envrc",
  ".devcontainer",
  ".cursor",
  ".codex",
  ".vscode/tasks.json",
  ".vscode/settings.json",
  ".vscode/launch.json",
  ".idea/runConfigurations",
  ".claude/settings*.json",
  ".gemini/settings.json",
  // Second attacker pass: hook runners' configs (run by the installed git hook), package
  // managers' project configs that run code on every call (`.npmrc` node-options/script-shell,
  // `.yarnrc.yml` yarnPath, `.pnpmfile.cjs`, `bunfig.toml` preload), mise tasks and hooks, editor
  // files run on open, more agents' settings.
  ".pre-commit-config.yaml",
  "lefthook.yml",
  ".lefthook.yml",
  "lefthook-local.yml",
  ".lefthook-local.yml",
  ".overcommit.yml",
  ".lintstagedrc*",
  "lint-staged.config.*",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pnpmfile.cjs",
  "bunfig.toml",
  "mise.toml",
  ".mise.toml",
  "mise.local.toml",
  ".mise.local.toml",
  ".mise",
  "*.code-workspace",
  ".nvim.lua",
  ".nvimrc",
  ".exrc",
  ".zed",
  ".aider.conf.yml",
  "opencode.json",
  ".opencode",
  ".windsurf",
  ".roo",
  ".kiro",
  ".continue",
  // Third attacker pass (item 8): more editor, dev-container, version-manager and agent files
  // loaded or run on open; REPL and debugger start-up files read from the current folder.
  ".devcontainer.json",
  "opencode.jsonc",
  ".config/mise",
  ".config/mise.toml",
  "mise/config.toml",
  "mise.*.toml",
  ".mise.*.toml",
  ".qwen",
  ".amazonq",
  ".kilocode",
  ".vscode/mcp.json",
  ".crush.json",
  "crush.json",
  ".helix",
  ".run/*.run.xml",
  ".idea/workspace.xml",
  ".dir-locals.el",
  ".dir-locals-2.el",
  ".claude/hooks",
  ".gitpod.yml",
  ".pdbrc",
  ".irbrc",
  ".pryrc",
  ".Rprofile",
  // Fourth attacker pass (class 3): more version-control, toolchain, build-tool, editor and agent
  // files other tools load or run without the user naming them. Paths of more than two segments
  // match the end of a path (`.jj/repo/config.toml`).
  ".hg/hgrc",
  ".jj/repo/config.toml",
  ".cargo/config.toml",
  ".cargo/config",
  "rust-toolchain.toml",
  "rust-toolchain",
  ".mvn/extensions.xml",
  ".mvn/jvm.config",
  ".mvn/maven.config",
  "gradle.properties",
  "gradle-wrapper.properties",
  ".gemini/extensions",
  ".idea/watcherTasks.xml",
  ".theia/tasks.json",
  ".theia/settings.json",
  ".theia/launch.json",
  ".lazy.lua",
  ".autoenv.zsh",
  ".autoenv_leave.zsh",
  ".clinerules/hooks",
  ".factory/settings.json",
  ".factory/hooks",
];

const glob = (seg: string) =>
  new RegExp(
    `^${
      seg.toLowerCase().split("*").map((x) => x.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")
    }$`,
  );
/** A pattern's segments as globs, last segment last; it matches the end of a path. */
const compile = (p: string) => ({ pattern: p, segs: p.split("/").filter(Boolean).map(glob) });
const RUNS_LATER_RE: { pattern: string; segs: RegExp[] }[] = RUNS_LATER.map(compile);
/** Any pattern's last segment, as one expression (the scan tests every entry against it). */
let lastAny = union();
function union(): RegExp {
  return new RegExp(
    RUNS_LATER_RE.map((r) => r.segs.at(-1)!.source.slice(1, -1)).map((x) => `^(?:${x})$`)
      .join("|"),
  );
}
/** The pattern whose segments match the end of `segs` (lower case) up to index `end`. */
const matchAt = (segs: readonly string[], end: number) =>
  RUNS_LATER_RE.find((r) =>
    r.segs.length <= end + 1 &&
    r.segs.every((g, i) => g.test(segs[end - r.segs.length + 1 + i]))
  );
const extra = new Set<string>();

/**
 * Adds `sandbox.protected_paths` patterns (same syntax as {@link RUNS_LATER}) for the rest of the
 * process: the sandbox keeps them read-only and removes created ones, the file tools ask.
 * Patterns only accumulate (a process serving several configurations protects their union).
 */
export function addProtectedPatterns(patterns: readonly string[]): void {
  for (const p of patterns) {
    if (extra.has(p) || RUNS_LATER.includes(p)) continue;
    extra.add(p);
    RUNS_LATER_RE.push(compile(p));
    lastAny = union();
  }
}

/** The `sandbox.protected_paths` patterns added so far ({@link addProtectedPatterns}). */
export function extraProtectedPatterns(): string[] {
  return [...extra];
}

/**
 * True when an entry `name` inside the folder `parent` (a path, or only its last segments: a
 * pattern of N segments needs N - 1 of them) matches {@link RUNS_LATER}.
 */
export function runsLater(parent: string, name: string): boolean {
  const n = name.toLowerCase();
  if (!lastAny.test(n)) return false;
  const segs = `${parent}/${n}`.toLowerCase().split("/").filter(Boolean);
  return matchAt(segs, segs.length - 1) !== undefined;
}

/**
 * The pattern of {@link RUNS_LATER} (or `sandbox.protected_paths`) an absolute path `p` is at or
 * inside, if any (every folder/name pair along it is tried).
 */
export function runsLaterPath(p: string): string | undefined {
  const segs = p.toLowerCase().split("/").filter(Boolean);
  for (let i = 0; i < segs.length; i++) {
    const r = matchAt(segs, i);
    if (r) return r.pattern;
  }
  return undefined;
}

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
 */
export function isGitDirEntries(entries: readonly Deno.DirEntry[]): boolean {
  let head = false, objects = false, refs = false, common = false;
  for (const e of entries) {
    if (e.name === "HEAD") head = e.isFile || e.isSymlink;
    else if (e.name === "objects") objects = e.isDirectory;
    else if (e.name === "refs") refs = e.isDirectory;
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
    if (isGitDirEntries(entries)) {
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
 * scan of `ws` met (a `.git` folder or file at any depth: {@link findProtected}), and the
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

/** Per workspace, the repositories (roots holding a `.git`) its last {@link findProtected} met. */
const lastRepos = new Map<string, string[]>();

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

/** Directories examined per scan at most (a scan of a few thousand takes milliseconds). */
export const PROTECTED_SCAN_LIMIT = 20_000;

/**
 * Dot-entries known to be inert (caches, build output, ignore lists: no tool runs code from
 * them), compared case-insensitively. The dot-entry rule (./cleanup.ts `reviewDotEntries`) does
 * not look at them or inside them. Documented in docs/permissions.md ("New dot-entries").
 */
export const INERT_DOT_NAMES: ReadonlySet<string> = new Set([
  ".gitignore",
  ".gitattributes",
  ".gitkeep",
  ".keep",
  ".ds_store",
  ".venv",
  ".cache",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".hypothesis",
  ".tox",
  ".nox",
  ".coverage",
  ".ipynb_checkpoints",
  ".next",
  ".nuxt",
  ".turbo",
  ".parcel-cache",
  ".svelte-kit",
  ".angular",
  ".vite",
  ".docusaurus",
  ".expo",
  ".eslintcache",
  ".stylelintcache",
  ".nyc_output",
  ".sass-cache",
  ".gradle",
  ".dart_tool",
  ".build",
  ".stack-work",
  ".terraform",
  ".terraform.lock.hcl",
  ".pnpm-store",
  ".fingerprint",
  ".rustc_info.json",
  ".cargo-lock",
  ".package-lock.json",
  ".kotlin",
  // A package manager's install output, like node_modules (the project's code, run when the
  // user runs the project): Yarn's cache and Plug'n'Play files. `.yarnrc.yml` stays protected.
  ".yarn",
  ".pnp.cjs",
  ".pnp.loader.mjs",
  ".pnp.data.json",
]);

/** Dot-entries fingerprinted per scan at most (past that the rest is not reviewed; said so). */
export const DOT_ENTRY_LIMIT = 5_000;

/** What {@link findProtected} collects besides the protected paths, when asked. */
export interface ScanExtras {
  /** Why each protected path that is not a protected name is protected (hooks, git dirs). */
  reasons?: Map<string, string>;
  /**
   * Filled with every dot-entry outside `node_modules`, {@link INERT_DOT_NAMES} and folders
   * holding a `CACHEDIR.TAG`, and every entry inside such a dot-folder, at any depth, with its
   * fingerprint (`lstat`: inode, size and mtime for a file, inode for a folder).
   */
  dots?: Map<string, string>;
  /** Set when {@link DOT_ENTRY_LIMIT} was reached. */
  dotsTruncated?: boolean;
}

const fingerprint = (p: string): string | undefined => {
  try {
    const st = Deno.lstatSync(p);
    return st.isDirectory ? `d${st.ino}` : `${st.ino}:${st.size}:${st.mtime?.getTime()}`;
  } catch {
    return undefined;
  }
};

/**
 * Absolute paths (as found under `root`, not resolved) of every entry named like a protected
 * name, any case, at any depth below `root`; every folder below `root` that is a git dir by
 * git's test ({@link isGitDirEntries}: an embedded bare repository); the `core.hooksPath` folder
 * and included config files of every repository met ({@link repoHooks}: the workspace's, nested
 * repositories', submodules'), where they exist. Unreadable directories are skipped. The
 * `node_modules` folders met are not entered; they are added to `nodeModules` when given.
 */
export function findProtected(
  root: string,
  limit = PROTECTED_SCAN_LIMIT,
  nodeModules?: string[],
  /** Filled with the folders not examined when the scan stopped at `limit` (empty: complete). */
  unchecked?: string[],
  extras: ScanExtras = {},
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (p: string, why?: string) => {
    if (seen.has(p)) return;
    seen.add(p);
    out.push(p);
    if (why) extras.reasons?.set(p, why);
  };
  const exists = (p: string) => {
    try {
      Deno.lstatSync(p);
      return true;
    } catch {
      return false;
    }
  };
  const top = repoHooks(root, [root]);
  for (const [p, why] of top) if (exists(p)) add(p, why);
  const dots = extras.dots;
  const repos: string[] = [];
  // Modes: 0 ordinary, 1 inside a reviewed dot-folder (every entry fingerprinted), 2 not reviewed.
  const stack: [string, number][] = [[root, 0]];
  let scanned = 0;
  while (stack.length && scanned < limit) {
    const [dir, mode] = stack.pop()!;
    scanned++;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      continue;
    }
    if (isGitDirEntries(entries)) {
      // The workspace itself made a git dir (no `.git` of its own to win over it): its HEAD.
      if (dir === root) {
        if (!entries.some((e) => e.name.toLowerCase() === ".git")) {
          add(`${root}/HEAD`, "makes the workspace a git dir (with objects/ and refs/)");
        }
      } else {
        add(
          dir,
          "a git dir (HEAD, objects/, refs/): git runs its hooks and core.fsmonitor when started in it",
        );
        continue;
      }
    }
    const cacheDir = dots && mode !== 2 && entries.some((e) => e.name === "CACHEDIR.TAG");
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (seen.has(path)) continue;
      const lower = e.name.toLowerCase();
      if (PROTECTED_NAMES.has(lower) || runsLater(dir, e.name)) {
        if (lower === ".git" && dir !== root) repos.push(dir);
        add(path);
        continue;
      }
      let sub = mode;
      if (dots && mode !== 2) {
        if (cacheDir || INERT_DOT_NAMES.has(lower)) sub = 2;
        else if (mode === 1 || e.name.startsWith(".")) {
          sub = 1;
          if (dots.size >= DOT_ENTRY_LIMIT) extras.dotsTruncated = true;
          else {
            const f = fingerprint(path);
            if (f) dots.set(path, f);
          }
        }
      }
      if (e.isDirectory) {
        if (e.name !== "node_modules") stack.push([path, sub]);
        else nodeModules?.push(path);
      }
    }
  }
  unchecked?.push(...stack.map(([d]) => d));
  lastRepos.set(root, repos);
  if (repos.length) {
    for (const [p, why] of repoHooks(root, repos)) if (!top.has(p) && exists(p)) add(p, why);
  }
  return out;
}
