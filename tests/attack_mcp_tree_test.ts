/**
 * Attack: a trusted workspace's MCP server that daemonizes (`setsid`, double fork) must not leave
 * a process running after Coyote exits — with the binary's own permission flags, where Deno
 * refuses to read another process's `/proc/<pid>/environ` and `/proc/<pid>/stat` (they need
 * `--allow-all`), so the tree's marker search must not depend on reading them in-process.
 * In-process tests (`deno test --allow-all`) cannot see this; this one runs main.ts exactly as
 * the `coyote` task does.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

/** Live (non-zombie) pids whose command line starts with `prefix`. */
function pidsWith(prefix: string): number[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="], stdout: "piped" })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim().split(/\s+/))
    .filter((f) =>
      f.length >= 3 && !f[1].startsWith("Z") && f.slice(2).join(" ").startsWith(prefix)
    )
    .map((f) => Number(f[0]));
}

Deno.test("attack mcp: a workspace MCP server's setsid daemons end with the run (binary flags)", async () => {
  const env = await makeCoyoteEnv();
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack-mcp-" }));
  const tag = `${31 + Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 1000)}`;
  // A server that never speaks MCP: it forks daemons that leave its session and group, then hangs.
  const script = `(setsid sleep ${tag}1 &); (sh -c 'sleep ${tag}2 & exit' &); sleep ${tag}3`;
  await Deno.writeTextFile(
    join(repo, ".mcp.json"),
    JSON.stringify({ mcpServers: { daemon: { command: "sh", args: ["-c", script] } } }),
  );
  const server = await startModelServer({ script: [{ text: "done" }] });
  try {
    const r = await runCoyote(["--headless", "--trust-workspace", "go"], {
      cwd: repo,
      env: childEnv(env, { baseURL: server.baseURL, extra: { MCP_TIMEOUT: "3000" } }),
    });
    assert.equal(r.code, 0, r.stderr);
    // The run waited for the server's start-up and gave up on it.
    assert.match(r.stderr, /MCP server daemon .*did not start within 3000 ms/);
    let left = pidsWith(`sleep ${tag}`);
    for (let i = 0; i < 40 && left.length; i++) {
      await new Promise((res) => setTimeout(res, 50));
      left = pidsWith(`sleep ${tag}`);
    }
    for (const pid of left) {
      try {
        Deno.kill(pid, "SIGKILL"); // do not leak them from the test
      } catch { /* gone */ }
    }
    assert.deepEqual(left, [], "no process of the server's tree outlives Coyote");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(repo, { recursive: true }).catch(() => {});
  }
});
