/**
 * The directories a workspace's own configuration is looked up in: the working directory and its
 * ancestors up to the repository root (the nearest ancestor holding `.git`, a folder or a
 * worktree's file). Outside a repository only the working directory counts, so a stray
 * `~/.claude/skills` is never picked up as "workspace" by accident.
 * @module
 */
import { dirname, join } from "../util/path.ts";

/** True when `path` exists (anything `stat` can see; a dangling symlink does not). */
export function exists(path: string): boolean {
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

/**
 * Why `path` may not be read as a workspace file (instructions, a skill, an agent), or undefined
 * when it may: its real path must be a regular file inside `root` (the real repository root, or
 * the folder it was found in outside a repository). A cloned repository may ship symlinks, and
 * these files are read at start-up without asking — even in an untrusted workspace — so a link to
 * `~/.ssh/id_rsa`, Coyote's config, `/proc/self/environ` or `/dev/zero` must not be followed.
 * Links that stay inside the repository (`CLAUDE.md -> AGENTS.md`) are fine. Files over
 * {@link MAX_WORKSPACE_FILE_BYTES} are not read either.
 */
export function outsideWorkspace(path: string, root: string): string | undefined {
  let real: string;
  let top: string;
  try {
    real = Deno.realPathSync(path);
    top = Deno.realPathSync(root);
  } catch {
    return `${path} does not exist`;
  }
  if (real !== top && !real.startsWith(top === "/" ? "/" : `${top}/`)) {
    return `${path} leads outside ${top} (to ${real}); not read`;
  }
  try {
    const st = Deno.statSync(real);
    if (!st.isFile) return `${path} is not a regular file; not read`;
    if (st.size > MAX_WORKSPACE_FILE_BYTES) {
      return `${path} is ${st.size} bytes, over the ${MAX_WORKSPACE_FILE_BYTES} byte limit of a workspace file; not read`;
    }
  } catch {
    return `${path} does not exist`;
  }
  return undefined;
}

/**
 * Largest instruction, skill or agent file read from a workspace (bytes): they are read whole at
 * every start, even untrusted, and a skill's body becomes system prompt — a cloned repository's
 * multi-gigabyte `SKILL.md` must not exhaust memory or every request's context.
 */
export const MAX_WORKSPACE_FILE_BYTES = 1024 * 1024;

/** The repository root of `cwd` (the last of {@link workspaceDirs}: `cwd` outside a repository). */
export function workspaceTop(cwd: string): string {
  const dirs = workspaceDirs(cwd);
  return dirs[dirs.length - 1];
}
