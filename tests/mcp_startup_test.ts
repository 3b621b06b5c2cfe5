/**
 * MCP servers still starting when a turn begins (issue 21; core/session/mcp_startup.ts):
 * - ACP: the first prompt after `session/new` does not wait for a server that is still starting.
 *   Its first model request goes without that server's tools; an `agent_thought_chunk` notice
 *   (`_meta.coyote.notice: "mcp_starting"`) tells the user; once the server is ready (notice
 *   `mcp_ready`) the next request of the same turn carries its tools, and a
 *   `notifications/tools/list_changed` adds the new tool to the request after that.
 * - Headless (one turn, nobody to prompt again): the turn waits, and says so on stderr first.
 * Real `--acp-server` / headless subprocesses, the official ACP client, a real MCP server
 * (tests/fixtures/mcp/odd_server.ts, held back until a gate file exists), scripted model server.
 */
import assert from "node:assert/strict";
import { acpTestEnv, finishAcp, startAcp, waitFor } from "./support/acp_harness.ts";
import type { RecordedRequest } from "./support/model_server.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { oddSpec } from "./support/mcp_servers.ts";

const toolNames = (r: RecordedRequest): string[] =>
  ((r.body as { tools?: { function: { name: string } }[] }).tools ?? []).map((t) =>
    t.function.name
  );

Deno.test("mcp start-up over ACP: the first prompt does not wait; a notice says so; tools join the next request", async () => {
  let gate = "";
  let connected = () => false;
  const e = await acpTestEnv(async (req: RecordedRequest, i: number) => {
    if (i === 0) {
      // The turn is running while the server is still held back: open the gate now and
      // answer once the server is connected, with a call that keeps the turn going.
      await Deno.writeTextFile(gate, "");
      await waitFor(connected, 20_000, "server connected");
      return { tool_calls: [{ id: "c1", name: "fs_ls", arguments: { path: "." } }] };
    }
    if (i === 1) return { tool_calls: [{ id: "c2", name: "mcp__odd__add_tool", arguments: {} }] };
    return { text: `saw ${toolNames(req).filter((n) => n.startsWith("mcp__")).length} mcp tools` };
  }, "coyote-mcp-start");
  gate = `${e.ws}/.gate`;
  const h = await startAcp({ env: e.env, permissionAnswers: ["allow_once", "allow_once"] });
  try {
    const { sessionId } = await h.agent.request("session/new", {
      cwd: e.ws,
      mcpServers: [{ name: "odd", command: "deno", args: oddSpec(gate).args, env: [] }],
    });
    const notices = () =>
      h.updatesFor(sessionId).filter((u) => u.sessionUpdate === "agent_thought_chunk").map((u) =>
        (u as { _meta?: { coyote?: { notice?: string } } })._meta?.coyote?.notice
      );
    connected = () => notices().includes("mcp_ready");
    const r = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "list files" }],
    });
    assert.equal(r.stopReason, "end_turn", h.stderr().slice(-1500));
    const reqs = e.ms.requests;
    assert.equal(reqs.length, 3);
    assert.ok(
      !toolNames(reqs[0]).some((n) => n.startsWith("mcp__odd__")),
      "the first request went without the starting server's tools",
    );
    assert.deepEqual(notices().slice(0, 2), ["mcp_starting", "mcp_ready"]);
    const first = h.updatesFor(sessionId).find((u) => u.sessionUpdate === "agent_thought_chunk");
    assert.match(JSON.stringify(first), /MCP server odd still starting/);
    assert.ok(toolNames(reqs[1]).includes("mcp__odd__good"), "the next request has its tools");
    assert.ok(!toolNames(reqs[1]).includes("mcp__odd__late"));
    assert.ok(toolNames(reqs[2]).includes("mcp__odd__late"), "tools/list_changed is followed");
  } finally {
    await finishAcp(h);
    await e.close();
  }
});

Deno.test("mcp start-up headless: the one turn waits for a starting server and says so on stderr", async () => {
  const server = await startModelServer({ script: [{ text: "done" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-mcp-start-" }));
  const gate = `${cwd}/.gate`;
  try {
    await Deno.writeTextFile(
      `${env.configDir}/mcp.json`,
      JSON.stringify({ mcpServers: { odd: oddSpec(gate) } }),
    );
    const { cmd, args } = coyoteCommand(["--headless", "--output-format", "json", "go"]);
    const child = new Deno.Command(cmd, {
      args,
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let err = "";
    const errDone = (async () => {
      const dec = new TextDecoder();
      for await (const c of child.stderr) err += dec.decode(c, { stream: true });
    })();
    const out = new Response(child.stdout).text();
    await waitFor(() => /waiting for MCP server odd to start/.test(err), 20_000, "the note");
    assert.equal(server.requests.length, 0, "no request before the server is up");
    await Deno.writeTextFile(gate, "");
    const st = await child.status;
    await errDone;
    assert.equal(st.code, 0, err);
    assert.equal(JSON.parse(await out).text, "done");
    assert.ok(toolNames(server.requests[0]).includes("mcp__odd__good"), "its tools were there");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
