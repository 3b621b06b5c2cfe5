/**
 * Model items of issue 21, end to end (main.ts subprocesses against the scripted server):
 * - `finish_reason: "max_tokens"` (Anthropic-compatible servers) is the output limit like
 *   OpenAI's `length`: the cut call does not run even though its JSON parses; `MAX_TOKENS`
 *   (Gemini) too; twice in a turn ends it with stop reason `max_tokens`.
 * - `models.<name>.text_tool_calls` turns text tool-call parsing off (or on) for that model,
 *   over `provider.text_tool_calls`, and the warning names the key.
 */
import assert from "node:assert/strict";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { openaiFinishReason } from "../core/provider/stream.ts";

async function run(script: ScriptedReply[], args: string[] = [], config = "") {
  const server = await startModelServer({ script });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-finish-" }));
  try {
    await Deno.writeTextFile(`${cwd}/a.txt`, "SECRET-CONTENT-42\n");
    if (config) await Deno.writeTextFile(`${env.configDir}/config.yaml`, config);
    const r = await runCoyote(
      ["--headless", "--no-sandbox", "--output-format", "json", ...args, "go"],
      { cwd, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    const bodies = server.requests.map((q) => JSON.stringify(q.body));
    const files = [...Deno.readDirSync(cwd)].map((e) => e.name).sort();
    return { ...r, bodies, files };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
}

for (const reason of ["max_tokens", "MAX_TOKENS"]) {
  Deno.test(`finish_reason ${reason}: a cut call does not run; model and user are told`, async () => {
    const r = await run([
      {
        tool_calls: [{
          id: "w1",
          name: "fs_write",
          arguments: { path: "cut.txt", content: "half of a fi" },
        }],
        finish_reason: reason,
      },
      { text: "ok, smaller" },
    ], ["--dangerously-skip-permissions"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.files.includes("cut.txt"), "the truncated call ran and wrote cut.txt");
    assert.equal(r.bodies.length, 2);
    assert.match(
      r.bodies[1],
      /"tool_call_id":"w1","content":"error: not run — your output was cut off/,
    );
    assert.match(r.stderr, /1 cut tool call\(s\) not run: fs_write/);
  });
}

Deno.test("finish_reason max_tokens twice in a turn ends it with stop reason max_tokens", async () => {
  const cut: ScriptedReply = {
    tool_calls: [{ name: "fs_write", arguments: { path: "cut.txt", content: "x" } }],
    finish_reason: "max_tokens",
  };
  const r = await run([cut, cut, { text: "never" }], ["--dangerously-skip-permissions"]);
  assert.equal(r.bodies.length, 2);
  assert.equal(JSON.parse(r.stdout).stop_reason, "max_tokens");
  assert.ok(!r.files.includes("cut.txt"));
});

Deno.test("openaiFinishReason: Anthropic and Gemini stop reasons in OpenAI's words", () => {
  assert.equal(openaiFinishReason("max_tokens"), "length");
  assert.equal(openaiFinishReason("tool_use"), "tool_calls");
  assert.equal(openaiFinishReason("end_turn"), "stop");
  assert.equal(openaiFinishReason("STOP"), "stop");
  assert.equal(openaiFinishReason("content_filter"), "content_filter");
});

const HERMES = `<tool_call>\n${
  JSON.stringify({ name: "fs_read", arguments: { path: "a.txt" } })
}\n</tool_call>`;

Deno.test("models.<name>.text_tool_calls: false turns text tool calls off for that model, and the warning names it", async () => {
  const r = await run(
    [{ text: HERMES }, { text: "never" }],
    [],
    "models:\n  scripted:\n    text_tool_calls: false\n",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.bodies.length, 1, "the text call was not run");
  assert.match(r.stderr, /not run \(models\.scripted\.text_tool_calls is false\)/);
});

Deno.test("models.<name>.text_tool_calls: true wins over provider.text_tool_calls: false", async () => {
  const r = await run(
    [{ text: HERMES }, { text: "done" }],
    [],
    "provider:\n  text_tool_calls: false\nmodels:\n  scripted:\n    text_tool_calls: true\n  other:\n    text_tool_calls: false\n",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.bodies.length, 2, `the call did not run: ${r.stderr}`);
  assert.match(r.bodies[1], /SECRET-CONTENT-42/);
  assert.match(r.stderr, /set models\.scripted\.text_tool_calls: false to turn this off/);
});

Deno.test("models.<name>.text_tool_calls: a non-boolean is a config error naming the field", async () => {
  const r = await run([{ text: "x" }], [], "models:\n  scripted:\n    text_tool_calls: maybe\n");
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /models\.scripted\.text_tool_calls/);
  assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack trace");
});
