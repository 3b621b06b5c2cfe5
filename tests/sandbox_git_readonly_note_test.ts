/**
 * Final trial of the round: inside the OS sandbox `.git/` is read-only (hooks and config run
 * later, outside it), so `git commit` fails with git's bare "Read-only file system" and the model
 * was not told why or what to do; it retried. The tool result now says it
 * (plugins/exec/mod.ts `readOnlyGitNote`). Headless on real bwrap, as a user runs it; with
 * `--allow 'Write(.git/**)'` the commit works and no note is added.
 */
import assert from "node:assert/strict";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { readOnlyGitNote } from "../plugins/exec/mod.ts";
import { headlessTurns } from "./support/headless_attack.ts";

const COMMIT =
  "git add -A && git -c user.name=t -c user.email=t@e commit -qm change && echo COMMITTED";

async function repo(): Promise<string> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "ws-git-ro-" }));
  const o = await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  assert.ok(o.success);
  await Deno.writeTextFile(`${ws}/a.txt`, "a\n");
  return ws;
}

Deno.test("sandbox: a git write failing on the read-only .git/ gets a note saying why and what to do", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const ws = await repo();
  try {
    const ro = await headlessTurns(ws, [[{ id: "c", command: COMMIT }]]);
    assert.match(ro.result("c"), /Read-only file system/, ro.result("c"));
    assert.match(ro.result("c"), /keeps \.git\/ read-only.*--allow 'Write\(\.git\/\*\*\)'/);
    const rw = await headlessTurns(ws, [[{ id: "c", command: COMMIT }]], [
      "--allow",
      "Write(.git/**)",
    ]);
    assert.match(rw.result("c"), /COMMITTED/, rw.result("c"));
    assert.doesNotMatch(rw.result("c"), /keeps \.git\/ read-only/);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("readOnlyGitNote: only a failure writing .git/", () => {
  const ro = "fatal: Unable to create '/w/.git/index.lock': Read-only file system";
  assert.ok(readOnlyGitNote(128, ro));
  assert.equal(readOnlyGitNote(0, ro), undefined);
  assert.equal(readOnlyGitNote(1, "touch: cannot touch 'x': Read-only file system"), undefined);
  assert.equal(readOnlyGitNote(1, "fatal: not a git repository"), undefined);
});
