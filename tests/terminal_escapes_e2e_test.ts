// deno-lint-ignore-file no-control-regex
/**
 * End to end: terminal control sequences chosen by a model, a tool call or a repository reach
 * the user's terminal only escaped (core/util/terminal_safe.ts). Real subprocesses of main.ts against
 * the scripted model server (text mode, stream-json, `agents list`, `--list-sessions`) and the
 * REPL in a real pseudo-terminal (tmux, colour on): the answer (markdown, character references
 * included), a permission prompt whose command tries to hide itself, a `user__input` question
 * with OSC 52 (checked against tmux's own clipboard, which OSC 52 would set) and bidi overrides.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import {
  childEnv,
  coyoteCommand,
  makeCoyoteEnv,
  parseJsonLines,
  runCoyote,
} from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) {
  throw new Error("tests/terminal_escapes_e2e_test.ts needs tmux (installed by .ci/run)");
}

const OSC52 = "\x1b]52;c;ZXZpbA==\x07";
const ANSWER =
  `Done ${OSC52} and \x1b[2J\x1b[7Ahidden\rOVERWRITTEN \u202eevil\u202c \x9b31m &#27;[7A bell\x07 end\n`;
const COMMAND = `echo safe\x1b[2K\r\x1b[1Arm -rf ~ \u202e`;
/** A command the guard asks about (a write outside the sandbox), hiding itself behind `echo ok`. */
const ASKED = `touch pwned\x1b[2K\r\x1b[1Aecho ok \u202e`;

/** Raw controls that are not Coyote's own (none at all without colour). */
function assertNoControls(text: string, what: string) {
  const bad = text.match(
    /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/,
  );
  assert.equal(bad, null, `${what} holds a raw control: ${JSON.stringify(text)}`);
}

