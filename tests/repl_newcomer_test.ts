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
import { lineColumns, rowsAbove } from "../core/frontends/render/blocks.ts";

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

Deno.test("repl: markdown streams as it arrives, then each block is rendered in place once", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const server = await startModelServer({
    script: [{
      text:
        "First **ALPHA** paragraph.\n\nThen STREAMED-FIRST with `code-x` and the ending WORDS-LAST",
      chunk_size: 6,
      hold_last_chunk: held,
    }],
  });
  const r = await repl(server.baseURL, [], true);
  try {
    await r.t.type("stream please");
    await r.t.keys("Enter");
    // The open (second) block is on screen before the model's last chunk (raw until it ends).
    const mid = await r.t.waitFor(/STREAMED-FIRST/);
    assert.doesNotMatch(mid, /tokens \(/, "the turn has not ended");
    assert.match(mid, /First ALPHA paragraph\./, "the finished first block is rendered");
    release();
    const end = await r.t.waitFor(/WORDS-LAST[\s\S]*tokens[\s\S]*› $/m);
    assert.equal(end.match(/STREAMED-FIRST/g)?.length, 1, `the raw text was replaced:\n${end}`);
    assert.equal(end.match(/ALPHA/g)?.length, 1);
    assert.match(end, /with code-x and the ending WORDS-LAST/, "rendered: no backticks");
    assert.doesNotMatch(end, /\*\*|`/);
  } finally {
    release();
    await r.close();
    await server.close();
  }
});

Deno.test("render: rows above the cursor after raw text, for erasing it in place", () => {
  assert.equal(rowsAbove("abc", 10), 0);
  assert.equal(rowsAbove("abc\n", 10), 1);
  assert.equal(rowsAbove("\nabc", 10), 1, "the blank line before a block");
  assert.equal(rowsAbove("x".repeat(10), 10), 0, "exactly the width: the cursor stays on its row");
  assert.equal(rowsAbove("x".repeat(11), 10), 1, "one wrap");
  assert.equal(rowsAbove("x".repeat(25) + "\nab", 10), 3);
  assert.equal(lineColumns("\tx"), 9);
  assert.equal(lineColumns("日本"), 4, "wide characters take two columns");
  assert.equal(lineColumns("e\u0301"), 1, "a combining mark takes none");
});

Deno.test("repl: no provider (or no model) is checked before anything is drawn: the error alone, exit 2", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-repl-" });
  const cases: { args: string[]; extra: Record<string, string>; error: RegExp }[] = [
    { args: [], extra: {}, error: /^coyote: no model provider configured\. Set one of:$/m },
    {
      args: [],
      extra: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
      error: /^coyote: no model chosen\. Pass -m\/--model NAME/m,
    },
    // The `--resume` picker is not drawn either.
    { args: ["--resume"], extra: {}, error: /^coyote: no model provider configured/m },
  ];
  try {
    for (const c of cases) {
      const t = new Tmux();
      try {
        const { cmd, args } = coyoteCommand(c.args);
        await t.start([cmd, ...args], { cwd, env: childEnv(env, { extra: c.extra }) });
        const screen = await t.waitFor(/\[exited \d+\]/);
        assert.match(screen, c.error, screen);
        assert.match(screen, /\[exited 2\]/);
        // Neither the welcome banner nor a prompt, before or after the error.
        assert.doesNotMatch(
          screen,
          /\/help for commands|› |coyote · /,
          `nothing drawn:\n${screen}`,
        );
      } finally {
        await t.kill();
      }
    }
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("repl: Esc interrupts a streaming answer; the partial text stays on screen and in the conversation", async () => {
  const never = new Promise(() => {});
  const server = await startModelServer({
    script: [
      {
        text: "The first part of a long answer arrives, then the model keeps going and going",
        chunk_size: 8,
        hold_last_chunk: never,
      },
      { text: "continued" },
    ],
  });
  const r = await repl(server.baseURL);
  try {
    await r.t.type("explain");
    await r.t.keys("Enter");
    await r.t.waitFor(/The first part/);
    await r.t.keys("Escape");
    const screen = await r.t.waitFor(/Esc \(interrupted\)[\s\S]*› $/m);
    assert.match(screen, /The first part of a long answer/, "what streamed stays on screen");
    await r.t.type("go on");
    await r.t.keys("Enter");
    await r.t.waitFor(/continued[\s\S]*› $/m);
    assert.equal(server.requests.length, 2);
    const msgs = requestMessages(server.requests[1] as never);
    const partial = msgs.find((m) => m.role === "assistant");
    assert.match(
      String(partial?.content),
      /The first part[\s\S]*\[interrupted: cancelled\]/,
      "the partial answer is in the next request, marked interrupted",
    );
  } finally {
    await r.close();
    await server.close();
  }
});

Deno.test("repl: a resized terminal redraws a wrapped input line whole (no rows of the old line left)", async () => {
  const server = await startModelServer({ script: [{ text: "ok" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-repl-" });
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand([]);
    await t.start([cmd, ...args], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
      width: 60,
    });
    await t.waitFor(/› $/m);
    const words = "aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd eeeeeeeeee ffffffffff gggggggggg";
    await t.type(words);
    await t.waitFor(/gggggggggg/);
    const prompts = (screen: string) => screen.split("\n").filter((l) => l.startsWith("› "));
    // Narrower: the line now takes three rows; editing it at its start redraws it whole.
    await t.resize(40, 20);
    await new Promise((r) => setTimeout(r, 300)); // let SIGWINCH reach the REPL
    await t.keys("C-a");
    await t.type("X");
    let screen = await t.waitFor(/› Xaaaa/);
    assert.deepEqual(prompts(screen), [`› X${words}`], screen);
    // Wider again, then a keystroke at the end.
    await t.resize(70, 20);
    await new Promise((r) => setTimeout(r, 300));
    await t.keys("End");
    await t.type(" Y");
    screen = await t.waitFor(/gggggggggg Y/);
    assert.deepEqual(prompts(screen), [`› X${words} Y`], screen);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("repl: an approved write shows its diff once (in the prompt) and ends with a ✓ line", async () => {
  // Outside the workspace: default mode asks.
  const other = await Deno.makeTempDir({ prefix: "coyote-outside-" });
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{
          name: "fs_write",
          arguments: { path: `${other}/notes.txt`, content: "line one\n" },
        }],
      },
      { text: "WROTE-IT" },
    ],
  });
  const r = await repl(server.baseURL, ["--no-sandbox"]);
  try {
    await r.t.type("write the notes");
    await r.t.keys("Enter");
    await r.t.waitFor(/\+line one[\s\S]*yes once/);
    await r.t.type("y");
    const screen = await r.t.waitFor(/WROTE-IT[\s\S]*› $/m);
    assert.equal(await Deno.readTextFile(`${other}/notes.txt`), "line one\n");
    assert.equal(screen.match(/^\+line one/gm)?.length, 1, `the diff once:\n${screen}`);
    assert.match(
      screen,
      /yes once[\s\S]*✓ .*notes\.txt[\s\S]*WROTE-IT/,
      "a ✓ line after the answer",
    );
  } finally {
    await r.close();
    await server.close();
    await Deno.remove(other, { recursive: true });
  }
});
