/**
 * The supervisor (issue 7 §3), in process against the scripted model server: sub-agents run
 * concurrently, their events arrive nested in the parent's envelope stream, limits are
 * enforced with tool errors that say why, a child never gets more than its parent, cancel
 * cascades and kills processes, uncollected children are reminded then cancelled, a child's
 * ask bubbles up (and times out into "proceed on your own judgement"), usage rolls up, and
 * `auto_continue` re-prompts while the todo list has open items.
 */
import assert from "node:assert/strict";
import { listSessions } from "../core/session/runtime.ts";
import type {
  AgentSpec,
  CallScope,
  EventEnvelope,
  HostFactory,
  PermissionRequest,
  TurnEndedEvent,
} from "../core/protocol/types.ts";
import type { RecordedRequest } from "./support/model_server.ts";
import {
  agent,
  agentEnv,
  agentOf,
  type Json,
  messages,
  nth,
  spawn,
  toolResults,
} from "./support/scripted_agents.ts";

const setup = (
  agents: AgentSpec[],
  script: Parameters<typeof agentEnv>[1],
  files: Record<string, string> = {},
  config: Record<string, unknown> = {},
) => agentEnv(agents, script, { files, config, prefix: "coyote-supervisor-" });

function toolNames(req: RecordedRequest): string[] {
  return ((req.body as Json).tools ?? []).map((t: Json) => t.function.name);
}

Deno.test("supervisor: three explore children run at the same time, are collected, and their events nest", async () => {
  // Each explore reply waits until all three explore requests are in: run one after the
  // other they would never all arrive, and the answers would say NOT-CONCURRENT.
  let arrived = 0;
  let allIn!: () => void;
  const barrier = new Promise<void>((r) => (allIn = r));
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true, spawnable_agents: ["explore"], tools: ["fs_read"] }),
    agent("EXPLORE", { tools: ["fs_read", "fs_grep"] }),
  ], async (req) => {
    if (agentOf(req) === "EXPLORE") {
      if (++arrived === 3) allIn();
      const together = await Promise.race([
        barrier.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 8000)),
      ]);
      const topic = String(messages(req).at(-1).content);
      return { text: `${together ? "" : "NOT-CONCURRENT "}${topic}: found it. EXPLORE_COMPLETE` };
    }
    switch (nth(e.requests, req)) {
      case 1:
        return {
          tool_calls: [
            spawn("explore", "angle A"),
            spawn("explore", "angle B"),
            spawn("explore", "angle C"),
          ],
        };
      case 2:
        return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      default:
        return { text: "X works like this." };
    }
  });
  try {
    const lead = await e.open("lead");
    const { events, ended } = await e.run(lead, "how does X work?");
    assert.equal(ended.stopReason, "end_turn");
    assert.equal(ended.text, "X works like this.");
    // Spawn answered ids at once; the three children ran side by side.
    const explore = e.requests.filter((r) => agentOf(r) === "EXPLORE");
    assert.equal(explore.length, 3);
    const leadReqs = e.requests.filter((r) => agentOf(r) === "LEAD");
    const spawned = toolResults(leadReqs[1]).map((t) => JSON.parse(t).id);
    assert.equal(spawned.length, 3);
    for (const id of spawned) assert.match(id, /^explore-[0-9a-f]{8}$/);
    const collected = toolResults(leadReqs[2]).at(-1)!;
    for (const id of spawned) assert.match(collected, new RegExp(`${id} completed:`));
    assert.doesNotMatch(collected, /NOT-CONCURRENT/);
    for (const t of ["angle A", "angle B", "angle C"]) assert.match(collected, new RegExp(t));
    // Nested events: each child's envelopes carry its own session, agent id and parent_id.
    const kids = new Map<string, EventEnvelope[]>();
    for (const ev of events) {
      if (ev.session_id === lead.id) {
        assert.equal(ev.agent_id, lead.agentId);
        assert.ok(!ev.parent_id);
        continue;
      }
      assert.equal(ev.parent_id, lead.agentId);
      assert.equal(ev.agent, "explore");
      kids.set(ev.agent_id, [...(kids.get(ev.agent_id) ?? []), ev]);
    }
    assert.deepEqual([...kids.keys()].sort(), [...spawned].sort());
    for (const [, evs] of kids) {
      assert.deepEqual(evs.map((x) => x.seq), evs.map((_, i) => i + 1), "gapless seq per child");
      assert.equal(evs[0].update.sessionUpdate, "turn_started");
      assert.equal(evs.at(-1)!.update.sessionUpdate, "turn_ended");
      assert.ok(evs.every((x) => x.parent_tool_call_id));
    }
    // Usage rolls up: the lead's three requests plus one per child; agents are listed.
    assert.equal(ended.usage.requests, 3 + 3);
    assert.equal(ended.agents?.length, 3);
    assert.ok(ended.agents!.every((a) => a.status === "completed" && a.parent_id === lead.agentId));
    // Each child has its own transcript, linked to the parent.
    const stored = await listSessions(e.ws.app);
    const children = stored.filter((s) => s.parentId === lead.id);
    assert.equal(children.length, 3);
    assert.deepEqual(children.map((c) => c.agentId).sort(), [...spawned].sort());
  } finally {
    await e.close();
  }
});