Deno.test("e2e text mode: the answer, a tool call title, agents list and session titles are escaped; stream-json keeps the data", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-escapes-" });
  await Deno.mkdir(join(cwd, ".coyote/agents/spoof"), { recursive: true });
  // YAML double quotes: \e is ESC, \a BEL, \r CR, \x9b a C1 CSI, \u202e RIGHT-TO-LEFT OVERRIDE.
  await Deno.writeTextFile(
    join(cwd, ".coyote/agents/spoof/config.yaml"),
    'description: "Helpful\\e[2K\\rSPOOFED \\e]52;c;ZXZpbA==\\a \\u202eevil \\x9b31m"\ninstructions: i\n',
  );
  const script = () => [
    { tool_calls: [{ id: "c1", name: "execute_command", arguments: { command: COMMAND } }] },
    { text: ANSWER },
  ];
  const server = await startModelServer({ script: [...script(), ...script()] });
  const e = childEnv(env, { baseURL: server.baseURL });
  try {
    const prompt = `title ${OSC52} \u202eabc`;
    const r = await runCoyote(["--headless", prompt], { cwd, env: e });
    assertNoControls(r.stdout, "stdout");
    assertNoControls(r.stderr, "stderr");
    assert.ok(
      r.stdout.includes(
        "Done \\u001b]52;c;ZXZpbA==\\u0007 and \\u001b[2J\\u001b[7Ahidden\\rOVERWRITTEN \\u202eevil\\u202c \\u009b31m &#27;[7A bell\\u0007 end",
      ),
      r.stdout,
    );
    // The denied call's title (its command) is shown escaped, on one line.
    assert.ok(
      r.stderr.includes("echo safe\\u001b[2K\\r\\u001b[1Arm -rf ~ \\u202e"),
      r.stderr,
    );

    // stream-json is data: the answer arrives exactly as the model sent it (JSON escapes it).
    const j = await runCoyote(["--headless", "--output-format", "stream-json", "again"], {
      cwd,
      env: e,
    });
    const events = parseJsonLines(j.stdout);
    const text = events
      .map((ev) =>
        (ev as { update?: { sessionUpdate?: string; content?: { text?: string } } }).update
      )
      .filter((u) => u?.sessionUpdate === "agent_message_chunk")
      .map((u) => u!.content!.text)
      .join("");
    assert.equal(text, ANSWER);
    assert.ok(!j.stdout.includes("\x1b"), "JSON escapes ESC itself");

    // `agents list`: the description is escaped in its row; `--json` carries it as data.
    const list = await runCoyote(["agents", "list"], { cwd, env: e });
    assertNoControls(list.stdout, "agents list");
    assert.match(
      list.stdout,
      /^spoof +llm +workspace +Helpful\\u001b\[2K\\rSPOOFED \\u001b\]52;c;ZXZpbA==\\u0007 \\u202eevil \\u009b31m$/m,
    );
    const json = await runCoyote(["agents", "list", "--json"], { cwd, env: e });
    const spoof = (JSON.parse(json.stdout) as { name: string; description: string }[])
      .find((a) => a.name === "spoof");
    assert.equal(
      spoof?.description,
      "Helpful\x1b[2K\rSPOOFED \x1b]52;c;ZXZpbA==\x07 \u202eevil \x9b31m",
    );

    // `--list-sessions`: the first prompt is the session's title.
    const sessions = await runCoyote(["--list-sessions"], { cwd, env: e });
    assertNoControls(sessions.stdout, "--list-sessions");
    assert.ok(
      sessions.stdout.includes("title \\u001b]52;c;ZXZpbA==\\u0007 \\u202eabc"),
      sessions.stdout,
    );
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("e2e text mode: a sub-agent's spawn title (`Spawn explore: <prompt first line>`) and status line are escaped", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-escapes-spawn-" });
  const childPrompt = `CHILDMARK look ${OSC52}\x1b[2K\rfine \u202eevil\nsecond line`;
  const server = await startModelServer({
    script: (req) => {
      const msgs = requestMessages(req);
      const isChild = msgs.some((m) =>
        m.role === "user" && JSON.stringify(m.content).includes("CHILDMARK")
      );
      if (isChild) return { text: "child done" };
      if (!msgs.some((m) => m.role === "tool")) {
        return {
          tool_calls: [{
            id: "s1",
            name: "agent__spawn",
            arguments: { agent: "explore", prompt: childPrompt },
          }],
        };
      }
      if (!msgs.some((m) => m.role === "tool" && String(m.content).includes("child done"))) {
        const id = /explore-[0-9a-f]+/.exec(
          msgs.filter((m) => m.role === "tool").map((m) => String(m.content)).join(" "),
        )?.[0];
        return {
          tool_calls: [{ id: "c1", name: "agent__collect", arguments: id ? { ids: [id] } : {} }],
        };
      }
      return { text: "parent done" };
    },
  });
  try {
    const r = await runCoyote(["--headless", "delegate"], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assertNoControls(r.stdout, "stdout");
    assertNoControls(r.stderr, "stderr");
    assert.ok(
      r.stderr.includes(
        "Spawn explore: CHILDMARK look \\u001b]52;c;ZXZpbA==\\u0007\\u001b[2K\\rfine \\u202eevil",
      ),
      r.stderr,
    );
    assert.match(r.stderr, /↳ explore-[0-9a-f]+ /, "the sub-agent's status line");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("e2e mcp list: a server name and its start error chosen by a repository are escaped; --json is data", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-escapes-mcp-" });
  const name = `evil${OSC52}x`;
  await Deno.writeTextFile(
    join(cwd, ".mcp.json"),
    JSON.stringify({ mcpServers: { [name]: { command: "no-such-program\x1b[2K\u202e" } } }),
  );
  try {
    const e = childEnv(env);
    const r = await runCoyote(["mcp", "list", "--trust-workspace", "--timeout", "5000"], {
      cwd,
      env: e,
    });
    assertNoControls(r.stdout, "mcp list");
    assertNoControls(r.stderr, "mcp list stderr");
    assert.match(r.stdout, /^evil\\u001b\]52;c;ZXZpbA==\\u0007x +stdio +failed/m);
    assert.ok(r.stdout.includes("no-such-program\\u001b[2K\\u202e"), r.stdout);
    const j = await runCoyote(["mcp", "list", "--json", "--trust-workspace", "--no-connect"], {
      cwd,
      env: e,
    });
    assert.equal((JSON.parse(j.stdout) as { servers: { name: string }[] }).servers[0].name, name);
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("e2e repl (colour, markdown): permission prompt, user__input question and answer are escaped; OSC 52 never reaches the terminal", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "c1", name: "execute_command", arguments: { command: ASKED } }] },
      {
        tool_calls: [{
          id: "q1",
          name: "user__input",
          arguments: { question: `Pick${OSC52} a name \u202eRTL` },
        }],
      },
      { text: ANSWER },
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-escapes-repl-" });
  const raw = await Deno.makeTempFile({ prefix: "coyote-escapes-pty-" });
  const t = new Tmux();
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", { args: ["-L", t.socket, ...args], stdout: "piped", stderr: "piped" })
      .output();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox"]);
    // NO_COLOR empty: colour and markdown on, so Coyote's own styling is in the byte stream too.
    await t.start([cmd, ...args], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL, extra: { NO_COLOR: "" } }),
    });
    // OSC 52 reaching tmux would set one of its paste buffers; every byte is copied to `raw`.
    await tmux("set-option", "-g", "set-clipboard", "on");
    await tmux("pipe-pane", "-t", t.name, "-o", `cat >> '${raw}'`);
    await t.waitFor(/› $/m);
    await t.type("go");
    await t.keys("Enter");
    const asked = await t.waitFor(/coyote wants to run:[\s\S]*deny always/);
    assert.ok(
      asked.includes("touch pwned\\u001b[2K\\r\\u001b[1Aecho ok \\u202e"),
      `the whole command is visible, escaped:\n${asked}`,
    );
    await t.keys("n");
    const question = await t.waitFor(/answer› $/m);
    assert.ok(
      question.includes("Pick\\u001b]52;c;ZXZpbA==\\u0007 a name \\u202eRTL"),
      `the question is visible, escaped:\n${question}`,
    );
    await t.type("bob");
    await t.keys("Enter");
    const end = await t.waitFor(/ end[\s\S]*tokens[\s\S]*› $/m);
    assert.ok(
      end.includes("Done \\u001b]52;c;ZXZpbA==\\u0007 and \\u001b[2J\\u001b[7Ahidden"),
      end,
    );
    // The markdown renderer decodes `&#27;`: it is shown escaped, not turned into ESC.
    assert.ok(end.includes("\\u001b[7A bell\\u0007 end"), end);
    assert.ok(end.includes("\\rOVERWRITTEN \\u202eevil\\u202c \\u009b31m"), end);

    const bytes = await Deno.readTextFile(raw);
    assert.match(bytes, /\x1b\[[0-9;]*m/, "Coyote's own colours reach the terminal");
    assert.ok(
      !bytes.includes("\x1b]"),
      "no OSC sequence (clipboard, title, link) reaches the terminal",
    );
    assert.ok(!bytes.includes("\x1b[7A") && !bytes.includes("\x1b[2J"), "no hostile cursor move");
    assert.ok(!/[\u202a-\u202e\u2066-\u2069\x9b]/.test(bytes), "no bidi override or C1 control");
    assert.ok(!bytes.includes("\x07"), "no BEL");
    const buffers = new TextDecoder().decode((await tmux("list-buffers")).stdout);
    assert.equal(buffers.trim(), "", "the clipboard was not written");
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
    await Deno.remove(raw).catch(() => {});
  }
});
