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
 * - {@link collectWorktree}: the child's change as a patch (`git diff --binary --no-renames` of its
 *   worktree, new files included, against `<base>`), kept at `<dataDir>/worktrees/<id>.patch`
 *   (`<id>-2.patch`, … for later runs); applied to the parent's working tree with
 *   `git apply --3way` on a temporary index of that tree as it is now (another child's applied
 *   work included; one application per repository at a time), so a conflict leaves the parent's
 *   files untouched and is reported with the conflicting files and the patch path — never merged
 *   over. {@link removeWorktree}: `git worktree remove --force`; {@link finishWorktree}: both.
 * - The supervisor's side (core/supervisor/supervisor.ts, which imports this module when a child
 *   starts): {@link placeRun} at a child's first run (its session then opens in the worktree,
 *   core/session/child_dir.ts), {@link bringBack} at each run's end (the result's line and a
 *   `worktree` event, {@link worktreeEvent}), {@link dropWorktree} when its session closes.
 * - A crashed run's checkouts are pruned at a process's first {@link addWorktree}, their change
 *   kept as `<id>.orphan.patch` (./worktree_prune.ts).
 * Git errors are thrown as {@link WorktreeError} naming the git command and its stderr.
 * @module
 */
import { join, relative } from "../util/path.ts";

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
  /** Patches written so far (see {@link collectWorktree}). */
  round?: number;
}

/** How a child's change came back. */
export type WorktreeOutcome =
  | { status: "unchanged" }
  | { status: "applied"; files: string[]; patch: string }
  | { status: "conflict"; files: string[]; patch: string; message: string }
  | { status: "not_applied"; files: string[]; patch: string; message: string };

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

/** A commit of `dir`'s working tree (tracked + untracked, not ignored) on top of `parent`. */
async function snapshot(dir: string, parent: string | null, message: string): Promise<string> {
  const index = await indexOfWorkingTree(dir, parent);
  try {
    const tree = (await git(dir, ["write-tree"], { index })).stdout.trim();
    return (await git(dir, ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message]))
      .stdout.trim();
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}

/** The top level of the repository holding `cwd`, or null when it is none. */
export async function repoTop(cwd: string): Promise<string | null> {
  const r = await git(cwd, ["rev-parse", "--show-toplevel"], { ok: () => true }).catch(() => null);
  return r && r.code === 0 ? r.stdout.trim() : null;
}

/** The prune of each worktrees folder this process ran (./worktree_prune.ts), by folder. */
const pruned = new Map<string, Promise<string[]>>();

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
  const base = await snapshot(repo, parentCommit, `coyote: base of ${id}`);
  const root = join(dataDir, "worktrees");
  await Deno.mkdir(root, { recursive: true });
  // The first checkout of this process: a crashed run's checkouts go (their change kept).
  const prune = await import("./worktree_prune.ts");
  if (!pruned.has(root)) pruned.set(root, prune.pruneOrphans(root).catch(() => []));
  await pruned.get(root);
  const path = join(root, id);
  prune.markOwner(root, id);
  await inRepo(repo, () => git(repo, ["worktree", "add", "--detach", path, base]));
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

/**
 * The child's change since its last collection, as a patch applied to the parent's working tree
 * (see the module doc), the worktree kept (a follow-up to the same child works on in it). The
 * patch is `<id>.patch`, then `<id>-2.patch`, … for later runs of the child. Applied, the next
 * collection starts from the tree as it is now; a conflict keeps the base, so the unapplied change
 * is offered again. `apply: false` (a cancelled child) writes the patch and applies nothing.
 */
