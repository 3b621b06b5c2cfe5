/**
 * `-c/--continue` and `-r/--resume [ID]` (issue 19, the flags people type by habit): real headless
 * runs of main.ts against the scripted model server. A continued run's request carries the earlier
 * conversation and reports the same `session_id`; `--resume NAME` never starts a new session;
 * `coyote resume [ID]` is `--resume [ID]` without prompt words.
 */
import assert from "node:assert/strict";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

Deno.test("resume flags: -c, -r ID, -r PREFIX and bare --resume continue the stored session; bad uses are usage errors", async () => {
  const server = await startModelServer({ script: () => ({ text: "noted" }) });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-resume-" });
  const run = (args: string[]) =>
    runCoyote(["--headless", "--output-format", "json", ...args], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
  const lastRequestText = () =>
    JSON.stringify(requestMessages(server.requests.at(-1)!).map((m) => m.content));
  try {
    const first = await run(["remember the word PELICAN"]);
    assert.equal(first.code, 0, first.stderr);
    const sid = JSON.parse(first.stdout).session_id as string;
    assert.ok(sid);

    for (const args of [["-c"], ["-r", sid], ["--resume", sid.slice(0, 8)], ["--resume"]]) {
      const before = server.requests.length;
      const r = await run([...args, "-p", "which word?"]);
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(JSON.parse(r.stdout).session_id, sid, args.join(" "));
      assert.equal(server.requests.length, before + 1);
      assert.match(lastRequestText(), /PELICAN/, `${args.join(" ")} carries the conversation`);
    }

    // `coyote resume [ID]`: the same, with the request from piped stdin (a terminal gets the REPL).
    for (const args of [["resume", sid.slice(0, 8)], ["resume"]]) {
      const before = server.requests.length;
      const r = await runCoyote(["--headless", "--output-format", "json", ...args], {
        cwd: dir,
        env: childEnv(env, { baseURL: server.baseURL }),
        stdin: "which word?",
      });
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(JSON.parse(r.stdout).session_id, sid, args.join(" "));
      assert.equal(server.requests.length, before + 1);
      assert.match(lastRequestText(), /PELICAN/);
    }

    const before = server.requests.length;
    const unknown = await run(["-r", "no-such-session", "hi"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--resume no-such-session: no stored session has this id or name/);
    const both = await run(["-r", sid, "--continue", "hi"]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /use one of --session ID\|NAME, --continue or --resume/);
    assert.equal(server.requests.length, before, "no model request for a usage error");

    // A fresh run (no flag) is a new session: the flags above are what continued it.
    const fresh = await run(["which word?"]);
    assert.notEqual(JSON.parse(fresh.stdout).session_id, sid);
    assert.doesNotMatch(lastRequestText(), /PELICAN/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("resume flags: coyote resume ID without a terminal says how to continue it with a prompt (exit 2)", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-resume-noterm-" });
  try {
    const r = await runCoyote(["resume", "deadbeef12"], { cwd, env: childEnv(env) });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /coyote -r deadbeef12 "your request" continues the session/);
    const bare = await runCoyote(["-r"], { cwd, env: childEnv(env) });
    assert.equal(bare.code, 2, bare.stderr);
    assert.match(bare.stderr, /coyote -r "your request" continues the session/);
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
