/**
 * Issue 10 "Providers" end to end: main.ts subprocesses against a scripted server made as strict
 * as real ones (tests/support/model_server.ts `serverRules`). A session must survive thinking
 * models, empty turns, index-0 parallel calls, servers refusing `stream_options`, rejected
 * requests (also after `--continue` and ACP `session/load`), context overflows and an unreachable
 * server.
 */
import assert from "node:assert/strict";
import {
  type ModelServer,
  type RecordedRequest,
  requestMessages,
  type RequestRule,
  type ScriptedReply,
  serverRules,
  startModelServer,
} from "./support/model_server.ts";
import { childEnv, type CoyoteEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { startAcp } from "./support/acp_harness.ts";

interface Ctx {
  server: ModelServer;
  env: CoyoteEnv;
  cwd: string;
  /** Runs `coyote --headless --output-format json ARGS…`; returns the exit code, result, stderr. */
  run(
    args: string[],
    extra?: Record<string, string>,
  ): Promise<{ code: number; result: Record<string, unknown>; stderr: string }>;
  transcript(id: string): Promise<Record<string, unknown>[]>;
}

async function withCoyote(
  script: ScriptedReply[],
  rules: RequestRule[],
  fn: (c: Ctx) => Promise<void>,
  config = "",
) {
  const server = await startModelServer({ script, rules });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-prov-ws-" });
  if (config) await Deno.writeTextFile(`${env.configDir}/config.yaml`, config);
  try {
    await fn({
      server,
      env,
      cwd,
      async run(args, extra) {
        const r = await runCoyote(["--headless", "--output-format", "json", ...args], {
          cwd,
          env: childEnv(env, { baseURL: server.baseURL, extra }),
        });
        let result: Record<string, unknown> = {};
        try {
          result = JSON.parse(r.stdout);
        } catch {
          assert.fail(`stdout is not one JSON result: ${r.stdout}\nstderr: ${r.stderr}`);
        }
        return { code: r.code, result, stderr: r.stderr };
      },
      async transcript(id) {
        return (await Deno.readTextFile(`${env.dataDir}/sessions/${id}.jsonl`)).trim().split("\n")
          .map((l) => JSON.parse(l));
      },
    });
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
}

const assistants = (r: RecordedRequest) => requestMessages(r).filter((m) => m.role === "assistant");
const toolMsgs = (r: RecordedRequest) => requestMessages(r).filter((m) => m.role === "tool");

for (const field of ["reasoning_content", "reasoning"] as const) {
  Deno.test(`e2e: reasoning in \`${field}\` goes back with its tool-call message (thinking models)`, async () => {
    await withCoyote(
      [
        {
          reasoning: "I should list the files",
          reasoning_field: field,
          tool_calls: [{ name: "fs_ls", arguments: { path: "." } }],
        },
        { reasoning: "done thinking", reasoning_field: field, text: "There is a.txt." },
        { text: "second turn ok" },
      ],
      [serverRules.requiresReasoningBack(field)],
      async (c) => {
        await Deno.writeTextFile(`${c.cwd}/a.txt`, "a");
        const r1 = await c.run(["list the files"]);
        assert.equal(r1.code, 0, r1.stderr);
        assert.equal(r1.result.text, "There is a.txt.");
        const back = assistants(c.server.requests[1]);
        assert.equal(back.length, 1);
        assert.equal(back[0][field], "I should list the files");
        // Kept per message in the transcript, and sent back after --continue.
        const lines = await c.transcript(r1.result.session_id as string);
        const stored = lines.filter((l) =>
          l.type === "message" && (l.message as { role: string }).role === "assistant"
        ).map((l) => (l.message as Record<string, unknown>)[field]);
        assert.deepEqual(stored, ["I should list the files", "done thinking"]);
        const r2 = await c.run(["--continue", "and now?"]);
        assert.equal(r2.code, 0, r2.stderr);
        assert.deepEqual(assistants(c.server.requests[2]).map((m) => m[field]), [
          "I should list the files",
          "done thinking",
        ]);
      },
    );
  });
}

Deno.test("e2e: a turn that streams only reasoning (or nothing) does not poison the session", async () => {
  await withCoyote(
    [
      { reasoning: "thinking but never answering" },
      { text: "" },
      { text: "third turn answered" },
    ],
    [serverRules.rejectsEmptyAssistant(), serverRules.requiresAlternatingRoles()],
    async (c) => {
      const r1 = await c.run(["first"]);
      assert.equal(r1.code, 0, r1.stderr);
      const r2 = await c.run(["--continue", "second"]);
      assert.equal(r2.code, 0, r2.stderr);
      const r3 = await c.run(["--continue", "third"]);
      assert.equal(r3.code, 0, r3.stderr);
      assert.equal(r3.result.text, "third turn answered");
      assert.equal(c.server.requests.length, 3);
      const sent = requestMessages(c.server.requests[2]).filter((m) => m.role !== "system");
      assert.deepEqual(sent, [{ role: "user", content: "first\n\nsecond\n\nthird" }]);
      const lines = await c.transcript(r1.result.session_id as string);
      const stored = lines.filter((l) =>
        l.type === "message" && (l.message as { role: string }).role === "assistant"
      ).map((l) => (l.message as { content: unknown }).content);
      assert.deepEqual(stored, ["third turn answered"], "no empty assistant message is stored");
    },
  );
});

Deno.test("e2e: an old transcript holding {role: assistant, content: null} loads and continues", async () => {
  await withCoyote([{ text: "recovered" }], [serverRules.rejectsEmptyAssistant()], async (c) => {
    const id = "0190f0aa-0000-7000-8000-000000000001";
    await Deno.mkdir(`${c.env.dataDir}/sessions`, { recursive: true });
    const lines = [
      {
        type: "session",
        id,
        cwd: c.cwd,
        created: "2026-01-01T00:00:00Z",
        model: "scripted",
        agent: "coyote",
      },
      { type: "message", message: { role: "user", content: "earlier" } },
      { type: "message", message: { role: "assistant", content: null } },
      {
        type: "turn_end",
        stopReason: "end_turn",
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 1 },
      },
    ];
    await Deno.writeTextFile(
      `${c.env.dataDir}/sessions/${id}.jsonl`,
      lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
    );
    const r = await c.run(["--session", id, "go on"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.result.text, "recovered");
  });
});

Deno.test("e2e: parallel calls all at index 0 are two calls, both answered", async () => {
  await withCoyote(
    [
      {
        tool_calls: [
          { id: "call_A", name: "fs_read", arguments: { path: "a.txt" } },
          { id: "call_B", name: "fs_read", arguments: { path: "b.txt" } },
        ],
        tool_call_indexes: "zero",
      },
      { text: "read both" },
    ],
    [],
    async (c) => {
      await Deno.writeTextFile(`${c.cwd}/a.txt`, "ALPHA-CONTENT\n");
      await Deno.writeTextFile(`${c.cwd}/b.txt`, "BRAVO-CONTENT\n");
      const r = await c.run(["read a and b"]);
      assert.equal(r.code, 0, r.stderr);
      const calls = assistants(c.server.requests[1])[0].tool_calls as {
        id: string;
        function: { arguments: string };
      }[];
      assert.deepEqual(calls.map((t) => [t.id, t.function.arguments]), [
        ["call_A", '{"path":"a.txt"}'],
        ["call_B", '{"path":"b.txt"}'],
      ]);
      const results = toolMsgs(c.server.requests[1]);
      assert.deepEqual(results.map((m) => m.tool_call_id), ["call_A", "call_B"]);
      assert.match(results[0].content as string, /ALPHA-CONTENT/);
      assert.match(results[1].content as string, /BRAVO-CONTENT/);
    },
  );
});

Deno.test("e2e: a server that rejects stream_options (422) works; config stream_options: false never sends it", async () => {
  await withCoyote(
    [{ text: "one" }, { text: "two" }],
    [serverRules.rejectsField("stream_options")],
    async (c) => {
      const r = await c.run(["hi"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.result.text, "one");
      assert.match(r.stderr, /rejects `stream_options` \(HTTP 422\)/);
      assert.equal(c.server.requests.length, 2);
      await Deno.writeTextFile(
        `${c.env.configDir}/config.yaml`,
        "provider:\n  stream_options: false\n",
      );
      const r2 = await c.run(["hi"]);
      assert.equal(r2.code, 0, r2.stderr);
      assert.equal(c.server.requests.length, 3);
      assert.equal("stream_options" in (c.server.requests[2].body as object), false);
      assert.doesNotMatch(r2.stderr, /stream_options/);
    },
  );
});

Deno.test("e2e: the server's own error text reaches the user (FastAPI detail, plain text)", async () => {
  await withCoyote(
    [
      {
        status: 422,
        error_body: { detail: [{ loc: ["body", "tools", 0], msg: "bad tool schema" }] },
      },
      { status: 400, error_body: "upstream says: model is warming up" },
    ],
    [],
    async (c) => {
      const r1 = await c.run(["hi"]);
      assert.equal(r1.code, 1);
      const e1 = r1.result.error as { code: string; message: string };
      assert.equal(e1.code, "bad_request");
      assert.match(e1.message, /HTTP 422\): tools\.0: bad tool schema/);
      assert.match(r1.stderr, /tools\.0: bad tool schema/);
      const r2 = await c.run(["hi"]);
      assert.match((r2.result.error as { message: string }).message, /model is warming up/);
    },
  );
});

Deno.test("e2e: a rejected turn is recorded and kept out of later requests, also after --continue", async () => {
  await withCoyote([{ text: "fine now" }], [
    {
      when: (r) => JSON.stringify(requestMessages(r)).includes("POISON"),
      reply: { status: 400, error_body: { error: { message: "unsupported content in message" } } },
    },
  ], async (c) => {
    const r1 = await c.run(["please POISON the session"]);
    assert.equal(r1.code, 1);
    assert.match((r1.result.error as { message: string }).message, /unsupported content/);
    const id = r1.result.session_id as string;
    const lines = await c.transcript(id);
    const end = lines.at(-1)!;
    assert.equal(end.type, "turn_end");
    assert.equal(end.rejected, true);
    const r2 = await c.run(["--continue", "a clean prompt"]);
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(r2.result.text, "fine now");
    const sent = requestMessages(c.server.requests.at(-1)!).filter((m) => m.role === "user");
    assert.deepEqual(sent, [{ role: "user", content: "a clean prompt" }]);
  });
});

Deno.test("e2e: tool results are capped by the configured window", async () => {
  await withCoyote(
    [
      { tool_calls: [{ name: "fs_read", arguments: { path: "big.txt" } }] },
      { text: "read it" },
    ],
    [],
    async (c) => {
      await Deno.writeTextFile(`${c.cwd}/big.txt`, "line of text\n".repeat(9000));
      const r = await c.run(["read big.txt"]);
      assert.equal(r.code, 0, r.stderr);
      const content = toolMsgs(c.server.requests[1])[0].content as string;
      // window 4096, 512 reserved: (4096 - 512) characters at most, plus the cut marker.
      assert.ok(content.length <= 3584 + 200, `tool result of ${content.length} chars`);
      assert.match(content, /characters cut to fit the model's context window/);
    },
    "models:\n  scripted:\n    context_window: 4096\n",
  );
});

Deno.test("e2e: a context overflow shrinks the turn's tool results, retries once, and --continue works", async () => {
  await withCoyote(
    [
      { tool_calls: [{ name: "fs_read", arguments: { path: "big.txt" } }] },
      { text: "summarised the big file" },
      { text: "continued fine" },
    ],
    [serverRules.contextWindow(12_000)],
    async (c) => {
      // fs_read sends up to 2000 lines / 100 000 characters: ~100 KB of this file.
      await Deno.writeTextFile(
        `${c.cwd}/big.txt`,
        "0123456789abcdef".repeat(4).concat("\n").repeat(2000),
      );
      const r = await c.run(["read big.txt"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.result.text, "summarised the big file");
      // request 1: tool call; request 2: overflow (HTTP 400); request 3: shrunk and accepted.
      assert.equal(c.server.requests.length, 3);
      const before = (toolMsgs(c.server.requests[1])[0].content as string).length;
      const after = toolMsgs(c.server.requests[2])[0].content as string;
      assert.ok(before > 90_000, `first try sent ${before} chars`);
      assert.ok(after.length < before / 3, `retry sent ${after.length} chars`);
      assert.match(after, /context overflow/);
      const lines = await c.transcript(r.result.session_id as string);
      assert.ok(lines.some((l) => l.type === "tool_result_update"));
      const r2 = await c.run(["--continue", "next"]);
      assert.equal(r2.code, 0, r2.stderr);
      assert.equal(r2.result.text, "continued fine");
      assert.equal(c.server.requests.length, 4);
    },
  );
});

Deno.test("e2e: a prompt that alone overflows the window fails that turn only (413)", async () => {
  await withCoyote(
    [{ text: "small prompt answered" }],
    [serverRules.contextWindow(6_000, 413)],
    async (c) => {
      const r1 = await c.run(["x".repeat(40_000)]);
      assert.equal(r1.code, 1);
      assert.equal((r1.result.error as { code: string }).code, "context_overflow");
      const r2 = await c.run(["--continue", "small"]);
      assert.equal(r2.code, 0, r2.stderr);
      assert.equal(r2.result.text, "small prompt answered");
    },
  );
});

Deno.test("e2e: an unreachable server is retried once, said on stderr in text mode", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const r = await runCoyote(["--headless", "hi"], {
      cwd,
      env: childEnv(env, { baseURL: `http://127.0.0.1:${port}/v1` }),
    });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    const retries = r.stderr.split("\n").filter((x) => /retrying in/.test(x));
    assert.equal(retries.length, 1, r.stderr);
    const at = `at http://127.0.0.1:${port}/v1: connection refused`;
    assert.match(
      retries[0],
      /^coyote: cannot reach the model server at \S+: connection refused; retrying in 0\.\d s \(once\)$/,
    );
    assert.ok(retries[0].includes(at), retries[0]);
    // The failure: one `coyote:` line (README "Output"), without fetch's internals.
    const failed = r.stderr.split("\n").filter((x) =>
      /cannot reach/.test(x) && !/retrying/.test(x)
    );
    assert.deepEqual(failed, [`coyote: cannot reach the model server ${at} (after 2 attempts)`]);
    assert.doesNotMatch(r.stderr, /os error|tcp connect|error sending request|^error:/m);
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

Deno.test("e2e (ACP): images advertised only for a model with images: true; an image while advertised off is refused before the model; a server's refusal does not poison the session, also after session/load", async () => {
  const server = await startModelServer({
    script: [{ text: "text answer" }, { text: "after refusal" }, { text: "after load" }],
    rules: [serverRules.rejectsImages()],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  const e = childEnv(env, { baseURL: server.baseURL });
  const picture = [
    { type: "text" as const, text: "what is in this picture?" },
    { type: "image" as const, mimeType: "image/png", data: PIXEL },
  ];
  try {
    let h = await startAcp({ env: e });
    try {
      // Advertised off: the block is refused (invalid params) and nothing reaches the model.
      assert.equal(h.init?.agentCapabilities?.promptCapabilities?.image, false);
      const { sessionId } = await h.agent.request("session/new", { cwd, mcpServers: [] });
      await assert.rejects(
        () => h.agent.request("session/prompt", { sessionId, prompt: picture }),
        /promptCapabilities\.image: false/,
      );
      assert.equal(server.requests.length, 0);
      const p = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "describe it in words" }],
      });
      assert.equal(p.stopReason, "end_turn");
      assert.equal(server.requests.length, 1);
    } finally {
      await h.close();
    }
    // With `images: true` in the models table the capability is advertised and the image is sent;
    // the server's refusal is the prompt's error, and the session stays usable.
    await Deno.writeTextFile(
      `${env.configDir}/config.yaml`,
      "models:\n  scripted:\n    images: true\n",
    );
    h = await startAcp({ env: e });
    let sessionId: string;
    try {
      assert.equal(h.init?.agentCapabilities?.promptCapabilities?.image, true);
      sessionId = (await h.agent.request("session/new", { cwd, mcpServers: [] })).sessionId;
      await assert.rejects(
        () => h.agent.request("session/prompt", { sessionId, prompt: picture }),
        /does not support image input/,
      );
      assert.equal(server.requests.length, 2);
      const p2 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "describe it in words" }],
      });
      assert.equal(p2.stopReason, "end_turn");
      assert.equal(server.requests.length, 3);
      assert.doesNotMatch(JSON.stringify(server.requests[2].body), /image_url/);
    } finally {
      await h.close();
    }
    h = await startAcp({ env: e });
    try {
      await h.agent.request("session/load", { sessionId, cwd, mcpServers: [] });
      const p3 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "again" }],
      });
      assert.equal(p3.stopReason, "end_turn");
      assert.equal(server.requests.length, 4);
      const body = JSON.stringify(server.requests[3].body);
      assert.doesNotMatch(body, /image_url/);
      assert.match(body, /describe it in words/);
    } finally {
      await h.close();
    }
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("e2e (ACP): images: false — an image block is refused naming the capability; nothing reaches the model", async () => {
  const server = await startModelServer({ script: [{ text: "unused" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${env.configDir}/config.yaml`,
      "models:\n  scripted:\n    images: false\n",
    );
    const h = await startAcp({ env: childEnv(env, { baseURL: server.baseURL }) });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd, mcpServers: [] });
      await assert.rejects(
        () =>
          h.agent.request("session/prompt", {
            sessionId,
            prompt: [
              { type: "text", text: "look" },
              { type: "image", mimeType: "image/png", data: PIXEL },
            ],
          }),
        /prompt\[1\] is a "image" block, but this agent advertised promptCapabilities\.image: false/,
      );
      assert.equal(server.requests.length, 0);
    } finally {
      await h.close();
    }
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("e2e: OpenRouter reasoning_details and Gemini thought signatures go back with their call", async () => {
  const ch = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "x",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  await withCoyote(
    [
      {
        raw_chunks: [
          ch({
            reasoning: "list it",
            reasoning_details: [{ type: "reasoning.encrypted", data: "ENC==", index: 0 }],
          }),
          ch({
            tool_calls: [{
              index: 0,
              id: "call_1",
              type: "function",
              function: { name: "fs_ls", arguments: '{"path":"."}' },
              extra_content: { google: { thought_signature: "SIG-XYZ" } },
            }],
          }),
          ch({}, "tool_calls"),
        ],
      },
      { text: "listed" },
    ],
    [],
    async (c) => {
      const r = await c.run(["list"]);
      assert.equal(r.code, 0, r.stderr);
      const [a] = assistants(c.server.requests[1]);
      assert.equal(a.reasoning, "list it");
      assert.deepEqual(a.reasoning_details, [{
        type: "reasoning.encrypted",
        data: "ENC==",
        index: 0,
      }]);
      const calls = a.tool_calls as { extra_content?: unknown }[];
      assert.deepEqual(calls[0].extra_content, { google: { thought_signature: "SIG-XYZ" } });
    },
  );
});

Deno.test("e2e: a model's broken tool-call JSON does not poison the session (Ollama-style parsing server)", async () => {
  await withCoyote([
    { tool_calls: [{ id: "call_bad", name: "fs_ls", arguments: '{"path": "."' }] },
    { text: "sorry, fixed" },
  ], [{
    // Servers that parse tool-call arguments reject the request when they are not JSON.
    when: (r) =>
      assistants(r).some((m) =>
        (m.tool_calls as { function: { arguments: string } }[] | undefined)?.some((t) => {
          try {
            JSON.parse(t.function.arguments);
            return false;
          } catch {
            return true;
          }
        }) ?? false
      ),
    reply: {
      status: 400,
      error_body: { error: { message: "json: cannot unmarshal tool call arguments" } },
    },
  }], async (c) => {
    const r = await c.run(["list"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.result.text, "sorry, fixed");
    const t = toolMsgs(c.server.requests[1])[0];
    assert.match(t.content as string, /not valid JSON/);
  });
});