Deno.test("supervisor: whitelist, depth and unknown agents are refused with the reason; concurrency queues", async () => {
  let inFlight = 0, maxInFlight = 0;
  const e = await setup([
    agent("LEAD", {
      can_spawn_agents: true,
      spawnable_agents: ["worker", "nested"],
      max_concurrent_agents: 1,
      max_agent_depth: 1,
    }),
    agent("WORKER", { tools: [] }),
    agent("NESTED", { can_spawn_agents: true }),
    agent("ORACLE"),
  ], async (req) => {
    const who = agentOf(req);
    if (who === "WORKER") {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 30));
      inFlight--;
      return { text: `done ${messages(req).at(-1).content}` };
    }
    if (who === "NESTED") {
      if (nth(e.requests, req) === 1) return { tool_calls: [spawn("worker", "deeper")] };
      return { text: `nested saw: ${toolResults(req).at(-1)}` };
    }
    switch (nth(e.requests, req)) {
      case 1:
        return {
          tool_calls: [
            spawn("oracle", "not allowed"),
            spawn("ghost", "unknown"),
            spawn("worker", "w1"),
            spawn("worker", "w2"),
            spawn("worker", "w3"),
            spawn("nested", "try to go deeper"),
          ],
        };
      case 2:
        return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      default:
        return { text: "ok" };
    }
  });
  try {
    const lead = await e.open("lead");
    const { ended } = await e.run(lead, "go");
    const leadReqs = e.requests.filter((r) => agentOf(r) === "LEAD");
    const results = toolResults(leadReqs[1]);
    assert.match(
      results[0],
      /^error: agent lead may not spawn "oracle"; spawnable_agents: worker, nested/,
    );
    assert.match(results[1], /^error: .*may not spawn "ghost"/);
    const collected = toolResults(leadReqs[2]).at(-1)!;
    // The nested child is at depth 1 = max_agent_depth: its own spawn is refused with the reason.
    assert.match(collected, /nested saw: error: max_agent_depth 1 reached/);
    // max_concurrent_agents 1: never two children of the lead running at once, all three ran.
    assert.equal(maxInFlight, 1);
    for (const w of ["w1", "w2", "w3"]) assert.match(collected, new RegExp(`done ${w}`));
    assert.equal(ended.agents?.length, 4);
    assert.ok(ended.agents!.every((a) => a.status === "completed"));
  } finally {
    await e.close();
  }
});

