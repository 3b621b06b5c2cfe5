/**
 * Journeys: the seeds' flows driven from the DEFAULT agent (sisyphus), as a user runs them —
 * `coyote --headless --output-format stream-json` as a real subprocess on a real git repository,
 * against the scripted model server answering per agent and per graph node (matched on the
 * node's instructions; the scripts are tests/support/journeys.ts, shared with the REPL and ACP
 * journeys: tests/journeys_repl_test.ts, tests/journeys_acp_test.ts; the gates' own journeys:
 * tests/journeys_gates_test.ts). This is the place where a
 * cross-module flow gets its test: each agent also works alone (tests/adversary_test.ts,
 * tests/coder_test.ts), but these flows cross the supervisor, the session's tool ceiling and the
 * graph engine (issue 17: a spawned graph's `submit_result` was refused by its parent's tool
 * ceiling).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";
import {
  adversaryNode,
  call,
  coderNode,
  firstUser,
  gatePairs,
  graphCoder,
  inOrder,
  type Json,
  LLM_CODER,
  llmCoder,
  messages,
  met,
  NOTES,
  PLAN_V2,
  repo,
  resendLoop,
  SEED_GATES,
  SEED_PROMPT,
  seedFlow,
  stepRunnerNode,
  submit,
  system,
} from "./support/journeys.ts";
import {
  divergesGreet,
  gateEvents,
  halfThenMet,
  journey,
  noRefusedSubmit,
  sisyphus,
} from "./support/journey_headless.ts";

Deno.test("journey (seeds): explore fan-out → plan → REJECT → revised plan → OKAY → coder (check fails, then passes) → adversary DIVERGES → the same coder resumed with the complaints → CONFORMS → done", async () => {
  let flow!: ReturnType<typeof seedFlow>;
  const { result, lines, requests, file, files } = await journey(
    (dir) => (flow = seedFlow(dir)).script,
    SEED_PROMPT,
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.deepEqual(files, { "PLAN.md": PLAN_V2, "NOTES.md": NOTES });
  assert.match(String(result.text), /^DONE: [^]*ADVERSARIAL_REVIEW: CONFORMS/);
  assert.deepEqual(result.gates, { complete: true, open: [], overrides: [] });
  const gates = gateEvents(lines);
  assert.ok(gates.every((g) => g.agent === "sisyphus"), "the gates are the coordinator's events");
  assert.ok(inOrder(gatePairs(gates), SEED_GATES), JSON.stringify(gatePairs(gates)));
  assert.ok(!gates.some((g) => g.decision === "nudge"));
  // The reviewers each change calls for, run in the gate's order: a spec (PLAN.md), then also
  // broad scope once NOTES.md makes 5 changed files.
  assert.equal(flow.facts.reviewers, "adversary;code-reviewer,adversary");
  const rev = gates.filter((g) => g.gate === "reviewers" && g.decision === "require");
  assert.deepEqual(rev.map((g) => g.reviewers.map((t: Json) => t.reviewer)), [
    ["adversary"],
    ["code-reviewer", "adversary"],
  ]);
  // Explore fan-out: two children from one response, running at once.
  const explore = lines.filter((l: Json) => l.type === "session_update" && l.agent === "explore");
  assert.equal(new Set(explore.map((l: Json) => l.agent_id)).size, 2);
  // The coder's check: attempt 1 failed, attempt 2 passed (validation_loop_iteration events).
  const checks = lines.filter((l: Json) =>
    l.agent === "coder" && l.update?._meta?.coyote?.event === "validation_loop_iteration"
  ).map((l: Json) => [l.update._meta.coyote.attempt, l.update._meta.coyote.passed]);
  assert.deepEqual(checks, [[1, false], [2, true], [1, true]]);
  // One coder child, resumed: the same agent id and session, the complaints as its follow-up.
  const coder = lines.filter((l: Json) => l.type === "session_update" && l.agent === "coder");
  assert.deepEqual([...new Set(coder.map((l: Json) => l.agent_id))], [flow.facts.coder]);
  assert.equal(new Set(coder.map((l: Json) => l.session_id)).size, 1);
  assert.match(flow.facts.complaints, /^Complaints:\n1\. Acceptance criterion .* NOTES\.md/);
  const plans = requests.filter((r) => system(r).includes("You plan a code change"));
  assert.equal(plans.length, 2);
  assert.ok(firstUser(plans[1]).endsWith(flow.facts.complaints), "the complaints verbatim");
  // No coder ran before the OKAY.
  const coderAt = requests.findIndex((r) => system(r).includes("You plan a code change"));
  const oracleAt = requests.flatMap((r, i) => system(r).startsWith("You are oracle") ? [i] : []);
  assert.equal(oracleAt.length, 2);
  assert.ok(coderAt > oracleAt[1], "the coder started only after the OKAY");
});

Deno.test("journey: sisyphus → agent__spawn adversary → a computed CONFORMS reaches the parent", async () => {
  const { result, lines, requests } = await journey(
    () => {
      const s = sisyphus("adversary", "Review the change: it must add greet().");
      return (r) => adversaryNode(r, met("src.js", 2, { file: "src_test.js", line: 2 })) ?? s(r);
    },
    "review my change",
  );
  noRefusedSubmit(lines);
  const text = String(result.text).replace(/\d+\.\d s\)/g, "N s)");
  assert.match(
    text,
    /FINAL:\n[^]*ADVERSARIAL_REVIEW: CONFORMS\nCriteria: 1\/1 met \(all with tests\)\.\n\nVerification runs:\n- PASS `grep -q greet src\.js` \(exit 0, N s\)/,
  );
  // The adversary ran as sisyphus's child: its events carry the parent's agent id.
  const init = lines[0] as Json;
  const child = lines.filter((l: Json) => l.type === "session_update" && l.agent === "adversary");
  assert.ok(child.length > 0);
  assert.ok(child.every((l: Json) => l.parent_id === init.agent_id));
  assert.ok(requests.some((r) => system(r).includes("You verify ONE acceptance criterion")));
});

Deno.test("journey: sisyphus → agent__spawn adversary → a computed DIVERGES (not a pipeline fault) reaches the parent", async () => {
  const { result, lines } = await journey(divergesGreet, "review my change");
  noRefusedSubmit(lines);
  const text = String(result.text);
  assert.match(
    text,
    /FINAL:\n[^]*ADVERSARIAL_REVIEW: DIVERGES\nCriteria: 0\/1 met, 0 partial, 1 unmet\/diverged\.\nComplaints:\n1\. Acceptance criterion "adds greet\(\)" — Unmet — greet\(\) returns the wrong word — return 'hello'\n/,
  );
  assert.doesNotMatch(text, /PIPELINE-FAULT/);
});

Deno.test("journey: sisyphus → agent__spawn coder → CODER_COMPLETE with its structured plan and review", async () => {
  const { result, lines, file } = await journey(() => {
    const s = sisyphus("coder", "make src.txt say fixed");
    return (r) => coderNode(r) ?? s(r);
  }, "fix src.txt");
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(
    String(result.text),
    /FINAL:\n[^]*CODER_COMPLETE\nmake src\.txt say fixed\nVerification: \["attempt 1: `make test` exit 0"\]\nReview: clean/,
  );
});

const PLAN = {
  "plans/plan.md": "# plan\n",
  "plans/steps/01-fix.md":
    "---\nstep: 1\ntitle: Fix src\ndepends_on: []\nstatus: pending\n---\n## Objective\nmake src.txt say fixed\n\n## Test commands\n- grep -q fixed src.txt\n",
};

Deno.test("journey: step-runner → its coder child (agent node) → STEP_COMPLETE with the handoff written", async () => {
  const { result, lines, file } = await journey(
    () => (r) =>
      stepRunnerNode(r) ?? coderNode(r) ??
        (() => {
          throw new Error(`unexpected request: ${system(r).slice(0, 80)}`);
        })(),
    "next step",
    { args: ["-a", "step-runner"], files: PLAN },
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(String(result.text), /^STEP_COMPLETE\n/);
  assert.ok(lines.some((l: Json) => l.type === "session_update" && l.agent === "coder"));
});

Deno.test("journey: coder → adversary DIVERGES → agent__send the complaints to the same coder → adversary CONFORMS → done", async () => {
  let loop!: ReturnType<typeof resendLoop>;
  const { result, lines, requests, file, transcripts } = await journey(
    () => {
      const adv = halfThenMet();
      loop = resendLoop();
      return (r) => adv(r) ?? llmCoder(r) ?? loop.script(r);
    },
    "make src.txt say fixed",
    { userFiles: { "agents/coder.md": LLM_CODER } },
  );
  const { coder, complaints } = loop.facts;
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(
    complaints,
    /^Complaints:\n1\. Acceptance criterion .* — Unmet — src\.txt says half/,
  );
  assert.match(String(result.text), /FINAL:\n[^]*ADVERSARIAL_REVIEW: CONFORMS/);
  // The coder's follow-up request continues its conversation: its first task, its own earlier
  // calls and answer, then the complaints verbatim.
  const coderReqs = requests.filter((r) => system(r).startsWith("CODERX"));
  const followUp = coderReqs.find((r) =>
    messages(r).filter((m) => m.role === "user").length === 2
  )!;
  assert.ok(followUp, "the coder was sent a follow-up");
  const ms = messages(followUp);
  assert.equal(ms.filter((m) => m.role === "user")[0].content, "make src.txt say fixed");
  assert.ok(ms.some((m) => m.role === "assistant" && m.content === "wrote half"));
  assert.ok(
    ms.some((m) => m.tool_calls?.some((c: Json) => c.function?.name === "fs_write")),
    "its earlier fs_write is in its context",
  );
  assert.equal(ms.at(-1)!.role, "user");
  assert.equal(ms.at(-1)!.content, complaints);
  // One coder child: both of its runs' events carry the same agent_id (the one spawn returned).
  const coderLines = lines.filter((l: Json) => l.type === "session_update" && l.agent === "coder");
  assert.deepEqual([...new Set(coderLines.map((l: Json) => l.agent_id))], [coder]);
  const coderSessions = new Set(coderLines.map((l: Json) => l.session_id));
  assert.equal(coderSessions.size, 1, "the follow-up ran in the same child session");
  // Its one transcript records both tasks: the first prompt and the complaints.
  const t = transcripts.find(([id]) => coderSessions.has(id))![1];
  assert.ok(t.includes(JSON.stringify("make src.txt say fixed")));
  assert.ok(t.includes(JSON.stringify(complaints)), "the follow-up is in its transcript");
});

Deno.test("journey (ACP): sisyphus leaves a todo item open → the turn ends without re-prompting itself (auto_continue is off; the client drives turns)", async () => {
  const { acpTestEnv, startAcp, finishAcp } = await import("./support/acp_harness.ts");
  const todo = {
    tool_calls: [{
      name: "todo__write",
      arguments: { todos: [{ content: "second", status: "in_progress" }] },
    }],
  };
  // Without the ACP rule, the next requests would be auto-continuations (a third reply).
  const e = await acpTestEnv([todo, { text: "paused" }, { text: "continued by itself" }]);
  try {
    const h = await startAcp({ env: e.env, args: ["--no-sandbox"] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "plan it" }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.equal(e.requests(), 2, "no automatic continuation in ACP");
      // The default agent it ran is sisyphus (whose definition has auto_continue: true).
      assert.match(e.bodies()[0], /Coordinator|sisyphus/i);
    } finally {
      await finishAcp(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("journey: headless adversary on --agent-variable project_dir runs its declared `make test` under the sandbox's auto-allow, like any command", async () => {
  const script = (r: RecordedRequest): ScriptedReply => {
    const sys = system(r);
    if (sys.includes("You extract acceptance criteria")) {
      return submit({
        criteria: [{ id: "C1", text: "adds greet()" }],
        verification_commands: ["make test"],
      });
    }
    return adversaryNode(r, met("src.js", 2, { file: "src_test.js", line: 2 }))!;
  };
  const server = await startModelServer({ script });
  const env = await makeCoyoteEnv();
  const parent = await Deno.makeTempDir({ prefix: "coyote-journey-" });
  try {
    const dir = await repo(parent);
    await Deno.writeTextFile(join(dir, "Makefile"), "test:\n\tgrep -q greet src.js\n");
    const r = await runCoyote(
      [
        "-a",
        "adversary",
        "--agent-variable",
        "project_dir",
        dir,
        "--headless",
        "--output-format",
        "json",
        "Review the change.",
      ],
      { cwd: parent, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    const text = String(JSON.parse(r.stdout).text);
    assert.match(text, /^ADVERSARIAL_REVIEW: CONFORMS\n/);
    assert.match(text, /- PASS `make test` \(exit 0, /);
    assert.doesNotMatch(text, /default policy asks/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("journey: sisyphus → graph coder → adversary DIVERGES → agent__send the complaints → the same coder's graph sees its earlier change, result and the complaints", async () => {
  let loop!: ReturnType<typeof resendLoop>;
  const { result, lines, requests, file, transcripts } = await journey(
    () => {
      const adv = halfThenMet();
      loop = resendLoop();
      return (r) => adv(r) ?? graphCoder(r) ?? loop.script(r);
    },
    "make src.txt say fixed",
    // The coder's verification passes either way (the adversary is the one that objects).
    { files: { Makefile: "test:\n\ttrue\n" } },
  );
  const { coder, complaints } = loop.facts;
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(
    complaints,
    /^Complaints:\n1\. Acceptance criterion .* — Unmet — src\.txt says half/,
  );
  assert.match(String(result.text), /FINAL:\n[^]*ADVERSARIAL_REVIEW: CONFORMS/);
  // The coder graph's first llm node, on the follow-up: its earlier request, the file it changed,
  // its earlier result, then the complaints verbatim as this run's request.
  const plans = requests.filter((r) => system(r).includes("You plan a code change"));
  assert.equal(plans.length, 2, "the coder's graph ran twice");
  assert.doesNotMatch(String(messages(plans[0]).at(-1)!.content), /follow-up/);
  const prompt = firstUser(plans[1]);
  assert.match(prompt, /^This is a follow-up: you already ran 1 time in this session\./);
  assert.match(prompt, /## Earlier run 1\nRequest:\nmake src\.txt say fixed\n/);
  assert.match(prompt, /Files you changed: src\.txt\n/);
  assert.match(prompt, /Your result:\nCODER_COMPLETE\nmake src\.txt say fixed\n/);
  assert.ok(prompt.endsWith(complaints), "the complaints verbatim end the prompt");
  // Its implement node sees the same context.
  const impl = requests.filter((r) => system(r).includes("You implement a planned change"));
  assert.ok(impl.some((r) => firstUser(r).includes("Files you changed: src.txt")));
  // One coder child, one session, one transcript with both tasks.
  const coderLines = lines.filter((l: Json) => l.type === "session_update" && l.agent === "coder");
  assert.deepEqual([...new Set(coderLines.map((l: Json) => l.agent_id))], [coder]);
  const coderSessions = new Set(coderLines.map((l: Json) => l.session_id));
  assert.equal(coderSessions.size, 1, "the follow-up ran in the same child session");
  const t = transcripts.find(([id]) => coderSessions.has(id))![1];
  assert.ok(t.includes(JSON.stringify("make src.txt say fixed")));
  assert.ok(t.includes(JSON.stringify(complaints)), "the follow-up is in its transcript");
});

Deno.test("journey: sisyphus → two built-in coders at once → the second works in its own worktree (graph scripts and checks there), both CODER_COMPLETE, its patch applied", async () => {
  const collected: string[] = [];
  const { lines, file, transcripts } = await journey(() => (r) => {
    const node = coderNode(r);
    if (node) return node;
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    if (!calls.length) {
      return {
        tool_calls: [1, 2].map(() => ({
          name: "agent__spawn",
          arguments: { agent: "coder", prompt: "make src.txt say fixed" },
        })),
      };
    }
    if (calls.length === 2) return call("agent__collect", {});
    if (calls.length === 3) collected.push(String(ms.at(-1)!.content));
    return { text: "FINAL" };
  }, "fix src.txt twice over");
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.equal(collected[0].match(/CODER_COMPLETE/g)?.length, 2, collected[0]);
  const events = lines.map((l: Json) => l.update?._meta?.coyote)
    .filter((m: Json) => m?.event === "worktree");
  assert.deepEqual(
    events.map((e: Json) => e.status),
    ["created", "applied"],
    JSON.stringify(events),
  );
  // Its session (graph, scripts, `make test`) ran in its worktree: its transcript's cwd.
  const id = events[0].agent_id;
  const sid = lines.find((l: Json) => l.agent_id === id)!.session_id;
  const header = JSON.parse(transcripts.find(([s]) => s === sid)![1].split("\n")[0]);
  assert.equal(header.cwd, events[0].path);
  assert.match(
    collected[0],
    new RegExp(`${id} completed:[^]*its change was applied to the workspace \\(src\\.txt\\)`),
  );
});
