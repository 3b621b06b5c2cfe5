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
    await t.waitFor(/unknown command \/halp; \/help lists the commands/);
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
