/**
 * REPL paper cuts a newcomer hit (issue 20), each read off a real pseudo-terminal's screen
 * (tmux capture-pane): Up recalls a multi-line entry whole; `!cmd` shows its exit status; a diff
 * of a file outside the workspace is headed by its absolute path (not `a//abs/path`); inline code
 * and bold inside list items are rendered (no backticks left); markdown text streams as it arrives;
 * Esc interrupts a streaming answer and keeps what was shown.
 */
import assert from "node:assert/strict";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) throw new Error("tests/repl_newcomer_test.ts needs tmux (installed by .ci/run)");

/** A REPL in tmux; `color`: without NO_COLOR, so markdown is rendered as on a user's terminal. */
async function repl(baseURL: string, args: string[] = [], color = false) {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-repl-" });
  const t = new Tmux();
  const { cmd, args: full } = coyoteCommand(args);
  const e = childEnv(env, { baseURL });
  if (color) delete e.NO_COLOR;
  await t.start([cmd, ...full], { cwd, env: e });
  await t.waitFor(/› $/m);
  return {
    t,
    cwd,
    async close() {
      await t.kill();
      await env.cleanup();
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    },
  };
}

const lastUser = (body: unknown) =>
  JSON.stringify(requestMessages(body as never).filter((m) => m.role === "user").at(-1)?.content);

Deno.test("repl: Up recalls a multi-line entry whole, and Enter sends all its lines", async () => {
  const server = await startModelServer({ script: [{ text: "one" }, { text: "two" }] });
  const r = await repl(server.baseURL);
  try {
    await r.t.type("first line \\");
    await r.t.keys("Enter");
    await r.t.waitFor(/… $/m);
    await r.t.type("second line");
    await r.t.keys("Enter");
    await r.t.waitFor(/one[\s\S]*› $/m);
    await r.t.keys("Up");
    const recalled = await r.t.waitFor(/› first line[\s\S]*second line\s*$/);
    assert.match(recalled, /› first line/, "the recalled entry starts with its first line");
    await r.t.keys("Enter");
    await r.t.waitFor(/two[\s\S]*› $/m);
    assert.equal(server.requests.length, 2);
    assert.match(lastUser(server.requests[1]), /first line \\nsecond line/);
  } finally {
    await r.close();
    await server.close();
  }
});

Deno.test("repl: !cmd shows the exit status, 0 and not", async () => {
  const server = await startModelServer({ script: [] });
  const r = await repl(server.baseURL, ["--no-sandbox"]);
  try {
    await r.t.type("!echo hello-out");
    await r.t.keys("Enter");
    const ok = await r.t.waitFor(/hello-out\s+✓ exit 0/);
    assert.match(ok, /✓ exit 0 \(not sandboxed\)/);
    await r.t.type("!sh -c 'exit 3'");
    await r.t.keys("Enter");
    await r.t.waitFor(/✗ exit 3/);
    assert.equal(server.requests.length, 0, "a shell command is not sent to the model");
  } finally {
    await r.close();
    await server.close();
  }
});

Deno.test("repl: the diff of a file outside the workspace is headed by its absolute path", async () => {
  const other = await Deno.makeTempDir({ prefix: "coyote-outside-" });
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{
          name: "fs_write",
          arguments: { path: `${other}/new.txt`, content: "made outside\n" },
        }],
      },
      { text: "wrote it" },
    ],
  });
  const r = await repl(server.baseURL, ["--dangerously-skip-permissions", "--no-sandbox"]);
  try {
    await r.t.type("write the file");
    await r.t.keys("Enter");
    const screen = await r.t.waitFor(/wrote it[\s\S]*› $/m);
    assert.match(screen, new RegExp(`\\+\\+\\+ ${other}/new\\.txt`));
    assert.match(screen, /\+made outside/);
    assert.doesNotMatch(screen, /[ab]\/\//, "no a//abs or b//abs header");
  } finally {
    await r.close();
    await server.close();
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("repl: inline code and bold inside list items are rendered, no backticks left", async () => {
  const server = await startModelServer({
    script: [{ text: "Steps:\n\n- run `deno task test` now\n- then **commit** it\n\nDONE-MARK\n" }],
  });
  const r = await repl(server.baseURL, [], true);
  try {
    await r.t.type("how");
    await r.t.keys("Enter");
    const screen = await r.t.waitFor(/DONE-MARK[\s\S]*› $/m);
    assert.match(screen, /run deno task test now/);
    assert.match(screen, /then commit it/);
    assert.doesNotMatch(screen, /`deno task test`|\*\*commit\*\*/);
  } finally {
    await r.close();
    await server.close();
  }
});
