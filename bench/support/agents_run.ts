/**
 * The measured side of `bench/agents.bench.ts`, run as its own process (`--v8-flags=--expose-gc`
 * so RSS samples follow a full GC, and so the model server's memory is not counted): opens a
 * `lead` session on a fresh workspace, lets it spawn N `explore` children through the real
 * supervisor, and prints one JSON line with timestamps (epoch ms) and RSS samples.
 *
 * Usage: `deno run -A --v8-flags=--expose-gc bench/support/agents_run.ts BASE_URL N`
 * @module
 */
import { acquireWorkspace } from "../../core/workspace.ts";
import { openSession } from "../../core/session.ts";
import type { EventEnvelope } from "../../core/types.ts";
import type { AppOptions } from "../../core/app.ts";

const [baseURL, nArg] = Deno.args;
const n = Number(nArg);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const now = () => performance.timeOrigin + performance.now();
const rss = () => {
  gc();
  return Deno.memoryUsage().rss;
};

const root = await Deno.makeTempDir({ prefix: "coyote-bench-agents-" });
await Deno.mkdir(`${root}/ws`);
const app: AppOptions = {
  cwd: `${root}/ws`,
  configDir: `${root}/config`,
  dataDir: `${root}/data`,
  config: {},
  allow: [],
  deny: [],
  dangerouslySkipPermissions: false,
  plugins: [],
  noWorkspaceMcp: true,
  headless: true,
  maxTurns: 10,
  baseURL,
  apiKey: "bench",
  model: "scripted",
} as AppOptions;
const ws = await acquireWorkspace(app, { cwd: app.cwd, log: () => {} });
ws.agents.register({
  name: "lead",
  description: "bench lead",
  instructions: "LEAD bench agent.",
  can_spawn_agents: true,
  max_concurrent_agents: n,
});
ws.agents.register({
  name: "explore",
  description: "bench explore",
  instructions: "EXPLORE bench agent.",
  tools: ["fs_read", "fs_grep", "fs_glob"],
});
await Deno.writeTextFile(`${app.cwd}/notes.txt`, "the answer is here\n");
const lead = await openSession(ws, {
  agent: "lead",
  permission: () => Promise.resolve("reject_once"),
});

/** Spawn call id → [prompt, time the spawn tool started]. */
const spawnAt = new Map<string, { prompt: string; at: number }>();
const prompts = new Map<string, string>();
const childStart = new Map<string, number>();
const childEnd = new Map<string, number>();
let rssBefore = 0;
let rssRunning = 0;
let running = 0;
let sampled: Promise<void> | null = null;
const onEvent = (e: EventEnvelope) => {
  const u = e.update;
  const at = now();
  if (!e.parent_id) {
    if (u.sessionUpdate === "tool_call" && u.title.startsWith("Spawn")) {
      prompts.set(u.toolCallId, String((u.rawInput as { prompt: string }).prompt));
      if (!rssBefore) rssBefore = rss();
    }
    if (u.sessionUpdate === "tool_call_update" && u.status === "in_progress") {
      const p = prompts.get(u.toolCallId);
      if (p !== undefined) spawnAt.set(u.toolCallId, { prompt: p, at: now() });
    }
    return;
  }
  if (u.sessionUpdate === "turn_started") {
    childStart.set(e.agent_id, at);
    // Every child is inside its first model request: sample once, mid-request.
    if (++running === n) {
      sampled = new Promise((r) => setTimeout(() => r(void (rssRunning = rss())), 100));
    }
  } else if (u.sessionUpdate === "turn_ended") {
    childEnd.set(e.agent_id, at);
    running--;
  }
};
const t0 = now();
const result = await lead.prompt("survey the code", { onEvent });
await sampled;
const t1 = now();
console.log(JSON.stringify({
  n,
  stopReason: result.stopReason,
  agents: result.agents?.map((a) => a.status),
  turnMs: t1 - t0,
  spawns: [...spawnAt.values()],
  firstSpawn: Math.min(...[...spawnAt.values()].map((s) => s.at)),
  lastChildEnd: Math.max(...childEnd.values()),
  childStarts: [...childStart.values()],
  childWall: [...childEnd.entries()].map(([id, end]) => end - (childStart.get(id) ?? end)),
  rssBefore,
  rssRunning,
}));
await lead.close();
await ws.release();
await Deno.remove(root, { recursive: true });