Deno.test("supervisor: a workspace agent file cannot widen a child's tools or policy beyond its parent's", async () => {
  // A workspace agent file that asks for every tool: as a child it must not get more than
  // the lead that spawns it.
  const greedy = "---\nname: greedy\ndescription: wants everything\ntools: ['*']\n---\n" +
    "GREEDY agent from a workspace file.\n";
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true, tools: ["fs_read"] }),
  ], (req) => {
    if (agentOf(req) === "GREEDY") {
      if (nth(e.requests, req) === 1) {
        return {
          tool_calls: [
            { name: "execute_command", arguments: { command: "echo widened" } },
            { name: "fs_read", arguments: { path: "secret.txt" } },
          ],
        };
      }
      return { text: toolResults(req).join(" | ") };
    }
    if (nth(e.requests, req) === 1) return { tool_calls: [spawn("greedy", "take everything")] };
    if (nth(e.requests, req) === 2) {
      return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
    }
    return { text: "ok" };
  }, { ".coyote/agents/greedy.md": greedy });
  try {
    assert.equal(e.ws.agents.get("greedy")?.tools?.[0], "*", "the file is loaded");
    await Deno.writeTextFile(`${e.cwd}/secret.txt`, "SECRET");
    const lead = await e.open("lead");
    // The lead's session policy denies reading the file; the child inherits that rule.
    lead.addRule("deny", "Read(secret.txt)");
    await e.run(lead, "go");
    const leadTools = toolNames(e.requests.find((r) => agentOf(r) === "LEAD")!);
    const greedyTools = toolNames(e.requests.find((r) => agentOf(r) === "GREEDY")!);
    assert.ok(!leadTools.includes("execute_command"));
    assert.ok(greedyTools.every((t) => leadTools.includes(t)), `${greedyTools} ⊄ ${leadTools}`);
    assert.ok(!greedyTools.includes("execute_command"));
    const answer = toolResults(e.requests.filter((r) => agentOf(r) === "LEAD")[2]).at(-1)!;
    assert.match(answer, /unknown tool "execute_command"/);
    assert.match(answer, /denied by policy/);
    assert.doesNotMatch(answer, /SECRET|widened/);
  } finally {
    await e.close();
  }
});

function alive(marker: string): boolean {
  const out = new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").some((l) =>
    l.includes(marker) && !l.includes("ps -eo")
  );
}

Deno.test("supervisor: cancelling the root turn cancels the whole tree and kills its processes", async () => {
  const marker = `${(Math.random() * 1000 + 100).toFixed(3)}`;
  let started!: () => void;
  const sleeping = new Promise<void>((r) => (started = r));
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true }),
    agent("MIDDLE", { can_spawn_agents: true }),
    agent("LEAF", { tools: ["execute_command"] }),
  ], (req) => {
    const who = agentOf(req);
    if (who === "LEAF") {
      setTimeout(started, 300);
      return {
        tool_calls: [{ name: "execute_command", arguments: { command: `sleep ${marker}` } }],
      };
    }
    if (who === "MIDDLE") {
      if (nth(e.requests, req) === 1) return { tool_calls: [spawn("leaf", "sleep")] };
      return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
    }
    if (nth(e.requests, req) === 1) return { tool_calls: [spawn("middle", "delegate")] };
    return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
  });
  try {
    const lead = await e.open("lead", () => Promise.resolve("allow_once"));
    lead.addRule("allow", "Execute(sleep *)");
    const ctrl = new AbortController();
    const running = e.run(lead, "go", ctrl.signal);
    await sleeping;
    // The command starts once the sandbox is ready (its home scan may still run under load).
    for (let i = 0; i < 100 && !alive(`sleep ${marker}`); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(alive(`sleep ${marker}`), "the leaf's command runs");
    ctrl.abort();
    const { ended, events } = await running;
    assert.equal(ended.stopReason, "cancelled");
    assert.equal(alive(`sleep ${marker}`), false, "no process left");
    const ends = events.filter((x) => x.update.sessionUpdate === "turn_ended");
    assert.equal(ends.length, 3);
    for (const x of ends) assert.equal((x.update as TurnEndedEvent).stopReason, "cancelled");
    assert.equal(ended.agents?.[0].status, "cancelled");
  } finally {
    await e.close();
  }
});

