/**
 * Sub-agents spend from the root's budget (issue 18, core/supervisor/budget.ts): a scripted LEAD
 * spawns a WORKER whose usage alone stays under `--max-budget-tokens` / `--max-budget-usd`, but
 * the tree's does not — the run ends with `max_budget` (exit 4) instead of the lead's answer, and
 * the result's usage holds the child's tokens. Real subprocess, real SSE from the scripted server.
 */
import assert from "node:assert/strict";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const AGENTS_PLUGIN = `import { definePlugin } from "@coyote/sdk";
export default definePlugin({
  name: "budget-agents",
  version: "1.0.0",
  agents: [
    { name: "lead", description: "lead", instructions: "LEAD agent.", can_spawn_agents: true,
      spawnable_agents: ["worker"] },
    { name: "worker", description: "worker", instructions: "WORKER agent.", tools: ["fs_ls"] },
  ],
});
`;

const usage = (n: number) => ({ prompt_tokens: n, completion_tokens: 0, total_tokens: n });
const agentOf = (r: RecordedRequest) =>
  String((r.body as Json).messages[0]?.content ?? "").split(/\s/)[0];

/**
 * LEAD: spawn (10k tokens), collect (10k), answer "lead done" (10k). WORKER: fs_ls (150k), then
 * its answer (50k). Tree: 230k; the lead alone 30k, the worker alone 200k.
 */
function script(requests: RecordedRequest[]) {
  return (req: RecordedRequest): ScriptedReply => {
    const mine = requests.filter((r) => agentOf(r) === agentOf(req)).length;
    if (agentOf(req) === "WORKER") {
      return mine === 1
        ? { tool_calls: [{ name: "fs_ls", arguments: { path: "." } }], usage: usage(150_000) }
        : { text: "worker result", usage: usage(50_000) };
    }
    if (mine === 1) {
      return {
        tool_calls: [{ name: "agent__spawn", arguments: { agent: "worker", prompt: "look" } }],
        usage: usage(10_000),
      };
    }
    if (mine === 2) {
      return { tool_calls: [{ name: "agent__collect", arguments: {} }], usage: usage(10_000) };
    }
    return { text: "lead done", usage: usage(10_000) };
  };
}

async function run(args: string[]) {
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir({ prefix: "coyote-budget-tree-" });
  await Deno.mkdir(`${ws}/.coyote/plugins`, { recursive: true });
  await Deno.writeTextFile(`${ws}/.coyote/plugins/agents.ts`, AGENTS_PLUGIN);
  // price: USD per million tokens → 230k prompt tokens cost $0.23.
  await Deno.writeTextFile(
    `${env.configDir}/config.yaml`,
    `models:\n  scripted:\n    price: { input: 1, output: 1 }\ntrusted_workspaces: [${
      JSON.stringify(ws)
    }]\n`,
  );
  const requests: RecordedRequest[] = [];
  const server = await startModelServer({
    script: (req) => script(requests)(req),
    onRequest: (r) => requests.push(r),
  });
  try {
    const r = await runCoyote(
      ["--headless", "--agent", "lead", "--output-format", "stream-json", ...args, "go"],
      { cwd: ws, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    return { r, requests: requests.map(agentOf) };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
}

for (
  const [flag, value] of [["--max-budget-tokens", "215000"], ["--max-budget-usd", "0.215"]]
) {
  Deno.test(`budget tree: a child's usage counts toward the root's ${flag}`, async () => {
    const { r, requests } = await run([flag, value]);
    assert.equal(r.code, 4, r.stderr);
    const result: Json = parseJsonLines(r.stdout).at(-1);
    assert.equal(result.stop_reason, "max_budget");
    assert.notEqual(result.text, "lead done");
    // The worker ran to its answer (its own 200k are under the cap); the lead's last request was
    // never made.
    assert.deepEqual(requests.filter((a) => a === "WORKER").length, 2);
    assert.ok(requests.filter((a) => a === "LEAD").length < 3, requests.join(","));
    assert.ok(result.usage.total_tokens >= 210_000, JSON.stringify(result.usage));
    assert.match(r.stderr, /budget reached/);
  });
}

Deno.test("budget tree: under the cap, the tree runs to the lead's answer", async () => {
  const { r } = await run(["--max-budget-tokens", "240000"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(parseJsonLines(r.stdout).at(-1)!.text, "lead done");
});
