/**
 * Field faults of OpenAI-compatible servers (issue 21, "Models and OpenAI-compatible servers"),
 * each against the scripted server (real HTTP + SSE): tool arguments sent as JSON objects
 * (llama.cpp, Ollama), error bodies that echo the request or are plain text and must not be taken
 * for a refusal of an optional field.
 */
import assert from "node:assert/strict";
import { createProvider } from "../core/provider/provider.ts";
import { type ProviderConfig, ProviderError } from "../core/provider/types.ts";
import { wireMessages } from "../core/provider/messages.ts";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";

function cfg(baseURL: string, over: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    baseURL,
    apiKey: "sk-field-test-key",
    model: "scripted",
    timeoutMs: 5_000,
    maxRetries: 2,
    retryBaseMs: 5,
    ...over,
  };
}
const USER = [{ role: "user" as const, content: "hi" }];

async function withServer(
  script: ScriptedReply[],
  fn: (s: Awaited<ReturnType<typeof startModelServer>>) => Promise<void>,
) {
  const server = await startModelServer({ script });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "x",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

for (
  const [label, args, want] of [
    ["an object", { path: "a.txt", n: 2 }, '{"path":"a.txt","n":2}'],
    ["an array", ["a", 1], '["a",1]'],
    ["null", null, ""],
  ] as const
) {
  Deno.test(`provider: tool arguments streamed as ${label} become JSON text, not [object Object]`, async () => {
    await withServer([{
      raw_chunks: [
        chunk({
          tool_calls: [{
            index: 0,
            id: "c1",
            type: "function",
            function: { name: "fs_read", arguments: args },
          }],
        }),
        chunk({}, "tool_calls"),
      ],
    }], async (s) => {
      const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
      assert.deepEqual(r.toolCalls.map((c) => [c.name, c.arguments]), [["fs_read", want]]);
    });
  });
}

Deno.test("provider: a whole chat.completion (no streaming) with object arguments (Ollama)", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () =>
    Response.json({
      id: "y",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: "",
          tool_calls: [{
            id: "c",
            type: "function",
            function: { name: "fs_ls", arguments: { path: "." } },
          }],
        },
      }],
    }));
  try {
    const r = await createProvider(cfg(`http://127.0.0.1:${server.addr.port}/v1`)).complete({
      messages: USER,
    });
    assert.deepEqual(r.toolCalls.map((c) => c.arguments), ['{"path":"."}']);
  } finally {
    await server.shutdown();
  }
});

Deno.test("wireMessages: object arguments in a stored history go out as JSON text", () => {
  const out = wireMessages([{
    role: "assistant",
    content: null,
    tool_calls: [{
      id: "c",
      type: "function",
      function: { name: "fs_read", arguments: { path: "a" } as unknown as string },
    }],
  }]);
  assert.equal(out[0].tool_calls?.[0].function.arguments, '{"path":"a"}');
});

const errorShapes: [string, ScriptedReply][] = [
  ["a pydantic detail that echoes the request as `input`", {
    status: 422,
    error_body: {
      detail: [{
        type: "missing",
        loc: ["body", "model"],
        msg: "Field required",
        input: { messages: [], stream: true, stream_options: { include_usage: true } },
      }],
    },
  }],
  ["a pydantic detail string", {
    status: 400,
    error_body: { detail: "Model 'scripted' not found" },
  }],
  ["a text/plain dump of the request", {
    status: 400,
    error_body:
      'invalid model in request {"model":"scripted","stream_options":{"include_usage":true}}',
    error_content_type: "text/plain",
  }],
];
for (const [label, reply] of errorShapes) {
  Deno.test(`provider: ${label} is not taken for a stream_options refusal; its text is shown`, async () => {
    const notices: string[] = [];
    await withServer([reply, { text: "never" }], async (s) => {
      const p = createProvider(cfg(s.baseURL, { notify: (l) => notices.push(l) }));
      let err: unknown;
      try {
        await p.complete({ messages: USER });
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof ProviderError, `expected a rejection, got ${err}`);
      assert.equal(err.code, "bad_request");
      assert.equal(s.requests.length, 1, "no retry without stream_options");
      assert.deepEqual(notices, []);
      const shown = typeof reply.error_body === "string"
        ? "invalid model in request"
        : label.includes("string")
        ? "Model 'scripted' not found"
        : "model: Field required";
      assert.ok(err.message.includes(shown), err.message);
    });
  });
}

Deno.test("provider: an OpenAI error naming stream_options as `param` still drops it, with the server's text", async () => {
  const notices: string[] = [];
  await withServer([{
    status: 400,
    error_body: {
      error: { message: "Unrecognized request argument supplied", param: "stream_options" },
    },
  }, { text: "ok" }], async (s) => {
    const p = createProvider(cfg(s.baseURL, { notify: (l) => notices.push(l) }));
    assert.equal((await p.complete({ messages: USER })).text, "ok");
    assert.equal(s.requests.length, 2);
    assert.equal(notices.length, 1);
    assert.match(notices[0], /rejects `stream_options`.*Unrecognized request argument supplied/);
  });
});
