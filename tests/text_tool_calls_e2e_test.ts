/**
 * Local-model tool calls end to end (issue 21): main.ts subprocesses against the scripted
 * server. A call written as text (Hermes/Qwen `<tool_call>`, Mistral `[TOOL_CALLS]`, bare JSON,
 * Llama `<function=…>`) runs as a real call when the server sent no `tool_calls`; a call-like
 * text naming no tool of the agent, or with `provider.text_tool_calls: false`, is warned about on
 * stderr instead of ending the turn in silence; a call cut by `finish_reason: "length"` never
 * runs, and both the model (its tool result) and the user (stderr, a failed tool call) are told.
 */
import assert from "node:assert/strict";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { parseTextToolCalls } from "../core/provider/text_tool_calls.ts";

async function run(script: ScriptedReply[], args: string[] = [], config = "") {
  const server = await startModelServer({ script });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-ttc-" }));
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

const READ = { name: "fs_read", arguments: { path: "a.txt" } };
const forms: [string, string][] = [
  [
    "Hermes/Qwen <tool_call>",
    `I will read it.\n<tool_call>\n${JSON.stringify(READ)}\n</tool_call>`,
  ],
  ["Mistral [TOOL_CALLS] list", `[TOOL_CALLS][${JSON.stringify(READ)}]`],
  ["Mistral [TOOL_CALLS]name[ARGS]", `[TOOL_CALLS]fs_read[ARGS]{"path":"a.txt"}`],
  [
    "bare JSON message",
    "```json\n" + JSON.stringify({ name: "fs_read", parameters: { path: "a.txt" } }) + "\n```",
  ],
  ["Llama <function=…>", `<function=fs_read>{"path": "a.txt"}</function>`],
];
for (const [label, text] of forms) {
  Deno.test(`text tool calls: a ${label} call runs as a real call`, async () => {
    const r = await run([{ text }, { text: "done" }]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.bodies.length, 2, `the call did not run: ${r.stderr}`);
    assert.match(r.bodies[1], /SECRET-CONTENT-42/);
    assert.match(
      r.bodies[1],
      /"tool_calls":\[\{"id":"[^"]+","type":"function","function":\{"name":"fs_read"/,
    );
    assert.match(r.stderr, /wrote 1 tool call\(s\) as text \(fs_read\)/);
    assert.equal(JSON.parse(r.stdout).text, "done");
  });
}

Deno.test("text tool calls: a call-like text naming no tool of the agent is warned about, not run", async () => {
  const r = await run([{
    text: '<tool_call>{"name": "rm_everything", "arguments": {}}</tool_call>',
  }]);
  assert.equal(r.bodies.length, 1);
  assert.match(
    r.stderr,
    /looks like a tool call as text, and it was not run: it names "rm_everything"/,
  );
});

Deno.test("text tool calls: broken JSON in a <tool_call> is warned about", async () => {
  const r = await run([{
    text: '<tool_call>{"name": "fs_read", "arguments": {"path": </tool_call>',
  }]);
  assert.equal(r.bodies.length, 1);
  assert.match(r.stderr, /warning: .*tool call as text.*not JSON/);
});

Deno.test("text tool calls: provider.text_tool_calls false runs nothing but still warns", async () => {
  const text = `<tool_call>${JSON.stringify(READ)}</tool_call>`;
  const r = await run([{ text }, { text: "never" }], [], "provider:\n  text_tool_calls: false\n");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.bodies.length, 1);
  assert.match(r.stderr, /warning: .*looks like a tool call.*text_tool_calls is false/);
});

Deno.test("text tool calls: a call only inside the reasoning is warned about, not run", async () => {
  const r = await run([{ reasoning: `<tool_call>${JSON.stringify(READ)}</tool_call>` }]);
  assert.equal(r.bodies.length, 1);
  assert.match(r.stderr, /warning: the model wrote a tool call inside its reasoning/);
});

Deno.test("text tool calls: plain prose and JSON that is not a call stay text", () => {
  const known = new Set(["fs_read"]);
  assert.equal(parseTextToolCalls("Here is the answer.", known).kind, "none");
  assert.equal(parseTextToolCalls('{"name": "Ada", "age": 36}', known).kind, "none");
  const two = parseTextToolCalls(
    `<tool_call>${
      JSON.stringify(READ)
    }</tool_call>\n<tool_call>{"name":"fs_read","arguments":"{\\"path\\":\\"b\\"}"}</tool_call>`,
    known,
  );
  assert.equal(two.kind, "calls");
  assert.deepEqual(two.kind === "calls" && two.calls.map((c) => c.arguments), [
    '{"path":"a.txt"}',
    '{"path":"b"}',
  ]);
});

Deno.test("finish_reason length: a cut call does not run even though its JSON parses; model and user are told", async () => {
  const r = await run([
    {
      tool_calls: [{
        id: "w1",
        name: "fs_write",
        arguments: { path: "cut.txt", content: "half of a fi" },
      }],
      finish_reason: "length",
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
  assert.match(
    r.stderr,
    /token limit \(finish_reason "length"\); 1 cut tool call\(s\) not run: fs_write/,
  );
});

Deno.test("finish_reason length twice in a turn ends it with max_tokens", async () => {
  const cut: ScriptedReply = {
    tool_calls: [{ name: "fs_write", arguments: { path: "cut.txt", content: "x" } }],
    finish_reason: "length",
  };
  const r = await run([cut, cut, { text: "never" }], ["--dangerously-skip-permissions"]);
  assert.equal(r.bodies.length, 2);
  assert.equal(JSON.parse(r.stdout).stop_reason, "max_tokens");
  assert.ok(!r.files.includes("cut.txt"));
});
