/**
 * Seams of issue 7: sessions on one directory share one Workspace (one MCP server process,
 * closed with the last session); the tool `concurrency` flag drives scheduling; a session's
 * events arrive in the envelope with turn_started / turn_ended.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTool } from "../sdk/mod.ts";
import { createSession } from "../core/session/runtime.ts";
import { Engine, type ModelClient, type PolicyLike } from "../core/engine/mod.ts";
import { ToolRegistry } from "../core/tools/registry.ts";
import { createProvider } from "../core/provider/provider.ts";
import type { AnyTool, EventEnvelope, SessionEvent } from "../core/protocol/types.ts";
import { startModelServer } from "./support/model_server.ts";
import { testApp } from "./support/fixtures.ts";
import { noisySpec } from "./support/mcp_servers.ts";
import { alivePids, descendantPids, waitFor } from "./support/acp_harness.ts";

function cmdline(pid: number): string {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
  } catch {
    return "";
  }
}

Deno.test("workspace: two sessions on one cwd share one MCP server process; the last close stops it", async () => {
  const root = await Deno.makeTempDir({ prefix: "coyote-seams-" });
  const ws = `${root}/ws`;
  await Deno.mkdir(`${ws}/.coyote`, { recursive: true });
  await Deno.writeTextFile(
    `${ws}/.coyote/mcp.json`,
    JSON.stringify({ mcpServers: { noisy: noisySpec() } }),
  );
  const server = await startModelServer({ script: [{ text: "a" }, { text: "b" }] });
  const env = { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "k", COYOTE_MODEL: "scripted" };
  for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
  const app = testApp({ cwd: ws, configDir: `${root}/config`, dataDir: `${root}/data` });
  const noisy = () => descendantPids(Deno.pid).filter((p) => cmdline(p).includes("noisy_server"));
  try {
    const a = await createSession(app, {
      cwd: ws,
      permission: () => Promise.resolve("reject_once"),
      log: () => {},
    });
    const b = await createSession(app, {
      cwd: ws,
      permission: () => Promise.resolve("reject_once"),
      log: () => {},
    });
    assert.notEqual(a.id, b.id);
    assert.equal(a.workspace, b.workspace);
    // MCP servers start in the background (docs/mcp.md): the tools join when it is ready.
    await a.mcp!.ready;
    await waitFor(() => a.toolNames().includes("mcp__noisy__noise"), 5000, "a's MCP tool");
    await waitFor(() => b.toolNames().includes("mcp__noisy__noise"), 5000, "b's MCP tool");
    const pids = noisy();
    assert.equal(pids.length, 1, `one MCP server process for two sessions, got ${pids}`);
    // Envelopes: own session id, agent id, gapless seq, lifecycle first and last.
    const seen: EventEnvelope[] = [];
    const r = await a.prompt("hi", { onEvent: (e) => seen.push(e) });
    assert.equal(r.text, "a");
    assert.ok(seen.every((e) => e.session_id === a.id && e.agent_id === a.agentId));
    assert.deepEqual(seen.map((e) => e.seq), seen.map((_, i) => i + 1));
    assert.equal(seen[0].update.sessionUpdate, "turn_started");
    const last = seen.at(-1)!.update;
    assert.equal(last.sessionUpdate, "turn_ended");
    if (last.sessionUpdate === "turn_ended") assert.deepEqual(last.usage, r.usage);
    await a.close();
    assert.deepEqual(alivePids(pids), pids, "closing one session keeps the shared server");
    await b.close();
    await waitFor(() => alivePids(pids).length === 0, 10_000, "the MCP server to stop");
  } finally {
    for (const k of Object.keys(env)) Deno.env.delete(k);
    await server.close();
    await Deno.remove(root, { recursive: true });
  }
});

/** A tool that records how many calls of it (and of its group) run at once. */
function probe(
  name: string,
  flags: { readOnly?: boolean; concurrency?: "parallel" | "serial" },
  inFlight: { now: number; max: number },
  release: Promise<void>,
): AnyTool {
  return defineTool({
    name,
    description: name,
    input: z.object({ n: z.number() }),
    ...flags,
    async run() {
      inFlight.now++;
      inFlight.max = Math.max(inFlight.max, inFlight.now);
      // Wait until every call of the batch had its chance to start (or a short while).
      await Promise.race([release, new Promise((r) => setTimeout(r, 50))]);
      inFlight.now--;
      return "ok";
    },
  });
}

