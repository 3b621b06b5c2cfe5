import assert from "node:assert/strict";
import { createProvider } from "../core/provider/provider.ts";
import { type ProviderConfig, ProviderError } from "../core/provider/types.ts";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";

const KEY = "sk-test-SECRET-9f8e7d6c5b4a";

function cfg(baseURL: string, over: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    baseURL,
    apiKey: KEY,
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
) {
  const server = await startModelServer({ script });
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
    assert.ok(!e.message.includes(KEY), `key leaked in: ${e.message}`);
    assert.ok(!e.message.includes("\n"), `message not one line: ${e.message}`);
    return e;
  }
  assert.fail("expected a rejection");
}

Deno.test("provider streams text in many chunks and records usage", async () => {
  const text = "Hello there, this is a streamed answer.";
  await withServer([{
    text,
    reasoning: "thinking hard",
    usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
  }], async (s) => {
    const deltas: string[] = [];
    const thoughts: string[] = [];
    const p = createProvider(cfg(s.baseURL, { headers: { "x-extra": "yes" } }));
    const r = await p.complete({ messages: USER, temperature: 0.2 }, {
      onText: (d) => deltas.push(d),
      onReasoning: (d) => thoughts.push(d),
    });
    assert.equal(r.text, text);
    assert.ok(deltas.length >= 5, `only ${deltas.length} chunks`);
    assert.equal(deltas.join(""), text);
    assert.equal(r.reasoning, "thinking hard");
    assert.equal(thoughts.join(""), "thinking hard");
    assert.equal(r.finishReason, "stop");
    assert.deepEqual(r.toolCalls, []);
    assert.deepEqual(r.usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    assert.equal(s.requests.length, 1);
    const req = s.requests[0];
    assert.equal(req.stream, true);
    const body = req.body as Record<string, unknown>;
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.model, "scripted");
    assert.equal(body.temperature, 0.2);
    assert.equal(body.tools, undefined);
    assert.equal(req.headers["authorization"], `Bearer ${KEY}`);
    assert.equal(req.headers["x-extra"], "yes");
  });
});

Deno.test("provider accepts delta.reasoning (OpenRouter convention)", async () => {
  await withServer(
    [{ text: "ok", reasoning: "abc def ghi", reasoning_field: "reasoning" }],
    async (s) => {
      const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
      assert.equal(r.reasoning, "abc def ghi");
      assert.equal(r.text, "ok");
    },
  );
});

for (const interleave of [false, true]) {
  Deno.test(`provider accumulates two parallel tool calls split across chunks (interleave=${interleave})`, async () => {
    const args0 = { path: "src/some/long/file/name.ts", offset: 10, limit: 200 };
    const args1 = '{"command":"deno test --allow-all tests/"}';
    await withServer([{
      text: "Let me look.",
      tool_calls: [
        { id: "call_A", name: "fs_read", arguments: args0 },
        { id: "call_B", name: "execute_command", arguments: args1 },
      ],
      split_arguments: 3,
      interleave_tool_calls: interleave,
    }], async (s) => {
      const deltas: [number, string | undefined, string | undefined][] = [];
      const tools = [{
        type: "function" as const,
        function: { name: "fs_read", parameters: { type: "object", properties: {} } },
      }];
      const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER, tools }, {
        onToolCallDelta: (i, id, name) => deltas.push([i, id, name]),
      });
      assert.equal(r.finishReason, "tool_calls");
      assert.equal(r.text, "Let me look.");
      assert.deepEqual(r.toolCalls, [
        { id: "call_A", name: "fs_read", arguments: JSON.stringify(args0) },
        { id: "call_B", name: "execute_command", arguments: args1 },
      ]);
      // id/name only in the first delta of each call; arguments in many deltas.
      const withId = deltas.filter((d) => d[1] !== undefined);
      assert.deepEqual(withId, [[0, "call_A", "fs_read"], [1, "call_B", "execute_command"]]);
      assert.ok(deltas.filter((d) => d[0] === 0).length > 10);
      assert.ok(deltas.filter((d) => d[0] === 1).length > 10);
      assert.deepEqual((s.requests[0].body as { tools: unknown }).tools, tools);
    });
  });
}

