/**
 * Context compaction (core/engine/compact.ts) with the scripted model: automatic compaction near
 * the configured window (older turns summarised by the model, the last turns verbatim), the
 * transcript's `compaction` line that `--continue` resumes from, and an overflow error that
 * triggers a compaction and one retry. Plus the pure helpers.
 */
import assert from "node:assert/strict";
import { type RecordedRequest, requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import {
  estimateTokens,
  summarise,
  SUMMARY_INSTRUCTIONS,
  turnStarts,
} from "../core/engine/compact.ts";
import type { ChatMessage } from "../core/transcript/types.ts";

const isSummary = (r: RecordedRequest) =>
  String(requestMessages(r)[0]?.content ?? "").startsWith(SUMMARY_INSTRUCTIONS);
const words = (tag: string) => `${tag} ` + "lorem ipsum dolor sit amet ".repeat(60);

Deno.test("compact: summarise keeps the last turns verbatim and the todo list", async () => {
  const msgs: ChatMessage[] = [];
  for (let i = 1; i <= 4; i++) {
    msgs.push({ role: "user", content: `question ${i}` });
    msgs.push({
      role: "assistant",
      content: null,
      tool_calls: [{
        id: `c${i}`,
        type: "function",
        function: { name: "fs_read", arguments: "{}" },
      }],
    });
    msgs.push({ role: "tool", tool_call_id: `c${i}`, content: `result ${i}` });
    msgs.push({ role: "assistant", content: `answer ${i}` });
  }
  assert.deepEqual(turnStarts(msgs), [0, 4, 8, 12]);
  let asked = "";
  const client = {
    complete(req: { messages: ChatMessage[] }) {
      asked = String(req.messages[1].content);
      return Promise.resolve({
        text: "THE SUMMARY",
        usage: { prompt_tokens: 10, completion_tokens: 2 },
      });
    },
  };
  const r = await summarise({
    // deno-lint-ignore no-explicit-any
    client: client as any,
    model: "m",
    messages: msgs,
    keep: 2,
    todo: "- [pending] ship it",
  });
  assert.ok(r);
  assert.equal(r.turns, 2);
  assert.match(asked, /USER: question 1[\s\S]*TOOL RESULT: result 2/);
  assert.doesNotMatch(asked, /question 3/);
  assert.match(String(r.messages[0].content), /THE SUMMARY[\s\S]*- \[pending\] ship it/);
  assert.equal(r.messages[1].role, "assistant");
  assert.deepEqual(r.messages.slice(2), msgs.slice(8), "the last two turns are kept verbatim");
  assert.equal(
    await summarise({
      // deno-lint-ignore no-explicit-any
      client: client as any,
      model: "m",
      messages: msgs.slice(0, 8),
      keep: 2,
    }),
    null,
    "nothing older than the kept turns: no compaction",
  );
  assert.ok(estimateTokens(msgs) > 0);
});

Deno.test("compact: near the window older turns are summarised; --continue resumes compacted", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${env.configDir}/config.yaml`,
    "models:\n  scripted:\n    context_window: 4000\n",
  );
  const server = await startModelServer({
    script: (req) => isSummary(req) ? { text: "SUMMARY-TEXT of turn A" } : { text: "ok" },
  });
  const run = async (prompt: string, first = false) => {
    const r = await runCoyote([...(first ? [] : ["--continue"]), "--headless", prompt], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    return r;
  };
  try {
    await run(words("TURN-A"), true);
    let turns = 1;
    // Until a compaction happens: each turn adds about 400 tokens to a 4000-token window.
    while (!server.requests.some(isSummary)) {
      assert.ok(turns < 12, "no compaction happened");
      await run(words(`TURN-${++turns}`));
    }
    const si = server.requests.findIndex(isSummary);
    assert.match(JSON.stringify(requestMessages(server.requests[si])), /TURN-A/);
    const next = JSON.stringify(requestMessages(server.requests[si + 1]));
    assert.match(next, /SUMMARY-TEXT of turn A/);
    assert.doesNotMatch(next, /TURN-A /, "the summarised turn left the history");
    assert.match(next, new RegExp(`TURN-${turns - 1} `), "the last turns stay verbatim");
    assert.match(next, new RegExp(`TURN-${turns} `), "the new prompt is sent");
    // The transcript recorded the compaction: a later --continue starts from it.
    const before = server.requests.length;
    await run("AFTER-RESUME");
    const resumed = server.requests.slice(before).find((r) => !isSummary(r))!;
    const text = JSON.stringify(requestMessages(resumed));
    assert.match(text, /SUMMARY-TEXT/);
    assert.doesNotMatch(text, /TURN-A /);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("compact: a context-overflow error triggers a compaction and one retry", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  let limit = Infinity;
  const size = (r: RecordedRequest) => Math.ceil(JSON.stringify(requestMessages(r)).length / 4);
  const server = await startModelServer({
    rules: [{
      when: (r) => !isSummary(r) && size(r) > limit,
      reply: (r) => ({
        status: 400,
        error_body: {
          error: {
            message: `This model's maximum context length is ${limit} tokens. However, ` +
              `your messages resulted in ${
                size(r)
              } tokens. Please reduce the length of the messages.`,
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded",
          },
        },
      }),
    }],
    script: (req) => isSummary(req) ? { text: "SHORT-SUMMARY" } : { text: "fine" },
  });
  const run = (prompt: string, first = false) =>
    runCoyote([...(first ? [] : ["--continue"]), "--headless", prompt], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
  try {
    for (const [i, tag] of ["OLD-1", "OLD-2", "OLD-3"].entries()) {
      const r = await run(words(tag), i === 0);
      assert.equal(r.code, 0, r.stderr);
    }
    // The next request (history + a new prompt) no longer fits; a compacted one does.
    limit = size(server.requests.at(-1)!) + 200;
    const n = server.requests.length;
    const r = await run(words("NEW-4"));
    assert.equal(r.code, 0, r.stderr);
    const reqs = server.requests.slice(n);
    assert.ok(reqs.some(isSummary), "a summary was requested after the overflow");
    const last = JSON.stringify(requestMessages(reqs.at(-1)!));
    assert.match(last, /SHORT-SUMMARY/);
    assert.match(last, /NEW-4/);
    assert.match(r.stderr, /context compacted \(overflow\)/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("compact: without a models: entry the window comes from the server's model list", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  const server = await startModelServer({
    modelMeta: { max_model_len: 4000 },
    script: (req) => isSummary(req) ? { text: "SUMMARY-FROM-META" } : { text: "ok" },
  });
  try {
    let turns = 0;
    // With the default window (128k tokens) these turns would never compact.
    while (!server.requests.some(isSummary)) {
      assert.ok(turns < 12, "no compaction happened: the server's window was not used");
      const r = await runCoyote(
        [...(turns ? ["--continue"] : []), "--headless", words(`T-${++turns}`)],
        { cwd, env: childEnv(env, { baseURL: server.baseURL }) },
      );
      assert.equal(r.code, 0, r.stderr);
    }
    assert.ok(turns > 1);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
