/**
 * OpenAI-compatible servers as they really behave (issue 10, "Providers"): reasoning fields,
 * parallel tool calls sharing one index, servers refusing optional fields, every error shape,
 * 4xx inside a stream, context overflow, unreachable hosts, and the history hygiene of
 * core/provider/messages.ts — each against the scripted server (real HTTP + SSE).
 */
import assert from "node:assert/strict";
import { createProvider } from "../core/provider/provider.ts";
import { type ProviderConfig, ProviderError } from "../core/provider/types.ts";
import { contextLimitFrom, errorText, transportKind } from "../core/provider/errors.ts";
import { wireMessages } from "../core/provider/messages.ts";
import {
  requestMessages,
  type RequestRule,
  type ScriptedReply,
  serverRules,
  startModelServer,
} from "./support/model_server.ts";

function cfg(baseURL: string, over: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    baseURL,
    apiKey: "sk-compat-test-key",
    model: "scripted",
    timeoutMs: 5_000,
    maxRetries: 4,
    retryBaseMs: 5,
    ...over,
  };
}
const USER = [{ role: "user" as const, content: "hi" }];

async function withServer(
  script: ScriptedReply[],
  fn: (s: Awaited<ReturnType<typeof startModelServer>>) => Promise<void>,
  rules: RequestRule[] = [],
) {
  const server = await startModelServer({ script, rules });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

async function rejects(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ProviderError, `expected ProviderError, got ${e}`);
    assert.ok(!e.message.includes("\n"), `message not one line: ${e.message}`);
    return e;
  }
  assert.fail("expected a rejection");
}

for (const field of ["reasoning_content", "reasoning"] as const) {
  Deno.test(`provider: reasoning in \`${field}\` is reported with the field it came in`, async () => {
    await withServer([{ reasoning: "think", reasoning_field: field, text: "ok" }], async (s) => {
      const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
      assert.equal(r.reasoning, "think");
      assert.equal(r.reasoningField, field);
    });
  });
}

for (const habit of ["zero", "absent"] as const) {
  Deno.test(`provider: parallel calls with index habit "${habit}" are told apart by their ids`, async () => {
    await withServer([{
      tool_calls: [
        { id: "call_a", name: "fs_read", arguments: { path: "a.txt" } },
        { id: "call_b", name: "fs_read", arguments: { path: "b.txt" } },
        { id: "call_c", name: "fs_ls", arguments: {} },
      ],
      tool_call_indexes: habit,
      split_arguments: 3,
    }], async (s) => {
      const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
      assert.deepEqual(r.toolCalls, [
        { id: "call_a", name: "fs_read", arguments: '{"path":"a.txt"}' },
        { id: "call_b", name: "fs_read", arguments: '{"path":"b.txt"}' },
        { id: "call_c", name: "fs_ls", arguments: "{}" },
      ]);
    });
  });
}

Deno.test("provider: calls without ids at one index split where a new name follows complete JSON", async () => {
  const chunk = (tc: Record<string, unknown>) => ({
    id: "x",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { tool_calls: [tc] }, finish_reason: null }],
  });
  await withServer([{
    raw_chunks: [
      chunk({ index: 0, function: { name: "fs_read", arguments: '{"path":' } }),
      chunk({ index: 0, function: { arguments: '"a.txt"}' } }),
      chunk({ index: 0, function: { name: "fs_read", arguments: '{"path":"b.txt"}' } }),
      { id: "x", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    ],
  }], async (s) => {
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
    assert.deepEqual(r.toolCalls.map((c) => [c.name, c.arguments]), [
      ["fs_read", '{"path":"a.txt"}'],
      ["fs_read", '{"path":"b.txt"}'],
    ]);
    assert.notEqual(r.toolCalls[0].id, r.toolCalls[1].id);
  });
});

Deno.test("provider: a server rejecting stream_options (422) gets one retry without it, remembered", async () => {
  const notices: string[] = [];
  await withServer([{ text: "first" }, { text: "second" }], async (s) => {
    const p = createProvider(cfg(s.baseURL, { notify: (l) => notices.push(l) }));
    assert.equal((await p.complete({ messages: USER })).text, "first");
    assert.equal((await p.complete({ messages: USER })).text, "second");
    const sent = s.requests.map((r) => "stream_options" in (r.body as object));
    assert.deepEqual(sent, [true, false, false]);
    assert.equal(notices.length, 1);
    assert.match(
      notices[0],
      /rejects `stream_options` \(HTTP 422\).*provider\.stream_options: false/,
    );
  }, [serverRules.rejectsField("stream_options")]);
});

