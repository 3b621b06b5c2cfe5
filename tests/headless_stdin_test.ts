/**
 * Stdin handling of one-shot/headless runs (core/frontends/cli/prompt.ts `buildPrompt`), as real subprocesses:
 * a supervisor that keeps an empty stdin pipe open must never make `coyote --headless "prompt"`
 * hang; data that does come on the pipe is still appended; `-f -` waits for a slow pipe; with no
 * prompt argument the pipe is read to its end however late its data comes.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";

/** Spawns coyote with a stdin pipe; `feed` decides what is written and whether it closes. */
async function runWithPipe(
  args: string[],
  opts: { cwd: string; env: Record<string, string> },
  feed: (w: WritableStreamDefaultWriter<Uint8Array>) => Promise<void>,
): Promise<{ code: number; stdout: string; stderr: string; ms: number; killed: boolean }> {
  const { cmd, args: full } = coyoteCommand(args);
  const t0 = performance.now();
  const child = new Deno.Command(cmd, {
    args: full,
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  }, 30_000);
  try {
    const fed = feed(w);
    const out = await child.output();
    await fed.catch(() => {});
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
      ms: performance.now() - t0,
      killed,
    };
  } finally {
    clearTimeout(timer);
    await w.close().catch(() => {});
  }
}

const userMessage = (body: unknown) =>
  // deno-lint-ignore no-explicit-any
  (body as any).messages.findLast((m: any) => m.role === "user").content as string;

Deno.test("headless: a prompt argument and an open, silent stdin pipe never hang", async () => {
  const server = await startModelServer({ script: [{ text: "fine" }, { text: "again" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    // The pipe stays open (never written, never closed) until the process has exited.
    const r = await runWithPipe(["--headless", "hi"], { cwd, env: e }, async () => {});
    assert.equal(r.killed, false, "coyote hung on an open stdin pipe");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "fine\n");
    assert.match(r.stderr, /stdin is an open pipe with no data/);
    assert.equal(userMessage(server.requests[0].body), "hi");

    // Data that comes at once is appended, even though the pipe then stays open... until closed.
    const r2 = await runWithPipe(["--headless", "summarise"], { cwd, env: e }, async (w) => {
      await w.write(new TextEncoder().encode("PIPED-31"));
      await new Promise((res) => setTimeout(res, 300));
      await w.close();
    });
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(userMessage(server.requests[1].body), "summarise\n\nPIPED-31");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("headless: `-f -` and a prompt-less run wait for a slow stdin pipe", async () => {
  const server = await startModelServer({ script: [{ text: "one" }, { text: "two" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  const late = (text: string) => async (w: WritableStreamDefaultWriter<Uint8Array>) => {
    await new Promise((res) => setTimeout(res, 700)); // well past the 200 ms grace period
    await w.write(new TextEncoder().encode(text));
    await w.close();
  };
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const r = await runWithPipe(["--headless", "-f", "-", "look"], { cwd, env: e }, late("SLOW-1"));
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /open pipe/);
    assert.equal(userMessage(server.requests[0].body), "look\n\nSLOW-1");

    const r2 = await runWithPipe(["--headless"], { cwd, env: e }, late("SLOW-2 only stdin"));
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(userMessage(server.requests[1].body), "SLOW-2 only stdin");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("headless: `-f -` with a terminal on stdin is a usage error, never a read of the terminal", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const { cmd, args } = coyoteCommand(["--headless", "-f", "-", "hi"]);
    // python's pty gives the child a real terminal on stdin; nothing is ever typed into it.
    const py = [
      "import os, pty, subprocess, sys, json",
      "m, s = pty.openpty()",
      "p = subprocess.run(json.loads(sys.argv[1]), stdin=s, capture_output=True, timeout=30)",
      "os.write(1, json.dumps({'code': p.returncode, 'err': p.stderr.decode()}).encode())",
    ].join("\n");
    const out = await new Deno.Command("python3", {
      args: ["-c", py, JSON.stringify([cmd, ...args])],
      cwd,
      env: childEnv(env, { baseURL: "http://127.0.0.1:9/v1" }),
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const r = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /-f - reads piped stdin, but stdin is a terminal/);
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
