/**
 * Caps on total sub-agent work (issue 7): `max_spawns_per_turn` bounds the children one session
 * spawns in a turn, `max_live_agents` the live (queued + running) sessions of a whole agent tree —
 * `agent__spawn` children at every depth and the children a graph's `agent`/`map` nodes open.
 * Real sessions against the scripted model server; definition files rejected with file + field.
 * @module
 */
import assert from "node:assert/strict";
import type { AgentSession } from "../core/session/types.ts";
import { parseAgentConfig } from "../core/agents/definition.ts";
import { loadAgentRegistry } from "../core/agents/registry.ts";
import type { AgentSpec } from "../core/protocol/types.ts";
import {
  agent,
  agentEnv,
  agentOf,
  collectAll,
  type Json,
  lastToolResults,
  messages,
  spawn,
} from "./support/scripted_agents.ts";

/** Like {@link agentEnv}; `run` gives the root's `turn_ended`. */
async function setup(
  agents: AgentSpec[],
  script: Parameters<typeof agentEnv>[1],
  files: Record<string, string> = {},
) {
  const env = await agentEnv(agents, script, { files, prefix: "coyote-spawncaps-" });
  return {
    ...env,
    open: (name: string) => env.open(name),
    run: async (s: AgentSession, prompt: string) => (await env.run(s, prompt)).ended,
  };
}

/** The last line of a child's transcript (it must be its turn end). */
async function lastLine(dataDir: string, sessionId: string): Promise<Json> {
  const text = await Deno.readTextFile(`${dataDir}/sessions/${sessionId}.jsonl`);
  return JSON.parse(text.trimEnd().split("\n").at(-1)!);
}

Deno.test("spawn caps: 200 agent__spawn calls in one response get 50 children and 150 refusals saying why; uncollected, all are cancelled and the slots come back", async () => {
  // Children hang until the test lets them go: the lead's turn must end by cancelling them.
  let letGo!: () => void;
  const gate = new Promise<void>((r) => (letGo = r));
  let turn = 0;
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true, spawnable_agents: ["kid"] }),
    agent("KID", { tools: [] }),
  ], async (req) => {
    if (agentOf(req) === "KID") {
      if (turn === 1) await gate;
      return { text: "kid done" };
    }
    const last = messages(req).at(-1);
    if (last.role === "user" && !String(last.content).startsWith("<system-reminder>")) {
      const n = turn === 1 ? 200 : 60;
      return { tool_calls: Array.from({ length: n }, (_, i) => spawn("kid", `task ${i}`)) };
    }
    if (turn === 2 && last.role === "tool" && lastToolResults(req).length > 1) {
      return { tool_calls: [collectAll] };
    }
    return { text: "answering without them" };
  });
  try {
    const lead = await e.open("lead");
    turn = 1;
    const ended = await e.run(lead, "fan out");
    letGo();
    assert.equal(ended.stopReason, "end_turn");
    const leadReqs = e.requests.filter((r) => agentOf(r) === "LEAD");
    const results = lastToolResults(leadReqs[1]);
    assert.equal(results.length, 200);
    const accepted = results.filter((t) => t.startsWith("{"));
    const refused = results.filter((t) => t.startsWith("error:"));
    assert.equal(accepted.length, 50, "the default max_spawns_per_turn is 50");
    assert.equal(refused.length, 150);
    for (const t of refused) {
      assert.match(
        t,
        /^error: max_spawns_per_turn 50 reached: lead-[0-9a-f]{8} already spawned 50/,
      );
      assert.match(t, /raise max_spawns_per_turn in the definition of agent lead/);
    }
    // Every child was cancelled after the reminders; started ones ended their transcripts.
    assert.equal(ended.agents?.length, 50);
    assert.ok(ended.agents!.every((a) => a.status === "cancelled"), JSON.stringify(ended.agents));
    const started = ended.agents!.filter((a) => a.session_id);
    assert.ok(started.length > 0 && started.length <= 8, "at most max_concurrent_agents ran");
    for (const a of started) {
      assert.equal((await lastLine(e.dataDir, a.session_id)).type, "turn_end");
    }
    // The next turn has its own budget, and the tree's live slots were all given back: 50 of 60
    // spawns are accepted (a leak of the 50 slots would leave 14 under max_live_agents 64).
    turn = 2;
    const second = await e.run(lead, "again");
    assert.equal(second.text, "answering without them");
    const secondReqs = e.requests.filter((r) => agentOf(r) === "LEAD").slice(-3);
    const again = lastToolResults(secondReqs[1]);
    assert.equal(again.length, 60);
    assert.equal(again.filter((t) => t.startsWith("{")).length, 50);
    assert.equal(again.filter((t) => /^error: max_spawns_per_turn 50/.test(t)).length, 10);
    const collected = lastToolResults(secondReqs[2]);
    assert.equal(collected.length, 1, "the collect call");
    assert.equal((collected[0].match(/ completed:/g) ?? []).length, 50);
    assert.equal(second.agents?.length, 50);
    assert.ok(second.agents!.every((a) => a.status === "completed"));
  } finally {
    letGo();
    await e.close();
  }
});