Deno.test("supervisor: agent__cancel cascades to grandchildren; uncollected children get reminders, then are cancelled", async () => {
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true }),
    agent("MIDDLE", { can_spawn_agents: true }),
    agent("SLOW"),
  ], async (req) => {
    const who = agentOf(req);
    if (who === "SLOW") return { hang: true };
    if (who === "MIDDLE") {
      if (nth(e.requests, req) === 1) return { tool_calls: [spawn("slow", "forever")] };
      return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
    }
    const n = nth(e.requests, req);
    if (n === 1) return { tool_calls: [spawn("middle", "m"), spawn("slow", "s")] };
    if (n === 2) {
      // Cancel the middle agent (and so its own slow child) once it is waiting.
      while (e.requests.filter((r) => agentOf(r) === "SLOW").length < 2) {
        await new Promise((r) => setTimeout(r, 10));
      }
      const id = JSON.parse(toolResults(req)[0]).id;
      return { tool_calls: [{ name: "agent__cancel", arguments: { id } }] };
    }
    // Answer without collecting the slow child: reminded three times, then it is cancelled.
    return { text: `answer ${n}` };
  });
  try {
    const lead = await e.open("lead");
    const { ended, events } = await e.run(lead, "go");
    const leadReqs = e.requests.filter((r) => agentOf(r) === "LEAD");
    assert.match(toolResults(leadReqs[2]).at(-1)!, /^middle-[0-9a-f]{8}: cancelled$/);
    const reminders = leadReqs.map((r) => messages(r).at(-1)).filter((m) =>
      m.role === "user" && /system-reminder.*not been collected/s.test(m.content)
    );
    assert.equal(reminders.length, 3);
    assert.equal(ended.text, "answer 6");
    const byAgent = new Map(ended.agents!.map((a) => [a.agent, a.status]));
    assert.equal(byAgent.get("middle"), "cancelled");
    assert.equal(byAgent.get("slow"), "cancelled");
    // The middle agent's own child ended too (cascade): every child turn ended.
    const childEnds = events.filter((x) =>
      x.session_id !== lead.id && x.update.sessionUpdate === "turn_ended"
    );
    assert.equal(childEnds.length, 3);
  } finally {
    await e.close();
  }
});

Deno.test("supervisor: children's asks bubble up attributed to their own calls; unanswered, they proceed on their own judgement", async () => {
  const asked: PermissionRequest[] = [];
  const e = await setup(
    [
      agent("LEAD", { can_spawn_agents: true }),
      agent("WORKER", { escalation_timeout: 0.3, tools: ["execute_command"] }),
    ],
    (req) => {
      if (agentOf(req) === "WORKER") {
        const x = String(messages(req)[1].content).slice(-1); // "deploy a" → "a"
        if (nth(e.requests, req) === 1) {
          return {
            tool_calls: [{
              id: `exec-${x}`,
              name: "execute_command",
              arguments: { command: `make deploy-${x}` },
            }],
          };
        }
        return { text: `worker: ${toolResults(req).at(-1)}` };
      }
      const n = nth(e.requests, req);
      if (n === 1) {
        return {
          tool_calls: [
            { id: "spawn-a", ...spawn("worker", "deploy a") },
            { id: "spawn-b", ...spawn("worker", "deploy b") },
          ],
        };
      }
      if (n === 2) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      return { text: "done" };
    },
    {},
    { permissions: { ask: ["Execute(make *)"] } },
  );
  try {
    // The root frontend never answers (a user away from the keyboard); both asks wait at once.
    let waiting = 0, maxWaiting = 0;
    const lead = await e.open("lead", (req, signal) => {
      asked.push(req);
      maxWaiting = Math.max(maxWaiting, ++waiting);
      return new Promise((r) =>
        signal.addEventListener("abort", () => {
          waiting--;
          r("cancelled");
        })
      );
    });
    await e.run(lead, "go");
    assert.equal(asked.length, 2);
    assert.equal(maxWaiting, 2, "the two children asked in parallel");
    for (const x of ["a", "b"]) {
      const q = asked.find((r) =>
        (r.rawInput as { command: string }).command === `make deploy-${x}`
      )!;
      assert.ok(q, `the ask of ${x}`);
      // Attributed to the child's own call, its own session, under its own spawn call.
      assert.equal(q.toolCallId, `exec-${x}`);
      assert.equal(q.scope?.toolCallId, `exec-${x}`);
      assert.equal(q.scope?.rootToolCallId, `spawn-${x}`);
      assert.equal(q.scope?.depth, 1);
      assert.match(q.scope!.agentId, /^worker-[0-9a-f]{8}$/);
      assert.equal(q.scope!.parentId, lead.agentId);
      assert.equal(q.sessionId, q.scope!.sessionId);
    }
    assert.notEqual(asked[0].scope!.agentId, asked[1].scope!.agentId);
    assert.notEqual(asked[0].sessionId, asked[1].sessionId);
    const collected = toolResults(e.requests.filter((r) => agentOf(r) === "LEAD")[2]).at(-1)!;
    assert.equal(collected.match(/nobody answered the permission request in time/g)?.length, 2);
    assert.match(collected, /Proceed on your own judgement/);
  } finally {
    await e.close();
  }
});

