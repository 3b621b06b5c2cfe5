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
 * entered, `node_modules` is skipped) and stops after {@link PROTECTED_SCAN_LIMIT} directories.
 * @module
 */

import { resolvePath } from "../rules.ts";
import { readGitConfig } from "../shell/programs/git_repo.ts";

/** Names Coyote and git load code or rules from (lower case). */
export const PROTECTED_NAMES: ReadonlySet<string> = new Set([".git", ".coyote", ".mcp.json"]);

/**
 * Code other tools run later without the user naming it (issue 16 §3), at any depth, compared
 * case-insensitively: git hooks managers (`.husky/`), direnv (`.envrc`), editors' auto-run files
 * (`.vscode/tasks.json` with `runOn: folderOpen`, `.vscode/settings.json`, `.vscode/launch.json`,
 * `.idea/runConfigurations`, `.devcontainer/`) and other agents' settings and hooks
 * (`.claude/settings*.json`, `.gemini/settings.json`, `.cursor/`, `.codex/`). A pattern is a name
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
];

const glob = (seg: string) =>
  new RegExp(
    `^${
      seg.toLowerCase().split("*").map((x) => x.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")
    }$`,
  );
const RUNS_LATER_RE: { parent?: RegExp; name: RegExp }[] = RUNS_LATER.map((p) => {
  const [a, b] = p.split("/");
  return b === undefined ? { name: glob(a) } : { parent: glob(a), name: glob(b) };
});

/** True when an entry `name` inside a folder named `parent` matches {@link RUNS_LATER}. */
export function runsLater(parent: string, name: string): boolean {
  const n = name.toLowerCase(), d = parent.toLowerCase();
  return RUNS_LATER_RE.some((r) => r.name.test(n) && (!r.parent || r.parent.test(d)));
}

/**
 * The pattern of {@link RUNS_LATER} an absolute path `p` is at or inside, if any (every
 * folder/name pair along it is tried).
 */
export function runsLaterPath(p: string): string | undefined {
  const segs = p.split("/").filter(Boolean);
  for (let i = 0; i < segs.length; i++) {
    const n = segs[i].toLowerCase(), d = (segs[i - 1] ?? "").toLowerCase();
    const k = RUNS_LATER_RE.findIndex((r) => r.name.test(n) && (!r.parent || r.parent.test(d)));
    if (k >= 0) return RUNS_LATER[k];
  }
  return undefined;
}

/**
 * The folder the workspace repository's `core.hooksPath` names (git runs its hooks from there,
 * outside the sandbox), resolved against `root`, when it lies inside `root`; read from the
 * repository's config file (git_repo.ts `readGitConfig`; `include`d files are not followed).
 */
export function hooksPathDir(root: string): string | undefined {
  const v = readGitConfig(root)?.get("core.hookspath");
  if (!v) return undefined;
  const abs = resolvePath(v.replace(/^"(.*)"$/, "$1"), root, Deno.env.get("HOME") ?? "/");
  return abs.startsWith(root + "/") ? abs : undefined;
}

/** Directories examined per scan at most (a scan of a few thousand takes milliseconds). */
export const PROTECTED_SCAN_LIMIT = 20_000;

/**
 * Absolute paths (as found under `root`, not resolved) of every entry named like a protected
 * name, any case, at any depth below `root`. Unreadable directories are skipped.
 */
export function findProtected(root: string, limit = PROTECTED_SCAN_LIMIT): string[] {
  const out: string[] = [];
  const hooks = hooksPathDir(root);
  if (hooks) {
    try {
      Deno.lstatSync(hooks);
      out.push(hooks);
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
      if (path === hooks) continue;
      if (PROTECTED_NAMES.has(e.name.toLowerCase()) || runsLater(base(dir), e.name)) {
        out.push(path);
      } else if (e.isDirectory && e.name !== "node_modules") stack.push(path);
    }
  }
  return out;
}
