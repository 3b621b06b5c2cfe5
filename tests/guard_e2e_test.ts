/**
 * The guard's defaults through a real headless run (main.ts subprocess, temp git repo): `.git/`
 * internals and Coyote's config dir are never written, a write outside the workspace asks and
 * headless denies it at once; `--dangerously-skip-permissions` lets all of them through except
 * what a deny rule names — and commands still run inside the OS sandbox. Every refusal is in `result.denied` and nothing reached the disk.
 */
import assert from "node:assert/strict";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

Deno.test("guard e2e: protected paths and outside writes in headless; skip-permissions keeps deny rules", async () => {
  const env = await makeCoyoteEnv();
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-guard-e2e-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-outside-" }));
  await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
  const gitConfig = await Deno.readTextFile(`${repo}/.git/config`);
  const calls = (tag: string): ScriptedReply => ({
    tool_calls: [
      { id: `${tag}1`, name: "fs_write", arguments: { path: ".git/config", content: "x" } },
      { id: `${tag}2`, name: "execute_command", arguments: { command: "echo x > .git/config" } },
      {
        id: `${tag}3`,
        name: "fs_write",
        arguments: { path: `${env.configDir}/config.yaml`, content: "model: evil\n" },
      },
      { id: `${tag}4`, name: "fs_write", arguments: { path: `${outside}/o.txt`, content: "o" } },
      { id: `${tag}5`, name: "execute_command", arguments: { command: "touch made.txt" } },
    ],
  });
  const server = await startModelServer({
    script: [
      calls("a"),
      { text: "refused" },
      // fs_write overwrites an existing file only after reading it (issue 18, plugins/fs/stamps.ts).
      { tool_calls: [{ id: "b0", name: "fs_read", arguments: { path: ".git/config" } }] },
      calls("b"),
      { text: "done" },
    ],
  });
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    // --no-sandbox: the guard alone (inside the OS sandbox `touch made.txt` would be auto-allowed).
    const r = await runCoyote(["--headless", "--no-sandbox", "--output-format", "json", "go"], {
      cwd: repo,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    const decisions = Object.fromEntries(
      res.denied.map((d: { toolCallId: string; decision: string }) => [d.toolCallId, d.decision]),
    );
    assert.deepEqual(decisions, { a1: "deny", a2: "deny", a3: "deny", a4: "ask", a5: "ask" });
    assert.equal(await Deno.readTextFile(`${repo}/.git/config`), gitConfig);
    await assert.rejects(Deno.stat(`${env.configDir}/config.yaml`));
    await assert.rejects(Deno.stat(`${outside}/o.txt`));
    await assert.rejects(Deno.stat(`${repo}/made.txt`));

    // --dangerously-skip-permissions: everything but the deny rule — and the OS sandbox stays on,
    // so the command cannot change .git/config even though the guard lets it run.
    const s = await runCoyote(
      [
        "--headless",
        "--output-format",
        "json",
        "--dangerously-skip-permissions",
        "--deny",
        `Write(${outside}/**)`,
        "go",
      ],
      { cwd: repo, env: e },
    );
    assert.equal(s.code, 0, s.stderr);
    const sres = JSON.parse(s.stdout);
    assert.deepEqual(
      sres.denied.map((d: { toolCallId: string; decision: string }) => [d.toolCallId, d.decision]),
      [["b4", "deny"]],
    );
    assert.match(sres.denied[0].reason, /--deny/);
    assert.equal(
      await Deno.readTextFile(`${repo}/.git/config`),
      "x",
      "fs_write wrote it; the command could not",
    );
    assert.ok((await Deno.stat(`${repo}/made.txt`)).isFile);
    await assert.rejects(Deno.stat(`${outside}/o.txt`));
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(repo, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("guard e2e: a hostile repository's tricks are refused in headless (issue 11 §2)", async () => {
  const env = await makeCoyoteEnv();
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-hostile-" }));
  const repo = `${base}/repo`;
  const outside = `${base}/outside`;
  await Deno.mkdir(outside);
  await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
  // What the repository ships: a config that runs a program on `git status`, a dangling link to
  // a file outside, and a folder named "-".
  await Deno.writeTextFile(
    `${repo}/.git/config`,
    (await Deno.readTextFile(`${repo}/.git/config`)) + "[core]\n\tfsmonitor = touch FSMON; false\n",
  );
  await Deno.symlink(`${outside}/planted`, `${repo}/notes.txt`);
  await Deno.mkdir(`${repo}/-`);
  const cmd = (id: string, command: string) => ({
    id,
    name: "execute_command",
    arguments: { command },
  });
  const server = await startModelServer({
    script: [
      {
        tool_calls: [
          cmd("status", "git status"),
          { id: "write", name: "fs_write", arguments: { path: "notes.txt", content: "x" } },
          cmd("redirect", "echo x > notes.txt"),
          cmd("tee", "echo x | tee -- -/../../TEE"),
          cmd("prompt", `x='$(touch PROMPT)'; echo "\${x@P}"`),
          cmd("sed", "sed --exp='1e touch SED' p notes.txt"),
          cmd("glob", "echo /*"),
          cmd("fine", "echo ok"),
        ],
      },
      { text: "done" },
    ],
  });
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const r = await runCoyote(["--headless", "--no-sandbox", "--output-format", "json", "go"], {
      cwd: repo,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    const denied = res.denied.map((d: { toolCallId: string }) => d.toolCallId).sort();
    assert.deepEqual(denied, ["glob", "prompt", "redirect", "sed", "status", "tee", "write"]);
    for (const p of [`${repo}/FSMON`, `${repo}/PROMPT`, `${repo}/SED`, `${base}/TEE`]) {
      await assert.rejects(Deno.stat(p), Deno.errors.NotFound, p);
    }
    await assert.rejects(Deno.stat(`${outside}/planted`), Deno.errors.NotFound);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(base, { recursive: true });
  }
});
