/**
 * The measured side of `bench/agents.bench.ts`, run as its own process (`--v8-flags=--expose-gc`
 * so RSS samples follow a full GC, and so the model server's memory is not counted): opens a
 * `lead` session on a fresh workspace, lets it spawn N `explore` children through the real
 * supervisor, and prints one JSON line with timestamps (epoch ms) and RSS samples.
 *
 * A child's first model request is timed at two boundaries in this process: when its engine
 * hands the request to the workspace's model client (`ModelClient.complete`, core/provider/provider.ts)
 * and when the provider hands it to the runtime's HTTP client (`fetch`). Both are wrappers
 * installed here, keyed by the request's prompt (`messages[1]`); the bench adds the time the
 * model server received it.
 *
 * Usage: `deno run -A --v8-flags=--expose-gc bench/support/agents_run.ts BASE_URL N`
 * @module
 */
import { acquireWorkspace } from "../../core/session/workspace.ts";
import { openSession } from "../../core/session/conversation.ts";
import type { EventEnvelope } from "../../core/protocol/types.ts";
import type { AppOptions } from "../../core/config/app_options.ts";

const [baseURL, nArg] = Deno.args;
const n = Number(nArg);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const now = () => performance.timeOrigin + performance.now();
/** RSS and V8 heap in use, after a full GC (bytes). */
const rss = () => {
  gc();
  const m = Deno.memoryUsage();
  heap = m.heapUsed;
  return m.rss;
};
let heap = 0;

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

/** Prompt → time of the first `complete` call / `fetch` call that carried it. */
const issued = new Map<string, number>();
const fetched: { at: number; body: string }[] = [];
{
  const client = ws.client;
  const complete = client.complete.bind(client);
  client.complete = (req, ...rest) => {
    const p = String(req.messages[1]?.content);
    if (!issued.has(p)) issued.set(p, now());
    return complete(req, ...rest);
  };
  const realFetch = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    fetched.push({ at: now(), body: typeof init?.body === "string" ? init.body : "" });
    return realFetch(input, init);
  }) as typeof fetch;
}
const firstFetch = (): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const f of fetched) {
    if (!f.body.startsWith("{")) continue;
    const p = String(JSON.parse(f.body).messages?.[1]?.content);
    out[p] ??= f.at;
  }
  return out;
};

/** Spawn call id → [prompt, time the spawn tool started]. */
const spawnAt = new Map<string, { prompt: string; at: number }>();
const prompts = new Map<string, string>();
const childStart = new Map<string, number>();
const childEnd = new Map<string, number>();
let rssBefore = 0;
let rssRunning = 0;
let heapBefore = 0;
let heapRunning = 0;
let running = 0;
let sampled: Promise<void> | null = null;
const onEvent = (e: EventEnvelope) => {
  const u = e.update;
  const at = now();
  if (!e.parent_id) {
    if (u.sessionUpdate === "tool_call" && u.title.startsWith("Spawn")) {
      prompts.set(u.toolCallId, String((u.rawInput as { prompt: string }).prompt));
      if (!rssBefore) {
        rssBefore = rss();
        heapBefore = heap;
      }
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
      sampled = new Promise((r) =>
        setTimeout(() => {
          rssRunning = rss();
          heapRunning = heap;
          r();
        }, 100)
      );
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
  issued: Object.fromEntries(issued),
  fetched: firstFetch(),
  firstSpawn: Math.min(...[...spawnAt.values()].map((s) => s.at)),
  lastChildEnd: Math.max(...childEnd.values()),
  childStarts: [...childStart.values()],
  childWall: [...childEnd.entries()].map(([id, end]) => end - (childStart.get(id) ?? end)),
  rssBefore,
  rssRunning,
  heapBefore,
  heapRunning,
}));
await lead.close();
await ws.release();
await Deno.remove(root, { recursive: true });
