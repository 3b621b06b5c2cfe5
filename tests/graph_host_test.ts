/**
 * Graph runs with the real host (core/graph/runner.ts): llm nodes are real engines against the
 * scripted OpenAI-compatible server (submit_result ends the node's turn; the repair turn is a real
 * second request), `.ts` scripts run in their own permission-scoped processes whose `ctx.exec` goes through
 * execute_command and the guard (announced as tool calls), `.sh` scripts get GRAPH_STATE.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createWorkspace } from "../core/session/workspace.ts";
import { GraphRunner } from "../core/graph/runner.ts";
import { loadGraph, parseGraphText } from "../core/graph/load.ts";
import { validateGraph } from "../core/graph/validate.ts";
import type { PermissionRequest, SessionEvent } from "../core/protocol/types.ts";
import { startModelServer } from "./support/model_server.ts";
import type { RecordedRequest, ScriptedReply } from "./support/model_server.ts";
import { testApp } from "./support/fixtures.ts";

async function setup(
  script: (req: RecordedRequest, i: number) => ScriptedReply,
  answer: "reject_once" | "allow_once" = "reject_once",
  asked: PermissionRequest[] = [],
) {
  const server = await startModelServer({ script });
  const cwd = await Deno.makeTempDir({ prefix: "coyote-graph-" });
  const configDir = await Deno.makeTempDir();
  const dataDir = await Deno.makeTempDir();
  const app = testApp({ cwd, configDir, dataDir }, {
    baseURL: server.baseURL,
    model: "scripted",
    apiKey: "k",
  });
  const ws = await createWorkspace(app, { cwd, log: () => {} });
  const tools = await ws.tools();
  const runner = (
    spec: ReturnType<typeof parseGraphText>,
    dir = cwd,
    files?: Record<string, string>,
  ) =>
    new GraphRunner({
      spec,
      dir,
      files,
      sessionId: "graph-test",
      cwd,
      client: ws.client,
      model: "scripted",
      tools,
      policy: ws.newPolicy(),
      permission: (req) => (asked.push(req), Promise.resolve(answer)),
      origin: {
        agent: spec.name,
        agentId: `${spec.name}-1`,
        rootSessionId: "graph-test",
        depth: 0,
      },
      log: () => {},
    });
  return {
    server,
    cwd,
    runner,
    async close() {
      await ws.close();
      await server.close();
      for (const d of [cwd, configDir, dataDir]) await Deno.remove(d, { recursive: true });
    },
  };
}

function spec(yaml: string) {
  const s = parseGraphText(yaml, "test/graph.yaml");
  validateGraph(s, "test/graph.yaml");
  return s;
}

Deno.test("graph host: submit_result ends the node's turn, a .ts script runs commands through execute_command", async () => {
  const env = await setup((req) => {
    const body = req.body as { tools?: { function: { name: string } }[] };
    assert.deepEqual(body.tools?.map((t) => t.function.name), ["submit_result"]);
    return { tool_calls: [{ name: "submit_result", arguments: { words: ["alpha", "beta"] } }] };
  });
  try {
    await Deno.writeTextFile(join(env.cwd, "hello.txt"), "hello from the workspace\n");
    const files = {
      "scripts/look.ts": `export default async function (state, ctx) {
        const r = await ctx.exec("cat hello.txt");
        ctx.event("looked", { exit: r.exit_code });
        return { seen: r.stdout.trim(), exit: r.exit_code, count: state.words.length };
      }`,
    };
    const g = spec(`
name: g
start: pick
nodes:
  pick:
    type: llm
    prompt: "pick words from {{initial_prompt}}"
    output_schema: { type: object, required: [words], properties: { words: { type: array, items: { type: string } } } }
    next: look
  look: { type: script, script: scripts/look.ts, outputs: [seen, exit, count], next: done }
  done: { type: end, output: "{{count}} words; {{seen}} (exit {{exit}})" }
`);
    const events: SessionEvent[] = [];
    const r = await env.runner(g, env.cwd, files).prompt("a text", {
      onEvent: (e) => events.push(e),
    });
    assert.equal(r.error, undefined, r.error?.message);
    assert.equal(r.text, "2 words; hello from the workspace (exit 0)");
    assert.equal(env.server.requests.length, 1, "no extra request after submit_result");
    assert.equal(r.usage.requests, 1);
    assert.deepEqual([events[0].sessionUpdate, events.at(-1)!.sessionUpdate], [
      "turn_started",
      "turn_ended",
    ]);
    // The script's command was a real, announced execute_command call.
    const call = events.find((e) =>
      e.sessionUpdate === "tool_call" && (e as { title?: string }).title?.includes("cat hello.txt")
    );
    assert.ok(call, "execute_command announced");
    assert.ok(
      events.some((e) =>
        e.sessionUpdate === "agent_thought_chunk" && JSON.stringify(e).includes("looked")
      ),
    );
    // Node tool calls and the llm's own calls never share an id.
    const ids = events.filter((e) => e.sessionUpdate === "tool_call").map((e) =>
      (e as { toolCallId: string }).toolCallId
    );
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.some((i) => i.startsWith("pick#1/")), ids.join(", "));
  } finally {
    await env.close();
  }
});

Deno.test("graph host: an llm node's permission request names its call as its events do (the prefixed id), so a frontend ties them", async () => {
  const outside = await Deno.makeTempDir({ prefix: "coyote-graph-outside-" });
  const asked: PermissionRequest[] = [];
  const env = await setup(
    (_req, i) =>
      i === 0
        ? {
          tool_calls: [{ name: "fs_write", arguments: { path: `${outside}/x.txt`, content: "x" } }],
        }
        : { text: "written" },
    "allow_once",
    asked,
  );
  try {
    const g = spec(`
name: g
tools: [fs_write]
start: w
nodes:
  w: { type: llm, tools: [fs_write], prompt: "{{initial_prompt}}", next: done }
  done: { type: end, output: "{{output}}" }
`);
    const events: SessionEvent[] = [];
    const r = await env.runner(g).prompt("write it", { onEvent: (e) => events.push(e) });
    assert.equal(r.error, undefined, r.error?.message);
    assert.equal(await Deno.readTextFile(`${outside}/x.txt`), "x");
    const call = events.find((e) =>
      e.sessionUpdate === "tool_call" && (e as { title?: string }).title?.startsWith("Write")
    ) as { toolCallId: string } | undefined;
    assert.match(call!.toolCallId, /^w#1\//);
    assert.equal(asked.length, 1, "the write outside the workspace asked");
    assert.equal(asked[0].toolCallId, call!.toolCallId);
    assert.equal(asked[0].scope?.toolCallId, call!.toolCallId);
    assert.equal(asked[0].scope?.rootToolCallId, call!.toolCallId, "at the root: its own call");
    assert.ok(events.some((e) =>
      e.sessionUpdate === "tool_call_update" &&
      (e as { toolCallId: string }).toolCallId === call!.toolCallId &&
      (e as { status?: string }).status === "completed"
    ));
  } finally {
    await env.close();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("graph host: an invalid submit_result gets one real repair request quoting the error", async () => {
  const env = await setup((_req, i) =>
    i === 0
      ? { tool_calls: [{ name: "submit_result", arguments: { n: "three" } }] }
      : { tool_calls: [{ name: "submit_result", arguments: { n: 3 } }] }
  );
  try {
    const g = spec(`
name: g
start: a
nodes:
  a: { type: llm, prompt: go, output_schema: { type: object, required: [n], properties: { n: { type: integer } } }, next: z }
  z: { type: end, output: "n={{n}}" }
`);
    const r = await env.runner(g).prompt("x", { onEvent: () => {} });
    assert.equal(r.text, "n=3");
    assert.equal(env.server.requests.length, 2);
    const msgs =
      (env.server.requests[1].body as { messages: { role: string; content: string }[] }).messages;
    assert.match(msgs.at(-1)!.content, /does not match the required schema: n: .*integer/);
  } finally {
    await env.close();
  }
});

Deno.test("graph host: a .sh script gets the state in GRAPH_STATE and prints one JSON object", async () => {
  // `bash script.sh` asks by default (it runs a script); here the user allows it.
  const env = await setup(() => ({ text: "unused" }), "allow_once");
  try {
    const loaded = await loadGraph(new URL("./fixtures/graphs/shell", import.meta.url).pathname);
    const r = await env.runner(loaded.spec, loaded.dir).prompt("count", { onEvent: () => {} });
    assert.equal(r.error, undefined, r.error?.message);
    assert.equal(r.text, "n=3 first=a");
  } finally {
    await env.close();
  }
});

Deno.test("graph host: a failing run ends the turn with graph_failed, never a rejection", async () => {
  const env = await setup(() => ({ text: "x" }));
  try {
    const g = spec(`
name: g
start: s
nodes:
  s: { type: script, script: scripts/boom.ts, outputs: [], next: z }
  z: { type: end }
`);
    const r = await env.runner(g, env.cwd, {
      "scripts/boom.ts": "export default () => { throw new Error('kaput'); }",
    })
      .prompt("x", { onEvent: () => {} });
    assert.equal(r.stopReason, "end_turn");
    assert.equal(r.error?.code, "graph_failed");
    assert.match(r.error!.message, /node "s" failed: script scripts\/boom.ts failed: kaput/);
  } finally {
    await env.close();
  }
});
