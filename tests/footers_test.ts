/**
 * The per-turn footer as a user sees it (fresh-user trial, item 12): with no usage reported
 * (`provider.stream_options: false`, or a turn cancelled before the stream's last chunk) it says
 * `tokens not reported`, never "0 tokens (0 in, 0 out)"; a cancelled turn's footer has the shape
 * of any other (the `cancelled` line above says it), whether usage came before the cancel or not;
 * `/cost` says it the same way. A one-shot run and the REPL in a real pty (tmux).
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, cliWorld, coyoteCommand, runCoyote } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const NO_USAGE = "provider:\n  stream_options: false\n";

function world(config?: string) {
  return cliWorld("coyote-footers-", config);
}

Deno.test("one-shot: a server that reports no usage gets 'tokens not reported', not '0 tokens'", async () => {
  const server = await startModelServer({ script: [{ text: "ANSWER" }] });
  const w = await world(NO_USAGE);
  try {
    const r = await runCoyote(["--no-sandbox", "hi"], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const body = server.requests[0].body as { stream_options?: unknown };
    assert.equal(body.stream_options, undefined, "no usage was asked for");
    assert.match(r.stderr, /^─ tokens not reported · [\d.]+m?s/m, r.stderr);
    assert.doesNotMatch(r.stderr, /0 tokens/);
  } finally {
    await server.close();
    await w.close();
  }
});

Deno.test("repl: cancelled footers have one shape, with or without usage", async () => {
  const never = new Promise<void>(() => {});
  const server = await startModelServer({
    script: [
      // Cancelled while the answer streams, before the last chunk (which carries the usage).
      { text: "PARTIAL-ONE and more", chunk_size: 4, hold_last_chunk: never },
      // Cancelled while a command runs, after the response's usage came.
      { tool_calls: [{ id: "s1", name: "execute_command", arguments: { command: "sleep 30" } }] },
    ],
  });
  const w = await world();
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox", "--dangerously-skip-permissions"]);
    await t.start([cmd, ...args], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: server.baseURL }),
    });
    await t.waitFor(/› $/m);
    await t.type("first");
    await t.keys("Enter");
    await t.waitFor(/PARTIAL-ONE/);
    await t.keys("C-c");
    await t.waitFor(/^─ [^\n]*\n› $/m);
    await t.type("second");
    await t.keys("Enter");
    await t.waitFor(/sleep 30/);
    await t.keys("C-c");
    const screen = await t.waitForCount(/^─ /m, 2);
    const footers = screen.split("\n").filter((l) => l.startsWith("─ "));
    assert.match(footers[0], /^─ tokens not reported · [\d.]+m?s/, screen);
    assert.match(footers[1], /^─ \S+ tokens \(\S+ in, \S+ out\) · [\d.]+m?s/, screen);
    assert.doesNotMatch(screen, /\(cancelled\)|─ 0 tokens/, screen);
    assert.equal(screen.match(/^cancelled$/gm)?.length, 2, `each says cancelled once:\n${screen}`);
  } finally {
    await t.kill();
    await server.close();
    await w.close();
  }
});

Deno.test("repl: with no usage reported the footer and /cost both say 'tokens not reported'", async () => {
  const server = await startModelServer({ script: [{ text: "ANSWER-NU" }] });
  const w = await world(NO_USAGE);
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox"]);
    await t.start([cmd, ...args], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: server.baseURL }),
    });
    await t.waitFor(/› $/m);
    await t.type("hi");
    await t.keys("Enter");
    await t.waitFor(/ANSWER-NU[\s\S]*› $/m);
    await t.type("/cost");
    await t.keys("Enter");
    const screen = await t.waitFor(/model request\(s\)[\s\S]*› $/m);
    assert.match(screen, /^─ tokens not reported · [\d.]+m?s/m, screen);
    assert.match(screen, /^tokens not reported in 1 model request\(s\)/m, screen);
    assert.doesNotMatch(screen, /\b0 tokens/, screen);
  } finally {
    await t.kill();
    await server.close();
    await w.close();
  }
});
