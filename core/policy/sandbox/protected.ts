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
];

const glob = (seg: string) =>
  new RegExp(
    `^${
      seg.toLowerCase().split("*").map((x) => x.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")
    }$`,
  );
const compile = (p: string) => {
  const [a, b] = p.split("/");
  return b === undefined
    ? { pattern: p, name: glob(a) }
    : { pattern: p, parent: glob(a), name: glob(b) };
};
const RUNS_LATER_RE: { pattern: string; parent?: RegExp; name: RegExp }[] = RUNS_LATER.map(
  compile,
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
  }
}

/** The `sandbox.protected_paths` patterns added so far ({@link addProtectedPatterns}). */
export function extraProtectedPatterns(): string[] {
  return [...extra];
}

/** True when an entry `name` inside a folder named `parent` matches {@link RUNS_LATER}. */
export function runsLater(parent: string, name: string): boolean {
  const n = name.toLowerCase(), d = parent.toLowerCase();
  return RUNS_LATER_RE.some((r) => r.name.test(n) && (!r.parent || r.parent.test(d)));
}

/**
 * The pattern of {@link RUNS_LATER} (or `sandbox.protected_paths`) an absolute path `p` is at or
 * inside, if any (every folder/name pair along it is tried).
 */
export function runsLaterPath(p: string): string | undefined {
  const segs = p.split("/").filter(Boolean);
  for (let i = 0; i < segs.length; i++) {
    const n = segs[i].toLowerCase(), d = (segs[i - 1] ?? "").toLowerCase();
    const r = RUNS_LATER_RE.find((r) => r.name.test(n) && (!r.parent || r.parent.test(d)));
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

/** The config files git reads for a repository, lowest precedence first. */
function gitConfigFiles(root: string, home: string): string[] {
  const files: string[] = [];
  const env = (k: string) => Deno.env.get(k);
  if (!env("GIT_CONFIG_NOSYSTEM")) files.push(env("GIT_CONFIG_SYSTEM") ?? "/etc/gitconfig");
  const global = env("GIT_CONFIG_GLOBAL");
  if (global !== undefined) files.push(global);
  else {
    files.push(`${env("XDG_CONFIG_HOME") ?? `${home}/.config`}/git/config`);
    files.push(`${home}/.gitconfig`);
  }
  const dir = gitDirOf(root);
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

/**
 * The folder the workspace repository's `core.hooksPath` names (git runs its hooks from there,
 * outside the sandbox), resolved against `root`, when it lies inside `root`. Read as git does,
 * the last value winning: the system config (`/etc/gitconfig`, `GIT_CONFIG_SYSTEM`), the global
 * ones (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`, `GIT_CONFIG_GLOBAL`), the repository's
 * `config` (a linked worktree's common dir) and the worktree's `config.worktree`, each with its
 * `include.path` / `includeIf.*.path` files. A relative value (husky's `.husky/_`) is relative
 * to the repository root, also when set globally.
 */
export function hooksPathDir(root: string): string | undefined {
  const home = Deno.env.get("HOME") ?? "/";
  if (!gitDirOf(root)) return undefined;
  const values = gitConfigFiles(root, home).flatMap((f) => hooksPathValues(f, home));
  const v = values.at(-1);
  if (!v) return undefined;
  const abs = resolvePath(v, root, home);
  return abs.startsWith(root + "/") ? abs : undefined;
}

/**
 * The files git includes into the workspace repository's configuration (`include.path`,
 * `includeIf.<cond>.path`, followed through included files; from the same files as
 * {@link hooksPathDir} reads) that lie inside `root`, existing or not (attack trial 2 item 2: a
 * workspace file `.git/config` includes, overwritten with `core.fsmonitor`, ran on the host's next
 * `git status`). Protected like the config itself: read-only in the sandbox, removed when a
 * command creates one, asked about by the file tools (core/policy/paths.ts).
 */
export function gitIncludedFiles(root: string): string[] {
  const home = Deno.env.get("HOME") ?? "/";
  if (!gitDirOf(root)) return [];
  const includes: string[] = [];
  for (const f of gitConfigFiles(root, home)) hooksPathValues(f, home, 0, [], includes);
  return [...new Set(includes)].filter((p) => p.startsWith(root + "/"));
}

/** Directories examined per scan at most (a scan of a few thousand takes milliseconds). */
export const PROTECTED_SCAN_LIMIT = 20_000;

/**
 * Absolute paths (as found under `root`, not resolved) of every entry named like a protected
 * name, any case, at any depth below `root`. Unreadable directories are skipped. The
 * `node_modules` folders met are not entered; they are added to `nodeModules` when given.
 */
export function findProtected(
  root: string,
  limit = PROTECTED_SCAN_LIMIT,
  nodeModules?: string[],
  /** Filled with the folders not examined when the scan stopped at `limit` (empty: complete). */
  unchecked?: string[],
): string[] {
  const out: string[] = [];
  const hooks = hooksPathDir(root);
  if (hooks) {
    try {
      Deno.lstatSync(hooks);
      out.push(hooks);
    } catch { /* not there (yet) */ }
  }
  const included = gitIncludedFiles(root);
  for (const f of included) {
    try {
      Deno.lstatSync(f);
      if (!out.includes(f)) out.push(f);
    } catch { /* not there (yet) */ }
  }
  const base = (d: string) => d.slice(d.lastIndexOf("/") + 1);
  const stack = [root];
  let scanned = 0;
  while (stack.length && scanned < limit) {
    const dir = stack.pop()!;
    scanned++;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (path === hooks || included.includes(path)) continue;
      if (PROTECTED_NAMES.has(e.name.toLowerCase()) || runsLater(base(dir), e.name)) {
        out.push(path);
      } else if (e.isDirectory) {
        if (e.name !== "node_modules") stack.push(path);
        else nodeModules?.push(path);
      }
    }
  }
  unchecked?.push(...stack);
  return out;
}