Deno.test("provider waits for retry-after-ms on 429, then succeeds", async () => {
  await withServer([
    { status: 429, headers: { "retry-after-ms": "300" } },
    { text: "done" },
  ], async (s) => {
    const t0 = performance.now();
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
    const waited = s.requests[1].time - s.requests[0].time;
    assert.equal(r.text, "done");
    assert.equal(s.requests.length, 2);
    assert.ok(waited >= 290, `waited only ${waited} ms`);
    assert.ok(performance.now() - t0 < 3000);
  });
});

Deno.test("provider honours retry-after in seconds on 429", async () => {
  await withServer([
    { status: 429, headers: { "retry-after": "1" } },
    { text: "done" },
  ], async (s) => {
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
    const waited = s.requests[1].time - s.requests[0].time;
    assert.equal(r.text, "done");
    assert.ok(waited >= 990, `waited only ${waited} ms`);
    assert.ok(waited < 2500, `waited ${waited} ms`);
  });
});

Deno.test("provider retries 500, 500 then succeeds with growing backoff", async () => {
  await withServer([{ status: 500 }, { status: 503 }, { text: "fine" }], async (s) => {
    const r = await createProvider(cfg(s.baseURL, { retryBaseMs: 40 })).complete({
      messages: USER,
    });
    assert.equal(r.text, "fine");
    assert.equal(s.requests.length, 3);
    const gap1 = s.requests[1].time - s.requests[0].time;
    const gap2 = s.requests[2].time - s.requests[1].time;
    assert.ok(gap1 >= 29, `first backoff ${gap1}`); // 40 ms minus up to 25 % jitter
    assert.ok(gap2 >= 59, `second backoff ${gap2}`); // 80 ms minus up to 25 % jitter
  });
});

Deno.test("provider reports rate_limited after exhausting retries", async () => {
  const replies: ScriptedReply[] = Array.from({ length: 3 }, () => ({
    status: 429,
    error_body: { error: { message: `Rate limit reached for key ${KEY}`, type: "rate_limit" } },
  }));
  await withServer(replies, async (s) => {
    const e = await rejects(
      createProvider(cfg(s.baseURL, { maxRetries: 2 })).complete({ messages: USER }),
    );
    assert.equal(e.code, "rate_limited");
    assert.equal(e.status, 429);
    assert.equal(e.attempts, 3);
    assert.equal(s.requests.length, 3);
    assert.match(e.message, /429/);
    assert.match(e.message, /Rate limit reached/);
    assert.match(e.message, /\[redacted\]/);
  });
});

Deno.test("provider reports server_error after exhausting retries; script exhaustion is visible", async () => {
  await withServer([{ status: 502 }], async (s) => {
    const e = await rejects(
      createProvider(cfg(s.baseURL, { maxRetries: 1 })).complete({ messages: USER }),
    );
    assert.equal(e.code, "server_error");
    assert.equal(s.requests.length, 2);
    assert.match(e.message, /script exhausted/);
  });
});

Deno.test("provider does not wait for a retry-after beyond the cap", async () => {
  await withServer([{ status: 429, headers: { "retry-after": "3600" } }], async (s) => {
    const t0 = performance.now();
    const e = await rejects(createProvider(cfg(s.baseURL)).complete({ messages: USER }));
    assert.equal(e.code, "rate_limited");
    assert.match(e.message, /retry after 3600 s/);
    assert.equal(s.requests.length, 1);
    assert.ok(performance.now() - t0 < 2000);
  });
});

Deno.test("provider: 401 is auth, 400 is bad_request, neither retried, key never shown", async () => {
  await withServer([
    {
      status: 401,
      error_body: {
        error: { message: `Incorrect API key provided: ${KEY}.`, code: "invalid_api_key" },
      },
    },
    { status: 400, error_body: { error: { message: "model 'x' not found" } } },
  ], async (s) => {
    const p = createProvider(cfg(s.baseURL));
    const e1 = await rejects(p.complete({ messages: USER }));
    assert.equal(e1.code, "auth");
    assert.equal(e1.attempts, 1);
    assert.match(e1.message, /Incorrect API key provided: \[redacted\]/);
    const e2 = await rejects(p.complete({ messages: USER }));
    assert.equal(e2.code, "bad_request");
    assert.match(e2.message, /model 'x' not found/);
    assert.equal(s.requests.length, 2);
  });
});

