/**
 * What a run says when the model server is set up wrong (main.ts subprocesses in text mode,
 * scripted server): one `coyote: …` line (README "Output"), never `error: …`, naming what to check
 * — a 404 from a wrong base URL the URL tried and `OPENAI_BASE_URL` (…/v1), a 401 the API key
 * variable, a server that is down its URL and "connection refused" without fetch's internals; the
 * "send it again, changed" advice only where the request's content was refused (a 400), on the
 * error's own line; `--max-turns 1` says "1 model request".
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

async function run(baseURL: string, args: string[]) {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-provider-msg-" });
  try {
    await Deno.writeTextFile(`${cwd}/a.txt`, "a\n");
    return await runCoyote(args, { cwd, env: childEnv(env, { baseURL }) });
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
}

const lines = (s: string) => s.split("\n").filter((l) => l.trim());

Deno.test("text mode: a 404 from a wrong base URL names the URL tried and OPENAI_BASE_URL, without the 'send it again' advice", async () => {
  const server = await startModelServer({ script: [{ text: "never reached" }] });
  try {
    const base = server.baseURL.replace(/\/v1$/, "/wrong");
    const r = await run(base, ["--headless", "hi"]);
    assert.equal(r.code, 1, r.stderr);
    const said = lines(r.stderr).filter((l) => /HTTP 404/.test(l));
    assert.equal(said.length, 1, r.stderr);
    assert.match(said[0], /^coyote: model server request rejected \(HTTP 404\): /);
    assert.ok(said[0].includes(`from ${base}/chat/completions — check the base URL`), said[0]);
    assert.match(said[0], /OPENAI_BASE_URL.*usually ends in \/v1/);
    assert.doesNotMatch(r.stderr, /send it again|not kept in the conversation/);
    assert.doesNotMatch(r.stderr, /^error:/m);
  } finally {
    await server.close();
  }
});

Deno.test("text mode: a 401 names the API key variable", async () => {
  const server = await startModelServer({
    script: [{ status: 401, error_body: { error: { message: "Incorrect API key provided" } } }],
  });
  try {
    const r = await run(server.baseURL, ["--headless", "hi"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^coyote: model server authentication failed \(HTTP 401\): Incorrect API key provided — check the API key \(OPENAI_API_KEY, /m,
    );
    assert.doesNotMatch(r.stderr, /send it again|^error:/m);
  } finally {
    await server.close();
  }
});

Deno.test("text mode: a 400 says the turn is not kept, on the error's own line", async () => {
  const server = await startModelServer({
    script: [{ status: 400, error_body: { error: { message: "bad thing" } } }],
  });
  try {
    const r = await run(server.baseURL, ["--headless", "hi"]);
    assert.equal(r.code, 1, r.stderr);
    const said = lines(r.stderr).filter((l) => /bad thing|not kept/.test(l));
    assert.deepEqual(said, [
      "coyote: model server request rejected (HTTP 400): bad thing; this turn is not kept in the conversation: send it again, changed",
    ]);
  } finally {
    await server.close();
  }
});

Deno.test("text mode: a server that is down: its URL and 'connection refused', no fetch internals", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const base = `http://127.0.0.1:${(l.addr as Deno.NetAddr).port}/v1`;
  l.close();
  const r = await run(base, ["--headless", "hi"]);
  assert.equal(r.code, 1, r.stderr);
  assert.ok(
    lines(r.stderr).includes(
      `coyote: cannot reach the model server at ${base}: connection refused (after 2 attempts)`,
    ),
    r.stderr,
  );
  assert.doesNotMatch(r.stderr, /os error|tcp connect|error sending request|fetch failed|^error:/m);
});

Deno.test("--max-turns 1: 'stopped after 1 model request' (singular)", async () => {
  const server = await startModelServer({
    script: [{ tool_calls: [{ id: "r1", name: "fs_read", arguments: { path: "a.txt" } }] }],
  });
  try {
    const r = await run(server.baseURL, ["--headless", "--max-turns", "1", "read a"]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /^coyote: stopped after 1 model request \(--max-turns\)$/m);
  } finally {
    await server.close();
  }
});