Deno.test("provider: streamOptions false never sends stream_options; usage still read if sent", async () => {
  await withServer([{
    text: "a",
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }], async (s) => {
    const r = await createProvider(cfg(s.baseURL, { streamOptions: false })).complete({
      messages: USER,
    });
    assert.equal(r.text, "a");
    assert.equal(s.requests.length, 1);
    assert.equal("stream_options" in (s.requests[0].body as object), false);
  }, [serverRules.rejectsField("stream_options")]);
});

Deno.test("provider: a refused temperature (OpenAI reasoning models) is dropped the same way", async () => {
  await withServer([
    {
      status: 400,
      error_body: {
        error: {
          message: "Unsupported value: 'temperature' does not support 0.2 with this model.",
          param: "temperature",
          code: "unsupported_value",
        },
      },
    },
    { text: "fine" },
  ], async (s) => {
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER, temperature: 0.2 });
    assert.equal(r.text, "fine");
    assert.equal((s.requests[1].body as { temperature?: number }).temperature, undefined);
  });
});

const SHAPES: [string, ScriptedReply, RegExp][] = [
  [
    "OpenAI error.message",
    { status: 400, error_body: { error: { message: "bad thing" } } },
    /: bad thing$/,
  ],
  [
    "error as a string",
    { status: 400, error_body: { error: "plain error string" } },
    /: plain error string$/,
  ],
  ["vLLM {message}", {
    status: 400,
    error_body: { object: "error", message: "vllm says no", type: "BadRequestError", code: 400 },
  }, /: vllm says no$/],
  [
    "FastAPI {detail}",
    { status: 404, error_body: { detail: "Not Found" } },
    /HTTP 404\): Not Found from http:\S+\/v1\/chat\/completions — check the base URL \(OPENAI_BASE_URL, /,
  ],
  ["FastAPI detail list", {
    status: 422,
    error_body: {
      detail: [{ loc: ["body", "messages", 0, "content"], msg: "field required", type: "missing" }],
    },
  }, /HTTP 422\): messages\.0\.content: field required$/],
  ["plain text", { status: 400, error_body: "model not loaded" }, /HTTP 400\): model not loaded$/],
  ["HTML proxy page", {
    status: 403,
    error_body: "<html><head><title>403 Forbidden</title></head><body><h1>403</h1></body></html>",
    error_content_type: "text/html",
  }, /HTTP 403\): 403 Forbidden — check the API key \(OPENAI_API_KEY, /],
  [
    "empty body",
    { status: 404, error_body: "" },
    /HTTP 404\): 404 Not Found \(empty body\) from http:/,
  ],
  ["OpenRouter metadata.raw", {
    status: 400,
    error_body: {
      error: {
        message: "Provider returned error",
        code: 400,
        metadata: {
          raw: '{"error":{"message":"tool_use ids must be unique"}}',
          provider_name: "Up",
        },
      },
    },
  }, /Provider returned error \(Up: tool_use ids must be unique\)$/],
];
for (const [name, reply, re] of SHAPES) {
  Deno.test(`provider: error text from ${name}`, async () => {
    await withServer([reply], async (s) => {
      const e = await rejects(createProvider(cfg(s.baseURL)).complete({ messages: USER }));
      assert.match(e.message, re);
      assert.doesNotMatch(e.message, /status code \(no body\)/);
      assert.equal(s.requests.length, 1, "a 4xx is not retried");
    });
  });
}