Deno.test("provider: connection refused is retried once (not max_retries times), with a notice", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const notices: string[] = [];
  const e = await rejects(
    createProvider(
      cfg(`http://127.0.0.1:${port}/v1`, {
        maxRetries: 4,
        retryBaseMs: 20,
        notify: (l) => notices.push(l),
      }),
    ).complete({ messages: USER }),
  );
  assert.equal(e.code, "connection");
  assert.equal(e.attempts, 2);
  // One clear line: the URL tried and why, not fetch's chain of causes.
  assert.equal(
    e.message,
    `cannot reach the model server at http://127.0.0.1:${port}/v1: connection refused (after 2 attempts)`,
  );
  assert.equal(notices.length, 1);
  assert.match(notices[0], /cannot reach the model server.*retrying in 0\.0 s \(once\)/i);
});

Deno.test("provider: connection failure before content is retried (empty cut stream)", async () => {
  await withServer([{ text: "x", cut_after_chunks: 0 }, { text: "recovered" }], async (s) => {
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER });
    assert.equal(r.text, "recovered");
    assert.equal(s.requests.length, 2);
  });
});

for (const clean of [false, true]) {
  Deno.test(`provider: stream cut mid-way → stream_cut with partial, not retried (clean=${clean})`, async () => {
    await withServer([
      { text: "The quick brown fox jumps", chunk_size: 4, cut_after_chunks: 4, cut_clean: clean },
      { text: "must not be requested" },
    ], async (s) => {
      const shown: string[] = [];
      const e = await rejects(
        createProvider(cfg(s.baseURL)).complete({ messages: USER }, {
          onText: (d) => shown.push(d),
        }),
      );
      assert.equal(e.code, "stream_cut");
      assert.match(e.message, clean ? /ended before the response was complete/ : /broke off/);
      // chunk 1 is the role chunk, then 3 text chunks of 4 chars
      assert.equal(e.partial?.text, "The quick br");
      assert.equal(shown.join(""), "The quick br");
      assert.equal(s.requests.length, 1);
    });
  });
}

Deno.test("provider: timeout waiting for headers → timeout (not retried)", async () => {
  await withServer([{ hang: true }, { text: "nope" }], async (s) => {
    const t0 = performance.now();
    const e = await rejects(
      createProvider(cfg(s.baseURL, { timeoutMs: 200 })).complete({ messages: USER }),
    );
    const elapsed = performance.now() - t0;
    assert.equal(e.code, "timeout");
    assert.match(e.message, /200 ms/);
    assert.ok(elapsed >= 190 && elapsed < 2000, `elapsed ${elapsed}`);
    assert.equal(s.requests.length, 1);
  });
});

Deno.test("provider: stall between chunks → timeout with partial; slow but steady stream is fine", async () => {
  await withServer([
    { text: "abcdefgh", chunk_size: 4, chunk_delay_ms: 400 },
    { text: "abcdefghijkl", chunk_size: 4, chunk_delay_ms: 60 },
  ], async (s) => {
    const p = createProvider(cfg(s.baseURL, { timeoutMs: 200 }));
    const e = await rejects(p.complete({ messages: USER }));
    assert.equal(e.code, "timeout");
    assert.equal(e.partial?.text, "");
    // 6 chunks × 60 ms = 360 ms total > timeout, but no single gap exceeds it.
    const r = await p.complete({ messages: USER });
    assert.equal(r.text, "abcdefghijkl");
  });
});

Deno.test("provider: abort mid-stream → cancelled with partial", async () => {
  await withServer(
    [{ text: "one two three four five six", chunk_size: 4, chunk_delay_ms: 50 }],
    async (s) => {
      const ac = new AbortController();
      let n = 0;
      const e = await rejects(
        createProvider(cfg(s.baseURL)).complete({ messages: USER }, {
          onText: () => {
            if (++n === 2) ac.abort();
          },
        }, ac.signal),
      );
      assert.equal(e.code, "cancelled");
      assert.equal(e.partial?.text, "one two ");
    },
  );
});

