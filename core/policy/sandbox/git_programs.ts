/**
 * What a command changed in the workspace repository's git dir that makes git run a program on
 * the host (docs/permissions.md "The OS sandbox"; issue 16, eleventh attacker pass). The `.git`
 * folder is read-only in the sandbox, unless a `Write` allow rule covers it (`--allow
 * 'Write(.git/**)'`, the rule the docs give for `git commit`): then a command may add
 * `core.fsmonitor` to `.git/config` or write a hook, which the host's next `git status` runs. The
 * rule allows the write, so it is kept — but named in the tool result with the keys and hooks.
 *
 * A key counts when it is not one of the keys known not to run anything
 * (core/policy/shell/programs/git_repo.ts `SAFE_GIT_CONFIG`, the list the guard's read-only git
 * uses): `core.fsmonitor`, `core.pager`, `diff.*.textconv`, `filter.*`, `alias.*`,
 * `include.path`, … — a rule, not a list of program keys. A hook counts when it is any file of the
 * hooks folder but a `*.sample`.
 * @module
 */

import { gitDirOf, parseGitConfig, SAFE_GIT_CONFIG } from "../shell/programs/git_repo.ts";

/**
 * The program-running state of the repository at `ws`: `config\n<file>\n<key>` → value for each
 * key not in `SAFE_GIT_CONFIG`, `hook\n<name>` → fingerprint (inode, size, mtime, mode) for each
 * hook that is not a `*.sample`. Empty without a repository.
 */
export function gitProgramState(ws: string): Map<string, string> {
  const out = new Map<string, string>();
  const dir = gitDirOf(ws);
  if (!dir) return out;
  let common = dir;
  try {
    common = `${dir}/${Deno.readTextFileSync(`${dir}/commondir`).trim()}`;
  } catch { /* not a linked worktree */ }
  for (const [d, f] of [[common, "config"], [dir, "config.worktree"]]) {
    let text: string;
    try {
      text = Deno.readTextFileSync(`${d}/${f}`);
    } catch {
      continue;
    }
    for (const [k, v] of parseGitConfig(text)) {
      if (!SAFE_GIT_CONFIG.test(k)) out.set(`config\n${f}\n${k}`, v);
    }
  }
  try {
    for (const e of Deno.readDirSync(`${common}/hooks`)) {
      if (e.name.endsWith(".sample")) continue;
      try {
        const st = Deno.lstatSync(`${common}/hooks/${e.name}`);
        out.set(`hook\n${e.name}`, `${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.mode}`);
      } catch { /* gone */ }
    }
  } catch { /* no hooks folder */ }
  return out;
}

/**
 * The tool result's line for what differs between two {@link gitProgramState}s (keys and hooks
 * added or changed; removed ones run nothing), or undefined when nothing does.
 */
export function gitProgramLine(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
): string | undefined {
  const keys: string[] = [];
  const hooks: string[] = [];
  for (const [k, v] of after) {
    if (before.get(k) === v) continue;
    const [kind, a, b] = k.split("\n");
    if (kind === "hook") hooks.push(`.git/hooks/${a}`);
    else {keys.push(
        b.includes("\u0000unparsed") ? `${a} (a line it could not read)` : `${b} in ${a}`,
      );}
  }
  if (!keys.length && !hooks.length) return undefined;
  const parts = [
    ...(keys.length ? [`git config keys that may run a program: ${keys.sort().join(", ")}`] : []),
    ...(hooks.length ? [`hooks: ${hooks.sort().join(", ")}`] : []),
  ];
  return `the command changed the repository's git settings that run programs on the host's next git command (kept: a Write rule allows the git dir; the user should review them before running git on the host): ${
    parts.join("; ")
  }`;
}