Deno.test("provider: a 4xx error event inside the stream is a rejected request, not retried", async () => {
  await withServer([
    {
      text: "x",
      stream_error: {
        after_chunks: 1,
        error: {
          object: "error",
          message: "invalid tool schema",
          type: "BadRequestError",
          code: 400,
        },
      },
    },
    {
      raw_chunks: [`event: error\ndata: {"error":{"message":"bad input","code":"422"}}\n\n`],
      omit_done: true,
    },
    { text: "x", stream_error: { after_chunks: 1, error: { message: "overloaded", code: 503 } } },
    { text: "after 503" },
  ], async (s) => {
    const p = createProvider(cfg(s.baseURL));
    const e1 = await rejects(p.complete({ messages: USER }));
    assert.equal(e1.code, "bad_request");
    assert.equal(e1.status, 400);
    assert.match(e1.message, /HTTP 400, in the stream\): invalid tool schema/);
    assert.equal(s.requests.length, 1);
    const e2 = await rejects(p.complete({ messages: USER }));
    assert.equal(e2.code, "bad_request");
    assert.match(e2.message, /bad input/);
    assert.equal(s.requests.length, 2);
    // A 5xx inside the stream stays a retryable server error.
    assert.equal((await p.complete({ messages: USER })).text, "after 503");
    assert.equal(s.requests.length, 4);
  });
});

Deno.test("provider: a 200 whose JSON body is an error is reported with its text", async () => {
  await withServer([{
    status: 200,
    error_body: { error: { message: "quota exceeded for model", code: 402 } },
  }], async (s) => {
    const e = await rejects(createProvider(cfg(s.baseURL)).complete({ messages: USER }));
    assert.equal(e.code, "bad_request");
    assert.equal(e.status, 402);
    assert.match(e.message, /quota exceeded for model/);
    assert.equal(s.requests.length, 1);
  });
});

Deno.test("provider: context overflow (400 context_length_exceeded, 413, llama.cpp in-stream)", async () => {
  await withServer([
    {
      status: 400,
      error_body: {
        error: {
          message:
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
          code: "context_length_exceeded",
        },
      },
    },
    { status: 413, error_body: "413 Request Entity Too Large" },
    {
      text: "x",
      stream_error: {
        after_chunks: 0,
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: 5000,
          n_ctx: 4096,
        },
      },
    },
  ], async (s) => {
    const p = createProvider(cfg(s.baseURL));
    const e1 = await rejects(p.complete({ messages: USER }));
    assert.equal(e1.code, "context_overflow");
    assert.equal(e1.contextWindow, 8192);
    const e2 = await rejects(p.complete({ messages: USER }));
    assert.equal(e2.code, "context_overflow");
    assert.equal(e2.status, 413);
    assert.equal(e2.contextWindow, undefined);
    const e3 = await rejects(p.complete({ messages: USER }));
    assert.equal(e3.code, "context_overflow");
    assert.equal(e3.contextWindow, 4096);
    assert.equal(s.requests.length, 3, "overflows are not retried by the provider");
  });
});

Deno.test("provider: a 429 'Request too large … tokens per min' is a rate limit, not an overflow", async () => {
  await withServer([
    {
      status: 429,
      error_body: {
        error: { message: "Request too large for gpt-4o: Limit 30000 tokens per min" },
      },
    },
  ], async (s) => {
    const e = await rejects(
      createProvider(cfg(s.baseURL, { maxRetries: 0 })).complete({ messages: USER }),
    );
    assert.equal(e.code, "rate_limited");
  });
});

Deno.test("provider: a DNS failure is retried once and named", async () => {
  const notices: string[] = [];
  const e = await rejects(
    createProvider(
      cfg("http://coyote-no-such-host.invalid/v1", { notify: (l) => notices.push(l) }),
    ).complete({ messages: USER }),
  );
  assert.equal(e.code, "connection");
  assert.equal(e.attempts, 2);
  assert.match(e.message, /DNS lookup failed/);
  assert.equal(notices.length, 1);
});

Deno.test("provider: the history on the wire has no empty assistant turn and alternating users", async () => {
  const history = [
    { role: "user", content: "first" },
    { role: "assistant", content: null, reasoning_content: "only thought" },
    { role: "user", content: "second" },
    { role: "assistant", content: "", tool_calls: [] },
    { role: "user", content: "third" },
  ];
  await withServer([{ text: "ok" }], async (s) => {
    const r = await createProvider(cfg(s.baseURL)).complete({
      // deno-lint-ignore no-explicit-any
      messages: history as any,
    });
    assert.equal(r.text, "ok");
    assert.deepEqual(requestMessages(s.requests[0]), [
      { role: "user", content: "first\n\nsecond\n\nthird" },
    ]);
  }, [serverRules.rejectsEmptyAssistant(), serverRules.requiresAlternatingRoles()]);
});