Deno.test("provider: abort while waiting (hang and backoff) → cancelled quickly", async () => {
  await withServer([{ hang: true }], async (s) => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const t0 = performance.now();
    const e = await rejects(
      createProvider(cfg(s.baseURL)).complete({ messages: USER }, {}, ac.signal),
    );
    assert.equal(e.code, "cancelled");
    assert.ok(performance.now() - t0 < 1500);
  });
  await withServer([{ status: 503, headers: { "retry-after": "30" } }], async (s) => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const t0 = performance.now();
    const e = await rejects(
      createProvider(cfg(s.baseURL)).complete({ messages: USER }, {}, ac.signal),
    );
    assert.equal(e.code, "cancelled");
    assert.ok(performance.now() - t0 < 1500);
    assert.equal(s.requests.length, 1);
  });
  const ac = new AbortController();
  ac.abort();
  const e = await rejects(
    createProvider(cfg("http://127.0.0.1:9/v1")).complete({ messages: USER }, {}, ac.signal),
  );
  assert.equal(e.code, "cancelled");
});

Deno.test("provider: request model override and tool-call id fallback", async () => {
  await withServer([{ tool_calls: [{ name: "fs_ls", arguments: {} }] }], async (s) => {
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER, model: "other" });
    assert.equal((s.requests[0].body as { model: string }).model, "other");
    assert.equal(r.toolCalls.length, 1);
    assert.equal(r.toolCalls[0].name, "fs_ls");
    assert.equal(r.toolCalls[0].arguments, "{}");
    assert.equal(r.toolCalls[0].id, "call_0_0");
  });
});

Deno.test("provider: a server that ignores stream:true still works (whole JSON completion)", async () => {
  await withServer([{
    text: "whole",
    reasoning: "why",
    tool_calls: [{ id: "c9", name: "fs_ls", arguments: { path: "." } }],
    ignore_stream: true,
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  }], async (s) => {
    const shown: string[] = [];
    const r = await createProvider(cfg(s.baseURL)).complete({ messages: USER }, {
      onText: (d) => shown.push(d),
    });
    assert.equal(r.text, "whole");
    assert.deepEqual(shown, ["whole"]);
    assert.equal(r.reasoning, "why");
    assert.deepEqual(r.toolCalls, [{ id: "c9", name: "fs_ls", arguments: '{"path":"."}' }]);
    assert.equal(r.finishReason, "tool_calls");
    assert.deepEqual(r.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });
});

Deno.test("provider: in-stream error payload before content is retried, after content is stream_cut", async () => {
  await withServer([
    { text: "x", stream_error: { after_chunks: 1, error: { message: "upstream overloaded" } } },
    { text: "ok now" },
    {
      text: "partial answer",
      chunk_size: 4,
      stream_error: { after_chunks: 3, error: { message: "boom" } },
    },
  ], async (s) => {
    const p = createProvider(cfg(s.baseURL));
    const r = await p.complete({ messages: USER });
    assert.equal(r.text, "ok now");
    assert.equal(s.requests.length, 2);
    const e = await rejects(p.complete({ messages: USER }));
    assert.equal(e.code, "stream_cut");
    assert.match(e.message, /boom/);
    assert.equal(e.partial?.text, "partial ");
    assert.equal(s.requests.length, 3);
  });
});

Deno.test("provider: plain-text error bodies are reported on one line", async () => {
  await withServer([{ status: 404, error_body: "404 page\nnot found" }], async (s) => {
    const e = await rejects(createProvider(cfg(s.baseURL)).complete({ messages: USER }));
    assert.equal(e.code, "bad_request");
    assert.equal(e.status, 404);
    assert.match(e.message, /HTTP 404\): 404 page not found/);
  });
});

Deno.test("provider: x-should-retry overrides the status rule", async () => {
  await withServer([
    { status: 500, headers: { "x-should-retry": "false" } },
    { status: 409, headers: { "x-should-retry": "true" } },
    { text: "after conflict" },
  ], async (s) => {
    const p = createProvider(cfg(s.baseURL));
    const e = await rejects(p.complete({ messages: USER }));
    assert.equal(e.code, "server_error");
    assert.equal(s.requests.length, 1);
    const r = await p.complete({ messages: USER });
    assert.equal(r.text, "after conflict");
    assert.equal(s.requests.length, 3);
  });
});
