/**
 * Protected paths, issue 16's open points (docs/permissions.md "The OS sandbox"):
 * `sandbox.protected_paths` from config (read-only in the sandbox, removed when created, asked
 * by the file tools, listed by `policy show`); the after-command cleanup inside `node_modules/`
 * at any depth; `core.hooksPath` read from included files, `config.worktree` and the global
 * config; the cleanup message naming each removed path. Real bwrap; the launcher is called
 * directly (no guard in between, as with the guard forced open).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, describeSandbox } from "../core/policy/sandbox/mod.ts";
import { deriveProfile } from "../core/policy/sandbox/profile.ts";
import { hooksPathDir } from "../core/policy/sandbox/protected.ts";
import { sandboxSettings } from "../core/policy/sandbox/settings.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

async function world() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-prot-more-" }));
  const ws = join(root, "ws");
  for (const d of [ws, join(root, "cfg"), join(root, "home")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  const policy = (allow: string[] = []) =>
    Policy.create({}, { allow, deny: [] }, {
      workspace: ws,
      configDir: join(root, "cfg"),
      home: join(root, "home"),
    });
  return {
    root,
    ws,
    policy,
    cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}),
  };
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

Deno.test("protected_paths from config: read-only, removed when created, asked, shown", async () => {
  const w = await world();
  try {
    const settings = sandboxSettings({
      protected_paths: ["release.cfg", "scripts/deploy*.sh"],
    });
    await Deno.writeTextFile(join(w.ws, "release.cfg"), "repos: []\n");
    const policy = w.policy();
    const sb = await CommandSandbox.create(policy, settings);
    const r = await runTool(
      makeExecuteCommandTool(sb),
      {
        command: [
          "echo 'repos: [{repo: local, hooks: [{id: x, entry: evil}]}]' > release.cfg",
          "mkdir -p a/scripts && echo evil > a/scripts/deploy-prod.sh",
          "mkdir -p scripts && echo fine > scripts/build.sh",
          "echo made",
        ].join("; "),
      },
      toolContext({ cwd: w.ws }),
    );
    assert.match(r.content, /made/);
    assert.match(r.content, /Read-only file system/);
    assert.equal(await Deno.readTextFile(join(w.ws, "release.cfg")), "repos: []\n");
    assert.equal(await exists(join(w.ws, "a/scripts/deploy-prod.sh")), false);
    assert.equal(await exists(join(w.ws, "scripts/build.sh")), true);
    assert.match(r.content, /a\/scripts\/deploy-prod\.sh \(protected as scripts\/deploy\*\.sh/);
    for (const f of ["release.cfg", "x/y/scripts/deploy.sh"]) {
      const v = await policy.evaluate({ type: "write", path: join(w.ws, f) });
      assert.equal(v.decision, "ask", `${f}: ${v.reason}`);
    }
    assert.equal(
      (await policy.evaluate({ type: "write", path: join(w.ws, "scripts/build.sh") })).decision,
      "allow",
    );
    const text = describeSandbox(deriveProfile(policy), sb.status);
    assert.match(
      text,
      /from sandbox\.protected_paths: release\.cfg scripts\/deploy\*\.sh/,
    );
    assert.match(text, /protected: \.git \.coyote \.mcp\.json \.husky/);
    sb.close();
    assert.throws(() => sandboxSettings({ protected_paths: ["a/b/c"] }), /protected_paths\[0\]/);
    assert.throws(
      () => sandboxSettings({ protected_paths: "x" }),
      /protected_paths must be a list/,
    );
  } finally {
    await w.cleanup();
  }
});

Deno.test("cleanup covers node_modules at any depth; what existed stays; the message names each path", async () => {
  const w = await world();
  try {
    const nm = join(w.ws, "node_modules");
    await Deno.mkdir(join(nm, "a/b/c"), { recursive: true });
    await Deno.mkdir(join(nm, "gitdep/.git"), { recursive: true }); // installed from git: kept
    for (let i = 0; i < 200; i++) await Deno.mkdir(join(nm, `pkg${i}/lib`), { recursive: true });
    const sb = await CommandSandbox.create(w.policy(), { mode: "auto", autoAllow: true });
    const tool = makeExecuteCommandTool(sb);
    const run = (command: string) => runTool(tool, { command }, toolContext({ cwd: w.ws }));
    const r = await run([
      "mkdir -p node_modules/a/b/c/.git/hooks && echo 'rm -rf ~' > node_modules/a/b/c/.git/hooks/pre-commit",
      "echo '{}' > node_modules/.mcp.json",
      "mkdir -p node_modules/new/deep/.coyote && echo x > node_modules/new/deep/.coyote/p.ts",
      "echo 'touch /tmp/pwned' > node_modules/pkg7/lib/.envrc",
      "mkdir -p sub/node_modules/x/.husky && echo x > sub/node_modules/x/.husky/pre-push",
      "echo made",
    ].join("; "));
    assert.match(r.content, /made/);
    for (
      const p of [
        "node_modules/a/b/c/.git",
        "node_modules/.mcp.json",
        "node_modules/new/deep/.coyote",
        "node_modules/pkg7/lib/.envrc",
        "sub/node_modules/x/.husky",
      ]
    ) {
      assert.equal(await exists(join(w.ws, p)), false, `${p} must not survive`);
      assert.match(r.content, new RegExp(`\\n  ${p.replaceAll(".", "\\.")} \\(`), p);
    }
    assert.match(r.content, /the OS sandbox removed 5 protected paths the command created/);
    assert.match(
      r.content,
      /node_modules\/a\/b\/c\/\.git \(git runs its hooks and core\.fsmonitor\)/,
    );
    assert.equal(await exists(join(nm, "gitdep/.git")), true, "a .git that existed stays");
    // A second command: nothing new, no message; a new one in a known folder is found again.
    const again = await run("echo quiet");
    assert.doesNotMatch(again.content, /removed/);
    const third = await run("mkdir node_modules/a/.git; echo made");
    assert.match(
      third.content,
      /removed 1 protected path the command created \(.*\):\n {2}node_modules\/a\/\.git \(/,
    );
    sb.close();
  } finally {
    await w.cleanup();
  }
});

Deno.test("core.hooksPath from an included file, config.worktree and the global config is protected", async () => {
  const w = await world();
  const saved = Deno.env.get("GIT_CONFIG_GLOBAL");
  try {
    const git = (...args: string[]) =>
      new Deno.Command("git", { args: ["-C", w.ws, ...args] }).output();
    // 1. An include in .git/config (relative to the .git dir).
    await Deno.writeTextFile(join(w.ws, ".git/hooks.inc"), "[core]\n\thooksPath = .hooks-inc\n");
    await git("config", "include.path", "hooks.inc");
    assert.equal(hooksPathDir(w.ws), join(w.ws, ".hooks-inc"));
    // git agrees.
    const o = await new Deno.Command("git", { args: ["-C", w.ws, "config", "core.hooksPath"] })
      .output();
    assert.equal(new TextDecoder().decode(o.stdout).trim(), ".hooks-inc");
    // 2. config.worktree wins over the repository's config.
    await git("config", "extensions.worktreeConfig", "true");
    await git("config", "--worktree", "core.hooksPath", ".hooks-wt");
    assert.equal(hooksPathDir(w.ws), join(w.ws, ".hooks-wt"));
    await git("config", "--worktree", "--unset", "core.hooksPath");
    await git("config", "--unset", "include.path");
    // 3. The global config (a relative value is relative to each repository).
    const global = join(w.root, "home", ".gitconfig");
    await Deno.writeTextFile(global, '[includeIf "gitdir:/"]\n\tpath = more.inc\n');
    await Deno.writeTextFile(
      join(w.root, "home", "more.inc"),
      "[core]\n\thooksPath = .hooks-global\n",
    );
    Deno.env.set("GIT_CONFIG_GLOBAL", global);
    assert.equal(hooksPathDir(w.ws), join(w.ws, ".hooks-global"));
    // For real: the command cannot change the folder, and one it creates is removed.
    await Deno.mkdir(join(w.ws, ".hooks-global"));
    await Deno.writeTextFile(join(w.ws, ".hooks-global", "pre-commit"), "#!/bin/sh\nexit 0\n");
    const sb = await CommandSandbox.create(w.policy(), { mode: "auto", autoAllow: true });
    const r = await runTool(
      makeExecuteCommandTool(sb),
      { command: "echo 'rm -rf ~' >> .hooks-global/pre-commit; echo made" },
      toolContext({ cwd: w.ws }),
    );
    assert.match(r.content, /Read-only file system/);
    assert.equal(
      await Deno.readTextFile(join(w.ws, ".hooks-global", "pre-commit")),
      "#!/bin/sh\nexit 0\n",
    );
    await Deno.remove(join(w.ws, ".hooks-global"), { recursive: true });
    const r2 = await runTool(
      makeExecuteCommandTool(sb),
      { command: "mkdir .hooks-global && echo evil > .hooks-global/pre-commit; echo made" },
      toolContext({ cwd: w.ws }),
    );
    assert.match(
      r2.content,
      /\.hooks-global \(the repository's core\.hooksPath: git runs its hooks\)/,
    );
    assert.equal(await exists(join(w.ws, ".hooks-global")), false);
    sb.close();
  } finally {
    if (saved === undefined) Deno.env.delete("GIT_CONFIG_GLOBAL");
    else Deno.env.set("GIT_CONFIG_GLOBAL", saved);
    await w.cleanup();
  }
});
