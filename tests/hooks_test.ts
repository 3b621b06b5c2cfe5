/**
 * Stop hooks (core/extensions/hooks/stop.ts) with real shell commands: the two ways to block, what lets the agent
 * stop, `stop_hook_active`, the cap, and a broken hook that must not trap the agent.
 * tests/stop_hook_e2e_test.ts runs them inside real sessions.
 * @module
 */
import assert from "node:assert/strict";
import { runStopHooks, StopHookGate } from "../core/extensions/hooks/stop.ts";

const base = { session_id: "s1", agent: "coyote", cwd: "/tmp", transcript_path: null };
const never = new AbortController().signal;

Deno.test("stop hooks: JSON decision block, exit code 2 with stderr, and what lets the stop through", async () => {
  const json = await runStopHooks(
    [{ command: `echo '{"decision":"block","reason":"commit your changes"}'` }],
    { ...base, stop_hook_active: false },
    never,
  );
  assert.deepEqual(json, {
    block: true,
    reason: "commit your changes",
    hook: json.block ? json.hook : "",
    problems: [],
  });
  const exit2 = await runStopHooks([{ command: "echo 'run the tests first' >&2; exit 2" }], {
    ...base,
    stop_hook_active: false,
  }, never);
  assert.equal(exit2.block && exit2.reason, "run the tests first");
  for (const command of ["true", "echo '{}'", `echo '{"decision":"approve"}'`]) {
    const r = await runStopHooks([{ command }], { ...base, stop_hook_active: false }, never);
    assert.deepEqual(r, { block: false, problems: [] }, command);
  }
  // A broken hook is reported and lets the agent stop.
  const broken = await runStopHooks(
    [{ command: "echo not-json" }, { command: "exit 7" }, { command: "sleep 5", timeout_ms: 100 }],
    { ...base, stop_hook_active: false },
    never,
  );
  assert.equal(broken.block, false);
  assert.deepEqual(broken.problems.map((p) => p.replace(/`[^`]*`/, "`…`")), [
    "stop hook `…` printed something that is not JSON",
    "stop hook `…` exited 7",
    "stop hook `…` timed out",
  ]);
});

Deno.test("stop hooks: the hook reads its input; stop_hook_active after a block; the cap holds", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const log = `${dir}/inputs.jsonl`;
    // Blocks unless stop_hook_active is true (the seed's pattern), and records what it got.
    const hook = {
      command:
        `input=$(cat); echo "$input" >> ${log}; case "$input" in *'"stop_hook_active":true'*) echo '{}';; ` +
        `*) echo '{"decision":"block","reason":"uncommitted changes"}';; esac`,
    };
    const gate = new StopHookGate([hook]);
    const events: unknown[] = [];
    assert.equal(
      await gate.check({ ...base, cwd: dir }, never, (e) => events.push(e)),
      "uncommitted changes",
    );
    assert.equal(await gate.check({ ...base, cwd: dir }, never, (e) => events.push(e)), null);
    const inputs = (await Deno.readTextFile(log)).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(inputs.map((i) => i.stop_hook_active), [false, true]);
    assert.deepEqual(inputs[0], { ...base, cwd: dir, stop_hook_active: false });
    assert.deepEqual(events, [{
      kind: "stop-hook-error",
      reason: "uncommitted changes",
      hook: hook.command,
      blocks: 1,
    }]);
    // A hook that always blocks is honoured at most max_blocks times per turn.
    const stubborn = new StopHookGate([{ command: "echo nope >&2; exit 2" }], 2);
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await stubborn.check(base, never, () => {}));
    assert.deepEqual(got, ["nope", "nope", null, null]);
    stubborn.reset();
    assert.equal(await stubborn.check(base, never, () => {}), "nope");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stop hooks: secrets are not passed to hooks", async () => {
  Deno.env.set("COYOTE_TEST_API_KEY", "sk-secret-value");
  try {
    const r = await runStopHooks(
      [{ command: `env | grep -q sk-secret-value && { echo leaked >&2; exit 2; }; true` }],
      { ...base, stop_hook_active: false },
      never,
    );
    assert.deepEqual(r, { block: false, problems: [] });
  } finally {
    Deno.env.delete("COYOTE_TEST_API_KEY");
  }
});
