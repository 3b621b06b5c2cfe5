/**
 * ACP session modes (issue 18, core/frontends/acp/modes.ts) with the official ACP client against
 * a real `--acp-server`: `session/new` and `session/load` advertise the permission modes,
 * `session/set_mode` switches (a `current_mode_update` follows), plan mode refuses a write
 * without asking, accept-edits writes without asking, `/mode NAME` switches too, and an agent
 * name is still accepted by `session/set_mode` as before.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { acpTestEnv, finishAcp, startAcp } from "./support/acp_harness.ts";

const write = (id: string) => ({
  tool_calls: [{ id, name: "fs_write", arguments: { path: "hello.txt", content: "hi\n" } }],
});

Deno.test("acp modes: advertised, switched with session/set_mode and /mode, and they hold", async () => {
  const e = await acpTestEnv(
    [write("w1"), { text: "planned" }, write("w2"), { text: "written" }],
    "coyote-acp-modes",
  );
  const h = await startAcp({ env: e.env });
  try {
    const created = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    const sessionId = created.sessionId;
    assert.equal(created.modes?.currentModeId, "auto");
    assert.deepEqual(created.modes?.availableModes.map((m) => m.id), [
      "default",
      "accept-edits",
      "plan",
      "auto",
    ]);
    const modeUpdates = () =>
      h.updatesFor(sessionId).filter((u) =>
        u.sessionUpdate === "current_mode_update"
      ) as (acp.SessionUpdate & { currentModeId: string })[];

    await h.agent.request("session/set_mode", { sessionId, modeId: "plan" });
    assert.equal(modeUpdates().at(-1)?.currentModeId, "plan");
    await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "plan it" }],
    });
    await assert.rejects(Deno.stat(join(e.ws, "hello.txt")));
    assert.equal(h.permissionRequests.length, 0, "plan mode refuses without asking");
    assert.match(e.bodies()[1], /plan mode is read-only/);

    await h.agent.request("session/set_mode", { sessionId, modeId: "accept-edits" });
    await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "write it" }],
    });
    assert.equal(await Deno.readTextFile(join(e.ws, "hello.txt")), "hi\n");
    assert.equal(h.permissionRequests.length, 0, "accept-edits writes without asking");

    // /mode NAME switches and the client's selector follows.
    const r = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "/mode default" }],
    });
    assert.equal(r.stopReason, "end_turn");
    assert.equal(modeUpdates().at(-1)?.currentModeId, "default");
    const loaded = await h.agent.request("session/load", {
      sessionId,
      cwd: e.ws,
      mcpServers: [],
    });
    assert.equal(loaded.modes?.currentModeId, "default");
    // An unknown mode id that is no agent either is an invalid-params error; an agent name is
    // the agent config option, as before modes.
    await assert.rejects(
      h.agent.request("session/set_mode", { sessionId, modeId: "yolo" }),
      /unknown agent|Invalid params/,
    );
    await h.agent.request("session/set_mode", { sessionId, modeId: "oracle" });
    assert.equal(e.requests(), 4, "no model request for mode switches");
  } finally {
    await finishAcp(h);
    await e.close();
  }
});
