/**
 * First-request size of each built-in agent (issue 7, "Benchmarks"): system prompt + tool schemas
 * + skill index, as the scripted model server (tests/support/model_server.ts) receives them from
 * `coyote --headless -a NAME` in an empty workspace with no plugins or MCP servers. Counted as
 * characters / 4 (the same estimate bench/startup.bench.ts uses). Targets: sisyphus ≤ 6000 tokens,
 * explore ≤ 3000; the other built-in LLM agents are reported without a target (graph agents have
 * no single first request).
 *
 * Also, in this process: the time to get every built-in agent and skill at a session start, parsed
 * (`parseBuiltins`, a new Coyote build's first start) and from the data-dir cache
 * (`loadBuiltins`, every later start); medians of `BENCH_RUNS` (default 15), no target.
 *
 * `deno task bench prompt_size`, or alone: `deno run --allow-all bench/prompt_size.bench.ts`.
 * @module
 */
import { startModelServer } from "../tests/support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "../tests/support/run_coyote.ts";
import { builtinAgentFiles } from "../agents/mod.ts";
import { loadBuiltins, parseBuiltins } from "../core/agents/builtins.ts";
import { type BenchResult, median } from "./stats.ts";

const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 15);

async function timed(f: () => Promise<unknown>): Promise<number> {
  const ts: number[] = [];
  await f();
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await f();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

const TARGETS: Record<string, number> = { sisyphus: 6000, explore: 3000 };

export default async function (): Promise<BenchResult[]> {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-bench-prompt-" });
  const server = await startModelServer({ script: [{ text: "ok" }], repeat: true });
  const results: BenchResult[] = [];
  try {
    for (const { name } of builtinAgentFiles.filter((f) => f.form !== "graph")) {
      const before = server.requests.length;
      const r = await runCoyote(["--headless", "-a", name, "hi"], {
        cwd,
        env: childEnv(env, { baseURL: server.baseURL }),
      });
      if (r.code !== 0) throw new Error(`-a ${name} failed (${r.code}): ${r.stderr.slice(-1000)}`);
      // deno-lint-ignore no-explicit-any
      const body = server.requests[before].body as any;
      const system = body.messages.find((m: { role: string }) => m.role === "system")?.content ??
        "";
      const tools = JSON.stringify(body.tools ?? []);
      const tokens = (JSON.stringify(system).length + tools.length) / 4;
      const target = TARGETS[name];
      results.push({
        name: `${name}: system prompt + tools + skill index`,
        value: tokens,
        unit: "tokens",
        ...(target ? { target: `≤ ${target}`, pass: tokens <= target } : {}),
      });
      results.push({
        name: `  ${name}: of which tool schemas`,
        value: tools.length / 4,
        unit: "tokens",
      });
    }
    const cache = await Deno.makeTempDir({ prefix: "coyote-bench-builtins-" });
    try {
      results.push({
        name: "built-in agents + skills: parsed (first start of a build)",
        value: await timed(parseBuiltins),
        unit: "ms",
      });
      results.push({
        name: "built-in agents + skills: from the data-dir cache",
        value: await timed(() => loadBuiltins(cache)),
        unit: "ms",
      });
    } finally {
      await Deno.remove(cache, { recursive: true });
    }
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
  return results;
}

if (import.meta.main) {
  for (const r of await (await import("./prompt_size.bench.ts")).default()) console.log(r);
}
