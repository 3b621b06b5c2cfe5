/**
 * Code other tools run later, outside the sandbox (issue 16 §3, docs/permissions.md "The OS
 * sandbox"): the folder the repository's `core.hooksPath` names, `.husky/`, `.envrc`, editors'
 * auto-run files and other agents' settings, at any depth. A sandboxed command cannot change the
 * existing ones (read-only binds) and the ones it creates are removed after it; the file tools ask
 * before writing them. Real bwrap, real commands, no guard in between (the launcher is called
 * directly, as with the guard forced open).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, detectBackend } from "../core/policy/sandbox/mod.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

async function world() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-runs-later-" }));
  const ws = join(root, "ws");
  const cfg = join(root, "cfg");
  for (const d of [ws, cfg, join(root, "home")]) await Deno.mkdir(d, { recursive: true });
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  await new Deno.Command("git", { args: ["-C", ws, "config", "core.hooksPath", ".githooks"] })
    .output();
  await Deno.mkdir(join(ws, ".githooks"));
  await Deno.writeTextFile(join(ws, ".githooks", "pre-commit"), "#!/bin/sh\nexit 0\n");
  await Deno.mkdir(join(ws, "app", ".vscode"), { recursive: true });
  await Deno.writeTextFile(join(ws, "app", ".vscode", "tasks.json"), "{}\n");
  const policy = (allow: string[] = []) =>
    Policy.create({}, { allow, deny: [] }, {
      workspace: ws,
      configDir: cfg,
      home: join(root, "home"),
    });
  return { ws, policy, cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}) };
}

async function exists(p: string): Promise<boolean> {
  try {
    await Deno.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/** Paths a command creates that must not survive it. */
const CREATED = [
  ".husky/pre-commit",
  ".envrc",
  "sub/.envrc",
  ".vscode/settings.json",
  "app/.vscode/launch.json",
  ".idea/runConfigurations/x.xml",
  ".devcontainer/devcontainer.json",
  ".claude/settings.json",
  "pkg/.claude/settings.local.json",
  ".gemini/settings.json",
  ".cursor/rules",
  "deep/er/.codex/config.toml",
];

Deno.test("runs later: a sandboxed command cannot plant or change code other tools run later", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const w = await world();
  try {
    const sb = await CommandSandbox.create(w.policy(), { mode: "auto", autoAllow: true });
    const command = [
      ...CREATED.map((p) => {
        const dir = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : ".";
        return `mkdir -p ${dir} && echo 'touch /tmp/pwned' > ${p}`;
      }),
      "echo 'rm -rf ~' >> .githooks/pre-commit",
      "echo 'touch /tmp/pwned' > .githooks/post-checkout",
      "echo '{\"tasks\":[]}' > app/.vscode/tasks.json",
      "echo made > ok.txt; mkdir -p .vscode2 vscode && echo ok > .vscode2/settings.json; echo ok > vscode/settings.json; echo made",
    ].join("; ");
    const r = await runTool(makeExecuteCommandTool(sb), { command }, toolContext({ cwd: w.ws }));
    assert.match(r.content, /made/);
    for (const p of CREATED) {
      assert.equal(await exists(join(w.ws, p)), false, `${p} must not survive the command`);
    }
    assert.match(r.content, /the OS sandbox removed \d+ protected paths? the command created/);
    // Existing ones are read-only in the sandbox.
    assert.equal(
      await Deno.readTextFile(join(w.ws, ".githooks", "pre-commit")),
      "#!/bin/sh\nexit 0\n",
    );
    assert.equal(await exists(join(w.ws, ".githooks", "post-checkout")), false);
    assert.equal(await Deno.readTextFile(join(w.ws, "app", ".vscode", "tasks.json")), "{}\n");
    // Ordinary files (also look-alike names) stay.
    assert.equal(await Deno.readTextFile(join(w.ws, "ok.txt")), "made\n");
    assert.equal(await Deno.readTextFile(join(w.ws, "vscode", "settings.json")), "ok\n");
    // A look-alike dot-folder is not a protected path (not in the removed list), but a new
    // dot-entry: quarantined by the dot-entry rule (attack pass 4 class 3), and said so.
    assert.doesNotMatch(r.content, /^ {2}\.vscode2 \(/m);
    assert.match(
      r.content,
      /moved \d+ new dot-files?\/folders? the command created to quarantine[^]*\.vscode2 → /,
    );
    sb.close();

    // The core.hooksPath folder created at run time is removed too.
    await Deno.remove(join(w.ws, ".githooks"), { recursive: true });
    const sb2 = await CommandSandbox.create(w.policy(), { mode: "auto", autoAllow: true });
    const r2 = await runTool(
      makeExecuteCommandTool(sb2),
      { command: "mkdir .githooks && echo 'touch /tmp/pwned' > .githooks/pre-commit; echo made" },
      toolContext({ cwd: w.ws }),
    );
    assert.match(r2.content, /made/);
    assert.equal(await exists(join(w.ws, ".githooks")), false, ".githooks must not survive");
    sb2.close();
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later: the file tools ask before writing them; an allow rule naming one permits it", async () => {
  const w = await world();
  try {
    const p = w.policy();
    for (const f of [...CREATED, ".githooks/pre-commit", "app/.vscode/tasks.json"]) {
      const v = await p.evaluate({ type: "write", path: join(w.ws, f) });
      assert.equal(v.decision, "ask", `${f}: ${v.reason}`);
    }
    for (const f of ["ok.txt", ".vscode2/settings.json", "src/settings.json", "tasks.json"]) {
      const v = await p.evaluate({ type: "write", path: join(w.ws, f) });
      assert.equal(v.decision, "allow", `${f}: ${v.reason}`);
    }
    const open = w.policy(["Write(.envrc)"]);
    assert.equal(
      (await open.evaluate({ type: "write", path: join(w.ws, ".envrc") })).decision,
      "allow",
    );
  } finally {
    await w.cleanup();
  }
});
