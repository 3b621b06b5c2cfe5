/**
 * A child's own git worktree (issue 17: parallel coders do not share one working tree).
 *
 * - {@link wantsWorktree}: the decision. A spawn's `worktree: true|false` wins; else the child
 *   agent's `worktree` setting: `always`, `never`, or `auto` (default) = on for a `coder` child
 *   spawned while another coder child of the same parent runs.
 * - {@link addWorktree}: `git worktree add --detach <dataDir>/worktrees/<id> <base>` where
 *   `<base>` is a commit of the parent's working tree as it is now (HEAD plus its uncommitted and
 *   untracked, not ignored, files; built through a temporary index, so the user's index and
 *   branches are untouched). The checkout is outside the workspace.
 * - {@link finishWorktree}: the child's change as a patch (`git diff --binary --no-renames` of its
 *   worktree, new files included, against `<base>`), kept at `<dataDir>/worktrees/<id>.patch`;
 *   applied to the parent's working tree with `git apply --3way` on a temporary index of that
 *   tree as it is now (another child's applied work included), so a conflict leaves the parent's
 *   files untouched and is reported with the conflicting files and the patch path — never merged
 *   over. Then the worktree is removed (`git worktree remove --force`).
 * Git errors are thrown as {@link WorktreeError} naming the git command and its stderr.
 * @module
 */
import { join } from "node:path";

/** An agent's `worktree` setting. */
export type WorktreeSetting = "auto" | "always" | "never";

/** A git command failed. */
export class WorktreeError extends Error {
  override name = "WorktreeError";
}

/** See the module doc. */
export function wantsWorktree(o: {
  spawn?: boolean;
  setting?: WorktreeSetting;
  agent: string;
  /** Coder children of the same parent running (or queued) now, this one not counted. */
  codersRunning: number;
}): boolean {
  if (o.spawn !== undefined) return o.spawn;
  const s = o.setting ?? "auto";
  if (s === "always") return true;
  if (s === "never") return false;
  return o.agent === "coder" && o.codersRunning > 0;
}

/** A child's checkout. */
export interface ChildWorktree {
  id: string;
  /** The parent's repository top level (where the patch is applied). */
  repo: string;
  /** The checkout (outside the workspace). */
  path: string;
  /** The commit it started from (the parent's working tree at spawn). */
  base: string;
  dataDir: string;
}

/** How a child's change came back. */
export type WorktreeOutcome =
  | { status: "unchanged" }
  | { status: "applied"; files: string[]; patch: string }
  | { status: "conflict"; files: string[]; patch: string; message: string };

const IDENTITY = ["-c", "user.name=coyote", "-c", "user.email=coyote@localhost"];