Deno.test("spawn caps: max_live_agents of the root bounds the whole tree; a child's definition cannot raise it", async () => {
  // Three mids each try to spawn three leaves; leaves wait until every mid has seen its spawn
  // results, so the slots they hold are held while the others try.
  let midsDone = 0;
  let allTried!: () => void;
  const tried = new Promise<void>((r) => (allTried = r));
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true, spawnable_agents: ["mid"], max_live_agents: 5 }),
    agent("MID", { can_spawn_agents: true, spawnable_agents: ["leaf"], max_live_agents: 1000 }),
    agent("LEAF", { tools: [] }),
  ], async (req) => {
    const who = agentOf(req);
    if (who === "LEAF") {
      await tried;
      return { text: "leaf done" };
    }
    const last = messages(req).at(-1);
    if (last.role === "user") {
      return {
        tool_calls: who === "LEAD"
          ? [spawn("mid", "m1"), spawn("mid", "m2"), spawn("mid", "m3")]
          : [spawn("leaf", "l1"), spawn("leaf", "l2"), spawn("leaf", "l3")],
      };
    }
    const results = lastToolResults(req);
    if (results[0].startsWith("{") || results[0].startsWith("error: max_live")) {
      if (who === "MID" && ++midsDone === 3) allTried();
      return { tool_calls: [collectAll] };
    }
    return { text: `${who} saw: ${results.join(" | ")}` };
  });
  try {
    const lead = await e.open("lead");
    const ended = await e.run(lead, "go deep");
    assert.equal(ended.stopReason, "end_turn");
    // 3 mids + 2 leaves fill the 5 slots; the other 7 leaf spawns are refused with the reason.
    const midSpawnResults = e.requests.filter((r) =>
      agentOf(r) === "MID" && messages(r).at(-1).role === "tool" && lastToolResults(r).length === 3
    ).flatMap(lastToolResults);
    assert.equal(midSpawnResults.length, 9);
    const refusals = midSpawnResults.filter((t) => t.startsWith("error:"));
    assert.equal(refusals.length, 7, midSpawnResults.join("\n"));
    for (const t of refusals) {
      assert.match(
        t,
        /^error: max_live_agents 5 reached: 5 sub-agents are already queued or running in the agent tree of lead \(session [^)]+\); .*raise max_live_agents in the root agent's definition/,
      );
    }
    assert.equal(e.requests.filter((r) => agentOf(r) === "LEAF").length, 2);
    assert.equal(ended.agents?.length, 3);
    assert.ok(ended.agents!.every((a) => a.status === "completed"));
  } finally {
    await e.close();
  }
});

const FAN = (items: number, concurrency: number) =>
  "name: fan\ndescription: fans out\nstart: m\n" +
  `settings: { max_concurrency: ${concurrency} }\n` +
  `initial_state: { items: [${Array.from({ length: items }, (_, i) => `i${i}`).join(", ")}] }\n` +
  "nodes:\n" +
  "  m: { type: map, over: items, as: it, branch: work, collect_into: results, next: z }\n" +
  "  work: { type: agent, agent: kid, prompt: 'work on {{it}}' }\n" +
  "  z: { type: end, output: 'results: {{results}}' }\n";

Deno.test("spawn caps: a graph map over 100 items runs under the tree cap (every slot given back), every branch's child done", async () => {
  let inFlight = 0, peak = 0;
  const e = await setup([agent("KID", { tools: [] })], async (req) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, 5));
    inFlight--;
    return { text: `did ${String(messages(req).at(-1).content).replace("work on ", "")}` };
  }, { ".coyote/agents/fan/graph.yaml": FAN(100, 8) });
  try {
    assert.equal(e.ws.agents.entry("fan")?.error, undefined);
    const fan = await e.open("fan");
    const ended = await e.run(fan, "go");
    assert.equal(ended.stopReason, "end_turn", JSON.stringify(ended));
    for (let i = 0; i < 100; i++) assert.match(ended.text, new RegExp(`did i${i}\\b`));
    assert.equal(e.requests.length, 100, "more than max_live_agents 64 in all: slots come back");
    assert.ok(peak <= 8, `at most the map's max_concurrency at once (saw ${peak})`);
  } finally {
    await e.close();
  }
});

