/**
 * Sub-agent benchmarks (`deno task bench agents`; issue 7): a `lead` agent spawns N `explore`
 * children through the real supervisor against a scripted model that answers every request
 * after 200 ms (each child: one `fs_read` round, then its answer). The measured side runs in
 * its own process (bench/support/agents_run.ts); the model server runs here.
 *
 * - `children wall, 20 vs 1`: first spawn → last child's end with 20 children, divided by the
 *   same with one child (target ≤ 1.3: children really run side by side).
 * - `RSS per running child`: (RSS with all 20 children inside a model request − RSS before
 *   the first spawn) / 20, both after a full GC (target ≤ 3 MB).
 * - `spawn → first model request`: the spawn tool starting → the model server receiving that
 *   child's first request, median over the 20 children (target ≤ 5 ms).
 * @module
 */
import { type BenchResult, median } from "./stats.ts";
import { type RecordedRequest, startModelServer } from "../tests/support/model_server.ts";

const DELAY_MS = 200;
const N = 20;
const RUNNER = new URL("./support/agents_run.ts", import.meta.url).pathname;
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

export default async function (): Promise<BenchResult[]> {
  await run(1); // warm the module cache and the disk
  const one = await run(1);
  const many = await run(N);
  for (const r of [one, many]) {
    if (r.out.stopReason !== "end_turn" || r.out.agents.some((s: string) => s !== "completed")) {
      throw new Error(`the lead's turn did not complete: ${JSON.stringify(r.out).slice(0, 500)}`);
    }
  }
  const wall = (r: Run) => r.out.lastChildEnd - r.out.firstSpawn;
  const ratio = wall(many) / wall(one);
  const perChildMB = (many.out.rssRunning - many.out.rssBefore) / N / (1024 * 1024);
  const spawnLatencies = (r: Run): number[] => {
    const firstReq = new Map<string, number>();
    for (const q of r.requests) {
      if (agentOf(q) !== "EXPLORE") continue;
      const p = String((q.body as Json).messages[1]?.content);
      if (!firstReq.has(p)) firstReq.set(p, q.time);
    }
    return r.out.spawns.map((s: { prompt: string; at: number }) =>
      (firstReq.get(s.prompt) ?? NaN) - s.at
    );
  };
  const latencies = spawnLatencies(many);
  const lat = median(latencies);
  const single = median(spawnLatencies(one));
  return [
    { name: `children wall, ${N} at once`, value: wall(many), unit: "ms" },
    { name: "children wall, 1 child", value: wall(one), unit: "ms" },
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
    {
      name: "spawn → first model request (median)",
      value: lat,
      unit: "ms",
      target: "≤ 5",
      pass: lat <= 5,
    },
    { name: "spawn → first model request (max)", value: Math.max(...latencies), unit: "ms" },
    { name: "spawn → first model request, one child alone", value: single, unit: "ms" },
  ];
}
