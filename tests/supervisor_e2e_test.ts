/**
 * Sub-agents through the real frontends (subprocesses of main.ts, scripted model server):
 * `stream-json` carries the children's envelopes (`parent_id`), a child's guard `ask` is
 * denied at once under `--headless`, text mode prints one status line per child, and over ACP
 * the child's ask becomes a `session/request_permission` naming the child while its progress
 * shows as content of the parent's `agent__spawn` call. The agents come from a workspace
 * plugin (plain data: the supervisor keys pass through).
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { startAcp } from "./support/acp_harness.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const AGENTS_PLUGIN = `import { definePlugin } from "@coyote/sdk";
export default definePlugin({
  name: "test-agents",
  version: "1.0.0",
  agents: [
    { name: "lead", description: "lead", instructions: "LEAD agent.", can_spawn_agents: true,
      spawnable_agents: ["worker"] },
    { name: "worker", description: "worker", instructions: "WORKER agent.",
      tools: ["execute_command"] },
  ],
});
`;

function agentOf(req: RecordedRequest): string {
  return String((req.body as Json).messages[0]?.content ?? "").split(/\s/)[0];
}
function toolResults(req: RecordedRequest): string[] {
  return (req.body as Json).messages.filter((m: Json) => m.role === "tool").map((m: Json) =>
    String(m.content)
  );
}

/**
 * LEAD spawns one WORKER (prompt: the lead's prompt + " it"), collects, answers; WORKER runs
 * `make deploy` (asks), then reports. Requests are told apart by agent and first user message.
 */
function script(requests: RecordedRequest[]) {
  return (req: RecordedRequest): ScriptedReply => {
    const mine = requests.filter((r) =>
      agentOf(r) === agentOf(req) &&
      JSON.stringify((r.body as Json).messages[1]) ===
        JSON.stringify((req.body as Json).messages[1])
    ).length;
    if (agentOf(req) === "WORKER") {
      if (mine === 1) {
        return { tool_calls: [{ name: "execute_command", arguments: { command: "make deploy" } }] };
      }
      return { text: `worker result: ${toolResults(req).at(-1)?.slice(0, 60)}` };
    }
    if (mine === 1) {
      return {
        tool_calls: [{
          name: "agent__spawn",
          arguments: { agent: "worker", prompt: `${(req.body as Json).messages[1].content} it` },
        }],
      };
    }
    if (mine === 2) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
    return { text: "lead done" };
  };
}

async function workspace(): Promise<string> {
  const ws = await Deno.makeTempDir({ prefix: "coyote-sub-e2e-" });
  await Deno.mkdir(`${ws}/.coyote/plugins`, { recursive: true });
  await Deno.writeTextFile(`${ws}/.coyote/plugins/agents.ts`, AGENTS_PLUGIN);
  return ws;
}

/** User config: `make` asks; the workspace is trusted (its plugin folder is read). */
const config = (ws: string) =>
  `permissions:\n  ask: ["Execute(make *)"]\ntrusted_workspaces: [${JSON.stringify(ws)}]\n`;