Deno.test("wireMessages: empty tool arguments become {}, reasoning stays in its field", () => {
  const out = wireMessages([
    { role: "user", content: [{ type: "text", text: "a" }] },
    { role: "user", content: "b" },
    {
      role: "assistant",
      content: null,
      reasoning: "r",
      tool_calls: [{ id: "c", type: "function", function: { name: "x", arguments: "" } }],
    },
  ]);
  assert.deepEqual(out, [
    { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
    {
      role: "assistant",
      content: null,
      reasoning: "r",
      tool_calls: [{ id: "c", type: "function", function: { name: "x", arguments: "{}" } }],
    },
  ]);
});

Deno.test("error helpers: shapes, windows and transport kinds", () => {
  assert.equal(
    errorText({ message: { detail: [{ loc: ["body", "x"], msg: "nope" }] } }),
    "x: nope",
  );
  assert.equal(contextLimitFrom("prompt is too long: 210000 tokens > 200000 maximum"), 200000);
  assert.equal(contextLimitFrom("no number here"), undefined);
  assert.equal(
    transportKind(
      "fetch failed (client error (Connect): dns error: failed to lookup address information)",
    ),
    "dns",
  );
  assert.equal(transportKind("Connection refused (os error 111)"), "refused");
  assert.equal(transportKind("connection reset by peer"), undefined);
});

Deno.test("provider: reasoning_details merged by index and a call's extra_content are kept", async () => {
  const ch = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "x",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  await withServer([{
    raw_chunks: [
      ch({
        reasoning: "Let me ",
        reasoning_details: [{ type: "reasoning.text", text: "Let me ", index: 0 }],
      }),
      ch({
        reasoning: "look.",
        reasoning_details: [{
          type: "reasoning.text",
          text: "look.",
          signature: "sig-1",
          index: 0,
        }],
      }),
      ch({
        tool_calls: [{
          index: 0,
          id: "call_g",
          type: "function",
          function: { name: "fs_ls", arguments: '{"path":"."}' },
          extra_content: { google: { thought_signature: "TS-abc" } },
        }],
      }),
      // A server that repeats the whole arguments in a last delta.
      ch({ tool_calls: [{ index: 0, function: { arguments: '{"path":"."}' } }] }),
      ch({}, "tool_calls"),
    ],
  }], async (s) => {
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
    assert.equal(r.reasoning, "Let me look.");
    assert.equal(r.reasoningField, "reasoning");
    assert.deepEqual(r.reasoningDetails, [
      { type: "reasoning.text", text: "Let me look.", signature: "sig-1", index: 0 },
    ]);
    assert.deepEqual(r.toolCalls, [{
      id: "call_g",
      name: "fs_ls",
      arguments: '{"path":"."}',
      extra_content: { google: { thought_signature: "TS-abc" } },
    }]);
  });
});

Deno.test("wireMessages: broken tool arguments are wrapped as JSON, bad names made valid, an empty tool result is named", () => {
  const out = wireMessages([
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "a", type: "function", function: { name: "x", arguments: '{"path": "a.txt"' } },
        { id: "b", type: "function", function: { name: "x", arguments: "[1]" } },
        { id: "c", type: "function", function: { name: "fs_read<|channel|>x", arguments: "{}" } },
        { id: "d", type: "function", function: { name: "", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "a", content: "" },
    { role: "tool", tool_call_id: "b", content: "ok" },
  ]);
  assert.deepEqual(out[0].tool_calls?.map((t) => JSON.parse(t.function.arguments)), [
    { invalid_arguments: '{"path": "a.txt"' },
    { invalid_arguments: "[1]" },
    {},
    {},
  ]);
  assert.deepEqual(out[0].tool_calls?.map((t) => t.function.name), [
    "x",
    "x",
    "fs_read__channel__x",
    "unnamed_tool",
  ]);
  assert.equal(out[1].content, "(no output)");
  assert.equal(out[2].content, "ok");
});
