/**
 * A crash mid-turn (SIGKILL of the coyote process while a command runs) leaves a readable
 * transcript, and `--continue` resumes it with a history the model server accepts (every
 * `tool_calls` entry answered). Real subprocesses of main.ts, the scripted model server.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function pidsRunning(needle: string): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).replaceAll("\0", " ");
      // The command itself (bash -c / sleep), not coyote (whose --allow rule names it too).
      if (cmd.includes(needle) && !cmd.includes("main.ts")) pids.push(Number(e.name));
    } catch { /* gone */ }
  }
  return pids;
}

Deno.test("sessions: kill -9 mid-turn leaves a readable transcript; --continue resumes it", async () => {
  const marker = `sleep 41.${Math.floor(Math.random() * 1e6)}`;
  const server = await startModelServer({
    script: [
      {
        text: "Reading first.",
        tool_calls: [{ id: "r", name: "fs_read", arguments: { path: "a.txt" } }],
      },
      { tool_calls: [{ id: "z", name: "execute_command", arguments: { command: marker } }] },
      { text: "Resumed fine." },
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  await Deno.writeTextFile(`${cwd}/a.txt`, "CONTENT-77\n");
  const e = childEnv(env, { baseURL: server.baseURL });
  const { cmd, args } = coyoteCommand([
    "--headless",
    "--output-format",
    "stream-json",
    "--allow",
    `Execute(${marker})`,
    "start the work",
  ]);
  const child = new Deno.Command(cmd, {
    args,
    cwd,
    env: e,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const deadline = setTimeout(() => child.kill("SIGKILL"), 30_000);
    let buf = "";
    while (!/"toolCallId":"z","status":"in_progress"/.test(buf)) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
    }
    for (let i = 0; i < 100 && !pidsRunning(marker).length; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(pidsRunning(marker).length, "the command never started");
    child.kill("SIGKILL");
    clearTimeout(deadline);
    await reader.cancel();
    assert.equal((await child.status).signal, "SIGKILL");
    const sessionId = JSON.parse(buf.split("\n")[0]).session_id;

    // Readable: every line parses, the header is first, the completed fs_read is there, no turn_end.
    const path = `${env.dataDir}/sessions/${sessionId}.jsonl`;
    const lines: Json[] = (await Deno.readTextFile(path)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(lines[0].type, "session");
    assert.ok(lines.some((l) => l.type === "message" && /CONTENT-77/.test(l.message.content)));
    assert.ok(!lines.some((l) => l.type === "turn_end"));

    // Listed, and --continue resumes it.
    const list = await runCoyote(["--list-sessions", "--output-format", "json"], { cwd, env: e });
    assert.equal(JSON.parse(list.stdout)[0].sessionId, sessionId);
    const r = await runCoyote(["--headless", "--output-format", "json", "--continue", "go on"], {
      cwd,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.session_id, sessionId);
    assert.equal(result.text, "Resumed fine.");

    // The resumed history is well formed: every tool call has exactly one tool answer.
    const msgs: Json[] = (server.requests[2].body as Json).messages;
    assert.equal(msgs.at(-1).role, "user");
    assert.equal(msgs.at(-1).content, "go on");
    const asked = msgs.flatMap((m) => (m.tool_calls ?? []).map((c: Json) => c.id));
    const answered = msgs.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    assert.deepEqual(asked, ["r", "z"]);
    assert.deepEqual(answered, ["r", "z"]);
    assert.ok(msgs.some((m) => m.role === "user" && m.content === "start the work"));
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    await child.status;
    // SIGKILL leaves the command's process group behind: clean it up.
    for (const pid of pidsRunning(marker)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