Deno.test("headless: stream-json nests the child's events; its ask is denied at once; text mode has one status line per child", async () => {
  const env = await makeCoyoteEnv();
  const ws = await workspace();
  await Deno.writeTextFile(`${env.configDir}/config.yaml`, config(ws));
  const requests: RecordedRequest[] = [];
  const server = await startModelServer({
    script: (req) => script(requests)(req),
    onRequest: (r) => requests.push(r),
  });
  try {
    const r = await runCoyote(
      ["--headless", "--agent", "lead", "--output-format", "stream-json", "deploy"],
      { cwd: ws, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    const lines: Json[] = parseJsonLines(r.stdout);
    const init = lines[0], result = lines.at(-1);
    assert.equal(init.schema_version, 2);
    const child = lines.filter((l) => l.type === "session_update" && l.parent_id);
    assert.ok(child.length > 0, "child events are on stdout");
    const childId = child[0].agent_id;
    assert.match(childId, /^worker-[0-9a-f]{8}$/);
    for (const l of child) {
      assert.equal(l.parent_id, init.agent_id);
      assert.notEqual(l.session_id, init.session_id);
      assert.equal(l.agent, "worker");
    }
    assert.deepEqual(child.map((l) => l.seq), child.map((_, i) => i + 1));
    // The spawn call that started it is named on every child line.
    const spawnCall = lines.find((l) =>
      l.type === "session_update" && l.session_id === init.session_id &&
      l.update.sessionUpdate === "tool_call" &&
      l.update.title.startsWith("Spawn worker")
    );
    assert.ok(child.every((l) => l.parent_tool_call_id === spawnCall.update.toolCallId));
    // The child's `make deploy` was refused at once (headless), without running.
    const failed = child.find((l) =>
      l.update.sessionUpdate === "tool_call_update" && l.update.status === "failed"
    );
    assert.match(JSON.stringify(failed.update.content), /denied/);
    // …and the result lists it (docs/ci.md: what headless refused is in `denied`), naming the child.
    assert.equal(result.denied.length, 1, JSON.stringify(result.denied));
    assert.equal(result.denied[0].agent_id, childId);
    assert.equal(result.denied[0].access.command, "make deploy");
    assert.equal(result.text, "lead done");
    assert.equal(result.agents.length, 1);
    assert.equal(result.agents[0].agent_id, childId);
    assert.equal(result.usage.requests, 3 + 2, "the child's requests roll up");
    // The root's turn_ended comes after the child's.
    const ends = lines.filter((l) => l.update?.sessionUpdate === "turn_ended");
    assert.deepEqual(ends.map((l) => l.agent_id), [childId, init.agent_id]);

    // Text mode: the answer on stdout, one status line for the child on stderr.
    const t = await runCoyote(["--headless", "--agent", "lead", "deploy again"], {
      cwd: ws,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(t.code, 0, t.stderr);
    assert.equal(t.stdout, "lead done\n");
    const status = t.stderr.split("\n").filter((l) => /↳ worker-[0-9a-f]{8} /.test(l));
    assert.equal(status.length, 1, t.stderr);
    assert.match(status[0], /end_turn \(2 request\(s\)/);

    // --list-sessions shows the child's transcript under its parent.
    const list = await runCoyote(["--list-sessions"], {
      cwd: ws,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    const rows = list.stdout.trim().split("\n").slice(1);
    const parentRow = rows.findIndex((l) => init.session_id.startsWith(l.split("\t")[0]));
    assert.ok(parentRow >= 0, list.stdout);
    assert.match(rows[parentRow + 1], new RegExp(`^└ \\S+\\t.*\\(${childId}\\)`));

    // --session opens the child's own conversation.
    const childSession = child[0].session_id;
    const more = await runCoyote(
      ["--headless", "--session", childSession, "--output-format", "json", "anything else?"],
      { cwd: ws, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(more.code, 0, more.stderr);
    const again = JSON.parse(more.stdout);
    assert.equal(again.session_id, childSession);
    assert.match(again.text, /^worker result/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("acp: a child's ask is a permission request naming the child; its progress is content of the spawn call", async () => {
  const env = await makeCoyoteEnv();
  const ws = await workspace();
  await Deno.writeTextFile(`${env.configDir}/config.yaml`, config(ws));
  const requests: RecordedRequest[] = [];
  const server = await startModelServer({
    script: (req) => script(requests)(req),
    onRequest: (r) => requests.push(r),
  });
  const h = await startAcp({ env: childEnv(env, { baseURL: server.baseURL }) });
  try {
    const { sessionId } = await h.agent.request("session/new", { cwd: ws, mcpServers: [] });
    await h.agent.request("session/set_config_option", {
      sessionId,
      configId: "agent",
      value: "lead",
    } as acp.SetSessionConfigOptionRequest);
    const res = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "deploy" }],
    });
    assert.equal(res.stopReason, "end_turn");
    const ups = h.updatesFor(sessionId);
    const spawnCall = ups.find((u) =>
      u.sessionUpdate === "tool_call" && u.title.startsWith("Spawn worker")
    ) as Extract<acp.SessionUpdate, { sessionUpdate: "tool_call" }>;
    assert.ok(spawnCall);
    // The child's ask: one permission request, in the root session, naming the child.
    assert.equal(h.permissionRequests.length, 1);
    const pr = h.permissionRequests[0];
    assert.equal(pr.sessionId, sessionId);
    assert.match(pr.toolCall.title ?? "", /^worker-[0-9a-f]{8}: make deploy/);
    const meta = (pr._meta as Json).coyote;
    assert.equal(meta.agent, "worker");
    assert.equal(meta.parent_tool_call_id, spawnCall.toolCallId);
    // The child's tool calls are not top-level calls — except the one its permission request
    // names, announced under that id (issue 21) — and its progress is on the spawn call.
    const calls = ups.filter((u) => u.sessionUpdate === "tool_call");
    assert.deepEqual(
      calls.filter((u) => /make deploy/.test((u as Json).title)).map((u) => (u as Json).toolCallId),
      [pr.toolCall.toolCallId],
    );
    const progress = ups.filter((u) =>
      u.sessionUpdate === "tool_call_update" && u.toolCallId === spawnCall.toolCallId &&
      JSON.stringify(u.content ?? []).includes(meta.agent_id)
    ).map((u) => JSON.stringify((u as Json).content));
    assert.ok(progress.some((p) => p.includes("started: deploy it")));
    assert.ok(progress.some((p) => p.includes("make deploy")));
    assert.ok(progress.some((p) => p.includes("end_turn")));
    // The response rolls the child's usage up.
    assert.equal((res._meta as Json).coyote.usage.requests, 5);
    assert.equal(await h.close(), 0);
    h.assertStdoutPure();
  } finally {
    await h.close().catch(() => {});
    await server.close();
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});
