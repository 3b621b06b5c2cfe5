/**
 * Budgets (issue 18): `--max-budget-tokens`, `--max-budget-usd` and config `budget:` end a headless
 * run cleanly before the next model request once the turn's usage reached them: stop reason
 * `max_budget`, exit code 4, `cost_usd` and `usage` in the json / stream-json `result`.
 */
import assert from "node:assert/strict";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";

/** Every request: a harmless tool call that reports 100k prompt + 50k completion tokens. */
const step = (): ScriptedReply => ({
  tool_calls: [{ name: "fs_ls", arguments: { path: "." } }],
  usage: { prompt_tokens: 100_000, completion_tokens: 50_000, total_tokens: 150_000 },
});

async function withRun(
  config: string,
  args: string[],
  check: (r: { code: number; stdout: string; stderr: string }, requests: number) => void,
) {
  const server = await startModelServer({ script: () => step() });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-budget-" });
  try {
    // price: USD per million tokens → one request costs 0.1 + 0.1 = $0.20.
    await Deno.writeTextFile(
      `${env.configDir}/config.yaml`,
      `models:\n  scripted:\n    price: { input: 1, output: 2 }\n${config}`,
    );
    const r = await runCoyote(["--headless", ...args, "go"], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    check(r, server.requests.length);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("budget: --max-budget-tokens ends the turn with max_budget, exit 4, tokens and cost in the json result", async () => {
  await withRun("", ["--output-format", "json", "--max-budget-tokens", "400000"], (r, n) => {
    assert.equal(r.code, 4, r.stderr);
    const res = JSON.parse(r.stdout);
    assert.equal(res.stop_reason, "max_budget");
    assert.equal(res.exit_code, 4);
    assert.equal(res.is_error, true);
    // 150k per request: 300k < 400k after two, 450k after three → no fourth request.
    assert.equal(n, 3);
    assert.equal(res.usage.total_tokens, 450_000);
    assert.ok(Math.abs(res.cost_usd - 0.6) < 1e-9, String(res.cost_usd));
    assert.match(r.stderr, /budget reached after 450000 tokens \(\$0\.6000\)/);
  });
});

Deno.test("budget: --max-budget-usd (stream-json) and config budget.usd stop at the price of the models: table", async () => {
  await withRun("", ["--output-format", "stream-json", "--max-budget-usd", "0.5"], (r, n) => {
    assert.equal(r.code, 4, r.stderr);
    const res = parseJsonLines(r.stdout).at(-1)!;
    assert.equal(res.type, "result");
    assert.equal(res.stop_reason, "max_budget");
    // $0.20 per request: $0.40 after two, $0.60 after three.
    assert.equal(n, 3);
    assert.ok(Math.abs((res.cost_usd as number) - 0.6) < 1e-9);
  });
  await withRun("budget:\n  usd: 0.3\n", ["--output-format", "json"], (r, n) => {
    assert.equal(r.code, 4, r.stderr);
    assert.equal(JSON.parse(r.stdout).stop_reason, "max_budget");
    assert.equal(n, 2);
  });
});

Deno.test("budget: bad values are usage errors (exit 2) naming the flag or the config key", async () => {
  await withRun("", ["--max-budget-usd", "-1"], (r, n) => {
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--max-budget-usd must be a positive number, got "-1"/);
    assert.equal(n, 0);
  });
  await withRun("", ["--max-budget-tokens", "1.5"], (r) => {
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--max-budget-tokens must be a positive integer/);
  });
  await withRun("budget:\n  usd: lots\n", [], (r) => {
    assert.equal(r.code, 2);
    assert.match(r.stderr, /budget\.usd: expected a positive number \(USD\)/);
  });
});
