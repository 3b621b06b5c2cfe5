/**
 * ACP (issue 21): a sub-agent's permission request names a tool call the client has seen —
 * a `tool_call` with that `toolCallId` comes before `session/request_permission`, and a
 * final `tool_call_update` (`completed` when allowed and run, `failed` when rejected) follows,
 * so the editor's card ends. Real `--acp-server` subprocess, the official client, scripted
 * model server with user agents `lead` (spawns) and `kid` (runs a command that asks).
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { acpTestEnv, finishAcp, startAcp } from "./support/acp_harness.ts";
import type { RecordedRequest } from "./support/model_server.ts";
import { agentOf, collectAll, nth, spawn } from "./support/scripted_agents.ts";

const LEAD = `name: lead
description: LEAD test agent
instructions: LEAD agent for tests.
can_spawn_agents: true
spawnable_agents: [kid]
tools: [execute_command]
`;
const KID = `name: kid
description: KID test agent
instructions: KID agent for tests.
tools: [execute_command]
`;

for (const answer of ["allow_once", "reject_once"] as const) {
  Deno.test(`acp sub-agent: its ${answer} permission request names an announced tool call that gets a final status`, async () => {
    const reqs: RecordedRequest[] = [];
    const e = await acpTestEnv((req: RecordedRequest) => {
      reqs.push(req);
      if (agentOf(req) === "KID") {
        return nth(reqs, req) === 1
          ? {
            tool_calls: [{
              id: "call_0",
              name: "execute_command",
              arguments: { command: "touch kid-file" },
            }],
          }
          : { text: "kid done" };
      }
      switch (nth(reqs, req)) {
        case 1:
          return { tool_calls: [spawn("kid", "make the file")] };
        case 2:
          return { tool_calls: [collectAll] };
        default:
          return { text: "lead done" };
      }
    }, "coyote-acp-kid");
    for (const [name, text] of [["lead", LEAD], ["kid", KID]]) {
      await Deno.mkdir(`${e.data}/config/agents/${name}`, { recursive: true });
      await Deno.writeTextFile(`${e.data}/config/agents/${name}/config.yaml`, text);
    }
    // --no-sandbox: the command asks (the OS sandbox would auto-allow it).
    const h = await startAcp({ env: e.env, args: ["--no-sandbox"], permissionAnswers: [answer] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      await h.agent.request("session/set_config_option", {
        sessionId,
        configId: "agent",
        value: "lead",
      } as acp.SetSessionConfigOptionRequest);
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "delegate" }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.equal(h.permissionRequests.length, 1, h.stderr().slice(-1500));
      const asked = h.permissionRequests[0].toolCall.toolCallId;
      assert.match(asked, /^kid-[0-9a-f]+\/call_0$/, "the sub-agent's call id, prefixed");
      const ups = h.updatesFor(sessionId);
      const at = h.permissionAt[0];
      const announced = ups.slice(0, at).find((u) =>
        u.sessionUpdate === "tool_call" && u.toolCallId === asked
      ) as acp.ToolCall | undefined;
      assert.ok(announced, "a tool_call with that id came before the permission request");
      assert.equal(announced.status, "pending");
      assert.match(announced.title ?? "", /^kid-[0-9a-f]+: /);
      const finals = ups.filter((u) =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === asked &&
        (u.status === "completed" || u.status === "failed")
      ) as acp.ToolCallUpdate[];
      assert.equal(finals.length, 1, "exactly one final status");
      assert.equal(finals[0].status, answer === "allow_once" ? "completed" : "failed");
      const ran = await Deno.stat(`${e.ws}/kid-file`).then(() => true, () => false);
      assert.equal(ran, answer === "allow_once");
    } finally {
      await finishAcp(h);
      await e.close();
    }
  });
}
