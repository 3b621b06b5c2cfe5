/**
 * The directories a workspace's own configuration is looked up in: the working directory and its
 * ancestors up to the repository root (the nearest ancestor holding `.git`, a folder or a
 * worktree's file). Outside a repository only the working directory counts, so a stray
 * `~/.claude/skills` is never picked up as "workspace" by accident.
 * @module
 */
import { dirname, join } from "node:path";

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * `cwd` and its ancestors up to the repository root, nearest first (absolute paths).
 * `[cwd]` when `cwd` is not inside a git repository.
 */
export function workspaceDirs(cwd: string): string[] {
  const dirs: string[] = [];
  let dir = cwd.replace(/\/+$/, "") || "/";
  for (;;) {
    dirs.push(dir);
    if (exists(join(dir, ".git"))) return dirs;
    const up = dirname(dir);
    if (up === dir) return [cwd];
    dir = up;
  }
}
