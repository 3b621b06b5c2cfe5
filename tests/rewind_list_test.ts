/**
 * `coyote rewind --list` names the session whose turns it lists (short id, first prompt, folder,
 * how many turns) before the turns: the latest session of a folder is not always the one a user
 * has in mind (fresh-user trial, item 14). Real subprocesses of main.ts.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

Deno.test("rewind --list: a header line names the session, then one line per turn", async () => {
  const server = await startModelServer({ script: [{ text: "ONE" }, { text: "TWO" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-rewind-list-" }));
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const first = await runCoyote(["--no-sandbox", "first question"], { cwd, env: e });
    assert.equal(first.code, 0, first.stderr);
    const short = first.stderr.match(/continue with --session (\S+)\)/)?.[1];
    assert.ok(short, first.stderr);
    const second = await runCoyote(["--no-sandbox", "--continue", "second one"], { cwd, env: e });
    assert.equal(second.code, 0, second.stderr);
    const list = await runCoyote(["rewind", "--list"], { cwd, env: e });
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trimEnd().split("\n");
    assert.equal(lines[0], `session ${short} "first question" (${cwd}), 2 turns:`, list.stdout);
    assert.match(lines[1], /^ {2}1\. first question {2}\[no changes\]$/);
    assert.match(lines[2], /^ {2}2\. second one {2}\[no changes\]$/);
    assert.equal(lines.length, 3);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});
