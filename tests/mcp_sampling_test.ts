/**
 * MCP sampling and elicitation (issue 21; core/session/mcp_requests.ts), against a real MCP
 * server that asks its client (tests/fixtures/mcp/ask_server.ts) and the scripted model server:
 * - headless: `sampling/createMessage` is refused (`User rejected sampling request`) unless a rule
 *   allows `Tool(mcp__sampling__<server>)` (not a rule for the
 *   server's tools, `mcp__ask__*`); allowed, the session's model answers it (the server's
 *   system prompt and messages, no tools); `elicitation` is not offered (nobody can answer).
 * - ACP: sampling asks with `session/request_permission` for a tool call announced first and
 *   finished after; an elicitation goes through the question path (ACP `elicitation/create`),
 *   one question per field, and the server gets `{action: "accept", content}`.
 */
import assert from "node:assert/strict";
import { acpTestEnv, finishAcp, startAcp, waitForMcp } from "./support/acp_harness.ts";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { askSpec } from "./support/mcp_servers.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
const isSampling = (r: RecordedRequest) => JSON.stringify(r.body).includes("SAMPLING-SYSTEM");
const toolResults = (r: RecordedRequest): string[] =>
  (r.body as Json).messages.filter((m: Json) => m.role === "tool").map((m: Json) =>
    String(m.content)
  );

/** Replies: SAMPLED-ANSWER to a sampling request, else the next of `turn`. */
function script(turn: ScriptedReply[]) {
  let i = 0;
  return (req: RecordedRequest): ScriptedReply =>
    isSampling(req) ? { text: "SAMPLED-ANSWER" } : turn[i++] ?? { text: "script exhausted" };
}

async function headless(turn: ScriptedReply[], config = "") {
  const server = await startModelServer({ script: script(turn) });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-mcp-ask-" }));
  try {
    await Deno.writeTextFile(
      `${env.configDir}/mcp.json`,
      JSON.stringify({ mcpServers: { ask: askSpec() } }),
    );
    if (config) await Deno.writeTextFile(`${env.configDir}/config.yaml`, config);
    const r = await runCoyote(
      ["--headless", "--output-format", "json", "--allow", "Tool(mcp__ask__*)", "go"],
      { cwd, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    return { ...r, requests: [...server.requests] };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
}

const SUMMARIZE = {
  tool_calls: [{ id: "s1", name: "mcp__ask__summarize", arguments: { text: "the doc" } }],
};

Deno.test("mcp sampling headless: refused unless a rule allows it; the model is not asked", async () => {
  const r = await headless([SUMMARIZE, { text: "done" }]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.requests.filter(isSampling).length, 0, "no sampling request reached the model");
  assert.match(
    toolResults(r.requests.at(-1)!)[0],
    /sampling error: (MCP error -1: )?User rejected sampling request/,
  );
  assert.match(r.stderr, /MCP server ask: sampling request refused/);
});

Deno.test("mcp sampling headless: allowed by config, the session's model answers it", async () => {
  const r = await headless(
    [SUMMARIZE, { text: "done" }],
    "permissions:\n  allow:\n    - Tool(mcp__sampling__ask)\n",
  );
  assert.equal(r.code, 0, r.stderr);
  const sampling = r.requests.filter(isSampling);
  assert.equal(sampling.length, 1);
  const body = sampling[0].body as Json;
  assert.equal(body.messages[0].role, "system");
  assert.equal(body.messages[0].content, "SAMPLING-SYSTEM");
  assert.deepEqual(body.messages.slice(1), [{ role: "user", content: "Summarize: the doc" }]);
  assert.equal(body.tools, undefined, "a sampling request carries no tools");
  assert.equal(
    toolResults(r.requests.at(-1)!)[0],
    "sampled: SAMPLED-ANSWER (model scripted, endTurn)",
  );
});

Deno.test("mcp elicitation headless: the capability is not offered; sampling is", async () => {
  const r = await headless([
    { tool_calls: [{ id: "c1", name: "mcp__ask__caps", arguments: {} }] },
    { tool_calls: [{ id: "a1", name: "mcp__ask__ask_name", arguments: {} }] },
    { text: "done" },
  ]);
  assert.equal(r.code, 0, r.stderr);
  const caps = JSON.parse(toolResults(r.requests[1])[0]);
  assert.ok(caps.sampling, "sampling offered");
  assert.equal(caps.elicitation, undefined, "elicitation not offered in headless");
  assert.match(toolResults(r.requests[2])[1], /elicitation error: .*(not support|elicitation)/i);
});

Deno.test("mcp sampling and elicitation over ACP: a permission ask on an announced call; questions answered through the client", async () => {
  const e = await acpTestEnv(
    script([
      SUMMARIZE,
      { tool_calls: [{ id: "a1", name: "mcp__ask__ask_name", arguments: {} }] },
      { text: "done" },
    ]),
    "coyote-mcp-ask-acp",
  );
  const h = await startAcp({
    env: e.env,
    // The summarize call, its sampling request, the ask_name call.
    permissionAnswers: ["allow_once", "allow_once", "allow_once"],
    clientCapabilities: { elicitation: { form: {} } } as never,
    elicitationAnswers: [
      { action: "accept", content: { answer: "Ada" } },
      { action: "accept", content: { answer: true } },
    ],
  });
  try {
    const { sessionId } = await h.agent.request("session/new", {
      cwd: e.ws,
      mcpServers: [{ name: "ask", command: "deno", args: askSpec().args, env: [] }],
    });
    // Let the server connect first (the prompt would start without its tools).
    await waitForMcp(h, sessionId);
    const r = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "summarize and ask" }],
    });
    assert.equal(r.stopReason, "end_turn", h.stderr().slice(-1500));
    assert.equal(h.permissionRequests.length, 3, h.stderr().slice(-1500));
    const ask = h.permissionRequests[1];
    assert.match(ask.toolCall.title ?? "", /MCP server ask asks to use the model/);
    const id = ask.toolCall.toolCallId;
    const ups = h.updatesFor(sessionId);
    const before = ups.slice(0, h.permissionAt[1]);
    assert.ok(
      before.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === id),
      "the sampling call was announced before its permission request",
    );
    assert.ok(
      ups.some((u) =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === id && u.status === "completed"
      ),
    );
    const results = toolResults(e.ms.requests.at(-1)!);
    assert.equal(results[0], "sampled: SAMPLED-ANSWER (model scripted, endTurn)");
    assert.deepEqual(JSON.parse(results[1]), {
      action: "accept",
      content: { name: "Ada", ok: true },
    });
    assert.equal(h.elicitations.length, 2, "one question per field");
    assert.match(JSON.stringify(h.elicitations[0]), /Who are you\?/);
  } finally {
    await finishAcp(h);
    await e.close();
  }
});