Deno.test("scheduling follows the tool's concurrency flag, not readOnly", async () => {
  const calls = (name: string) => [0, 1, 2].map((n) => ({ name, arguments: { n } }));
  const server = await startModelServer({
    script: [
      { tool_calls: calls("writer_parallel") },
      { tool_calls: calls("reader_serial") },
      { tool_calls: calls("plain_reader") },
      { text: "done" },
    ],
  });
  const counters = {
    writer_parallel: { now: 0, max: 0 },
    reader_serial: { now: 0, max: 0 },
    plain_reader: { now: 0, max: 0 },
  };
  let open!: () => void;
  const release = new Promise<void>((r) => (open = r));
  // Released once three calls of any one tool are running at the same time.
  const watch = setInterval(() => {
    if (Object.values(counters).some((c) => c.now >= 3)) open();
  }, 1);
  const allow: PolicyLike = {
    evaluate: (access) => Promise.resolve({ decision: "allow", reason: "test", access }),
    addRule: () => {},
  };
  const engine = new Engine({
    sessionId: "s",
    cwd: "/",
    client: createProvider({
      baseURL: server.baseURL,
      apiKey: "k",
      model: "scripted",
      timeoutMs: 5000,
      maxRetries: 0,
    }) as unknown as ModelClient,
    model: "scripted",
    registry: new ToolRegistry([
      probe("writer_parallel", { concurrency: "parallel" }, counters.writer_parallel, release),
      probe(
        "reader_serial",
        { readOnly: true, concurrency: "serial" },
        counters.reader_serial,
        release,
      ),
      probe("plain_reader", { readOnly: true }, counters.plain_reader, release),
    ]),
    policy: allow,
    permission: () => Promise.resolve("reject_once"),
    systemPrompt: "test",
    maxTurns: 10,
    log: () => {},
  });
  try {
    const events: SessionEvent[] = [];
    const r = await engine.prompt("go", { onEvent: (e) => events.push(e) });
    assert.equal(r.stopReason, "end_turn");
    assert.equal(counters.writer_parallel.max, 3, "parallel: all three at once");
    assert.equal(counters.reader_serial.max, 1, "serial: one at a time although read-only");
    assert.equal(counters.plain_reader.max, 3, "no flag: read-only tools run in parallel");
    assert.equal(events[0].sessionUpdate, "turn_started");
    assert.equal(events.at(-1)!.sessionUpdate, "turn_ended");
  } finally {
    clearInterval(watch);
    await server.close();
  }
});

Deno.test("tool entries are shared by schema, name and description only; agent tool selection follows the live list", async () => {
  const { prepareAgent } = await import("../core/agents/prepare.ts");
  const input = z.object({ q: z.string() });
  const mk = (name: string, description: string) =>
    defineTool({ name, description, input, run: () => "" }) as AnyTool;
  // Per-session tool objects over one schema (as skill and supervisor tools are).
  const a = new ToolRegistry([mk("look", "Look."), mk("find", "Find.")]);
  const b = new ToolRegistry([mk("look", "Look."), mk("find", "Find things, now.")]);
  const [la, fa] = a.openAITools();
  const [lb, fb] = b.openAITools();
  assert.equal(la, lb, "same schema, name and description: one shared entry");
  assert.equal(fa.function.description, "Find.");
  assert.equal(
    fb.function.description,
    "Find things, now.",
    "a changed description is its own entry",
  );
  assert.deepEqual(fa.function.parameters, fb.function.parameters);
  for (const r of [a, b]) {
    assert.equal(r.openAIToolsChars(), JSON.stringify(r.openAITools()).length);
  }

  // Two definitions over one live tool list; the list then grows in place (an MCP server
  // finished starting): each definition's selection follows, by its own `tools`.
  const all: AnyTool[] = [mk("fs_read", "r"), mk("fs_write", "w")];
  const prep = (tools: string[] | undefined) =>
    prepareAgent({
      definition: { name: "x", description: "x", instructions: "x", tools },
      allTools: all,
      skills: [],
      cwd: "/w",
      workspace: null,
    });
  const reader = prep(["fs_read", "mcp:gh"]);
  const everything = prep(undefined);
  assert.deepEqual(reader.tools().map((t) => t.name), ["fs_read"]);
  assert.deepEqual(everything.tools().map((t) => t.name), ["fs_read", "fs_write"]);
  all.push(mk("mcp__gh__issue", "i"));
  assert.deepEqual(reader.tools().map((t) => t.name), ["fs_read", "mcp__gh__issue"]);
  assert.deepEqual(prep(["fs_read"]).tools().map((t) => t.name), ["fs_read"]);
  assert.deepEqual(everything.tools().map((t) => t.name), [
    "fs_read",
    "fs_write",
    "mcp__gh__issue",
  ]);
});