export async function collectWorktree(
  wt: ChildWorktree,
  opts: { apply?: boolean } = {},
): Promise<WorktreeOutcome> {
  const diff = await worktreePatch(wt);
  if (!diff) return { status: "unchanged" };
  wt.round = (wt.round ?? 0) + 1;
  const name = wt.round === 1 ? `${wt.id}.patch` : `${wt.id}-${wt.round}.patch`;
  const patch = join(wt.dataDir, "worktrees", name);
  await Deno.writeTextFile(patch, diff);
  if (opts.apply === false) {
    const files = (await git(wt.repo, ["apply", "--numstat", patch])).stdout.split("\n")
      .filter(Boolean).map((l) => l.split("\t").slice(2).join("\t"));
    return { status: "not_applied", files, patch, message: "the child was cancelled" };
  }
  const out = await applyPatch(wt.repo, patch);
  if (out.status === "applied") wt.base = await snapshot(wt.path, wt.base, `coyote: ${name}`);
  return out;
}

/** Removes the checkout and its worktree entry (the patches stay). Never throws. */
export function removeWorktree(wt: ChildWorktree): Promise<void> {
  return inRepo(wt.repo, async () => {
    await git(wt.repo, ["worktree", "remove", "--force", wt.path], { ok: () => true })
      .catch(() => {});
    await Deno.remove(wt.path, { recursive: true }).catch(() => {});
    await Deno.remove(`${wt.path}.owner`).catch(() => {});
    await git(wt.repo, ["worktree", "prune"], { ok: () => true }).catch(() => {});
  }).catch(() => {});
}

/** {@link collectWorktree} once, then {@link removeWorktree} whatever the outcome. */
export async function finishWorktree(wt: ChildWorktree): Promise<WorktreeOutcome> {
  try {
    return await collectWorktree(wt);
  } finally {
    await removeWorktree(wt);
  }
}

/**
 * The last operation per repository that changes its worktree list or working tree — a worktree
 * added or removed, a patch applied — so this process runs one at a time there: two `git worktree
 * add` at once race on `.git/worktrees/` ("failed to read …/commondir"), two applications would
 * both apply to the tree as it was before either.
 */
const repoQueue = new Map<string, Promise<unknown>>();

/** Runs `f` after the operations queued for `repo` (see {@link repoQueue}). */
function inRepo<T>(repo: string, f: () => Promise<T>): Promise<T> {
  const turn = (repoQueue.get(repo) ?? Promise.resolve()).then(f);
  const settled = turn.catch(() => {});
  repoQueue.set(repo, settled);
  void settled.then(() => repoQueue.get(repo) === settled && repoQueue.delete(repo));
  return turn;
}

/**
 * Applies `patch` to `repo`'s working tree with `git apply --3way` through a temporary index of
 * that tree: applied, its files are written; a conflict writes nothing (see the module doc).
 * Applications to one repository run one after the other: two children ending at once must not
 * both apply to the tree as it was before either.
 */
export function applyPatch(repo: string, patch: string): Promise<WorktreeOutcome> {
  return inRepo(repo, () => applyNow(repo, patch));
}

async function applyNow(repo: string, patch: string): Promise<WorktreeOutcome> {
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
  if (o.status === "not_applied") {
    return `worktree: its change was NOT applied (${o.message}; ${
      o.files.join(", ")
    }); the patch is kept at ${o.patch}`;
  }
  return `worktree: its change CONFLICTS with the workspace and was NOT applied (conflicting: ${
    o.files.join(", ")
  }); the patch is kept at ${o.patch} — resolve it (git apply --3way ${o.patch}) or send the child a follow-up`;
}

/**
 * Where a child starts (core/supervisor/supervisor.ts, at its first run): its own worktree when
 * {@link wantsWorktree} says so, and `cwd` inside it (the parent's folder relative to its
 * repository's top level). An `auto` decision outside a git repository is no worktree (the child
 * shares the workspace); an explicit one (spawn flag, `always`) throws there.
 * @throws WorktreeError when git fails or an explicit worktree is asked outside a repository.
 */