async function git(
  cwd: string,
  args: string[],
  opts: { index?: string; ok?: (code: number) => boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: "0" };
  if (opts.index) env.GIT_INDEX_FILE = opts.index;
  const out = await new Deno.Command("git", {
    args: [...IDENTITY, ...args],
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const r = {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
  if (!(opts.ok ?? ((c) => c === 0))(r.code)) {
    throw new WorktreeError(`git ${args.join(" ")} (in ${cwd}) failed: ${r.stderr.trim()}`);
  }
  return r;
}

/** A temporary index file holding `dir`'s working tree (tracked + untracked, not ignored). */
async function indexOfWorkingTree(dir: string, from: string | null): Promise<string> {
  const index = await Deno.makeTempFile({ prefix: "coyote-index-" });
  await Deno.remove(index);
  await git(dir, from ? ["read-tree", from] : ["read-tree", "--empty"], { index });
  await git(dir, ["add", "-A"], { index });
  return index;
}

/** The top level of the repository holding `cwd`, or null when it is none. */
export async function repoTop(cwd: string): Promise<string | null> {
  const r = await git(cwd, ["rev-parse", "--show-toplevel"], { ok: () => true }).catch(() => null);
  return r && r.code === 0 ? r.stdout.trim() : null;
}

/** See the module doc. @throws WorktreeError when `cwd` is no git repository or git fails. */
export async function addWorktree(
  cwd: string,
  dataDir: string,
  id: string,
): Promise<ChildWorktree> {
  const repo = await repoTop(cwd);
  if (!repo) {
    throw new WorktreeError(`${cwd} is not inside a git repository: no worktree for ${id}`);
  }
  const head = await git(repo, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], {
    ok: () => true,
  });
  const parentCommit = head.code === 0 ? head.stdout.trim() : null;
  const index = await indexOfWorkingTree(repo, parentCommit);
  let base: string;
  try {
    const tree = (await git(repo, ["write-tree"], { index })).stdout.trim();
    base = (await git(repo, [
      "commit-tree",
      tree,
      ...(parentCommit ? ["-p", parentCommit] : []),
      "-m",
      `coyote: base of ${id}`,
    ])).stdout.trim();
  } finally {
    await Deno.remove(index).catch(() => {});
  }
  const root = join(dataDir, "worktrees");
  await Deno.mkdir(root, { recursive: true });
  const path = join(root, id);
  await git(repo, ["worktree", "add", "--detach", path, base]);
  return { id, repo, path, base, dataDir };
}

/** The child's change against its base (new files included); "" when it changed nothing. */
export async function worktreePatch(wt: ChildWorktree): Promise<string> {
  const index = await indexOfWorkingTree(wt.path, wt.base);
  try {
    return (await git(wt.path, ["diff", "--cached", "--binary", "--no-renames", wt.base], {
      index,
    })).stdout;
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}

/** See the module doc. The worktree is removed whatever the outcome. */
export async function finishWorktree(wt: ChildWorktree): Promise<WorktreeOutcome> {
  try {
    const diff = await worktreePatch(wt);
    if (!diff) return { status: "unchanged" };
    const patch = join(wt.dataDir, "worktrees", `${wt.id}.patch`);
    await Deno.writeTextFile(patch, diff);
    return await applyPatch(wt.repo, patch);
  } finally {
    await git(wt.repo, ["worktree", "remove", "--force", wt.path], { ok: () => true })
      .catch(() => {});
    await Deno.remove(wt.path, { recursive: true }).catch(() => {});
    await git(wt.repo, ["worktree", "prune"], { ok: () => true }).catch(() => {});
  }
}

/**
 * Applies `patch` to `repo`'s working tree with `git apply --3way` through a temporary index of
 * that tree: applied, its files are written; a conflict writes nothing (see the module doc).
 */
export async function applyPatch(repo: string, patch: string): Promise<WorktreeOutcome> {
  const files = (await git(repo, ["apply", "--numstat", patch])).stdout.split("\n")
    .filter(Boolean).map((l) => l.split("\t").slice(2).join("\t"));
  const head = await git(repo, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], {
    ok: () => true,
  });
  const index = await indexOfWorkingTree(repo, head.code === 0 ? head.stdout.trim() : null);
  try {
    const r = await git(repo, ["apply", "--cached", "--3way", "--whitespace=nowarn", patch], {
      index,
      ok: () => true,
    });
    if (r.code !== 0) {
      const unmerged = (await git(repo, ["ls-files", "-u", "-z"], { index })).stdout
        .split("\0").filter(Boolean).map((l) => l.split("\t")[1]);
      const conflicting = [...new Set(unmerged)];
      return {
        status: "conflict",
        files: conflicting.length ? conflicting : files,
        patch,
        message: (r.stderr || r.stdout).trim(),
      };
    }
    const present = new Set(
      (await git(repo, ["ls-files", "-z", "--", ...files], { index })).stdout.split("\0")
        .filter(Boolean),
    );
    const write = files.filter((f) => present.has(f));
    if (write.length) await git(repo, ["checkout-index", "-f", "--", ...write], { index });
    for (const f of files.filter((f) => !present.has(f))) {
      await Deno.remove(join(repo, f)).catch(() => {});
    }
    return { status: "applied", files, patch };
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}

/** One line for the collect result. */
export function outcomeText(o: WorktreeOutcome): string {
  if (o.status === "unchanged") return "worktree: no change";
  if (o.status === "applied") {
    return `worktree: its change was applied to the workspace (${
      o.files.join(", ")
    }); patch ${o.patch}`;
  }
  return `worktree: its change CONFLICTS with the workspace and was NOT applied (conflicting: ${
    o.files.join(", ")
  }); the patch is kept at ${o.patch} — resolve it (git apply --3way ${o.patch}) or send the child a follow-up`;
}
