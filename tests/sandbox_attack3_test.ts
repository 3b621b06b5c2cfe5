/**
 * Attacker trial 2 (issue 16; docs/permissions.md "The OS sandbox"), on real bwrap with the
 * launcher called directly (no guard in between, as with the guard forced open):
 * - item 1: a protected path replaced by renaming its parent (`core.hooksPath`'s folder, a
 *   submodule's `.git` file, `.vscode/tasks.json`) — the parents are mount points now, the rename
 *   fails; where a replacement could still happen the cleanup compares identities (device and
 *   inode), removes the replacement and never removes an original that moved;
 * - item 2: files the repository's git config includes are protected like the config;
 * - item 7: a cleanup scan that stops at its folder limit says so.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, DEFAULT_SANDBOX } from "../core/policy/sandbox/mod.ts";
import { protectedBefore, removeCreated } from "../core/policy/sandbox/cleanup.ts";
import { PROTECTED_SCAN_LIMIT } from "../core/policy/sandbox/protected.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

async function world() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack3-" }));
  const ws = join(root, "ws");
  for (const d of [ws, join(root, "cfg"), join(root, "home")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: join(root, "cfg"),
    home: join(root, "home"),
  });
  await policy.globsReady();
  const sandbox = () => CommandSandbox.create(policy, DEFAULT_SANDBOX);
  const run = async (command: string) => {
    const sb = await sandbox();
    try {
      return await runTool(makeExecuteCommandTool(sb), { command }, toolContext({ cwd: ws }));
    } finally {
      sb.close();
    }
  };
  return {
    ws,
    policy,
    run,
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

const read = (p: string) => Deno.readTextFile(p).catch(() => "(missing)");
const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

Deno.test("attack 3 item 1: a protected path's parent cannot be renamed away to replace it (hooksPath, submodule .git, .vscode)", async () => {
  const w = await world();
  try {
    const git = (...args: string[]) =>
      new Deno.Command("git", { args: ["-C", w.ws, ...args] }).output();
    await git("config", "core.hooksPath", "tools/hooks");
    await Deno.mkdir(join(w.ws, "tools/hooks"), { recursive: true });
    await Deno.writeTextFile(join(w.ws, "tools/hooks/pre-commit"), "#!/bin/sh\necho original\n");
    await Deno.mkdir(join(w.ws, "deep/sub"), { recursive: true });
    await Deno.writeTextFile(join(w.ws, "deep/sub/.git"), "gitdir: ../../.git/modules/sub\n");
    await Deno.mkdir(join(w.ws, ".vscode"));
    await Deno.writeTextFile(join(w.ws, ".vscode/tasks.json"), "{}\n");
    const r = await w.run([
      "mv tools tools.old; mkdir -p tools/hooks; printf '#!/bin/sh\\ntouch PWNED\\n' > tools/hooks/pre-commit",
      "mv deep/sub deep/sub2; mkdir -p deep/sub; echo 'gitdir: ../evil' > deep/sub/.git; rm -rf deep/sub2",
      "mv deep deep.old; mkdir -p deep/sub; echo 'gitdir: ../evil' > deep/sub/.git",
      'mv .vscode .v2; mkdir -p .vscode; echo \'{"runOn":"folderOpen"}\' > .vscode/tasks.json',
      "echo done",
    ].join("; "));
    assert.match(r.content, /done/);
    assert.match(r.content, /Device or resource busy/, r.content);
    assert.equal(await read(join(w.ws, "tools/hooks/pre-commit")), "#!/bin/sh\necho original\n");
    assert.equal(await read(join(w.ws, "deep/sub/.git")), "gitdir: ../../.git/modules/sub\n");
    assert.equal(await read(join(w.ws, ".vscode/tasks.json")), "{}\n");
    for (const p of ["tools.old", "deep/sub2", "deep.old", ".v2"]) {
      assert.equal(await exists(join(w.ws, p)), false, `${p}: the rename must have failed`);
    }
    // Ordinary folders stay renamable.
    await Deno.mkdir(join(w.ws, "src/a"), { recursive: true });
    const o = await w.run("mv src src2 && mv src2 src && echo renamed");
    assert.match(o.content, /renamed/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 3 item 1: the cleanup compares identities — a replacement is removed, a moved original never is", async () => {
  const w = await world();
  try {
    // Where the parent could be renamed (no bwrap mount): simulate the attack on the host.
    await Deno.mkdir(join(w.ws, "sub/.git"), { recursive: true });
    await Deno.writeTextFile(join(w.ws, "sub/.git/HEAD"), "ref: refs/heads/main\n");
    const before = protectedBefore([join(w.ws, ".git"), join(w.ws, "sub/.git")]);
    await Deno.rename(join(w.ws, "sub"), join(w.ws, "sub2"));
    await Deno.mkdir(join(w.ws, "sub"));
    await Deno.writeTextFile(join(w.ws, "sub/.git"), "gitdir: ../evil\n");
    const msg = removeCreated(w.policy, w.ws, before) ?? "";
    assert.equal(await exists(join(w.ws, "sub/.git")), false, "the replacement is removed");
    assert.equal(
      await read(join(w.ws, "sub2/.git/HEAD")),
      "ref: refs/heads/main\n",
      "the user's own .git, moved, is never removed",
    );
    assert.match(msg, /removed 1 protected path/);
    assert.match(msg, /sub\/\.git .*the original was moved or removed and this put in its place/);
    assert.match(msg, /sub\/\.git → sub2\/\.git/);
    assert.doesNotMatch(msg, / {2}sub2\/\.git \(/, "sub2/.git is not called created");
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 3 item 7: a cleanup scan that stops at its folder limit names what it did not check", async () => {
  const w = await world();
  try {
    const many = join(w.ws, "many");
    await Deno.mkdir(many);
    const mk = await new Deno.Command("bash", {
      args: ["-c", `cd '${many}' && seq 1 ${PROTECTED_SCAN_LIMIT + 50} | xargs mkdir`],
    }).output();
    assert.equal(mk.code, 0);
    const r = await w.run("echo ran");
    assert.match(r.content, /ran/);
    assert.match(
      r.content,
      new RegExp(
        `check for created protected paths stopped at ${PROTECTED_SCAN_LIMIT} folders; \\d+ folders were not checked`,
      ),
      r.content,
    );
    assert.match(r.content, /many\/\d+/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 3 item 2: files the repository's git config includes are protected like the config", async () => {
  const w = await world();
  try {
    const git = (...args: string[]) =>
      new Deno.Command("git", { args: ["-C", w.ws, ...args] }).output();
    await git("config", "include.path", "../.gitconfig");
    await git("config", "includeIf.gitdir:/.path", "../conf/later.inc");
    await Deno.writeTextFile(join(w.ws, ".git/config.worktree"), "[include]\n\tpath = ../wt.inc\n");
    await Deno.writeTextFile(join(w.ws, ".gitconfig"), "[user]\n\tname = me\n");
    await Deno.mkdir(join(w.ws, "conf"));
    const r = await w.run([
      "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > .gitconfig",
      "mv .gitconfig gc.old",
      "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > conf/later.inc",
      "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > wt.inc",
      "echo done",
    ].join("; "));
    assert.match(r.content, /done/);
    assert.match(r.content, /Read-only file system/, r.content);
    assert.equal(await read(join(w.ws, ".gitconfig")), "[user]\n\tname = me\n");
    assert.equal(await exists(join(w.ws, "gc.old")), false);
    for (const p of ["conf/later.inc", "wt.inc"]) {
      assert.equal(await exists(join(w.ws, p)), false, `${p}: created by the command, removed`);
    }
    assert.match(r.content, /conf\/later\.inc \(included by the repository's git config/);
    // The file tools ask before writing one; an ordinary file does not.
    for (const p of [".gitconfig", "conf/later.inc", "wt.inc"]) {
      const v = await w.policy.evaluate({ type: "write", path: join(w.ws, p) });
      assert.equal(v.decision, "ask", `${p}: ${v.reason}`);
      assert.match(v.reason, /included by the repository's git config/);
    }
    const o = await w.policy.evaluate({ type: "write", path: join(w.ws, "conf/other.txt") });
    assert.notEqual(o.decision, "ask", o.reason);
  } finally {
    await w.cleanup();
  }
});
