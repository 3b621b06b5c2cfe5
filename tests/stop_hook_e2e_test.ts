/**
 * Stop hooks in real sessions (`coyote --headless`, stream-json): a hook configured in
 * config.yaml blocks the first stop with a reason that reaches the model as a new user message
 * and a `stop_hook` event (kind `stop-hook-error`), then lets the second stop through
 * (`stop_hook_active`); a hook that always blocks is honoured only `max_stop_blocks` times.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

type Msg = { role: string; content: string };

async function run(hooksYaml: string, replies: string[]) {
  const server = await startModelServer({ script: replies.map((text) => ({ text })) });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-hook-" });
  try {
    await Deno.writeTextFile(join(env.configDir, "config.yaml"), hooksYaml);
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "-a",
      "coyote",
      "finish the job",
    ], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const lines = parseJsonLines(r.stdout);
    const hookEvents = lines.filter((l) => l.type === "session_update").map((l) =>
      (l.update as { _meta?: { coyote?: { event?: string; kind?: string; reason?: string } } })
        ._meta?.coyote
    ).filter((m) => m?.event === "stop_hook");
    const users = server.requests.map((q) =>
      (q.body as { messages: Msg[] }).messages.filter((m) => m.role === "user").map((m) =>
        m.content
      )
    );
    return { result: lines.at(-1)!, hookEvents, users, requests: server.requests.length };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("stop hook: blocks once with its reason reaching the model, then lets the agent stop", async () => {
  const hook = `input=$(cat); case "$input" in *'"stop_hook_active":true'*) exit 0;; esac; ` +
    `echo '{"decision":"block","reason":"there are uncommitted changes: commit them"}'`;
  const { result, hookEvents, users, requests } = await run(
    `hooks:\n  stop:\n    - command: ${JSON.stringify(hook)}\n`,
    ["all done", "committed, now done"],
  );
  assert.equal(requests, 2);
  assert.deepEqual(users[1], ["finish the job", "there are uncommitted changes: commit them"]);
  assert.equal(result.text, "committed, now done");
  assert.equal(result.stop_reason, "end_turn");
  assert.deepEqual(hookEvents.map((e) => [e!.kind, e!.reason]), [[
    "stop-hook-error",
    "there are uncommitted changes: commit them",
  ]]);
});

Deno.test("stop hook: exit code 2 blocks with stderr as the reason; the per-turn cap holds", async () => {
  const { result, hookEvents, requests } = await run(
    "hooks:\n  max_stop_blocks: 2\n  stop:\n    - command: \"echo 'tests were not run' >&2; exit 2\"\n",
    ["one", "two", "three", "four"],
  );
  assert.equal(requests, 3, "two blocks honoured, then the stop goes through");
  assert.equal(result.text, "three");
  assert.equal(hookEvents.length, 2);
  assert.equal(hookEvents[0]!.reason, "tests were not run");
});

Deno.test("stop hook: a bad hooks section is a configuration error naming the key", async () => {
  const env = await makeCoyoteEnv();
  try {
    await Deno.writeTextFile(
      join(env.configDir, "config.yaml"),
      "hooks:\n  stop:\n    - comand: true\n",
    );
    const r = await runCoyote(["--headless", "hi"], {
      cwd: env.dataDir,
      env: childEnv(env, { baseURL: "http://127.0.0.1:9/v1" }),
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /hooks\.stop\[0\]\.comand: unknown key \(did you mean `command`\?\)/);
  } finally {
    await env.cleanup();
  }
});

Deno.test("stop hook: a plugin's stop hook runs inside the OS sandbox", async () => {
  const server = await startModelServer({ script: [{ text: "first" }, { text: "second" }] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-hook-ws-" });
  const outside = await Deno.makeTempDir({ prefix: "coyote-hook-outside-" });
  try {
    const plugin = join(env.configDir, "hooky.ts");
    // Outside the sandbox the hook could create a file beside the workspace; inside it cannot.
    const command = `input=$(cat); case "$input" in *'"stop_hook_active":true'*) exit 0;; esac; ` +
      `if touch ${outside}/escaped 2>/dev/null; then r=wrote; else r=contained; fi; ` +
      `echo "{\\"decision\\":\\"block\\",\\"reason\\":\\"hook $r\\"}"`;
    await Deno.writeTextFile(
      plugin,
      `export default { name: "hooky", version: "1.0.0", hooks: { stop: [{ command: ${
        JSON.stringify(command)
      } }] } };\n`,
    );
    const r = await runCoyote(
      ["--headless", "--output-format", "json", "-a", "coyote", "--plugin", plugin, "go"],
      { cwd: dir, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).text, "second");
    const users = (server.requests[1].body as { messages: Msg[] }).messages.filter((m) =>
      m.role === "user"
    ).map((m) => m.content);
    assert.deepEqual(users, ["go", "hook contained"]);
    assert.equal(await Deno.stat(`${outside}/escaped`).catch(() => null), null);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});
