/**
 * Provider faults end to end (main.ts subprocesses, scripted server): the request timeout from
 * `config.yaml` (`provider.timeout_ms`) applies; a stream cut mid-answer exits 1 with error
 * `stream_cut` and the partial answer stays in the transcript, marked interrupted.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

Deno.test("provider e2e: config timeout_ms applies; a cut stream keeps the partial answer", async () => {
  const server = await startModelServer({
    script: [
      { text: "never sent", delay_ms: 10_000 },
      {
        text: "PARTIAL-ANSWER that is cut somewhere in the middle",
        chunk_size: 5,
        cut_after_chunks: 4,
      },
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${env.configDir}/config.yaml`,
      "provider:\n  timeout_ms: 300\n  max_retries: 0\n",
    );
    const e = childEnv(env, { baseURL: server.baseURL });
    const t0 = performance.now();
    const slow = await runCoyote(["--headless", "--output-format", "json", "hi"], { cwd, env: e });
    const ms = performance.now() - t0;
    assert.equal(slow.code, 1, slow.stderr);
    const r1 = JSON.parse(slow.stdout);
    assert.equal(r1.error.code, "timeout");
    assert.equal(r1.stop_reason, null);
    assert.equal(r1.exit_code, 1);
    assert.equal(r1.schema_version, 2);
    assert.match(r1.error.message, /300 ms/);
    assert.ok(ms < 8_000, `the 300 ms timeout took ${ms} ms`);

    const cut = await runCoyote(["--headless", "--output-format", "json", "hi"], { cwd, env: e });
    assert.equal(cut.code, 1, cut.stderr);
    const r2 = JSON.parse(cut.stdout);
    assert.equal(r2.is_error, true);
    assert.equal(r2.error.code, "stream_cut");
    assert.equal(r2.stop_reason, null);
    assert.match(r2.text, /^PARTIAL-ANS/);
    assert.match(cut.stderr, /broke off/);
    const lines = (await Deno.readTextFile(`${env.dataDir}/sessions/${r2.session_id}.jsonl`))
      .trim().split("\n").map((l) => JSON.parse(l));
    const kept = lines.find((l) => l.type === "message" && l.message.role === "assistant");
    assert.equal(kept.interrupted, true);
    assert.match(kept.message.content, /^PARTIAL-ANS/);
    assert.equal(lines.at(-1).type, "turn_end");
    assert.equal(lines.at(-1).error.code, "stream_cut");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("provider e2e: a base URL without /v1 that answers 404 gets a hint naming the /v1 URL", async () => {
  const server = await startModelServer({ script: [{ text: "never reached" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const origin = server.baseURL.replace(/\/v1$/, "");
    const r = await runCoyote(["--headless", "--output-format", "json", "hi"], {
      cwd,
      env: childEnv(env, { baseURL: origin }),
    });
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.match(out.error.message, /HTTP 404/);
    assert.ok(
      out.error.message.includes(
        `has no path: OpenAI-compatible servers usually answer under /v1 — try ${origin}/v1`,
      ),
      out.error.message,
    );
    assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack trace");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
