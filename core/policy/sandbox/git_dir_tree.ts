/**
 * The git dirs below a git dir that git reads configs from (./repo_configs.ts, core/policy/paths.ts
 * `maskedRead`; tenth attacker pass): linked worktrees' (`worktrees/<name>`) and submodules'
 * (`modules/<name>`, nested; a submodule named `a/b` has its git dir at `modules/a/b`). One list
 * for both the sandbox's masking and the file tools' question, so they agree.
 * @module
 */

/** How many git dirs below one (`worktrees/*`, `modules/**`) are looked at, at most. */
export const MAX_SUB_GIT_DIRS = 500;

/**
 * `dir` and the git dirs below it (`worktrees/<name>`, `modules/<name>`, nested; a submodule
 * named `a/b` has its git dir at `modules/a/b`, so a folder under `modules/` without `HEAD` is
 * looked into too), bounded.
 */
export function gitDirsBelow(dir: string): string[] {
  const out = [dir];
  const inModules = new Set<string>();
  for (let i = 0; i < out.length && out.length < MAX_SUB_GIT_DIRS; i++) {
    const subs = ["worktrees", "modules"];
    let head = true;
    if (inModules.has(out[i])) {
      try {
        Deno.lstatSync(`${out[i]}/HEAD`);
      } catch {
        head = false;
      }
    }
    for (const sub of head ? subs : [...subs, ""]) {
      try {
        for (const e of Deno.readDirSync(sub ? `${out[i]}/${sub}` : out[i])) {
          if (!e.isDirectory || out.length >= MAX_SUB_GIT_DIRS) continue;
          const d = sub ? `${out[i]}/${sub}/${e.name}` : `${out[i]}/${e.name}`;
          if (sub !== "worktrees") inModules.add(d);
          out.push(d);
        }
      } catch { /* none */ }
    }
  }
  return out;
}

/**
 * Whether folder `dir` is a git dir git reads a config from by the path alone: a `.git` folder,
 * or one of {@link gitDirsBelow} its nearest `.git` ancestor (reads those folders).
 */
export function isRepoGitDir(dir: string): boolean {
  if (/\/\.git$/i.test(dir)) return true;
  const m = /^(.*\/\.git)\/(?:modules|worktrees)\//i.exec(dir);
  return !!m && gitDirsBelow(m[1]).includes(dir);
}
