/**
 * Children's own git worktrees (core/supervisor/worktree.ts; issue 17), on real git repositories:
 * two parallel coder children editing different files both come back; editing the same lines, the
 * second is reported as conflicting with its patch kept and the first one's work untouched; two
 * ending at once queue; a kept worktree's later runs come back as their own patches; the guard of a
 * workspace inside the data dir. Through `agent__spawn`: tests/worktree_spawn_test.ts.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  addWorktree,
  collectWorktree,
  finishWorktree,
  outcomeText,
  removeWorktree,
  wantsWorktree,
} from "../core/supervisor/worktree.ts";
import { Policy } from "../core/policy/policy.ts";

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@t", "-c", "user.name=t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

/** A repo with a.txt and b.txt committed, an uncommitted edit of b.txt and an untracked u.txt. */
async function fixture() {
  const root = await Deno.makeTempDir({ prefix: "coyote-wt-" });
  const repo = join(root, "repo");
  const data = join(root, "data");
  await Deno.mkdir(repo);
  await git(repo, "init", "-q");
  await Deno.writeTextFile(join(repo, "a.txt"), "one\ntwo\nthree\n");
  await Deno.writeTextFile(join(repo, "b.txt"), "alpha\n");
  await git(repo, "add", ".");
  await git(repo, "commit", "-qm", "base");
  await Deno.writeTextFile(join(repo, "b.txt"), "alpha\nbeta\n");
  await Deno.writeTextFile(join(repo, "u.txt"), "untracked\n");
  return { root, repo, data, cleanup: () => Deno.remove(root, { recursive: true }) };
}

Deno.test("worktree: two parallel children editing different files — both changes applied (new files too), worktrees removed", async () => {
  const f = await fixture();
  try {
    const [w1, w2] = await Promise.all([
      addWorktree(f.repo, f.data, "coder-1"),
      addWorktree(f.repo, f.data, "coder-2"),
    ]);
    assert.ok(w1.path.startsWith(f.data) && !w1.path.startsWith(f.repo));
    // Each starts from the parent's working tree as it is (uncommitted and untracked included).
    assert.equal(await Deno.readTextFile(join(w1.path, "b.txt")), "alpha\nbeta\n");
    assert.equal(await Deno.readTextFile(join(w2.path, "u.txt")), "untracked\n");
    await Deno.writeTextFile(join(w1.path, "a.txt"), "ONE\ntwo\nthree\n");
    await Deno.writeTextFile(join(w1.path, "new.txt"), "created by coder-1\n");
    await Deno.writeTextFile(join(w2.path, "b.txt"), "alpha\nbeta\ngamma\n");
    // The parent's files are untouched while the children work.
    assert.equal(await Deno.readTextFile(join(f.repo, "a.txt")), "one\ntwo\nthree\n");
    const o1 = await finishWorktree(w1);
    const o2 = await finishWorktree(w2);
    assert.equal(o1.status, "applied");
    assert.equal(o2.status, "applied");
    assert.deepEqual(o1.status === "applied" && o1.files.sort(), ["a.txt", "new.txt"]);
    assert.equal(await Deno.readTextFile(join(f.repo, "a.txt")), "ONE\ntwo\nthree\n");
    assert.equal(await Deno.readTextFile(join(f.repo, "new.txt")), "created by coder-1\n");
    assert.equal(await Deno.readTextFile(join(f.repo, "b.txt")), "alpha\nbeta\ngamma\n");
    assert.equal(await Deno.readTextFile(join(f.repo, "u.txt")), "untracked\n");
    // Gone: the checkouts and their worktree entries; the user's index and HEAD unchanged.
    await assert.rejects(Deno.stat(w1.path));
    assert.doesNotMatch(await git(f.repo, "worktree", "list"), /coder-/);
    assert.equal(await git(f.repo, "diff", "--cached", "--name-only"), "");
    assert.equal((await git(f.repo, "log", "--oneline")).trim().split("\n").length, 1);
  } finally {
    await f.cleanup();
  }
});

Deno.test("worktree: two children editing the same lines — the first applied, the second reported as conflicting with its patch, the first's work kept", async () => {
  const f = await fixture();
  try {
    const w1 = await addWorktree(f.repo, f.data, "coder-a");
    const w2 = await addWorktree(f.repo, f.data, "coder-b");
    await Deno.writeTextFile(join(w1.path, "a.txt"), "one\nTWO by a\nthree\n");
    await Deno.writeTextFile(join(w2.path, "a.txt"), "one\nTWO by b\nthree\n");
    const o1 = await finishWorktree(w1);
    const o2 = await finishWorktree(w2);
    assert.equal(o1.status, "applied");
    assert.equal(o2.status, "conflict");
    if (o2.status !== "conflict") return;
    assert.deepEqual(o2.files, ["a.txt"]);
    // Never merged over: the parent's file is the first child's, no conflict markers.
    assert.equal(await Deno.readTextFile(join(f.repo, "a.txt")), "one\nTWO by a\nthree\n");
    const kept = await Deno.readTextFile(o2.patch);
    assert.match(kept, /\+TWO by b/);
    assert.match(outcomeText(o2), /CONFLICTS[^]*conflicting: a\.txt[^]*coder-b\.patch/);
    await assert.rejects(Deno.stat(w2.path));
  } finally {
    await f.cleanup();
  }
});

Deno.test("worktree: a child that changed nothing comes back unchanged; outside a git repo there is no worktree", async () => {
  const f = await fixture();
  try {
    const w = await addWorktree(f.repo, f.data, "coder-0");
    assert.deepEqual(await finishWorktree(w), { status: "unchanged" });
    const plain = join(f.root, "plain");
    await Deno.mkdir(plain);
    await assert.rejects(addWorktree(plain, f.data, "coder-x"), /not inside a git repository/);
  } finally {
    await f.cleanup();
  }
});