Deno.test("spawn caps: a graph's map branches past max_live_agents fail with the reason, the graph ends, nothing hangs", async () => {
  // Two hogs hold two of the lead's three slots until the fan child has ended; the fan holds the
  // third, so each of its branches is refused at once.
  let fanEnded!: () => void;
  const hogsFree = new Promise<void>((r) => (fanEnded = r));
  const e = await setup([
    agent("LEAD", {
      can_spawn_agents: true,
      spawnable_agents: ["hog", "fan"],
      max_live_agents: 3,
    }),
    agent("HOG", { tools: [] }),
    agent("KID", { tools: [] }),
  ], async (req) => {
    const who = agentOf(req);
    if (who === "HOG") {
      await hogsFree;
      return { text: "hog done" };
    }
    if (who === "KID") return { text: "kid done" };
    const last = messages(req).at(-1);
    if (last.role === "user") {
      return { tool_calls: [spawn("hog", "h1"), spawn("hog", "h2"), spawn("fan", "go")] };
    }
    const results = lastToolResults(req);
    if (results.length === 3) {
      const fanId = JSON.parse(results[2]).id;
      return { tool_calls: [{ name: "agent__collect", arguments: { id: fanId } }] };
    }
    if (/^fan-/.test(results[0])) {
      fanEnded();
      return { tool_calls: [collectAll] };
    }
    return { text: "done" };
  }, { ".coyote/agents/fan/graph.yaml": FAN(10, 4) });
  try {
    const lead = await e.open("lead");
    const ended = await e.run(lead, "go");
    assert.equal(ended.text, "done");
    const leadReqs = e.requests.filter((r) => agentOf(r) === "LEAD");
    const fanResult = lastToolResults(leadReqs[2])[0];
    assert.match(fanResult, /^fan-[0-9a-f]{8} failed: /);
    assert.match(fanResult, /map "m": branch \d failed: max_live_agents 3 reached/);
    assert.equal(e.requests.filter((r) => agentOf(r) === "KID").length, 0);
    const byAgent = new Map(ended.agents!.map((a) => [a.agent, a.status]));
    assert.equal(byAgent.get("fan"), "failed");
    assert.equal(byAgent.get("hog"), "completed");
  } finally {
    fanEnded();
    await e.close();
  }
});

Deno.test("spawn caps: bad max_spawns_per_turn / max_live_agents values are rejected naming the file and field", async () => {
  const F = "/w/.coyote/agents/x/config.yaml";
  const base = "description: d\ninstructions: i\n";
  const bad = async (yaml: string, re: RegExp) => {
    await assert.rejects(parseAgentConfig(base + yaml, F, "x"), (err: Error) => {
      assert.ok(err.message.startsWith(`agent file ${F}: `), err.message);
      assert.match(err.message, re);
      assert.equal(err.name, "ConfigError");
      return true;
    });
  };
  await bad("max_spawns_per_turn: 0\n", /max_spawns_per_turn: expected a positive integer/);
  await bad("max_spawns_per_turn: lots\n", /max_spawns_per_turn: expected a positive integer/);
  await bad("max_live_agents: 2.5\n", /max_live_agents: expected a positive integer/);
  await bad("max_live_agents: -4\n", /max_live_agents: expected a positive integer/);
  await bad(
    "max_spawn_per_turn: 10\n",
    /max_spawn_per_turn: unknown key \(did you mean `max_spawns_per_turn`\?\)/,
  );
  await bad(
    "max_live_agent: 10\n",
    /max_live_agent: unknown key \(did you mean `max_live_agents`\?\)/,
  );
  const ok = await parseAgentConfig(base + "max_spawns_per_turn: 7\nmax_live_agents: 9\n", F, "x");
  assert.equal(ok.definition.max_spawns_per_turn, 7);
  assert.equal(ok.definition.max_live_agents, 9);
});

Deno.test("spawn caps: a plugin's agent with a bad limit is listed with an error naming the plugin and field", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-spawncaps-" });
  try {
    const base = { description: "d", instructions: "i" };
    const reg = await loadAgentRegistry({
      configDir: `${dir}/cfg`,
      cwd: dir,
      pluginAgents: [
        { plugin: "p", agent: { ...base, name: "greedy", max_live_agents: "lots" } },
        { plugin: "p", agent: { ...base, name: "zero", max_spawns_per_turn: 0 } },
        { plugin: "p", agent: { ...base, name: "fine", max_spawns_per_turn: 5 } },
      ] as Json,
    });
    assert.equal(
      reg.entry("greedy")?.error,
      "agent file plugin:p: max_live_agents: expected a positive integer",
    );
    assert.equal(
      reg.entry("zero")?.error,
      "agent file plugin:p: max_spawns_per_turn: expected a positive integer",
    );
    assert.equal(reg.entry("fine")?.error, undefined);
    assert.equal(reg.resolve("fine").max_spawns_per_turn, 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
