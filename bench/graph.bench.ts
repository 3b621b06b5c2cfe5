/**
 * Graph engine benchmarks (issue 8, "Benchmarks"; `deno task bench graph`):
 *
 * - engine overhead per node: a chain of 200 script nodes whose host answers at once (no model,
 *   no Worker), so the time is the executor's own (routing, templates, reducers, events);
 *   median over runs of wall / nodes (target ≤ 1 ms);
 * - a map of 50 branches against the scripted model with 200 ms per request and
 *   `max_concurrency: 10`, through the real GraphRunner (an Engine per branch): wall time
 *   against 5 sequential rounds of one request (target ≤ 1.3×);
 * - a `.ts` script node's round trip in its own heap-capped process, warm (the process kept from
 *   the previous run): median (target ≤ 5 ms); the cold first run is reported too.
 *
 * `BENCH_RUNS=N` sets the repetitions (default 20).
 * @module
 */
import { parseGraphText } from "../core/graph/load.ts";
import { runGraph } from "../core/graph/run.ts";
import type { GraphHost } from "../core/graph/host.ts";
import { checkSchema } from "../core/graph/structured.ts";
import { closeScriptWorkers, runModuleScript } from "../core/graph/script.ts";
import { GraphRunner } from "../core/graph/runner.ts";
import { createWorkspace } from "../core/session/workspace.ts";
import { startModelServer } from "../tests/support/model_server.ts";
import { testApp } from "../tests/support/fixtures.ts";
import { type BenchResult, median } from "./stats.ts";

const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 20);

function chain(n: number): string {
  const nodes = Array.from(
    { length: n },
    (_, i) =>
      `  s${i}: { type: script, script: s.ts, outputs: [count], state_updates: { last: "s${i}={{count}}" }, next: ${
        i + 1 < n ? `s${i + 1}` : "done"
      } }`,
  );
  return `name: chain\nstart: s0\ninitial_state: { count: 0 }\nreducers: { count: sum }\nnodes:\n${
    nodes.join("\n")
  }\n  done: { type: end, output: "{{last}}" }\n`;
}

async function overheadPerNode(): Promise<BenchResult> {
  const n = 200;
  const spec = parseGraphText(chain(n), "bench/chain.yaml");
  const host: GraphHost = {
    llm: () => ({ send: () => Promise.resolve({ text: "" }) }),
    agent: () => Promise.resolve(""),
    script: () => Promise.resolve({ count: 1 }),
    ask: () => Promise.resolve(undefined),
    checkSchema,
  };
  const signal = new AbortController().signal;
  const once = async () => {
    const t0 = performance.now();
    const r = await runGraph(spec, { host, prompt: "x", emit: () => {}, signal });
    if (r.output !== `s${n - 1}=${n}`) throw new Error(`unexpected output ${r.output}`);
    return (performance.now() - t0) / (n + 1);
  };
  for (let i = 0; i < 3; i++) await once();
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) xs.push(await once());
  const v = median(xs);
  return {
    name: "engine overhead per node (200-node chain)",
    value: v,
    unit: "ms",
    target: "≤ 1 ms",
    pass: v <= 1,
  };
}

async function mapOfFifty(): Promise<BenchResult[]> {
  const server = await startModelServer({ script: [{ text: "ok", delay_ms: 200 }], repeat: true });
  const root = await Deno.makeTempDir({ prefix: "coyote-bench-graph-" });
  const dirs = { cwd: `${root}/ws`, configDir: `${root}/cfg`, dataDir: `${root}/data` };
  for (const d of Object.values(dirs)) await Deno.mkdir(d);
  const ws = await createWorkspace(
    testApp(dirs, { baseURL: server.baseURL, model: "scripted", apiKey: "k" }),
    { cwd: dirs.cwd, log: () => {} },
  );
  try {
    const tools = await ws.tools();
    const items = Array.from({ length: 50 }, (_, i) => `i${i}`);
    const spec = parseGraphText(
      `name: fan\nstart: m\nsettings: { max_concurrency: 10 }\ninitial_state: { items: ${
        JSON.stringify(items)
      } }\nnodes:\n  m: { type: map, over: items, as: it, branch: b, collect_into: out, next: done }\n  b: { type: llm, prompt: "{{it}}" }\n  done: { type: end, output: "{{out[49]}}" }\n`,
      "bench/fan.yaml",
    );
    const one = parseGraphText(
      `name: one\nstart: b\nnodes:\n  b: { type: llm, prompt: x, next: done }\n  done: { type: end }\n`,
      "bench/one.yaml",
    );
    const runner = (s: typeof spec) =>
      new GraphRunner({
        spec: s,
        dir: dirs.cwd,
        sessionId: "bench",
        cwd: dirs.cwd,
        client: ws.client,
        model: "scripted",
        tools,
        policy: ws.newPolicy(),
        permission: () => Promise.resolve("reject_once"),
        origin: { agent: "bench", agentId: "bench-1", rootSessionId: "bench", depth: 0 },
        log: () => {},
      });
    await runner(one).prompt("warm", { onEvent: () => {} });
    const rounds: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await runner(one).prompt("x", { onEvent: () => {} });
      rounds.push(performance.now() - t0);
    }
    const round = median(rounds);
    const t0 = performance.now();
    const r = await runner(spec).prompt("x", { onEvent: () => {} });
    const wall = performance.now() - t0;
    if (r.error || r.text !== "ok") throw new Error(`map failed: ${r.error?.message ?? r.text}`);
    const ratio = wall / (5 * round);
    return [
      { name: "map of 50 branches, 200 ms model, max_concurrency 10", value: wall, unit: "ms" },
      { name: "one branch round (1 request)", value: round, unit: "ms" },
      {
        name: "map wall / 5 sequential rounds",
        value: ratio,
        unit: "x",
        target: "≤ 1.3",
        pass: ratio <= 1.3,
      },
    ];
  } finally {
    await ws.close();
    await server.close();
    await Deno.remove(root, { recursive: true });
  }
}

async function scriptRoundTrip(): Promise<BenchResult[]> {
  const text = "export default (state) => ({ n: (state.n ?? 0) + 1 });";
  const services = {
    exec: () => Promise.reject(new Error("no exec")),
    read: () => Promise.resolve(undefined),
    write: () => Promise.resolve(),
    event: () => {},
  };
  const signal = new AbortController().signal;
  const once = async () => {
    const t0 = performance.now();
    const r = await runModuleScript(
      { name: "bench.ts", text, state: { n: 1 }, timeoutMs: 10_000, permissions: "none", services },
      signal,
    );
    if (r.n !== 2) throw new Error("bad script result");
    return performance.now() - t0;
  };
  const cold = await once();
  const xs: number[] = [];
  for (let i = 0; i < RUNS * 5; i++) xs.push(await once());
  await closeScriptWorkers();
  const warm = median(xs);
  return [
    { name: ".ts script node round trip, cold (process start)", value: cold, unit: "ms" },
    {
      name: ".ts script node round trip, warm",
      value: warm,
      unit: "ms",
      target: "≤ 5 ms",
      pass: warm <= 5,
    },
  ];
}

export default async function (): Promise<BenchResult[]> {
  return [await overheadPerNode(), ...await mapOfFifty(), ...await scriptRoundTrip()];
}
