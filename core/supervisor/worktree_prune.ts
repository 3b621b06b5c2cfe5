/**
 * Child worktrees a crashed Coyote left behind (issue 17; docs/subagents.md "Worktrees"): each
 * checkout under `<dataDir>/worktrees/<id>` carries an owner record `<id>.owner` (the process id
 * and, on Linux, its start time from `/proc/<pid>/stat`, so a reused pid is not mistaken for the
 * owner). The first worktree a process makes prunes the others whose owner is gone: their
 * uncollected change (tracked, untracked, not ignored, against the checkout's `HEAD`) is kept as
 * `<id>.orphan.patch` first — nothing a child wrote is lost — then the checkout and git's entry
 * for it are removed (`git worktree remove --force`, `git worktree prune`). A checkout without an
 * owner record is pruned once it is older than {@link UNOWNED_GRACE_MS}. Without `/proc` (macOS)
 * a live owner cannot be told from a dead one: nothing is pruned there.
 * @module
 */
import { join } from "../util/path.ts";

/** A checkout without an owner record is left alone this long (ms) after its last change. */
export const UNOWNED_GRACE_MS = 24 * 3600_000;

/** The start time of process `pid` (clock ticks since boot, `/proc/<pid>/stat` field 22), or null. */
function startOf(pid: number): string | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

const hasProc = () => startOf(Deno.pid) !== null;

/** Writes `<root>/<id>.owner` for this process (see the module doc). Never throws. */
export function markOwner(root: string, id: string): void {
  try {
    Deno.writeTextFileSync(
      join(root, `${id}.owner`),
      JSON.stringify({ pid: Deno.pid, start: startOf(Deno.pid) }),
    );
  } catch { /* the checkout works without it; it is only pruned later */ }
}

function ownerAlive(root: string, id: string): boolean | null {
  let rec: { pid?: unknown; start?: unknown };
  try {
    rec = JSON.parse(Deno.readTextFileSync(join(root, `${id}.owner`)));
  } catch {
    return null;
  }
  if (typeof rec.pid !== "number") return null;
  const start = startOf(rec.pid);
  return start !== null && start === rec.start;
}

async function git(cwd: string, args: string[], env: Record<string, string> = {}) {
  const o = await new Deno.Command("git", {
    args,
    cwd,
    env: { GIT_TERMINAL_PROMPT: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { ok: o.success, stdout: new TextDecoder().decode(o.stdout) };
}

/** The orphan's change against its `HEAD` (new files included), or "" (none, or not readable). */
async function orphanPatch(path: string): Promise<string> {
  const index = await Deno.makeTempFile({ prefix: "coyote-index-" });
  try {
    const env = { GIT_INDEX_FILE: index };
    if (!(await git(path, ["read-tree", "HEAD"], env)).ok) return "";
    if (!(await git(path, ["add", "-A"], env)).ok) return "";
    const d = await git(path, ["diff", "--cached", "--binary", "--no-renames", "HEAD"], env);
    return d.ok ? d.stdout : "";
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}

/**
 * Prunes the orphaned checkouts under `root` (`<dataDir>/worktrees`); resolves the patches kept.
 * Never throws: a checkout that cannot be read or removed stays for a later try.
 */
export async function pruneOrphans(root: string, now = Date.now()): Promise<string[]> {
  if (!hasProc()) return [];
  const kept: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(root)];
  } catch {
    return kept;
  }
  for (const e of entries) {
    if (!e.isDirectory) continue;
    const path = join(root, e.name);
    const alive = ownerAlive(root, e.name);
    if (alive) continue;
    if (alive === null) {
      const m = Deno.statSync(path).mtime?.getTime() ?? now;
      if (now - m < UNOWNED_GRACE_MS) continue;
    }
    try {
      const patch = await orphanPatch(path);
      if (patch) {
        const file = join(root, `${e.name}.orphan.patch`);
        await Deno.writeTextFile(file, patch);
        kept.push(file);
      }
      const common = (await git(path, ["rev-parse", "--path-format=absolute", "--git-common-dir"]))
        .stdout.trim();
      if (common) {
        await git(root, [`--git-dir=${common}`, "worktree", "remove", "--force", path]);
      }
      await Deno.remove(path, { recursive: true }).catch(() => {});
      if (common) await git(root, [`--git-dir=${common}`, "worktree", "prune"]);
      await Deno.remove(join(root, `${e.name}.owner`)).catch(() => {});
    } catch { /* left for a later try */ }
  }
  return kept;
}
