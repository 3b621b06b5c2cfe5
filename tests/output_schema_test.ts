/**
 * `--output-schema FILE` (issue 19): real headless runs of main.ts against the scripted model
 * server. A valid answer becomes `structured_output`; an invalid one gets exactly one repair turn
 * quoting the validation error; invalid twice is exit 1 with `error.code` `output_schema`; a bad
 * schema file is a usage error (exit 2) naming the file, before any model request.
 */
import assert from "node:assert/strict";
import { requestMessages, type ScriptedReply, startModelServer } from "./support/model_server.ts";
import {
  childEnv,
  makeCoyoteEnv,
  parseJsonLines,
  runCoyote,
  type RunResult,
} from "./support/run_coyote.ts";

const SCHEMA = {
  type: "object",
  required: ["verdict", "count"],
  properties: { verdict: { enum: ["pass", "fail"] }, count: { type: "integer", minimum: 0 } },
  additionalProperties: false,
};

async function withRun(
  replies: ScriptedReply[],
  args: string[],
  schemaText: string | null,
  check: (r: RunResult, requests: string[][]) => void,
) {
  const server = await startModelServer({ script: replies });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-oschema-" });
  try {
    if (schemaText !== null) await Deno.writeTextFile(`${dir}/schema.json`, schemaText);
    const r = await runCoyote(["--headless", "--output-schema", "schema.json", ...args, "judge"], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    // The user messages of each request, to see the instruction and the repair prompt.
    const users = server.requests.map((q) =>
      requestMessages(q).filter((m) => m.role === "user").map((m) =>
        typeof m.content === "string" ? m.content : JSON.stringify(m.content)
      )
    );
    check(r, users);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("output-schema: a valid first answer is structured_output (json), one request, schema in the prompt", async () => {
  await withRun(
    [{ text: '{"verdict":"pass","count":3}' }],
    ["--output-format", "json"],
    JSON.stringify(SCHEMA),
    (r, reqs) => {
      assert.equal(r.code, 0, r.stderr);
      const res = JSON.parse(r.stdout);
      assert.deepEqual(res.structured_output, { verdict: "pass", count: 3 });
      assert.equal(res.exit_code, 0);
      assert.equal(reqs.length, 1);
      assert.match(reqs[0].at(-1)!, /validates against this JSON Schema/);
      assert.match(reqs[0].at(-1)!, /"verdict"/);
    },
  );
});

Deno.test("output-schema: an invalid answer gets one repair turn quoting the error; text mode prints only the JSON", async () => {
  await withRun(
    [{ text: "Looks good to me!" }, { text: '```json\n{"verdict":"fail","count":0}\n```' }],
    [],
    JSON.stringify(SCHEMA),
    (r, reqs) => {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '{"verdict":"fail","count":0}\n');
      assert.equal(reqs.length, 2);
      assert.match(
        reqs[1].at(-1)!,
        /does not match the required JSON Schema: the answer is not JSON/,
      );
    },
  );
  // stream-json: the result line carries it; usage covers both turns.
  await withRun(
    [{ text: '{"verdict":"maybe","count":-1}' }, { text: '{"verdict":"pass","count":1}' }],
    ["--output-format", "stream-json"],
    JSON.stringify(SCHEMA),
    (r, reqs) => {
      assert.equal(r.code, 0, r.stderr);
      const res = parseJsonLines(r.stdout).at(-1)!;
      assert.equal(res.type, "result");
      assert.deepEqual(res.structured_output, { verdict: "pass", count: 1 });
      assert.equal((res.usage as { requests: number }).requests, 2);
      assert.equal(reqs.length, 2);
      assert.match(reqs[1].at(-1)!, /verdict/);
      assert.match(reqs[1].at(-1)!, /count/);
    },
  );
});

Deno.test("output-schema: invalid twice is exit 1 with a clear error and no structured_output", async () => {
  await withRun(
    [{ text: '{"verdict":"pass"}' }, { text: "still not it" }, { text: "never asked" }],
    ["--output-format", "json"],
    JSON.stringify(SCHEMA),
    (r, reqs) => {
      assert.equal(r.code, 1, r.stderr);
      const res = JSON.parse(r.stdout);
      assert.equal(res.exit_code, 1);
      assert.equal(res.is_error, true);
      assert.equal(res.error.code, "output_schema");
      assert.match(res.error.message, /--output-schema schema\.json after one repair turn/);
      assert.equal("structured_output" in res, false);
      assert.equal(reqs.length, 2, "exactly one repair turn");
      assert.match(r.stderr, /does not match --output-schema schema\.json/);
      assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/);
    },
  );
});

Deno.test("output-schema: a bad schema file is a usage error naming the file, no model request", async () => {
  const cases: [string | null, RegExp][] = [
    [null, /--output-schema schema\.json: cannot read the file \(no such file\)/],
    ["{ not json", /--output-schema schema\.json: not JSON/],
    [
      '{"type":"object","properties":{"a":{"type":"integr"}}}',
      /--output-schema schema\.json: not a valid JSON Schema: \/properties\/a\/type: "integr"/,
    ],
    ['{"required":"a"}', /not a valid JSON Schema: \/required: must be an array/],
  ];
  for (const [text, re] of cases) {
    await withRun([{ text: "{}" }], [], text, (r, reqs) => {
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, re);
      assert.doesNotMatch(r.stderr, /at .*\.ts:\d+/);
      assert.equal(r.stdout, "");
      assert.equal(reqs.length, 0);
    });
  }
});