export async function placeChild(o: {
  id: string;
  agent: string;
  spawn?: boolean;
  setting?: WorktreeSetting;
  codersRunning: number;
  /** The parent's workspace root. */
  cwd: string;
  dataDir: string;
}): Promise<(ChildWorktree & { cwd: string }) | null> {
  if (!wantsWorktree(o)) return null;
  const explicit = o.spawn === true || o.setting === "always";
  if (!explicit && !(await repoTop(o.cwd))) return null;
  const wt = await addWorktree(o.cwd, o.dataDir, o.id);
  const rel = relative(await Deno.realPath(wt.repo), await Deno.realPath(o.cwd));
  return { ...wt, cwd: rel ? join(wt.path, rel) : wt.path };
}

/**
 * A `worktree` event for the parent's stream: an `agent_thought_chunk` whose text is readable
 * where thought chunks show and whose `_meta.coyote` holds `{event: "worktree", agent_id, status,
 * …}` (status `created` with `path`, or an outcome's status with its `files` and `patch`) — as the
 * gates' events (./gate_keeper.ts).
 */
export function worktreeEvent(agentId: string, data: { status: string } & Record<string, unknown>) {
  const text = data.status === "created"
    ? `worktree: ${agentId} works in its own git worktree ${data.path}`
    : data.status === "error"
    ? `worktree: ${agentId}: its change could not be collected: ${data.message}`
    : outcomeText(data as WorktreeOutcome).replace(/^worktree:/, `worktree: ${agentId}:`);
  return {
    sessionUpdate: "agent_thought_chunk" as const,
    content: { type: "text" as const, text: `${text}\n` },
    _meta: { coyote: { event: "worktree", agent_id: agentId, ...data } },
  };
}

/** The members of a supervisor's child run (core/supervisor/supervisor.ts `ChildRun`) used here. */
export interface WorktreeRun {
  id: string;
  agent: string;
  status: string;
  /** The spawn's `worktree` flag. */
  inWorktree?: boolean;
  worktree?: ChildWorktree & { cwd: string };
  /** The last outcome, one line for the child's result. */
  worktreeNote?: string;
  /** The last outcome itself (the worktree gate reads it: core/supervisor/gate_keeper.ts). */
  worktreeOutcome?: WorktreeOutcome;
}

type Emit = ((ev: ReturnType<typeof worktreeEvent>) => void) | null;

/** A child's first run: {@link placeChild} into `run.worktree`, and a `created` event. */
export async function placeRun(
  run: WorktreeRun,
  setting: WorktreeSetting | undefined,
  codersRunning: number,
  ws: { app: { dataDir: string }; cwd?: string },
  emit: Emit,
): Promise<void> {
  const { id, agent, inWorktree: spawn } = run;
  const cwd = ws.cwd ?? Deno.cwd();
  const wt = await placeChild({
    id,
    agent,
    spawn,
    setting,
    codersRunning,
    cwd,
    dataDir: ws.app.dataDir,
  });
  if (!wt) return;
  run.worktree = wt;
  emit?.(worktreeEvent(id, { status: "created", path: wt.path }));
}

/**
 * A child's run ended: its change back to the parent's tree ({@link collectWorktree}: applied,
 * or its conflict reported; a cancelled child's is not applied) as `run.worktreeNote` and a
 * `worktree` event. Not `kept` (no session left to resume), the worktree is removed.
 */
export async function bringBack(run: WorktreeRun, kept: boolean, emit: Emit): Promise<void> {
  try {
    const o = await collectWorktree(run.worktree!, { apply: run.status !== "cancelled" });
    run.worktreeNote = outcomeText(o);
    run.worktreeOutcome = o;
    emit?.(worktreeEvent(run.id, o));
  } catch (e) {
    run.worktreeNote = `worktree: its change could not be collected: ${(e as Error).message}`;
    emit?.(worktreeEvent(run.id, { status: "error", message: (e as Error).message }));
  }
  if (!kept) await dropWorktree(run);
}

/** Removes `run`'s worktree, if any (its session closed). */
export async function dropWorktree(run: WorktreeRun): Promise<void> {
  const wt = run.worktree;
  run.worktree = undefined;
  if (wt) await removeWorktree(wt);
}
