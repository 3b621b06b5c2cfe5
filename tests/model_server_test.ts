import assert from "node:assert/strict";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

function post(baseURL: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** Reads an SSE body; returns the parsed `data:` payloads and whether `[DONE]` came. */
async function readSSE(res: Response): Promise<{ events: Any[]; done: boolean }> {
  const text = await res.text();
  const events: Any[] = [];
  let done = false;
  for (const block of text.split("\n\n")) {
    const line = block.trim();
    if (!line) continue;
    assert.ok(line.startsWith("data: "), `bad SSE line ${line}`);
    const data = line.slice(6);
    if (data === "[DONE]") done = true;
    else events.push(JSON.parse(data));
  }
  return { events, done };
}

const MSG = [{ role: "user", content: "hello" }];

Deno.test("model server: non-streaming completion, models list, 404, recording", async () => {
  const s = await startModelServer({
    script: [{
      text: "hi there",
      reasoning: "r",
      tool_calls: [{ id: "c1", name: "fs_ls", arguments: { path: "." } }],
    }],
  });
  try {
    assert.match(s.baseURL, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const models = await (await fetch(`${s.baseURL}/models`)).json();
    assert.equal(models.data[0].id, "scripted");
    const nf = await fetch(`${s.baseURL}/nope`);
    assert.equal(nf.status, 404);
    await nf.body?.cancel();

    const res = await post(s.baseURL, { model: "m1", messages: MSG }, { "x-test": "1" });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.object, "chat.completion");
    assert.equal(body.model, "m1");
    const choice = body.choices[0];
    assert.equal(choice.message.content, "hi there");
    assert.equal(choice.message.reasoning_content, "r");
    assert.equal(choice.finish_reason, "tool_calls");
    assert.deepEqual(choice.message.tool_calls, [{
      id: "c1",
      type: "function",
      function: { name: "fs_ls", arguments: '{"path":"."}' },
    }]);
    assert.ok(body.usage.total_tokens > 0);

    assert.equal(s.requests.length, 1);
    const r = s.requests[0];
    assert.equal(r.index, 0);
    assert.equal(r.path, "/v1/chat/completions");
    assert.equal(r.stream, false);
    assert.equal(r.headers["x-test"], "1");
    assert.deepEqual((r.body as Any).messages, MSG);

    // Script exhausted → 500 that says so.
    const ex = await post(s.baseURL, { model: "m1", messages: MSG });
    assert.equal(ex.status, 500);
    assert.match((await ex.json()).error.message, /script exhausted: request #1/);
  } finally {
    await s.close();
  }
});

Deno.test("model server: streaming chunks, split tool-call arguments, usage only when asked", async () => {
  const reply: ScriptedReply = {
    text: "abcdefghij",
    chunk_size: 3,
    tool_calls: [{ name: "fs_read", arguments: '{"path":"README.md"}' }],
    split_arguments: 5,
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  };
  const s = await startModelServer({ script: [reply, reply] });
  try {
    const a = await readSSE(
      await post(s.baseURL, {
        messages: MSG,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assert.ok(a.done);
    const deltas = a.events.filter((e) => e.choices.length).map((e) => e.choices[0].delta);
    assert.deepEqual(deltas.filter((d) => d.content).map((d) => d.content), [
      "abc",
      "def",
      "ghi",
      "j",
    ]);
    const tc = deltas.filter((d) => d.tool_calls).map((d) => d.tool_calls[0]);
    assert.equal(tc[0].id, "call_0_0");
    assert.equal(tc[0].function.name, "fs_read");
    assert.ok(tc.slice(1).every((t) => t.id === undefined && t.function.name === undefined));
    assert.equal(tc.map((t) => t.function.arguments).join(""), '{"path":"README.md"}');
    assert.equal(tc.length, 1 + 4);
    const last = a.events.at(-1);
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, reply.usage);
    assert.equal(a.events.at(-2).choices[0].finish_reason, "tool_calls");

    const b = await readSSE(await post(s.baseURL, { messages: MSG, stream: true }));
    assert.ok(b.events.every((e) => !e.usage));
    assert.equal(s.requests[1].stream, true);
  } finally {
    await s.close();
  }
});

Deno.test("model server: error statuses with headers; function scripts", async () => {
  const s = await startModelServer({
    script: (req, i) =>
      i === 0
        ? { status: 429, headers: { "retry-after": "2" } }
        : { text: `echo ${(req.body as Any).messages[0].content}` },
  });
  try {
    const r1 = await post(s.baseURL, { messages: MSG });
    assert.equal(r1.status, 429);
    assert.equal(r1.headers.get("retry-after"), "2");
    assert.equal((await r1.json()).error.code, "rate_limit_exceeded");
    const r2 = await (await post(s.baseURL, { messages: MSG })).json();
    assert.equal(r2.choices[0].message.content, "echo hello");
  } finally {
    await s.close();
  }
});

Deno.test("model server: abrupt cut is a body error after N chunks; clean cut ends without [DONE]", async () => {
  const s = await startModelServer({
    script: [
      { text: "0123456789", chunk_size: 2, cut_after_chunks: 3 },
      { text: "0123456789", chunk_size: 2, cut_after_chunks: 3, cut_clean: true },
    ],
  });
  try {
    const res = await post(s.baseURL, { messages: MSG, stream: true });
    const reader = res.body!.getReader();
    let got = "";
    const dec = new TextDecoder();
    await assert.rejects(async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        got += dec.decode(value);
      }
    });
    assert.equal(got.split("\n\n").filter((x) => x.startsWith("data: ")).length, 3);

    const clean = await readSSE(await post(s.baseURL, { messages: MSG, stream: true }));
    assert.equal(clean.done, false);
    assert.equal(clean.events.length, 3);
    assert.ok(clean.events.every((e) => e.choices[0].finish_reason === null));
  } finally {
    await s.close();
  }
});

Deno.test("model server: delays, and close() ends hanging requests", async () => {
  const s = await startModelServer({ script: [{ text: "x", delay_ms: 150 }, { hang: true }] });
  const t0 = performance.now();
  const r = await post(s.baseURL, { messages: MSG });
  assert.ok(performance.now() - t0 >= 140);
  await r.body?.cancel();
  const hanging = post(s.baseURL, { messages: MSG }).then(
    (res) => res.body?.cancel(),
    (e) => e,
  );
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(s.requests.length, 2);
  await s.close();
  await hanging; // settled (connection closed), no leak
});

Deno.test("model server: --repeat loops an array script", async () => {
  const s = await startModelServer({ script: [{ text: "a" }, { text: "b" }], repeat: true });
  try {
    const texts = [];
    for (let i = 0; i < 5; i++) {
      texts.push(
        (await (await post(s.baseURL, { messages: MSG })).json()).choices[0].message.content,
      );
    }
    assert.deepEqual(texts, ["a", "b", "a", "b", "a"]);
  } finally {
    await s.close();
  }
});

Deno.test("model server as a subprocess: prints baseURL, request events, serves until killed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-ms-" });
  const file = `${dir}/script.json`;
  await Deno.writeTextFile(file, JSON.stringify([{ text: "one" }]));
  const url = new URL("./support/model_server.ts", import.meta.url).pathname;
  for (
    const args of [["--script", file, "--repeat"], [
      "--script-json",
      '[{"text":"one"}]',
      "--repeat",
    ]]
  ) {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net", "--allow-read", url, ...args],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    const nextLine = async (): Promise<string> => {
      for (;;) {
        const i = buf.indexOf("\n");
        if (i >= 0) {
          const l = buf.slice(0, i);
          buf = buf.slice(i + 1);
          return l;
        }
        const { value, done } = await lines.read();
        if (done) throw new Error("server exited");
        buf += value;
      }
    };
    try {
      const { baseURL } = JSON.parse(await nextLine());
      assert.match(baseURL, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      for (let i = 0; i < 2; i++) {
        const body = await (await post(baseURL, { messages: MSG })).json();
        assert.equal(body.choices[0].message.content, "one");
        const ev = JSON.parse(await nextLine());
        assert.equal(ev.event, "request");
        assert.equal(ev.index, i);
        assert.ok(Math.abs(ev.time - Date.now()) < 5000);
      }
    } finally {
      child.kill("SIGTERM");
      await lines.cancel();
      await child.status;
    }
  }
  await Deno.remove(dir, { recursive: true });
});
