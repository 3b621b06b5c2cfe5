/**
 * What a new user sees on a terminal in the first minutes (README "The two commands", "Sessions",
 * "Workspace trust", "The REPL"): the order of a text-mode run's stdout and stderr when both go to
 * one terminal, the notes printed when a listing is empty, a mistyped REPL slash command. Real
 * subprocesses of main.ts against the scripted model server; stdout and stderr share one pipe
 * (`2>&1`), as on a terminal; the REPL runs in a real pseudo-terminal (tmux).
 * @module
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";
import { mistypedCommand } from "../core/frontends/cli/slips.ts";

/** Runs coyote with stderr merged into stdout (`2>&1`), as both land on a terminal. */
async function runMerged(
  args: string[],
  opts: { cwd: string; env: Record<string, string> },
): Promise<{ code: number; output: string }> {
  const { cmd, args: full } = coyoteCommand(args);
  const out = await new Deno.Command("sh", {
    args: ["-c", 'exec "$@" 2>&1', "sh", cmd, ...full],
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, output: new TextDecoder().decode(out.stdout) };
}

Deno.test("text mode on a terminal: the answer comes first, the session id line last", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ name: "fs_ls", arguments: { path: "." } }] },
      { text: "THE ANSWER is here." },
    ],
  });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const r = await runMerged(["-a", "coyote", "list the files"], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert(r.code === 0, r.output);
    const progress = r.output.indexOf("• ");
    const answer = r.output.indexOf("THE ANSWER is here.");
    const session = r.output.indexOf("coyote: session ");
    assert(progress >= 0 && answer > progress, `tool progress, then the answer:\n${r.output}`);
    assert(session > answer, `the session line after the answer:\n${r.output}`);
    assert(r.output.trimEnd().split("\n").at(-1)!.startsWith("coyote: session "), r.output);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("trust --list with no entries: empty stdout, a note on stderr, exit 0", async () => {
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const r = await runCoyote(["trust", "--list"], { cwd: dir, env: childEnv(env) });
    assert(r.code === 0, r.stderr);
    assert(r.stdout === "", r.stdout);
    assert(/no trusted or untrusted folders yet/.test(r.stderr), r.stderr);
    const t = await runCoyote(["trust", dir], { cwd: dir, env: childEnv(env) });
    assert(t.code === 0, t.stderr);
    const again = await runCoyote(["trust", "--list"], { cwd: dir, env: childEnv(env) });
    assert(again.stdout.startsWith("trusted\t"), again.stdout);
    assert(!/no trusted/.test(again.stderr), again.stderr);
  } finally {
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("repl: a mistyped /command is reported and never sent to the model", async () => {
  const server = await startModelServer({ script: [{ text: "ONLY-REPLY" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-nu-" });
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["-a", "coyote"]);
    await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
    await t.waitFor(/› $/m);
    await t.type("/halp me");
    await t.keys("Enter");
    await t.waitFor(/unknown command \/halp \(did you mean \/help\?\); \/help lists the commands/);
    assert.equal(server.requests.length, 0, "the mistyped command reached the model");
    await t.type("hello");
    await t.keys("Enter");
    await t.waitFor(/ONLY-REPLY/);
    assert.equal(server.requests.length, 1);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("--all without --list-sessions is a usage error, not a silently ignored flag", async () => {
  const server = await startModelServer({ script: [{ text: "should not run" }] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const r = await runCoyote(["--all", "do something"], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--all goes with --list-sessions/);
    assert.equal(server.requests.length, 0);
    const ok = await runCoyote(["--list-sessions", "--all"], { cwd: dir, env: childEnv(env) });
    assert.equal(ok.code, 0, ok.stderr);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mistypedCommand: near misses of a command followed by its subcommand, nothing else", () => {
  assert.equal(mistypedCommand(["agent", "list"]), "coyote agents list");
  assert.equal(mistypedCommand(["session", "rm", "abcd1234"]), "coyote sessions rm abcd1234");
  assert.equal(mistypedCommand(["plugin", "check", "./x"]), "coyote plugins check ./x");
  assert.equal(mistypedCommand(["graphs", "check", "coder"]), "coyote graph check coder");
  assert.equal(mistypedCommand(["Agemts", "show", "coder"]), "coyote agents show coder");
  assert.equal(mistypedCommand(["agent", "list", "the", "files", "here"]), null);
  assert.equal(mistypedCommand(["explain", "list"]), null);
  assert.equal(mistypedCommand(["agent", "lists"]), null);
  assert.equal(mistypedCommand(["mcp", "list"]), null); // the real command is parsed before this
  assert.equal(mistypedCommand(["fix", "the", "bug"]), null);
});

Deno.test("a mistyped subcommand is a usage error that names the command; -p sends it anyway", async () => {
  const server = await startModelServer({ script: [{ text: "SENT-AS-PROMPT" }] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const r = await runCoyote(["agent", "list"], { cwd: dir, env: e });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /did you mean `coyote agents list`\?/);
    assert.equal(server.requests.length, 0);
    const p = await runCoyote(["-a", "coyote", "-p", "agent list"], { cwd: dir, env: e });
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, /SENT-AS-PROMPT/);
    assert.equal(server.requests.length, 1);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a usage error inside a subcommand points at that subcommand's help", async () => {
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const r = await runCoyote(["agents", "show"], { cwd: dir, env: childEnv(env) });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /missing required argument 'name'\n\(see coyote agents --help\)/);
    const top = await runCoyote(["--bogus", "x"], { cwd: dir, env: childEnv(env) });
    assert.equal(top.code, 2, top.stderr);
    assert.match(top.stderr, /unknown option '--bogus'\n\(see coyote --help\)/);
  } finally {
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a provider failure is shown once on a terminal, and on stderr in stream-json", async () => {
  const reply = {
    status: 401,
    error_body: {
      error: { message: "Incorrect API key provided: sk-abc", code: "invalid_api_key" },
    },
  };
  const server = await startModelServer({ script: [reply, reply] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const r = await runMerged(["-a", "coyote", "hi"], { cwd: dir, env: e });
    assert.equal(r.code, 1, r.output);
    assert.equal(r.output.match(/Incorrect API key provided/g)?.length, 1, r.output);
    const j = await runCoyote([
      "-a",
      "coyote",
      "--headless",
      "--output-format",
      "stream-json",
      "hi",
    ], {
      cwd: dir,
      env: e,
    });
    assert.equal(j.code, 1, j.stderr);
    assert.equal(j.stderr.match(/Incorrect API key provided/g)?.length, 1, j.stderr);
    assert.match(j.stdout, /"is_error":true/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("repl: a start-up warning does not land on the prompt line; the prompt is redrawn after it", async () => {
  const server = await startModelServer({ script: [] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-nu-" });
  // An MCP server that dies a second after start: its warning arrives while the prompt is idle.
  await Deno.writeTextFile(
    `${cwd}/.mcp.json`,
    JSON.stringify({ mcpServers: { late: { command: "sh", args: ["-c", "sleep 1; exit 3"] } } }),
  );
  await Deno.mkdir(`${cwd}/.git`);
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["-a", "coyote", "--trust-workspace"]);
    await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
    await t.waitFor(/› $/m);
    await t.type("typed early");
    const screen = await t.waitFor(
      /MCP server late .*failed to start[^\n]*\n(.*\n)*› typed early$/m,
    );
    assert.doesNotMatch(screen, /› (typed early)?coyote: warning/, screen);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("a named session's closing line says to continue it by its name", async () => {
  const server = await startModelServer({
    script: [{ text: "one" }, { text: "two" }, { text: "3" }],
  });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const a = await runCoyote(["-a", "coyote", "--session", "mywork", "hi"], { cwd: dir, env: e });
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stderr, /\(continue with --session mywork\)/);
    const b = await runCoyote(["-a", "coyote", "--session", "my work", "hi"], { cwd: dir, env: e });
    assert.match(b.stderr, /\(continue with --session 'my work'\)/);
    const id = /coyote: session (\S+) /.exec(a.stderr)![1];
    const c = await runCoyote(["-a", "coyote", "--session", id.slice(0, 8), "again"], {
      cwd: dir,
      env: e,
    });
    assert.match(c.stderr, new RegExp(`\\(continue with --session ${id.slice(0, 8)}\\)`));
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an empty -m or --base-url is a usage error, not a silent fall-back to the environment", async () => {
  const server = await startModelServer({ script: [{ text: "should not run" }] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    for (const args of [["-m", ""], ["--base-url", " "]]) {
      const r = await runCoyote([...args, "hi"], { cwd: dir, env: e });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /needs a value, got an empty string/);
    }
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
