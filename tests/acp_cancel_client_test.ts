/**
 * ACP (issue 21): `session/cancel` while the client holds one of the agent's requests
 * (`fs/read_text_file`, `fs/write_text_file`, `terminal/create`) withdraws it with `$/cancel_request` and ends
 * the turn `cancelled` at once, the tool call finished `failed`. Real `--acp-server`
 * subprocess, the official client (which sees the withdrawal as its handler's abort signal),
 * scripted model server.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { acpTestEnv, finishAcp, startAcp, waitFor } from "./support/acp_harness.ts";

for (
  const [tool, method, args] of [
    ["fs_read", "fs/read_text_file", (p: string) => ({ path: p })],
    // A new file (fs_write refuses to replace a file it has not read).
    ["fs_write", "fs/write_text_file", (p: string) => ({ path: `new_${p}`, content: "new\n" })],
    // A command in a client terminal (terminal/create held).
    ["execute_command", "terminal/create", (p: string) => ({ command: `cat ${p}` })],
  ] as const
) {
  Deno.test(`acp cancel: a held ${method} is withdrawn with $/cancel_request; the turn ends cancelled`, async () => {
    const e = await acpTestEnv([
      { tool_calls: [{ id: "call_fs", name: tool, arguments: args("notes.hold") }] },
      { text: "unused" },
    ], "coyote-acp-cancel-client");
    const file = `${e.ws}/notes.hold`;
    await Deno.writeTextFile(file, "old text\n");
    const h = await startAcp({
      env: e.env,
      holdFs: [method],
      permissionAnswers: ["allow_once"],
      args: ["--no-sandbox"],
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const turn = h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: `use ${tool}` }],
      });
      await waitFor(() => h.fsCalls.some((c) => c.method === method), 30_000, `${method} held`)
        .catch((e) => {
          throw new Error(
            `${e.message}; updates: ${JSON.stringify(h.updatesFor(sessionId)).slice(-1500)}; ` +
              `stderr: ${h.stderr().slice(-1500)}`,
          );
        });
      await h.agent.notify("session/cancel", { sessionId });
      const r = await turn;
      assert.equal(r.stopReason, "cancelled");
      assert.deepEqual(
        h.fsCancelled.map((c) => c.method),
        [method],
        "the agent sent $/cancel_request for the request the client held",
      );
      const finals = h.updatesFor(sessionId).filter((u): u is acp.ToolCallUpdate & {
        sessionUpdate: "tool_call_update";
      } =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_fs" &&
        (u.status === "failed" || u.status === "completed")
      );
      assert.equal(finals.at(-1)?.status, "failed", "the tool call got a final status");
      assert.equal(await Deno.readTextFile(file), "old text\n", "nothing written");
      assert.equal(await Deno.stat(`${e.ws}/new_notes.hold`).catch(() => null), null);
    } finally {
      await finishAcp(h);
      await e.close();
    }
  });
}
