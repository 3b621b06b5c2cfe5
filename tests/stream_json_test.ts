/**
 * `--output-format stream-json` under noise: a workspace MCP server that prints to stdout and
 * exits, one that cannot start, a plugin that prints at load and a broken one. stdout still holds
 * only JSON lines: `init` (schema version) first, `session_update`s, then one `result` with stop
 * reason, usage, denied actions and session id. The warnings go to stderr. The turn's token usage
 * is in the transcript's `turn_end` line.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";

Deno.test("stream-json: stdout stays pure with failing MCP servers and broken plugins", async () => {
  const server = await startModelServer({
    script: [
      {
        text: "Trying.",
        tool_calls: [{ id: "x", name: "execute_command", arguments: { command: "rm -rf build" } }],
        usage: { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 },
      },
      {
        text: "Could not.",
        usage: { prompt_tokens: 200, completion_tokens: 3, total_tokens: 203 },
      },
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${cwd}/.mcp.json`,
      JSON.stringify({
        mcpServers: {
          noisy: {
            command: "sh",
            args: ["-c", "echo NOISE-ON-STDOUT; echo NOISE-ON-STDERR >&2; exit 3"],
          },
          missing: { command: `${cwd}/no-such-program` },
        },
      }),
    );
    await Deno.writeTextFile(
      `${cwd}/loud.js`,
      'console.log("PLUGIN-NOISE");\nexport default { name: "loud", tools: [{ name: 42 }] };\n',
    );
    await Deno.writeTextFile(`${cwd}/broken.ts`, "this is not ( typescript\n");
    const r = await runCoyote(
      [
        "--headless",
        "--trust-workspace",
        "--no-sandbox", // the guard's ask path: the OS sandbox would auto-allow `rm -rf build`
        "--output-format",
        "stream-json",
        "--plugin",
        "loud.js",
        "--plugin",
        "broken.ts",
        "clean up",
      ],
      { cwd, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /NOISE|PLUGIN-NOISE/);
    const lines = parseJsonLines(r.stdout);
    // deno-lint-ignore no-explicit-any
    const [init, result]: any[] = [lines[0], lines.at(-1)];
    assert.equal(init.type, "init");
    assert.equal(init.schema_version, 2);
    assert.equal(typeof init.session_id, "string");
    assert.ok(lines.slice(1, -1).every((l) => l.type === "session_update"));
    assert.equal(result.type, "result");
    assert.equal(result.stop_reason, "end_turn");
    assert.equal(result.schema_version, init.schema_version);
    assert.equal(result.session_id, init.session_id);
    const usage = { prompt_tokens: 300, completion_tokens: 10, total_tokens: 310, requests: 2 };
    assert.deepEqual(result.usage, usage);
    // Token usage of the turn is recorded in the transcript too.
    const transcript = (await Deno.readTextFile(
      `${env.dataDir}/sessions/${init.session_id}.jsonl`,
    )).trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(transcript.at(-1).type, "turn_end");
    assert.deepEqual(transcript.at(-1).usage, usage);
    assert.equal(result.denied.length, 1);
    assert.equal(result.denied[0].toolCallId, "x");
    assert.equal(result.denied[0].decision, "ask");
    assert.equal(result.text, "Could not.");
    // The warnings are on stderr, naming what failed.
    assert.match(r.stderr, /MCP server noisy .*failed to start/);
    assert.match(r.stderr, /MCP server missing .*failed to start/);
    assert.match(r.stderr, /plugin .*broken\.ts/);
    assert.match(r.stderr, /PLUGIN-NOISE/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("stream-json: U+2028, U+2029 and U+0085 in model text never split a line", async () => {
  const text = "one\u2028two\u2029three\u0085four";
  const server = await startModelServer({ script: [{ text }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /[\u0085\u2028\u2029]/);
    const lines = parseJsonLines(r.stdout);
    // deno-lint-ignore no-explicit-any
    assert.equal((lines.at(-1) as any).text, text);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