Deno.test("supervisor: a child's user__ question reaches the root frontend naming the child; unanswered, it goes on alone", async () => {
  const asked: { scope: CallScope; question: string }[] = [];
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true }),
    agent("WORKER", { escalation_timeout: 0.2, tools: ["user__confirm"] }),
  ], (req) => {
    if (agentOf(req) === "WORKER") {
      if (nth(e.requests, req) === 1) {
        return { tool_calls: [{ name: "user__confirm", arguments: { question: "Ship it?" } }] };
      }
      return { text: `worker: ${toolResults(req).at(-1)}` };
    }
    const n = nth(e.requests, req);
    if (n === 1) return { tool_calls: [spawn("worker", "ask the user")] };
    if (n === 2) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
    return { text: "done" };
  });
  try {
    // A frontend that shows the question and never gets an answer.
    const host: HostFactory = (scope) => ({
      askUser: (q, signal) => {
        asked.push({ scope, question: q.question });
        return new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(new Error("withdrawn")))
        );
      },
    });
    const lead = await e.open("lead", undefined, host);
    await e.run(lead, "go");
    assert.equal(asked.length, 1);
    assert.equal(asked[0].question, "Ship it?");
    assert.equal(asked[0].scope.depth, 1);
    assert.match(asked[0].scope.agentId, /^worker-[0-9a-f]{8}$/);
    assert.equal(asked[0].scope.toolName, "user__confirm");
    const collected = toolResults(e.requests.filter((r) => agentOf(r) === "LEAD")[2]).at(-1)!;
    assert.match(collected, /needs_human/);
    assert.match(collected, /nobody answered within 200 ms; proceed on your own judgement/);
  } finally {
    await e.close();
  }
});

Deno.test("auto_continue re-prompts while the todo list has open items, up to max_auto_continues", async () => {
  const todo = (status: string) => ({
    name: "todo__write",
    arguments: { todos: [{ content: "step one", status }] },
  });
  const e = await setup([
    agent("PLANNER", { auto_continue: true, max_auto_continues: 2, tools: ["todo__write"] }),
    agent("STUBBORN", { auto_continue: true, max_auto_continues: 2, tools: ["todo__write"] }),
  ], (req) => {
    const n = nth(e.requests, req);
    if (agentOf(req) === "PLANNER") {
      if (n === 1) return { tool_calls: [todo("in_progress")] };
      if (n === 2) return { text: "paused" };
      if (n === 3) return { tool_calls: [todo("completed")] };
      return { text: "all done" };
    }
    if (n === 1) return { tool_calls: [todo("pending")] };
    return { text: `stopping ${n}` };
  });
  try {
    const planner = await e.open("planner");
    const a = await e.run(planner, "work");
    assert.equal(a.ended.text, "all done");
    assert.equal(a.ended.usage.requests, 4);
    const stubborn = await e.open("stubborn");
    const b = await e.run(stubborn, "work");
    // Two continuations, then the turn ends although the item is still open.
    assert.equal(b.ended.usage.requests, 4);
    assert.equal(b.ended.text, "stopping 4");
    const last = e.requests.at(-1)!;
    assert.match(messages(last).at(-1).content, /open item.*step one.*2 of 2/s);
  } finally {
    await e.close();
  }
});

Deno.test("auto_continue is bounded by tokens too (max_auto_continue_tokens); the stream says why it stopped", async () => {
  const todo = {
    name: "todo__write",
    arguments: { todos: [{ content: "step one", status: "pending" }] },
  };
  const e = await setup([
    agent("SPENDER", {
      auto_continue: true,
      max_auto_continues: 10,
      max_auto_continue_tokens: 2000,
      tools: ["todo__write"],
    }),
    agent("COUNTER", { auto_continue: true, max_auto_continues: 1, tools: ["todo__write"] }),
  ], (req) => {
    const n = nth(e.requests, req);
    if (n === 1) return { tool_calls: [todo] };
    return { text: `stopping ${n}` };
  });
  const stopped = (events: { update: Json }[]) =>
    events.map((x) => x.update._meta?.coyote).filter((m) => m?.event === "auto_continue_stopped");
  try {
    const spender = await e.open("spender");
    const a = await e.run(spender, "work");
    // The turn's tokens passed 2000 after two continuations, long before the 10 requests allow.
    assert.equal(a.ended.usage.requests, 4);
    const [s] = stopped(a.events);
    assert.equal(s.reason, "max_auto_continue_tokens");
    assert.equal(s.limit, 2000);
    assert.ok(s.tokens >= 2000);
    assert.equal(stopped(a.events).length, 1);
    const counter = await e.open("counter");
    const b = await e.run(counter, "work");
    assert.equal(b.ended.usage.requests, 3);
    assert.deepEqual(
      stopped(b.events).map((m) => [m.reason, m.limit, m.continues]),
      [["max_auto_continues", 1, 1]],
    );
  } finally {
    await e.close();
  }
});

