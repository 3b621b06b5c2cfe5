/**
 * execute_command with real subprocesses: exit codes, stdout/stderr, bounded
 * output, timeout and abort killing the whole process group (background
 * children included), stdin closed, cwd, and the ACP client terminal route.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { HostServices, ToolContext, ToolResult } from "../sdk/mod.ts";
import { BoundedCapture, executeCommandTool } from "../plugins/exec/mod.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import { toolContext } from "./support/fixtures.ts";

function ctxFor(cwd: string, signal?: AbortSignal, host?: HostServices): ToolContext {
  return toolContext({ cwd, signal, host });
}

async function exec(
  input: { command: string; timeout_ms?: number },
  ctx: ToolContext,
): Promise<ToolResult> {
  return await executeCommandTool.run(input, ctx) as ToolResult;
}

/** Whether `pid` is a live (non-zombie) process. */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitGone(pid: number, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

async function tempDir(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-exec-" }));
}

Deno.test("execute_command: stdout, exit code 0, cwd, access and kind", async () => {
  const dir = await tempDir();
  try {
    const r = await exec({ command: "echo hello; pwd" }, ctxFor(dir));
    assert.equal(r.isError, false);
    assert.equal(r.content, `exit code 0\n--- stdout ---\nhello\n${dir}`);
    assert.deepEqual(executeCommandTool.access!({ command: "ls -la" }, dir), [{
      type: "execute",
      command: "ls -la",
    }]);
    assert.equal(executeCommandTool.kind, "execute");
    const quiet = await exec({ command: "true" }, ctxFor(dir));
    assert.equal(quiet.content, "exit code 0\n(no output)");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("execute_command: non-zero exit, stderr kept apart, bash features", async () => {
  const dir = await tempDir();
  try {
    const r = await exec({ command: "echo out; echo err >&2; exit 3" }, ctxFor(dir));
    assert.equal(r.isError, true);
    assert.equal(r.content, "exit code 3\n--- stdout ---\nout\n--- stderr ---\nerr");
    const raw = r.rawOutput as { exitCode: number; stdoutBytes: number; stderrBytes: number };
    assert.equal(raw.exitCode, 3);
    assert.equal(raw.stdoutBytes, 4);
    const bash = await exec({ command: "a=(x y z); echo ${#a[@]} $((6*7))" }, ctxFor(dir));
    assert.match(bash.content, /--- stdout ---\n3 42$/);
    const missing = await exec({ command: "definitely-not-a-command-xyz" }, ctxFor(dir));
    assert.equal(missing.isError, true);
    assert.match(missing.content, /exit code 127[\s\S]*not found/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("execute_command: stdin is closed (cat does not wait for a terminal)", async () => {
  const dir = await tempDir();
  try {
    const t0 = performance.now();
    const r = await exec({ command: "cat; echo done", timeout_ms: 5000 }, ctxFor(dir));
    assert.equal(r.content, "exit code 0\n--- stdout ---\ndone");
    assert.ok(performance.now() - t0 < 3000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("execute_command: long output keeps head and tail, cut marked in bytes", async () => {
  const dir = await tempDir();
  try {
    const r = await exec({
      command: "echo START; head -c 100000 /dev/zero | tr '\\0' a; echo; echo END; seq 1 5000 >&2",
    }, ctxFor(dir));
    assert.equal(r.isError, false);
    const out = r.content.split("--- stderr ---")[0];
    assert.match(out, /^exit code 0\n--- stdout ---\nSTART\na+\n\[… \d+ bytes cut …\]\na+\nEND\n$/);
    const cut = Number(/\[… (\d+) bytes cut …\]/.exec(out)![1]);
    assert.equal(cut, 6 + 100_001 + 4 - 30_000);
    assert.ok(r.content.length < 65_000);
    const err = r.content.split("--- stderr ---\n")[1];
    assert.match(err, /^1\n2\n/);
    assert.match(err, /\n5000$/);
    assert.equal((r.rawOutput as { truncated: boolean }).truncated, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("BoundedCapture: head and tail across many small chunks", () => {
  const cap = new BoundedCapture(10);
  const enc = new TextEncoder();
  for (const ch of "abcdefghijklmnopqrstuvwxyz") cap.push(enc.encode(ch));
  assert.equal(cap.total, 26);
  assert.equal(cap.dropped, 16);
  assert.equal(cap.text(), "abcde\n[… 16 bytes cut …]\nvwxyz");
  const small = new BoundedCapture(10);
  small.push(enc.encode("hello"));
  small.push(enc.encode("wor"));
  assert.equal(small.text(), "hellowor");
});

Deno.test("execute_command: timeout kills the process group, background children included", async () => {
  const dir = await tempDir();
  try {
    const t0 = performance.now();
    const r = await exec({
      command: `sleep 100 & echo $! > ${dir}/bg.pid; echo started; wait`,
      timeout_ms: 500,
    }, ctxFor(dir));
    const ms = performance.now() - t0;
    assert.equal(r.isError, true);
    assert.match(
      r.content,
      /^timed out after 500 ms; process group killed\n--- stdout ---\nstarted$/,
    );
    assert.ok(ms < 4000, `took ${ms} ms`);
    const bg = Number((await Deno.readTextFile(join(dir, "bg.pid"))).trim());
    assert.ok(await waitGone(bg), `background sleep ${bg} survived`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("execute_command: abort (ctx.signal) kills the process group", async () => {
  const dir = await tempDir();
  try {
    const ac = new AbortController();
    const running = exec({
      command:
        `sleep 100 & echo $! > ${dir}/bg.pid; (sleep 100; echo never) & echo $! > ${dir}/bg2.pid; wait`,
    }, ctxFor(dir, ac.signal));
    // Wait until both children exist, then cancel the turn.
    for (let i = 0; i < 100; i++) {
      try {
        await Deno.stat(join(dir, "bg2.pid"));
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    const t0 = performance.now();
    ac.abort();
    const r = await running;
    assert.ok(performance.now() - t0 < 4000);
    assert.equal(r.isError, true);
    assert.match(r.content, /^cancelled; process group killed/);
    for (const f of ["bg.pid", "bg2.pid"]) {
      const pid = Number((await Deno.readTextFile(join(dir, f))).trim());
      assert.ok(await waitGone(pid), `${f} ${pid} survived`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("execute_command: a background child holding the pipes does not hang the call", async () => {
  const dir = await tempDir();
  try {
    const t0 = performance.now();
    const r = await exec({ command: `sleep 30 & echo $! > ${dir}/bg.pid; echo done` }, ctxFor(dir));
    assert.ok(performance.now() - t0 < 3000);
    assert.equal(r.content, "exit code 0\n--- stdout ---\ndone");
    const pid = Number((await Deno.readTextFile(join(dir, "bg.pid"))).trim());
    Deno.kill(pid, "SIGKILL");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("execute_command: timeout_ms above the maximum is clamped, not rejected", async () => {
  const parsed = await new ToolRegistry([executeCommandTool]).validate("execute_command", {
    command: "x",
    timeout_ms: 9_000_000,
  });
  assert.equal(parsed.ok, true);
});

Deno.test("execute_command: uses the ACP client terminal when offered", async () => {
  const calls: { command: string; cwd: string; timeoutMs?: number }[] = [];
  const host: HostServices = {
    runInTerminal: (command, opts) => {
      calls.push({ command, cwd: opts.cwd, timeoutMs: opts.timeoutMs });
      return Promise.resolve({ exitCode: 1, signal: null, output: "boom\n", truncated: false });
    },
  };
  const r = await exec(
    { command: "make test", timeout_ms: 1000 },
    ctxFor("/work", undefined, host),
  );
  assert.deepEqual(calls, [{ command: "make test", cwd: "/work", timeoutMs: 1000 }]);
  assert.equal(r.isError, true);
  assert.equal(r.content, "exit code 1\n--- output ---\nboom\n");
});
