/**
 * Engine turn loop against the real provider and the scripted model server
 * (real HTTP on 127.0.0.1). Tools are small SDK tools defined here; the guard
 * is a table policy implementing the engine's `PolicyLike` contract (the real
 * Policy has its own table tests and is exercised end to end in e2e tests).
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool, type ToolAccess } from "../sdk/mod.ts";
import { Engine, type ModelClient, type PolicyLike, REPEAT_LIMIT } from "../core/engine/mod.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import { createProvider } from "../core/provider/provider.ts";
import { parseTranscript } from "../core/transcript/load.ts";
import { TranscriptWriter } from "../core/transcript/writer.ts";
import type {
  AnyTool,
  Decision,
  PermissionResolver,
  SessionEvent,
} from "../core/protocol/types.ts";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";

const echo = defineTool({
  name: "echo",
  description: "Echo text",
  input: z.object({ text: z.string() }),
  kind: "read",
  readOnly: true,
  title: (i) => `Echo ${i.text}`,
  run: (i) => `echo: ${i.text}`,
});

function sleeper(name: string, log: string[], readOnly: boolean): AnyTool {
  return defineTool({
    name,
    description: "Sleeps",
    input: z.object({ ms: z.number() }),
    readOnly,
    run: async (i, ctx) => {
      log.push(`start ${name}`);
      await new Promise<void>((res) => {
        const t = setTimeout(res, i.ms);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          res();
        });
      });
      log.push(`end ${name}`);
      return `slept ${i.ms}`;
    },
  });
}

const jsonSchemaTool = defineTool({
  name: "plain",
  description: "JSON-Schema input",
  input: {
    type: "object",
    properties: { n: { type: "integer", minimum: 1 } },
    required: ["n"],
    additionalProperties: false,
  },
  run: (i) => `n=${i.n}`,
});

const editTool = defineTool({
  name: "edit",
  description: "Pretend edit",
  input: z.object({ path: z.string() }),
  kind: "edit",
  access: (i) => [{ type: "write", path: i.path }],
  run: (i) => ({
    content: "edited",
    diffs: [{ path: i.path, oldText: "a\n", newText: "b\n" }],
    plan: [{ content: "edit it", priority: "high", status: "completed" }],
  }),
});

const shell = defineTool({
  name: "shell",
  description: "Pretend shell",
  input: z.object({ command: z.string() }),
  kind: "execute",
  access: (i) => [{ type: "execute", command: i.command }],
  run: (i) => `ran ${i.command}`,
});

class TablePolicy implements PolicyLike {
  added: [string, string][] = [];
  constructor(private table: Record<string, Decision> = {}) {}
  evaluate(access: ToolAccess) {
    const key = access.type === "execute"
      ? access.command
      : access.type === "write" || access.type === "read"
      ? access.path
      : "";
    const decision = this.table[key] ?? "allow";
    return Promise.resolve({ decision, reason: `table says ${decision} for ${key}`, access });
  }
  addRule(decision: string, rule: string) {
    this.added.push([decision, rule]);
  }
}

interface Harness {
  engine: Engine;
  events: SessionEvent[];
  requests: { body: unknown }[];
  close(): Promise<void>;
  dir: string;
  transcriptPath: string;
}

async function harness(
  script: ScriptedReply[],
  opts: {
    tools?: AnyTool[];
    policy?: PolicyLike;
    permission?: PermissionResolver;
    maxTurns?: number;
    maxRetries?: number;
  } = {},
): Promise<Harness> {
  const server = await startModelServer({ script });
  const dir = await Deno.makeTempDir({ prefix: "coyote-engine-" });
  const client = createProvider({
    baseURL: server.baseURL,
    apiKey: "k",
    model: "scripted",
    timeoutMs: 5000,
    maxRetries: opts.maxRetries ?? 2,
    retryBaseMs: 1,
  });
  const transcript = TranscriptWriter.create(dir, {
    id: "s1",
    cwd: dir,
    created: new Date().toISOString(),
    model: "scripted",
    agent: "test",
  });
  const engine = new Engine({
    sessionId: "s1",
    cwd: dir,
    client: client as unknown as ModelClient,
    model: "scripted",
    registry: new ToolRegistry(opts.tools ?? [echo]),
    policy: opts.policy ?? new TablePolicy(),
    permission: opts.permission ?? (() => Promise.resolve("reject_once")),
    systemPrompt: "You are a test.",
    maxTurns: opts.maxTurns ?? 10,
    transcript,
    log: () => {},
  });
  return {
    engine,
    events: [],
    requests: server.requests,
    dir,
    transcriptPath: transcript.path,
    close: async () => {
      transcript.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

// deno-lint-ignore no-explicit-any
type Msg = any;
function lastMessages(h: Harness, i: number): Msg[] {
  return (h.requests[i].body as { messages: Msg[] }).messages;
}
function toolReplies(h: Harness, i: number): string[] {
  return lastMessages(h, i).filter((m) => m.role === "tool").map((m) => m.content);
}
function updatesFor(events: SessionEvent[], id: string) {
  return events.filter((e) =>
    (e.sessionUpdate === "tool_call" || e.sessionUpdate === "tool_call_update") &&
    e.toolCallId === id
  );
}

Deno.test("turn: streams text, runs a tool, feeds the result back, ends the turn", async () => {
  const h = await harness([
    {
      reasoning: "thinking hard",
      text: "Let me look.",
      tool_calls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }],
    },
    { text: "The echo said hi." },
  ]);
  try {
    const r = await h.engine.prompt("say hi", { onEvent: (e) => h.events.push(e) });
    assert.equal(r.stopReason, "end_turn");
    assert.equal(r.text, "The echo said hi.");
    assert.equal(r.usage.requests, 2);
    assert.ok(r.usage.total_tokens > 0);
    const text = h.events.filter((e) => e.sessionUpdate === "agent_message_chunk").map((e) =>
      e.sessionUpdate === "agent_message_chunk" && e.content.type === "text" ? e.content.text : ""
    ).join("");
    assert.equal(text, "Let me look.The echo said hi.");
    assert.ok(h.events.some((e) => e.sessionUpdate === "agent_thought_chunk"));
    const tc = updatesFor(h.events, "c1");
    assert.deepEqual(tc.map((e) => (e as { status?: string }).status), [
      "pending",
      "in_progress",
      "completed",
    ]);
    assert.equal((tc[0] as { title: string }).title, "Echo hi");
    assert.equal((tc[0] as { kind: string }).kind, "read");
    assert.deepEqual((tc[0] as { rawInput: unknown }).rawInput, { text: "hi" });
    assert.deepEqual(toolReplies(h, 1), ["echo: hi"]);
    const msgs = lastMessages(h, 1);
    assert.equal(msgs[0].role, "system");
    assert.equal(msgs[2].tool_calls[0].function.name, "echo");
    const sent = (h.requests[0].body as {
      tools: { function: { name: string; parameters: { type: string } } }[];
    }).tools;
    assert.equal(sent[0].function.name, "echo");
    assert.equal(sent[0].function.parameters.type, "object");
    assert.ok(h.events.some((e) => e.sessionUpdate === "usage_update" && e.used > 0 && e.size > 0));
  } finally {
    await h.close();
  }
});

Deno.test("bad model output: invalid JSON, unknown tool, schema violations go back as tool errors", async () => {
  const h = await harness([
    {
      tool_calls: [
        { id: "a", name: "echo", arguments: '{"text": "unterminated' },
        { id: "b", name: "does_not_exist", arguments: {} },
        { id: "c", name: "echo", arguments: { text: 42 } },
        { id: "d", name: "plain", arguments: { n: 0, extra: true } },
        { id: "e", name: "plain", arguments: { n: 3 } },
      ],
    },
    { text: "ok" },
  ], { tools: [echo, jsonSchemaTool] });
  try {
    const r = await h.engine.prompt("go", { onEvent: (e) => h.events.push(e) });
    assert.equal(r.stopReason, "end_turn");
    const replies = toolReplies(h, 1);
    assert.equal(replies.length, 5);
    assert.match(replies[0], /not valid JSON/);
    assert.match(replies[1], /unknown tool "does_not_exist".*echo/);
    assert.match(replies[2], /invalid arguments for echo: text:/);
    assert.match(replies[3], /invalid arguments for plain/);
    assert.equal(replies[4], "n=3");
    for (const id of ["a", "b", "c", "d"]) {
      const ups = updatesFor(h.events, id);
      assert.equal(ups[0].sessionUpdate, "tool_call");
      assert.equal((ups.at(-1) as { status: string }).status, "failed", id);
    }
  } finally {
    await h.close();
  }
});

Deno.test("repeated identical calls are refused on the third time in a row", async () => {
  const call = { name: "echo", arguments: { text: "same" } };
  const h = await harness([
    { tool_calls: [call] },
    { tool_calls: [call] },
    { tool_calls: [{ name: "echo", arguments: { text: "same" } }] },
    { text: "giving up" },
  ]);
  try {
    const r = await h.engine.prompt("loop", { onEvent: (e) => h.events.push(e) });
    assert.equal(r.stopReason, "end_turn");
    assert.equal(REPEAT_LIMIT, 3);
    assert.deepEqual(toolReplies(h, 3), ["echo: same", "echo: same", toolReplies(h, 3)[2]]);
    assert.match(toolReplies(h, 3)[2], /already made 2 times in a row/);
  } finally {
    await h.close();
  }
});

Deno.test("read-only calls run concurrently; other calls run in order", async () => {
  const log: string[] = [];
  const tools = [
    sleeper("ro1", log, true),
    sleeper("ro2", log, true),
    sleeper("rw1", log, false),
    sleeper("rw2", log, false),
  ];
  const h = await harness([
    {
      tool_calls: [
        { name: "ro1", arguments: { ms: 150 } },
        { name: "ro2", arguments: { ms: 150 } },
        { name: "rw1", arguments: { ms: 30 } },
        { name: "rw2", arguments: { ms: 30 } },
      ],
    },
    { text: "done" },
  ], { tools });
  try {
    await h.engine.prompt("go", { onEvent: (e) => h.events.push(e) });
    assert.deepEqual(log.slice(0, 2).sort(), ["start ro1", "start ro2"]);
    assert.deepEqual(log.slice(4), ["start rw1", "end rw1", "start rw2", "end rw2"]);
  } finally {
    await h.close();
  }
});

Deno.test("maxTurns ends the turn with max_turn_requests", async () => {
  const h = await harness([
    { tool_calls: [{ name: "echo", arguments: { text: "1" } }] },
    { tool_calls: [{ name: "echo", arguments: { text: "2" } }] },
    { text: "never reached" },
  ], { maxTurns: 2 });
  try {
    const r = await h.engine.prompt("go", { onEvent: (e) => h.events.push(e) });
    assert.equal(r.stopReason, "max_turn_requests");
    assert.equal(h.requests.length, 2);
    assert.equal(r.usage.requests, 2);
  } finally {
    await h.close();
  }
});

Deno.test("cancel during a tool: cancelled, the call fails, history stays valid for the next turn", async () => {
  const log: string[] = [];
  const h = await harness([
    {
      tool_calls: [{ id: "slow", name: "rw", arguments: { ms: 5000 } }, {
        id: "next",
        name: "echo",
        arguments: { text: "x" },
      }],
    },
    { text: "second turn answer" },
  ], { tools: [sleeper("rw", log, false), echo] });
  try {
    const ctrl = new AbortController();
    const p = h.engine.prompt("go", {
      signal: ctrl.signal,
      onEvent: (e) => {
        h.events.push(e);
        if (e.sessionUpdate === "tool_call_update" && e.status === "in_progress") {
          setTimeout(() => ctrl.abort(), 20);
        }
      },
    });
    const t0 = performance.now();
    const r = await p;
    assert.equal(r.stopReason, "cancelled");
    assert.ok(performance.now() - t0 < 2000);
    const slow = updatesFor(h.events, "slow");
    assert.equal((slow.at(-1) as { status: string }).status, "failed");
    assert.equal(updatesFor(h.events, "next").length, 0);
    // Next turn: both tool calls have answers in the history sent to the model.
    const r2 = await h.engine.prompt("again", { onEvent: () => {} });
    assert.equal(r2.stopReason, "end_turn");
    const replies = toolReplies(h, 1);
    assert.equal(replies.length, 2);
    assert.ok(replies.every((c) => /cancelled/.test(c)));
  } finally {
    await h.close();
  }
});

Deno.test("cancel while the model streams keeps the partial text, marked interrupted", async () => {
  const h = await harness([{
    text: "partial answer that goes on and on",
    chunk_size: 2,
    chunk_delay_ms: 30,
  }, { text: "ok" }]);
  try {
    const ctrl = new AbortController();
    const r = await h.engine.prompt("go", {
      signal: ctrl.signal,
      onEvent: (e) => {
        if (e.sessionUpdate === "agent_message_chunk") ctrl.abort();
      },
    });
    assert.equal(r.stopReason, "cancelled");
    assert.ok(r.text.length > 0);
    const last = h.engine.messages.at(-1) as { role: string; content: string };
    assert.equal(last.role, "assistant");
    assert.match(last.content, /\[interrupted: cancelled\]/);
    const loaded = parseTranscript(await Deno.readTextFile(h.transcriptPath))!;
    assert.ok(loaded.messages.some((m) => m.role === "assistant"));
  } finally {
    await h.close();
  }
});

Deno.test("guard: deny and ask are refused; allow_always adds a rule; permission cancelled ends the turn", async () => {
  const policy = new TablePolicy({
    "rm -rf /": "deny",
    "make": "ask",
    "make deploy": "ask",
    "npm publish": "ask",
  });
  const asked: string[] = [];
  const answers: Record<string, "allow_always" | "reject_always" | "cancelled"> = {
    "make": "allow_always",
    "make deploy": "reject_always",
    "npm publish": "cancelled",
  };
  const h = await harness([
    {
      tool_calls: [
        { id: "d", name: "shell", arguments: { command: "rm -rf /" } },
        { id: "a", name: "shell", arguments: { command: "make" } },
        { id: "r", name: "shell", arguments: { command: "make deploy" } },
      ],
    },
    { tool_calls: [{ id: "c", name: "shell", arguments: { command: "npm publish" } }] },
  ], {
    tools: [shell],
    policy,
    permission: (req) => {
      const cmd = (req.rawInput as { command: string }).command;
      asked.push(cmd);
      assert.equal(req.toolCallId, { make: "a", "make deploy": "r", "npm publish": "c" }[cmd]);
      return Promise.resolve(answers[cmd]);
    },
  });
  try {
    const r = await h.engine.prompt("go", { onEvent: (e) => h.events.push(e) });
    assert.deepEqual(asked, ["make", "make deploy", "npm publish"]);
    const replies = toolReplies(h, 1);
    assert.match(replies[0], /denied by policy: table says deny/);
    assert.equal(replies[1], "ran make");
    assert.match(replies[2], /denied/);
    assert.deepEqual(policy.added, [["allow", "Execute(make)"], ["deny", "Execute(make deploy)"]]);
    assert.equal(r.stopReason, "cancelled");
    assert.deepEqual(r.denied.map((d) => [d.toolCallId, d.decision]), [["d", "deny"], [
      "r",
      "ask",
    ]]);
    // Every announced call ended.
    for (const id of ["d", "a", "r", "c"]) {
      const ups = updatesFor(h.events, id);
      assert.ok(["completed", "failed"].includes((ups.at(-1) as { status: string }).status), id);
    }
    // A permission request comes after the pending tool_call.
    const pendingIdx = h.events.findIndex((e) =>
      e.sessionUpdate === "tool_call" && e.toolCallId === "a"
    );
    assert.ok(pendingIdx >= 0);
  } finally {
    await h.close();
  }
});

Deno.test("diffs and plans become ACP diff content and plan updates", async () => {
  const h = await harness([
    { tool_calls: [{ id: "e", name: "edit", arguments: { path: "src/a.txt" } }] },
    { text: "edited" },
  ], { tools: [editTool] });
  try {
    await h.engine.prompt("edit", { onEvent: (e) => h.events.push(e) });
    const done = updatesFor(h.events, "e").at(-1) as {
      status: string;
      content: { type: string; path?: string }[];
      locations: { path: string }[];
    };
    assert.equal(done.status, "completed");
    const diff = done.content.find((c) => c.type === "diff") as unknown;
    assert.deepEqual(diff, {
      type: "diff",
      path: `${h.dir}/src/a.txt`,
      oldText: "a\n",
      newText: "b\n",
    });
    assert.equal(done.locations[0].path, `${h.dir}/src/a.txt`);
    const plan = h.events.find((e) => e.sessionUpdate === "plan");
    assert.ok(plan && plan.sessionUpdate === "plan" && plan.entries[0].content === "edit it");
  } finally {
    await h.close();
  }
});

Deno.test("provider faults: retried 429 recovers; exhausted 500s end the turn with error", async () => {
  const h = await harness([
    { status: 429, headers: { "retry-after": "0" } },
    { text: "recovered" },
    { status: 500 },
    { status: 500 },
  ], { maxRetries: 1 });
  try {
    const r1 = await h.engine.prompt("one", { onEvent: () => {} });
    assert.equal(r1.stopReason, "end_turn");
    assert.equal(r1.text, "recovered");
    assert.equal(r1.error, undefined);
    const r2 = await h.engine.prompt("two", { onEvent: () => {} });
    assert.equal(r2.stopReason, "end_turn");
    assert.equal(r2.error?.code, "server_error");
  } finally {
    await h.close();
  }
});

Deno.test("a cut stream ends the turn with error and keeps the partial answer", async () => {
  const h = await harness([{
    text: "this answer will be cut somewhere in the middle",
    cut_after_chunks: 3,
  }], { maxRetries: 0 });
  try {
    const r = await h.engine.prompt("go", { onEvent: () => {} });
    assert.equal(r.error?.code, "stream_cut");
    assert.ok(r.text.length > 0);
    const text = await Deno.readTextFile(h.transcriptPath);
    assert.match(text, /"interrupted":true/);
    assert.match(text, /"turn_end".*"error"/);
  } finally {
    await h.close();
  }
});

Deno.test("a second prompt while one runs is rejected", async () => {
  const h = await harness([{ text: "slow", delay_ms: 200 }]);
  try {
    const p = h.engine.prompt("one", { onEvent: () => {} });
    await assert.rejects(h.engine.prompt("two", { onEvent: () => {} }), /already running/);
    await p;
  } finally {
    await h.close();
  }
});

Deno.test("guard failures fail closed: an evaluation error denies the call", async () => {
  const broken: PolicyLike = {
    evaluate: () => Promise.reject(new Error("parser exploded")),
    addRule: () => {},
  };
  const h = await harness([
    { tool_calls: [{ id: "s", name: "shell", arguments: { command: "ls" } }] },
    { text: "ok" },
  ], { tools: [shell], policy: broken });
  try {
    const r = await h.engine.prompt("go", { onEvent: (e) => h.events.push(e) });
    assert.equal(r.stopReason, "end_turn");
    assert.match(
      toolReplies(h, 1)[0],
      /denied by policy: the guard could not evaluate this access \(parser exploded\)/,
    );
    assert.equal(r.denied[0].decision, "deny");
  } finally {
    await h.close();
  }
});

Deno.test("permission cancelled inside a read-only batch: every announced call still ends", async () => {
  const peek = defineTool({
    name: "peek",
    description: "Read a path",
    input: z.object({ path: z.string() }),
    readOnly: true,
    kind: "read",
    access: (i) => [{ type: "read", path: i.path }],
    run: (i) => `peeked ${i.path}`,
  });
  const h = await harness([
    {
      tool_calls: [
        { id: "p1", name: "peek", arguments: { path: "inside.txt" } },
        { id: "p2", name: "peek", arguments: { path: "/etc/secret" } },
        { id: "p3", name: "peek", arguments: { path: "other.txt" } },
      ],
    },
    { text: "next turn" },
  ], {
    tools: [peek],
    policy: new TablePolicy({ "/etc/secret": "ask" }),
    permission: () => Promise.resolve("cancelled"),
  });
  try {
    const r = await h.engine.prompt("go", { onEvent: (e) => h.events.push(e) });
    assert.equal(r.stopReason, "cancelled");
    for (const id of ["p1", "p2"]) {
      const ups = updatesFor(h.events, id);
      assert.equal(ups[0].sessionUpdate, "tool_call", id);
      assert.equal((ups.at(-1) as { status: string }).status, "failed", id);
    }
    assert.equal(updatesFor(h.events, "p3").length, 0);
    const r2 = await h.engine.prompt("again", { onEvent: () => {} });
    assert.equal(r2.stopReason, "end_turn");
    assert.equal(toolReplies(h, 1).length, 3);
  } finally {
    await h.close();
  }
});