Deno.test("worktree: the decision — spawn flag wins, then always/never, auto = a coder while another coder runs", () => {
  assert.equal(wantsWorktree({ agent: "coder", codersRunning: 0 }), false);
  assert.equal(wantsWorktree({ agent: "coder", codersRunning: 1 }), true);
  assert.equal(wantsWorktree({ agent: "explore", codersRunning: 2 }), false);
  assert.equal(wantsWorktree({ agent: "explore", codersRunning: 0, spawn: true }), true);
  assert.equal(wantsWorktree({ agent: "coder", codersRunning: 3, spawn: false }), false);
  assert.equal(wantsWorktree({ agent: "x", codersRunning: 0, setting: "always" }), true);
  assert.equal(wantsWorktree({ agent: "coder", codersRunning: 1, setting: "never" }), false);
});

Deno.test("worktree: a kept worktree's later runs come back as their own patches (<id>-2.patch), only what changed since", async () => {
  const f = await fixture();
  try {
    const w = await addWorktree(f.repo, f.data, "coder-r");
    await Deno.writeTextFile(join(w.path, "a.txt"), "ONE\ntwo\nthree\n");
    const o1 = await collectWorktree(w);
    assert.equal(o1.status === "applied" && o1.patch, join(f.data, "worktrees", "coder-r.patch"));
    // Still there for a follow-up; the next patch holds only the new change.
    await Deno.writeTextFile(join(w.path, "d.txt"), "second run\n");
    const o2 = await collectWorktree(w);
    assert.equal(o2.status, "applied");
    if (o2.status !== "applied") return;
    assert.deepEqual(o2.files, ["d.txt"]);
    assert.equal(o2.patch, join(f.data, "worktrees", "coder-r-2.patch"));
    assert.equal(await Deno.readTextFile(join(f.repo, "d.txt")), "second run\n");
    assert.equal(await Deno.readTextFile(join(f.repo, "a.txt")), "ONE\ntwo\nthree\n");
    assert.deepEqual(await collectWorktree(w), { status: "unchanged" });
    await removeWorktree(w);
    await assert.rejects(Deno.stat(w.path));
    await Deno.stat(o2.patch);
  } finally {
    await f.cleanup();
  }
});

Deno.test("worktree: two children ending at once on the same lines — the applications queue: one applied, one conflict, never both", async () => {
  const f = await fixture();
  try {
    const [w1, w2] = await Promise.all([
      addWorktree(f.repo, f.data, "coder-p"),
      addWorktree(f.repo, f.data, "coder-q"),
    ]);
    await Deno.writeTextFile(join(w1.path, "a.txt"), "one\nTWO by p\nthree\n");
    await Deno.writeTextFile(join(w2.path, "a.txt"), "one\nTWO by q\nthree\n");
    const outs = await Promise.all([finishWorktree(w1), finishWorktree(w2)]);
    assert.deepEqual(outs.map((o) => o.status).sort(), ["applied", "conflict"]);
    const won = outs[0].status === "applied" ? "p" : "q";
    assert.equal(await Deno.readTextFile(join(f.repo, "a.txt")), `one\nTWO by ${won}\nthree\n`);
  } finally {
    await f.cleanup();
  }
});

Deno.test("worktree: a cancelled child's change is written as a patch and not applied", async () => {
  const f = await fixture();
  try {
    const w = await addWorktree(f.repo, f.data, "coder-c");
    await Deno.writeTextFile(join(w.path, "a.txt"), "cancelled\n");
    const o = await collectWorktree(w, { apply: false });
    assert.equal(o.status, "not_applied");
    assert.equal(await Deno.readTextFile(join(f.repo, "a.txt")), "one\ntwo\nthree\n");
    assert.match(
      outcomeText(o),
      /NOT applied \(the child was cancelled; a\.txt\); the patch is kept at .*coder-c\.patch/,
    );
    await removeWorktree(w);
  } finally {
    await f.cleanup();
  }
});

Deno.test("worktree: the guard of a workspace inside the data dir (a child's worktree) allows writes there; the rest of the data dir stays protected", async () => {
  const f = await fixture();
  try {
    const w = await addWorktree(f.repo, f.data, "coder-g");
    const policy = Policy.create({}, { allow: [], deny: [] }, {
      workspace: w.path,
      configDir: join(f.root, "cfg"),
      dataDir: f.data,
    });
    const decide = async (path: string) =>
      (await policy.evaluate({ type: "write", path })).decision;
    assert.equal(await decide(join(w.path, "a.txt")), "allow");
    assert.equal(await decide("new/file.ts"), "allow");
    // Its .git file and the data dir beyond it are not writable by default.
    assert.notEqual(await decide(join(w.path, ".git")), "allow");
    assert.notEqual(await decide(join(f.data, "worktrees", "coder-g.patch")), "allow");
    assert.notEqual(await decide(join(f.data, "transcripts", "x.jsonl")), "allow");
    // The parent's tree is outside this workspace: asked, not allowed; so is reading the rest of
    // the data dir (other sessions' transcripts).
    assert.equal(await decide(join(f.repo, "a.txt")), "ask");
    const read = async (path: string) => (await policy.evaluate({ type: "read", path })).decision;
    assert.equal(await read(join(w.path, "a.txt")), "allow");
    assert.equal(await read(join(f.data, "transcripts", "x.jsonl")), "ask");
    await removeWorktree(w);
  } finally {
    await f.cleanup();
  }
});
