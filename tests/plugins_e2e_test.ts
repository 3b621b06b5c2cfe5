/**
 * End to end: `coyote --headless --output-format stream-json --plugin PATH`
 * (main.ts as the `coyote` task runs it) against the scripted model server.
 * A bundled zod-typed plugin's tool is offered to the model with its JSON
 * Schema, called by the model, run in its Worker, and its result reaches the
 * model in the next request. A hanging plugin tool times out and the session
 * still finishes its turn.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

const FIXTURES = new URL("./fixtures/plugins/", import.meta.url).pathname;

interface ChatBody {
  tools?: { function: { name: string; parameters: Record<string, unknown> } }[];
  messages: { role: string; content?: unknown; tool_call_id?: string }[];
}

Deno.test("e2e: the scripted model calls a zod-typed plugin tool in a headless session", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "call_add", name: "calc_add", arguments: { a: 20, b: 22 } }] },
      { text: "done" },
    ],
  });
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--plugin",
      join(FIXTURES, "good", "zod_bundle.js"),
      "add the numbers",
    ], { cwd: env.dataDir, env: childEnv(env, { baseURL: server.baseURL }), timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 2);
    const first = server.requests[0].body as ChatBody;
    const tool = first.tools?.find((t) => t.function.name === "calc_add");
    assert.ok(tool, "calc_add is offered to the model");
    const params = tool.function.parameters as { properties: Record<string, { type: string }> };
    assert.equal(params.properties.a.type, "integer");
    const second = server.requests[1].body as ChatBody;
    const toolMsg = second.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_add");
    assert.ok(toolMsg, "the tool result is sent back to the model");
    assert.match(JSON.stringify(toolMsg.content), /20 \+ 22 = 42/);
    const lines = parseJsonLines(r.stdout);
    assert.equal(lines.at(-1)!.type, "result");
    assert.ok(r.stdout.includes("20 + 22 = 42"), "the tool result is in the event stream");
  } finally {
    await server.close();
    await env.cleanup();
  }
});

Deno.test("e2e: a hanging plugin tool times out and the session goes on", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "call_busy", name: "bad_busy", arguments: {} }] },
      { tool_calls: [{ id: "call_ok", name: "bad_ok", arguments: {} }] },
      { text: "survived" },
    ],
  });
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--plugin",
      join(FIXTURES, "hostile", "misbehave.ts"),
      "go",
    ], {
      cwd: env.dataDir,
      env: childEnv(env, { baseURL: server.baseURL, extra: { COYOTE_PLUGIN_TIMEOUT_MS: "500" } }),
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 3);
    const second = server.requests[1].body as ChatBody;
    const busy = second.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_busy");
    assert.match(JSON.stringify(busy?.content), /timed out after 500 ms/);
    const third = server.requests[2].body as ChatBody;
    const ok = third.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_ok");
    assert.match(JSON.stringify(ok?.content), /ok/);
    assert.equal(parseJsonLines(r.stdout).at(-1)!.type, "result");
  } finally {
    await server.close();
    await env.cleanup();
  }
});

Deno.test("e2e: whatever a plugin prints goes to stderr; stream-json stdout stays pure", async () => {
  const server = await startModelServer({
    script: [{ tool_calls: [{ id: "call_noise", name: "noisy_print", arguments: {} }] }, {
      text: "quiet",
    }],
  });
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--plugin",
      join(FIXTURES, "good", "noisy.js"),
      "go",
    ], { cwd: env.dataDir, env: childEnv(env, { baseURL: server.baseURL }), timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const lines = parseJsonLines(r.stdout); // throws on any non-JSON line
    assert.equal(lines.at(-1)!.type, "result");
    assert.ok(!r.stdout.includes("NOISE"), "no plugin output on stdout");
    for (
      const way of [
        "console.log",
        "console.info",
        "writeSync",
        "write",
        "writable",
        "process.stdout",
      ]
    ) {
      assert.ok(r.stderr.includes(`NOISE ${way}`), `${way} output reaches stderr`);
    }
    const second = server.requests[1].body as ChatBody;
    const msg = second.messages.find((m) => m.role === "tool" && m.tool_call_id === "call_noise");
    assert.match(JSON.stringify(msg?.content), /printed/);
  } finally {
    await server.close();
    await env.cleanup();
  }
});
