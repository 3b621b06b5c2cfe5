/**
 * Sub-agent benchmarks (`deno task bench agents`; issue 7): a `lead` agent spawns N `explore`
 * children through the real supervisor against a scripted model that answers every request
 * after 200 ms (each child: one `fs_read` round, then its answer). The measured side runs in
 * its own process (bench/support/agents_run.ts); the model server runs here.
 *
 * Each scenario runs {@link ROUNDS} times (a fresh process each); every figure is the median
 * over the runs.
 *
 * - `children wall, 20 vs 1`: first spawn → last child's end with 20 children, divided by the
 *   same with one child (target ≤ 1.3: children really run side by side).
 * - `RSS per running child`: (RSS with all 20 children inside a model request − RSS before
 *   the first spawn) / 20, both after a full GC (target ≤ 3 MB). RSS moves in pages and
 *   allocator arenas, so for so small a cost it is noise (it can come out below zero);
 *   `V8 heap per running child` is the same difference of the JS heap in use.
 * - `spawn → first model request`: the spawn tool starting → the child's engine making its
 *   first model request (handing it to the model client), median over the 20 children
 *   (target ≤ 5 ms). The same request is also timed where the provider hands it to the
 *   runtime's HTTP client (`fetch`) and where the model server receives it; those two add the
 *   HTTP transport, which on loopback HTTP/1.1 means opening a connection per concurrent request
 *   on the one JS thread. `transport floor` shows that part alone: a fresh process with no agent
 *   work sends 20 requests of the same size at once (after one request, as the lead's turn
 *   leaves one pooled connection), median arrival at the server.
 * @module
 */
import { type BenchResult, median } from "./stats.ts";
import { type RecordedRequest, startModelServer } from "../tests/support/model_server.ts";

const DELAY_MS = 200;
const N = 20;
const RUNNER = new URL("./support/agents_run.ts", import.meta.url).pathname;
const FLOOR = new URL("./support/fetch_floor.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

// deno-lint-ignore no-explicit-any
type Json = any;

function agentOf(req: RecordedRequest): string {
  return String((req.body as Json).messages[0]?.content ?? "").split(/\s/)[0];
}

interface Run {
  out: Json;
  requests: RecordedRequest[];
}

async function run(n: number): Promise<Run> {
  const leadTurns = { count: 0 };
  const server = await startModelServer({
    script: (req) => {
      const msgs = (req.body as Json).messages as Json[];
      const tools = msgs.filter((m) => m.role === "tool").length;
      if (agentOf(req) === "EXPLORE") {
        return tools === 0
          ? {
            delay_ms: DELAY_MS,
            tool_calls: [{ name: "fs_read", arguments: { path: "notes.txt" } }],
          }
          : { delay_ms: DELAY_MS, text: "Found it in notes.txt. EXPLORE_COMPLETE" };
      }
      leadTurns.count++;
      if (tools === 0) {
        return {
          delay_ms: DELAY_MS,
          tool_calls: Array.from({ length: n }, (_, i) => ({
            name: "agent__spawn",
            arguments: { agent: "explore", prompt: `angle ${i}` },
          })),
        };
      }
      if (tools === n) {
        return { delay_ms: DELAY_MS, tool_calls: [{ name: "agent__collect", arguments: {} }] };
      }
      return { delay_ms: DELAY_MS, text: "summary" };
    },
  });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--config",
        CONFIG,
        "--v8-flags=--expose-gc",
        RUNNER,
        server.baseURL,
        String(n),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
    if (!out.success) {
      throw new Error(`agents_run failed: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
    }
    return { out: JSON.parse(text), requests: [...server.requests] };
  } finally {
    await server.close();
  }
}

/** Median arrival of `n` bare requests of `chars` characters (see the module doc). */
async function transportFloor(n: number, chars: number): Promise<number> {
  const server = await startModelServer({ script: () => ({ text: "ok" }) });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        "--config",
        CONFIG,
        FLOOR,
        server.baseURL,
        String(n),
        String(chars),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`fetch_floor failed: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
    }
    const { t0 } = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    return median(server.requests.filter((q) => q.time >= t0).map((q) => q.time - t0));
  } finally {
    await server.close();
  }
}

/** Runs of each size; every figure is the median over the runs (a 2-core VM is noisy). */
const ROUNDS = 5;

export default async function (): Promise<BenchResult[]> {
  await run(1); // warm the module cache and the disk
  const ones: Run[] = [];
  const manys: Run[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    ones.push(await run(1));
    manys.push(await run(N));
  }
  for (const r of [...ones, ...manys]) {
    if (r.out.stopReason !== "end_turn" || r.out.agents.some((s: string) => s !== "completed")) {
      throw new Error(`the lead's turn did not complete: ${JSON.stringify(r.out).slice(0, 500)}`);
    }
  }
  const over = (runs: Run[], f: (r: Run) => number) => median(runs.map(f));
  const wall = (r: Run) => r.out.lastChildEnd - r.out.firstSpawn;
  const ratio = over(manys, wall) / over(ones, wall);
  const perChildMB = over(manys, (r) => (r.out.rssRunning - r.out.rssBefore) / N / (1024 * 1024));
  const heapPerChildKB = over(manys, (r) => (r.out.heapRunning - r.out.heapBefore) / N / 1024);
  /** The time the server received each child's first request (by prompt). */
  const atServer = (r: Run): Record<string, number> => {
    const firstReq: Record<string, number> = {};
    for (const q of r.requests) {
      if (agentOf(q) !== "EXPLORE") continue;
      firstReq[String((q.body as Json).messages[1]?.content)] ??= q.time;
    }
    return firstReq;
  };
  /** Spawn → `at` per child of a run. */
  const since = (r: Run, at: Record<string, number>): number[] =>
    r.out.spawns.map((s: { prompt: string; at: number }) => (at[s.prompt] ?? NaN) - s.at);
  const lat = over(manys, (r) => median(since(r, r.out.issued)));
  const latMax = over(manys, (r) => Math.max(...since(r, r.out.issued)));
  const single = over(ones, (r) => median(since(r, r.out.issued)));
  const childBody = manys[0].requests.find((q) => agentOf(q) === "EXPLORE")!;
  const floors: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    floors.push(await transportFloor(N, JSON.stringify(childBody.body).length));
  }
  return [
    { name: `children wall, ${N} at once`, value: over(manys, wall), unit: "ms" },
    { name: "children wall, 1 child", value: over(ones, wall), unit: "ms" },
    {
      name: `children wall ratio ${N} vs 1`,
      value: ratio,
      unit: "x",
      target: "≤ 1.3",
      pass: ratio <= 1.3,
    },
    {
      name: "RSS per running child",
      value: perChildMB,
      unit: "MB",
      target: "≤ 3",
      pass: perChildMB <= 3,
    },
    { name: "V8 heap per running child", value: heapPerChildKB, unit: "KB" },
    {
      name: "spawn → first model request (median)",
      value: lat,
      unit: "ms",
      target: "≤ 5",
      pass: lat <= 5,
    },
    { name: "spawn → first model request (max)", value: latMax, unit: "ms" },
    { name: "spawn → first model request, one child alone", value: single, unit: "ms" },
    {
      name: "spawn → request handed to fetch (median)",
      value: over(manys, (r) => median(since(r, r.out.fetched))),
      unit: "ms",
    },
    {
      name: "spawn → request at the model server (median)",
      value: over(manys, (r) => median(since(r, atServer(r)))),
      unit: "ms",
    },
    {
      name: `transport floor: ${N} bare requests at the server (median)`,
      value: median(floors),
      unit: "ms",
    },
  ];
}
