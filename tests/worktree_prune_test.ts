/**
 * A crashed run's child worktrees (core/supervisor/worktree_prune.ts): a real Deno process makes a
 * child's worktree, writes into it and is killed (SIGKILL: nothing of its own cleanup runs); the
 * next process's first worktree prunes that checkout and git's entry for it, keeping the change as
 * `<id>.orphan.patch`, and leaves a live process's checkout and a fresh unowned one alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { addWorktree, removeWorktree } from "../core/supervisor/worktree.ts";
import { git } from "./support/journeys.ts";

const MODULE = new URL("../core/supervisor/worktree.ts", import.meta.url).href;

/** A Deno process that makes worktree `id`, writes `file` in it, says "ready", then waits. */
async function crashingOwner(repo: string, data: string, id: string, file: string) {
  const code = `
    import { addWorktree } from ${JSON.stringify(MODULE)};
    const wt = await addWorktree(${JSON.stringify(repo)}, ${JSON.stringify(data)}, ${
    JSON.stringify(id)
  });
    await Deno.writeTextFile(wt.path + "/" + ${JSON.stringify(file)}, "written by the child\\n");
    console.log("ready");
    await new Promise(() => setTimeout(() => {}, 600_000));`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let got = "";
  while (!got.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the owner process ended early");
    got += value;
  }
  child.kill("SIGKILL");
  await child.status;
  reader.releaseLock();
  await child.stdout.cancel().catch(() => {});
}

Deno.test("worktree prune: a killed run's checkout goes at the next run's first worktree, its change kept as a patch; live and fresh unowned ones stay", async () => {
  const root = await Deno.makeTempDir({ prefix: "coyote-wtprune-" });
  const repo = join(root, "repo"), data = join(root, "data");
  await Deno.mkdir(repo);
  await git(repo, "init", "-q");
  await Deno.writeTextFile(join(repo, "a.txt"), "one\n");
  await git(repo, "add", ".");
  await git(repo, "commit", "-qm", "base");
  try {
    await crashingOwner(repo, data, "coder-dead0001", "new-work.txt");
    const wts = join(data, "worktrees");
    assert.ok((await Deno.stat(join(wts, "coder-dead0001"))).isDirectory);
    // A checkout of an older build (no owner record), made just now: within its grace period.
    await git(repo, "worktree", "add", "-q", "--detach", join(wts, "coder-unowned1"), "HEAD");

    const live = await addWorktree(repo, data, "coder-live0001");
    const gone = await Deno.lstat(join(wts, "coder-dead0001")).then(() => false, () => true);
    assert.ok(gone, "the dead run's checkout is removed");
    const list = await git(repo, "worktree", "list", "--porcelain");
    assert.doesNotMatch(list, /coder-dead0001/, "git's entry for it is pruned");
    assert.match(list, /coder-live0001/);
    assert.match(list, /coder-unowned1/, "an unowned checkout within its grace period stays");
    const patch = await Deno.readTextFile(join(wts, "coder-dead0001.orphan.patch"));
    assert.match(patch, /\+\+\+ b\/new-work\.txt/);
    assert.match(patch, /\+written by the child/);
    // The patch applies to the repository: the child's work is not lost.
    await git(repo, "apply", join(wts, "coder-dead0001.orphan.patch"));
    assert.equal(await Deno.readTextFile(join(repo, "new-work.txt")), "written by the child\n");
    await removeWorktree(live);
    assert.equal(
      await Deno.lstat(join(wts, "coder-live0001.owner")).then(() => true, () => false),
      false,
      "a removed checkout's owner record goes with it",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
