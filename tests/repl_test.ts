/**
 * The interactive REPL (core/frontends/repl/) in a real pseudo-terminal (tmux): streaming text, `/help`,
 * a permission prompt answered `a` and remembered for later runs, Ctrl+C cancelling a running
 * command while the REPL keeps the conversation, `/compact`, `/exit`.
 */
import assert from "node:assert/strict";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";
import { SUMMARY_INSTRUCTIONS } from "../core/engine/compact.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) throw new Error("tests/repl_test.ts needs tmux (installed by .ci/run)");

type Json = Record<string, unknown>;

async function repl(baseURL: string, args: string[] = []) {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-repl-" });
  const t = new Tmux();
  const { cmd, args: full } = coyoteCommand(args);
  await t.start([cmd, ...full], { cwd, env: childEnv(env, { baseURL }) });
  await t.waitFor(/› $/m);
  return {
    t,
    env,
    cwd,
    async close() {
      await t.kill();
      await env.cleanup();
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test("repl: text streams before the model's last chunk, /help lists the commands, /exit ends", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const server = await startModelServer({
    script: [{
      text: "STREAMED-FIRST and then the ending WORDS-LAST",
      chunk_size: 8,
      hold_last_chunk: held,
    }],
  });
  const r = await repl(server.baseURL);
  try {
    await r.t.type("/help");
    await r.t.keys("Enter");
    const help = await r.t.waitFor(/\/exit/);
    for (
      const c of [
        "help",
        "agent",
        "model",
        "session",
        "skill",
        "mcp",
        "tools",
        "compact",
        "clear",
        "todo",
        "policy",
        "cost",
        "trust",
        "exit",
      ]
    ) {
      assert.match(help, new RegExp(`/${c}\\b`), `/help lists /${c}`);
    }
    // Tab completes a slash command.
    await r.t.type("/too");
    await r.t.keys("Tab");
    await r.t.waitFor(/› \/tools/);
    await r.t.keys("C-u");
    // A trailing backslash continues the entry on the next line.
    await r.t.type("say \\");
    await r.t.keys("Enter");
    await r.t.waitFor(/… $/m);
    await r.t.type("something");
    await r.t.keys("Enter");
    const mid = await r.t.waitFor(/STREAMED-FIRST/);
    // The stream's last chunk is still held back by the server: the turn has not ended.
    assert.doesNotMatch(mid, /tokens \(/);
    release();
    await r.t.waitFor(/WORDS-LAST[\s\S]*tokens[\s\S]*› $/m);
    const sent = requestMessages(server.requests[0]).filter((m) => m.role === "user");
    assert.match(JSON.stringify(sent.at(-1)?.content), /say \\nsomething/);
    await r.t.type(".exit");
    await r.t.keys("Enter");
    const end = await r.t.waitFor(/\[exited \d+\]/);
    assert.match(end, /\[exited 0\]/);
  } finally {
    release();
    await r.close();
    await server.close();
  }
});

Deno.test("repl: a permission answered 'a' is saved for the project and not asked again later", async () => {
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{
          id: "c1",
          name: "execute_command",
          arguments: { command: "touch first-file" },
        }],
      },
      { text: "made it" },
      {
        tool_calls: [{
          id: "c2",
          name: "execute_command",
          arguments: { command: "touch first-file" },
        }],
      },
      { text: "made it again" },
    ],
  });
  const r = await repl(server.baseURL, ["--no-sandbox", "--trust-workspace"]);
  try {
    await r.t.type("make the file");
    await r.t.keys("Enter");
    const asked = await r.t.waitFor(/coyote wants to run:\s+touch first-file[\s\S]*always/);
    assert.match(asked, /y.*yes once/);
    await r.t.keys("a");
    await r.t.waitFor(/made it[\s\S]*› $/m);
    assert.ok((await Deno.stat(`${r.cwd}/first-file`)).isFile);
    const local = await Deno.readTextFile(`${r.cwd}/.coyote/config.local.yaml`);
    assert.match(local, /Execute\(touch first-file\)/);
    await Deno.remove(`${r.cwd}/first-file`);
    // A later run in this workspace (headless: an `ask` would be denied) runs it unasked.
    const later = await runCoyote(["--headless", "--no-sandbox", "--trust-workspace", "again"], {
      cwd: r.cwd,
      env: childEnv(r.env, { baseURL: server.baseURL }),
    });
    assert.equal(later.code, 0, later.stderr);
    assert.ok((await Deno.stat(`${r.cwd}/first-file`)).isFile, later.stderr);
  } finally {
    await r.close();
    await server.close();
  }
});

Deno.test("repl: Ctrl+C cancels a running command, the next prompt continues the conversation; /compact; Ctrl+C twice exits", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "s1", name: "execute_command", arguments: { command: "sleep 30" } }] },
      { text: "second answer" },
      { text: "SUMMARY-OF-EARLIER" },
      { text: "third answer" },
    ],
  });
  const r = await repl(server.baseURL, ["--dangerously-skip-permissions"]);
  try {
    await r.t.type("wait a while");
    await r.t.keys("Enter");
    await r.t.waitFor(/sleep 30/);
    await r.t.keys("C-c");
    const after = await r.t.waitFor(/cancelled[\s\S]*› $/m);
    assert.doesNotMatch(after, /\[exited/);
    await r.t.type("are you there");
    await r.t.keys("Enter");
    await r.t.waitFor(/second answer[\s\S]*› $/m);
    const msgs = requestMessages(server.requests[1]);
    const users = msgs.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    assert.ok(users.some((u) => u.includes("wait a while")), "the same conversation continues");
    assert.ok(users.some((u) => u.includes("are you there")));
    assert.ok(
      msgs.some((m) => m.role === "tool" && String(m.content).includes("cancel")),
      "the cancelled call is answered in the history",
    );
    // /compact with one turn kept: the older turn is summarised by the model.
    await r.t.type("/compact the sleep");
    await r.t.keys("Enter");
    await r.t.waitFor(/compacted|nothing to compact/);
    await r.t.type("go on");
    await r.t.keys("Enter");
    await r.t.waitFor(/third answer[\s\S]*› $/m);
    const summaryReq = server.requests[2].body as Json;
    const sys = (summaryReq.messages as Json[])[0].content as string;
    assert.equal(sys.startsWith(SUMMARY_INSTRUCTIONS), true);
    assert.match(sys, /the sleep/, "the focus reaches the summary request");
    const last = JSON.stringify(requestMessages(server.requests[3]));
    assert.match(last, /SUMMARY-OF-EARLIER/);
    assert.match(last, /are you there/, "the last turns stay verbatim");
    // Ctrl+C twice at an empty prompt exits.
    await r.t.keys("C-c");
    await r.t.waitFor(/Ctrl\+C again to exit/);
    await r.t.keys("C-c");
    assert.match(await r.t.waitFor(/\[exited \d+\]/), /\[exited 0\]/);
  } finally {
    await r.close();
    await server.close();
  }
});
