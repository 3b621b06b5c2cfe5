/**
 * ACP session lifecycle (issue 21): concurrent `session/load`s of one id then `session/close`
 * leave no MCP server running (one open is shared, close waits for it); a session's own MCP
 * server stops when the last session naming it closes, while the workspace stays open for
 * others; `session/delete` (ACP v1 `sessionCapabilities.delete`) removes the transcript.
 * Real `--acp-server` subprocess driven by the official client, real MCP server processes
 * (tests/fixtures/mcp/odd_server.ts), counted in the process table.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { acpTestEnv, descendantPids, finishAcp, startAcp, waitFor } from "./support/acp_harness.ts";
import { oddSpec } from "./support/mcp_servers.ts";

/** Live processes under `root` whose command line runs the odd fixture server. */
function oddServers(root: number, tag: string): number[] {
  return descendantPids(root).filter((pid) => {
    try {
      const cmd = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
      return cmd.some((a) => a.endsWith("odd_server.ts")) && cmd.includes(tag);
    } catch {
      return false;
    }
  });
}

/** An ACP `mcpServers` entry of the odd fixture, told apart by a `--tag` argument. */
function oddEntry(name: string, tag: string): acp.McpServer {
  return { name, command: "deno", args: [...oddSpec().args, "--tag", tag], env: [] };
}

Deno.test("acp lifecycle: two concurrent session/load then session/close leave no MCP server running", async () => {
  const e = await acpTestEnv([{ text: "hello" }], "coyote-acp-life");
  const h = await startAcp({ env: e.env });
  try {
    const srv = [oddEntry("odd", "t1")];
    const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: srv });
    await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "hi" }],
    });
    await waitFor(() => oddServers(h.child.pid, "t1").length === 1, 20_000, "the server running");
    await h.agent.request("session/close", { sessionId });
    await waitFor(() => oddServers(h.child.pid, "t1").length === 0, 15_000, "server stopped");

    const loads = await Promise.allSettled([
      h.agent.request("session/load", { sessionId, cwd: e.ws, mcpServers: srv }),
      h.agent.request("session/load", { sessionId, cwd: e.ws, mcpServers: srv }),
    ]);
    assert.deepEqual(loads.map((l) => l.status), ["fulfilled", "fulfilled"]);
    await waitFor(() => oddServers(h.child.pid, "t1").length >= 1, 20_000, "server restarted");
    await h.agent.request("session/close", { sessionId });
    await waitFor(
      () => oddServers(h.child.pid, "t1").length === 0,
      15_000,
      "no MCP server left after close (a second open would keep one)",
    );
  } finally {
    await finishAcp(h);
    await e.close();
  }
});

Deno.test("acp lifecycle: a session's MCP server stops with the last session naming it, not with the workspace", async () => {
  const e = await acpTestEnv([], "coyote-acp-life");
  const h = await startAcp({ env: e.env });
  try {
    const a = await h.agent.request("session/new", {
      cwd: e.ws,
      mcpServers: [oddEntry("odd", "ta")],
    });
    const b = await h.agent.request("session/new", {
      cwd: e.ws,
      mcpServers: [oddEntry("other", "tb")],
    });
    await waitFor(
      () =>
        oddServers(h.child.pid, "ta").length === 1 && oddServers(h.child.pid, "tb").length === 1,
      20_000,
      "both servers running",
    );
    await h.agent.request("session/close", { sessionId: a.sessionId });
    await waitFor(() => oddServers(h.child.pid, "ta").length === 0, 15_000, "A's server stopped");
    assert.equal(oddServers(h.child.pid, "tb").length, 1, "B's server keeps running");
    await h.agent.request("session/close", { sessionId: b.sessionId });
    await waitFor(() => oddServers(h.child.pid, "tb").length === 0, 15_000, "B's server stopped");
  } finally {
    await finishAcp(h);
    await e.close();
  }
});

Deno.test("acp lifecycle: session/delete is advertised, closes the session and removes its transcript", async () => {
  const e = await acpTestEnv([{ text: "one" }, { text: "two" }], "coyote-acp-life");
  const h = await startAcp({ env: e.env });
  try {
    assert.deepEqual(h.init?.agentCapabilities?.sessionCapabilities?.delete, {});
    const kept = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    await h.agent.request("session/prompt", {
      sessionId: kept.sessionId,
      prompt: [{ type: "text", text: "keep me" }],
    });
    const gone = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    await h.agent.request("session/prompt", {
      sessionId: gone.sessionId,
      prompt: [{ type: "text", text: "delete me" }],
    });
    const before = await h.agent.request("session/list", { cwd: e.ws });
    assert.ok(before.sessions.some((s) => s.sessionId === gone.sessionId));
    // Deleted while open: closed first, then removed.
    await h.agent.request("session/delete", { sessionId: gone.sessionId });
    const after = await h.agent.request("session/list", { cwd: e.ws });
    assert.ok(!after.sessions.some((s) => s.sessionId === gone.sessionId), "left session/list");
    assert.ok(after.sessions.some((s) => s.sessionId === kept.sessionId), "the other one stays");
    await assert.rejects(
      h.agent.request("session/prompt", {
        sessionId: gone.sessionId,
        prompt: [{ type: "text", text: "still there?" }],
      }),
      /not found/i,
    );
    await assert.rejects(
      h.agent.request("session/load", { sessionId: gone.sessionId, cwd: e.ws, mcpServers: [] }),
      "a deleted session cannot be loaded",
    );
  } finally {
    await finishAcp(h);
    await e.close();
  }
});