Deno.test("agent__send: refused while the child runs and for an unknown id; in a later turn the ended child continues in its same conversation", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let childId = "";
  const seen: string[] = [];
  const e = await setup([
    agent("LEAD", { can_spawn_agents: true, spawnable_agents: ["worker"] }),
    agent("WORKER"),
  ], async (req) => {
    const ms = messages(req);
    const users = ms.filter((m: Json) => m.role === "user");
    if (agentOf(req) === "WORKER") {
      if (users.length === 1) await released;
      return { text: `worker saw ${users.length} user message(s)` };
    }
    const lastUser = ms.lastIndexOf(users.at(-1));
    const step = ms.slice(lastUser).filter((m: Json) => m.role === "assistant").length;
    const last = String(ms.at(-1).content);
    if (users.length === 1) {
      if (step === 0) return { tool_calls: [spawn("worker", "task one")] };
      if (step === 1) {
        childId = JSON.parse(last).id;
        return {
          tool_calls: [{
            name: "agent__send",
            arguments: { agent_id: childId, message: "too early" },
          }],
        };
      }
      if (step === 2) {
        seen.push(last);
        release();
        return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      }
      if (step === 3) {
        return {
          tool_calls: [{
            name: "agent__send",
            arguments: { agent_id: "worker-nope", message: "x" },
          }],
        };
      }
      seen.push(last);
      return { text: "turn one done" };
    }
    if (step === 0) {
      return {
        tool_calls: [{
          name: "agent__send",
          arguments: { agent_id: childId, message: "follow-up" },
        }],
      };
    }
    if (step === 1) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
    return { text: `LEAD got: ${last}` };
  });
  try {
    const lead = await e.open("lead");
    const a = await e.run(lead, "go");
    assert.equal(a.ended.text, "turn one done");
    assert.match(seen[0], new RegExp(`${childId} is still running: collect its result`));
    assert.match(
      seen[1],
      new RegExp(`no ended sub-agent with id "worker-nope"; resumable: ${childId}`),
    );
    const b = await e.run(lead, "again");
    assert.match(
      b.ended.text,
      new RegExp(`^LEAD got: ${childId} completed:\\nworker saw 2 user message\\(s\\)`),
    );
    // The same child session: its follow-up request carries its first task and answer.
    const last = e.requests.filter((r) => agentOf(r) === "WORKER").at(-1)!;
    const contents = messages(last).map((m: Json) => m.content);
    assert.deepEqual(contents.slice(1), ["task one", "worker saw 1 user message(s)", "follow-up"]);
    const kids = b.events.filter((x) => x.parent_id && x.agent_id === childId);
    assert.ok(kids.length > 0, "the follow-up's events carry the child's agent_id");
    assert.equal(b.ended.agents?.[0]?.agent_id, childId);
    // …and name the agent__send call that resumed it (not the spawn of the earlier turn), so a
    // frontend shows the run on that call.
    const callOf = (evs: EventEnvelope[], title: RegExp) =>
      evs.find((x) =>
        !x.parent_id && x.update.sessionUpdate === "tool_call" && title.test(x.update.title)
      )?.update as { toolCallId: string } | undefined;
    const spawnCall = callOf(a.events, /^Spawn worker/)!.toolCallId;
    const sendCall = callOf(b.events, new RegExp(`^Send to ${childId}: follow-up`))!.toolCallId;
    assert.ok(
      a.events.filter((x) => x.agent_id === childId).every((x) =>
        x.parent_tool_call_id === spawnCall
      ),
    );
    assert.deepEqual([...new Set(kids.map((x) => x.parent_tool_call_id))], [sendCall]);
  } finally {
    await e.close();
  }
});
