/**
 * More journeys (issue 17, "acceptance also runs flows you do not see"): flows the seeds'
 * journeys (tests/journeys_test.ts, tests/journeys_gates_test.ts) do not drive, each from the
 * default agent (sisyphus) through `coyote --headless --output-format stream-json` as a real
 * subprocess on a real git repository against the scripted model server
 * (tests/support/journey_headless.ts): step-runner's own coder child, follow-ups to a failed, a
 * cancelled and an unknown child, a DIVERGES that survives its follow-up, plan review rejected
 * twice, a child's approval and its `max_turns` in headless, the posture a security reviewer is
 * told.
 * @module
 */
import assert from "node:assert/strict";
import {
  adversaryNode,
  call,
  coderNode,
  coordinatorSteps,
  firstUser,
  graphCoder,
  type Json,
  LLM_CODER,
  llmCoder,
  messages,
  met,
  resendLoop,
  spawnAs,
  stepRunnerNode,
  submit,
  system,
  unmetHalf,
} from "./support/journeys.ts";
import {
  conflictingCoders,
  gateEvents,
  journey,
  noRefusedSubmit,
} from "./support/journey_headless.ts";

const STEP = {
  "plans/plan.md": "# plan\n",
  "plans/steps/01-fix.md":
    "---\nstep: 1\ntitle: Fix src\ndepends_on: []\nstatus: pending\n---\n## Objective\nmake src.txt say fixed\n\n## Test commands\n- grep -q fixed src.txt\n",
};

Deno.test("journey (more): sisyphus → step-runner → its own coder child → STEP_COMPLETE reaches sisyphus, the step file marked, the handoff written", async () => {
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "step-runner", prompt: "next" }),
    call("agent__collect", {}),
  ]);
  const { result, lines, file, files } = await journey(
    () => (r) => stepRunnerNode(r) ?? coderNode(r) ?? steps.script(r),
    "run the next step of the plan",
    { files: STEP, read: ["plans/steps/01-fix.md"] },
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(String(result.text), /^FINAL:\n[^]*STEP_COMPLETE\n/);
  // The tree: sisyphus → step-runner → coder (the coder's parent is the step-runner).
  const init = lines[0] as Json;
  const sr = lines.find((l: Json) => l.agent === "step-runner")!;
  const coder = lines.find((l: Json) => l.agent === "coder")!;
  assert.equal(sr.parent_id, init.agent_id);
  assert.equal(coder.parent_id, sr.agent_id);
  assert.match(String(files["plans/steps/01-fix.md"]), /^status: in-progress$/m);
});

Deno.test("journey (more): a coder that ends CODER_FAILED → agent__send the error to the same coder → CODER_COMPLETE", async () => {
  const steps = coordinatorSteps([
    ...spawnAs("coder", "coder", "make src.txt say fixed"),
    (c) => {
      c.facts.failed = c.lastTool;
      return call("agent__send", {
        agent_id: c.facts.coder,
        message: `You failed:\n${c.lastTool.slice(0, 400)}\nsrc.txt must say fixed.`,
      });
    },
    call("agent__collect", {}),
  ]);
  const { result, lines, requests, file } = await journey(
    () => (r) => graphCoder(r) ?? steps.script(r),
    "make src.txt say fixed",
  );
  noRefusedSubmit(lines);
  assert.match(steps.facts.failed, /CODER_FAILED/);
  assert.match(steps.facts.failed, /Last failure: make test/);
  assert.equal(file, "fixed\n");
  assert.match(String(result.text), /^FINAL:\n[^]*CODER_COMPLETE/);
  const coder = lines.filter((l: Json) => l.type === "session_update" && l.agent === "coder");
  assert.deepEqual([...new Set(coder.map((l: Json) => l.agent_id))], [steps.facts.coder]);
  assert.equal(new Set(coder.map((l: Json) => l.session_id)).size, 1);
  const plans = requests.filter((r) => system(r).includes("You plan a code change"));
  assert.equal(plans.length, 2);
  assert.match(firstUser(plans[1]), /Your result:\nCODER_FAILED/);
  // The failed run calls for no reviewer; the success after it is judged on the whole tree.
  const rev = gateEvents(lines).filter((g) => g.gate === "reviewers");
  assert.deepEqual(rev.slice(0, 1).map((g) => [g.decision, g.agent_id]), [[
    "none",
    steps.facts.coder,
  ]]);
  assert.match(rev[0].reason, /ended CODER_FAILED/);
  assert.equal(rev.length, 2, JSON.stringify(rev));
  assert.match(rev[1].reason, /\d+ changed file\(s\): no reviewer trigger/);
  assert.equal(typeof rev[1].changed_files, "number", "computed from the tree after the success");
});

Deno.test("journey (more): agent__send to a cancelled child and to an unknown id → clear refusals the coordinator reads; the request still ends", async () => {
  const steps = coordinatorSteps([
    ...spawnAs("coder", "coder", "make src.txt say fixed").slice(0, 1),
    (c) => {
      c.facts.coder = JSON.parse(c.last).id;
      return call("agent__cancel", { id: c.facts.coder });
    },
    (c) => call("agent__send", { agent_id: c.facts.coder, message: "go on" }),
    call("agent__send", { agent_id: "coder-nobody", message: "hello" }),
  ]);
  // The cancelled coder may make a request before its cancel lands: it answers slowly.
  const { result, lines } = await journey(
    () => (r) =>
      system(r).startsWith("CODERX")
        ? { text: "still working", delay_ms: 30_000 }
        : steps.script(r),
    "make src.txt say fixed",
    { userFiles: { "agents/coder.md": LLM_CODER } },
  );
  const [, cancelled, toCancelled, toUnknown] = toolResultsOf(lines);
  assert.match(cancelled, /: cancelled$/);
  assert.match(toCancelled, /cannot be resumed: it was cancelled; spawn a new sub-agent instead/);
  assert.match(toUnknown, /no ended sub-agent with id "coder-nobody" \(none to resume\)/);
  assert.equal(result.is_error, false);
  assert.match(String(result.text), /^FINAL:/);
});

/** The coordinator's tool results in the stream, in order (tool_call_update contents). */
function toolResultsOf(lines: Json[]): string[] {
  return lines.filter((l: Json) =>
    l.type === "session_update" && l.agent === "sisyphus" &&
    l.update?.sessionUpdate === "tool_call_update" && l.update.status &&
    l.update.status !== "in_progress" && l.update.content
  ).map((l: Json) =>
    (l.update.content as Json[]).map((c) => c.content?.text ?? c.text ?? "").join("")
  );
}

Deno.test("journey (more): adversary DIVERGES → complaints sent → still DIVERGES → the end is held again → the request ends incomplete (result.gates.complete false)", async () => {
  let loop!: ReturnType<typeof resendLoop>;
  const { result, lines, requests } = await journey(
    () => {
      loop = resendLoop({ sendAfterGate: true });
      return (r) => adversaryNode(r, unmetHalf) ?? llmCoder(r) ?? loop.script(r);
    },
    "make src.txt say fixed",
    { userFiles: { "agents/coder.md": LLM_CODER } },
  );
  const adv = gateEvents(lines).filter((g) => g.gate === "adversary").map((g) => g.decision);
  assert.deepEqual(adv, ["block", "continue", "block", "continue", "incomplete"]);
  assert.equal(
    requests.filter((r) => String(messages(r).at(-1)!.content).includes("Completion gate:"))
      .length,
    2,
    "held once per verdict",
  );
  assert.equal(result.gates.complete, false);
  assert.deepEqual(result.gates.open.map((o: Json) => o.gate), ["adversary"]);
  assert.match(String(result.gates.open[0].reason), /DIVERGES|UNMET/);
});

Deno.test("journey (more): plan review REJECT twice → each coder spawn refused → OKAY → the coder runs", async () => {
  let oracle = 0;
  const steps = coordinatorSteps([
    { text: "Intent: fix src.txt — class: implementation", ...call("agent__spawn", oracleReq) },
    call("agent__collect", {}),
    call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" }),
    call("agent__spawn", oracleReq),
    call("agent__collect", {}),
    call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" }),
    call("agent__spawn", oracleReq),
    call("agent__collect", {}),
    call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" }),
    call("agent__collect", {}),
  ]);
  const { lines, requests, file } = await journey(
    () => (r) => {
      if (system(r).startsWith("You are oracle")) {
        return {
          text: oracle++ < 2 ? "1. no test step\nPLAN_REVIEW: REJECT" : "PLAN_REVIEW: OKAY",
        };
      }
      return llmCoder(r) ?? steps.script(r);
    },
    "make src.txt say fixed",
    { userFiles: { "agents/coder.md": LLM_CODER } },
  );
  assert.equal(file, "half\n");
  const plan = gateEvents(lines).filter((g) => g.gate === "plan_review")
    .map((g) => g.decision);
  assert.deepEqual(plan, ["block", "block", "block", "block", "allow"]);
  const coderAt = requests.findIndex((r) => system(r).startsWith("CODERX"));
  const oracles = requests.flatMap((r, i) => system(r).startsWith("You are oracle") ? [i] : []);
  assert.equal(oracles.length, 3);
  assert.ok(coderAt > oracles[2], "no coder before the OKAY");
  assert.equal(
    requests.filter((r) => system(r).startsWith("CODERX") && messages(r).length === 2).length,
    1,
    "one coder started",
  );
});
const oracleReq = { agent: "oracle", prompt: "Review PLAN.md." };

Deno.test('journey (more): spawning the user\'s agent whose file is broken → the refusal names the file and the key (not "may not spawn")', async () => {
  const steps = coordinatorSteps([call("agent__spawn", { agent: "reader", prompt: "go" })]);
  const { lines } = await journey(() => steps.script, "read src.txt", {
    userFiles: { "agents/reader.md": READER.replace("maxTurns", "max_turns") },
  });
  const [refusal] = toolResultsOf(lines);
  assert.match(refusal, /agents\/reader\.md: max_turns: unknown key \(did you mean `maxTurns`\?\)/);
  assert.doesNotMatch(refusal, /may not spawn/);
});

const READER =
  "---\nname: reader\ndescription: reads what it is told\ntools: [fs_read]\nmaxTurns: 2\n---\nREADERX agent.\n";

Deno.test("journey (more, headless): a child's read outside the workspace asks → denied at once with a clear message (never blocks); the child and the request go on", async () => {
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "reader", prompt: "read /etc/hostname" }),
    call("agent__collect", {}),
  ]);
  const { result, requests } = await journey(
    () => (r) => {
      if (!system(r).startsWith("READERX")) return steps.script(r);
      const last = messages(r).at(-1)!;
      if (last.role === "user") return call("fs_read", { path: "/etc/hostname" });
      return { text: `READER saw: ${String(last.content).slice(0, 300)}` };
    },
    "what is the hostname",
    { userFiles: { "agents/reader.md": READER } },
  );
  const child = requests.filter((r) => system(r).startsWith("READERX"));
  assert.equal(child.length, 2);
  const denied = String(messages(child[1]).at(-1)!.content);
  assert.match(denied, /denied|not allowed|refused/i);
  assert.match(denied, /headless|no one to ask|non-interactive/i);
  assert.match(String(result.text), /^FINAL:\n[^]*READER saw:/);
});

Deno.test("journey (more): a child's max_turns ends its turn as at top level (the stop reason reaches the coordinator); the request goes on", async () => {
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "reader", prompt: "keep reading src.txt" }),
    call("agent__collect", {}),
  ]);
  const { result, requests } = await journey(
    () => (r) =>
      system(r).startsWith("READERX") ? call("fs_read", { path: "src.txt" }) : steps.script(r),
    "read src.txt",
    { userFiles: { "agents/reader.md": READER } },
  );
  assert.equal(requests.filter((r) => system(r).startsWith("READERX")).length, 2, "max_turns 2");
  assert.match(
    String(result.text),
    /^FINAL:\nreader-\w+ completed \(stopped: max_turn_requests, its max_turns model requests ran out; its answer may be unfinished\)/,
  );
  assert.equal(result.is_error, false);
});

Deno.test("journey (more): gates.posture reaches the security-reviewer child (its instructions name the posture its verdict is computed under)", async () => {
  for (const posture of ["hardened", null]) {
    const steps = coordinatorSteps([
      call("agent__spawn", { agent: "security-reviewer", prompt: "Review src.js." }),
      call("agent__collect", {}),
    ]);
    const { requests, lines } = await journey(
      () => (r) =>
        system(r).startsWith("You are security-reviewer")
          ? { text: "Findings: none.\nSECURITY_REVIEW: PASS" }
          : steps.script(r),
      "review my change for security",
      posture ? { userFiles: { "config.yaml": `gates:\n  posture: ${posture}\n` } } : {},
    );
    const sys = system(requests.find((r) => system(r).startsWith("You are security-reviewer"))!);
    assert.match(sys, new RegExp(`Posture: ${posture ?? "standard"}\\.`));
    const sec = gateEvents(lines).find((g) => g.gate === "security");
    assert.equal(sec.posture, posture ?? "standard");
  }
});

Deno.test("journey (more, ACP): a child's read outside the workspace asks → the client is asked for the child (its id on the request), allow_once → the child reads it; the request completes", async () => {
  const { acpTestEnv, startAcp, finishAcp } = await import("./support/acp_harness.ts");
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "reader", prompt: "read the file outside" }),
    call("agent__collect", {}),
  ]);
  let outside = "";
  const e = await acpTestEnv((r: Parameters<typeof system>[0]) => {
    if (!system(r).startsWith("READERX")) return steps.script(r);
    const last = messages(r).at(-1)!;
    if (last.role === "user") return call("fs_read", { path: outside });
    return { text: `READER saw: ${String(last.content).slice(0, 200)}` };
  });
  try {
    outside = `${e.data}/outside.txt`;
    await Deno.writeTextFile(outside, "the secret word is ocelot\n");
    await Deno.mkdir(`${e.data}/config/agents`, { recursive: true });
    await Deno.writeTextFile(`${e.data}/config/agents/reader.md`, READER);
    const h = await startAcp({ env: e.env, permissionAnswers: ["allow_once"] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "what does the file outside say" }],
      });
      assert.equal(r.stopReason, "end_turn", h.stderr().slice(-2000));
      assert.equal(h.permissionRequests.length, 1);
      const [p] = h.permissionRequests as Json[];
      assert.match(p._meta.coyote.agent_id, /^reader-/);
      assert.match(p.toolCall.title, /^reader-\w+: Read /);
      const text = h.updatesFor(sessionId).filter((u: Json) =>
        u.sessionUpdate === "agent_message_chunk"
      ).map((u: Json) => u.content.text).join("");
      assert.match(text, /^FINAL:\nreader-\w+ completed:\nREADER saw: [^]*ocelot/);
    } finally {
      await finishAcp(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("journey (more): sisyphus leaves a todo item open headless → it continues itself until the turn's tokens pass max_auto_continue_tokens → auto_continue_stopped in the stream says so", async () => {
  const big = { prompt_tokens: 40_000, completion_tokens: 10, total_tokens: 40_010 };
  const { lines, requests, result } = await journey(
    () => (r) => {
      const n = messages(r).filter((m) => m.role === "assistant").length;
      if (n === 0) {
        return {
          ...call("todo__write", { todos: [{ content: "second", status: "in_progress" }] }),
          text: "Intent: plan it — class: research",
        };
      }
      return { text: `still going ${n}`, usage: big };
    },
    "plan it",
  );
  const stopped = lines.map((l: Json) => l.update?._meta?.coyote)
    .filter((m: Json) => m?.event === "auto_continue_stopped");
  assert.equal(stopped.length, 1, JSON.stringify(stopped));
  assert.equal(stopped[0].reason, "max_auto_continue_tokens");
  assert.equal(stopped[0].limit, 100_000);
  assert.ok(stopped[0].tokens >= 100_000);
  assert.equal(stopped[0].open, 1);
  // Far fewer than max_auto_continues (25) requests: the token bound ended it.
  assert.ok(requests.length <= 5, `${requests.length} requests`);
  assert.equal(result.is_error, false);
});

Deno.test("journey (more): two coders at once change the same line → the second's worktree patch conflicts → not applied, the workspace keeps the first's change, the coordinator is told the file and the patch", async () => {
  const collected: string[] = [];
  const { lines, file } = await journey(
    (dir) => conflictingCoders(dir, collected),
    "two changes to src.txt",
    { files: { Makefile: "test:\n\ttrue\n" } },
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n", "the first coder's change stands");
  const events = lines.map((l: Json) => l.update?._meta?.coyote)
    .filter((m: Json) => m?.event === "worktree");
  assert.deepEqual(events.map((e: Json) => e.status), ["created", "conflict"]);
  assert.deepEqual(events[1].files, ["src.txt"]);
  const id = events[0].agent_id;
  assert.match(
    collected[0],
    new RegExp(
      `${id} completed:[^]*worktree: its change CONFLICTS with the workspace and was NOT applied \\(conflicting: src\\.txt\\); the patch is kept at \\S+\\.patch`,
    ),
  );
  assert.equal(collected[0].match(/CODER_COMPLETE/g)?.length, 2);
  // One change to review: the review gate decides once for both coders collected together.
  const rev = gateEvents(lines).filter((g) => g.gate === "reviewers");
  assert.deepEqual(rev.map((g) => g.decision), ["require", "continue", "incomplete"]);
  assert.equal(collected[0].match(/Review gate: run these reviewers/g)?.length, 1);
});

Deno.test("journey (more): sisyphus → adversary whose declared check is `make test` (not read-only) → it runs under the sandbox's auto-allow in headless, as the adversary's own command would", async () => {
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "adversary", prompt: "Review the change: it must add greet()." }),
    call("agent__collect", {}),
  ]);
  const { result, lines } = await journey(
    () => (r) =>
      adversaryNode(r, met("src.js", 2, { file: "src_test.js", line: 1 }), {
        text: "adds greet()",
        command: "make test",
      }) ?? steps.script(r),
    "review my change",
    { files: { Makefile: "test:\n\tgrep -q greet src.js\n" } },
  );
  noRefusedSubmit(lines);
  const text = String(result.text);
  assert.match(text, /ADVERSARIAL_REVIEW: CONFORMS/);
  assert.match(text, /- PASS `make test` \(exit 0, /);
  assert.doesNotMatch(text, /default policy asks|denied/);
});

const SCORE_SCHEMA =
  "{ type: object, additionalProperties: false, required: [item, score], properties: { item: { type: string }, score: { type: number } } }";
/** A graph agent whose one llm node submits a structured score. */
const SCORER = "name: scorer\ndescription: scores one item\ntools: [fs_read]\nstart: s\nnodes:\n" +
  `  s: { type: llm, instructions: "SCORERX: you score one item.", prompt: "{{initial_prompt}}", output_schema: ${SCORE_SCHEMA}, next: done }\n` +
  "  done: { type: end, output: '{{output}}' }\n";
/** A graph agent mapping over two items, each branch the scorer graph as a child. */
const FAN = "name: fan\ndescription: scores each item\nstart: m\n" +
  "initial_state: { items: [alpha, beta] }\nnodes:\n" +
  "  m: { type: map, over: items, as: it, branch: work, collect_into: results, next: z }\n" +
  `  work: { type: agent, agent: scorer, prompt: 'score {{it}}', output_schema: ${SCORE_SCHEMA} }\n` +
  "  z: { type: end, output: 'results: {{results}}' }\n";

Deno.test("journey (more): sisyphus → a graph whose map node runs a graph child per item → each child's structured output (submit_result) collected in order → the parent gets them", async () => {
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "fan", prompt: "score the items" }),
    call("agent__collect", {}),
  ]);
  const { result, lines, requests } = await journey(
    () => (r) => {
      if (!system(r).includes("SCORERX")) return steps.script(r);
      const item = firstUser(r).match(/score (\w+)/)![1];
      return submit({ item, score: item.length });
    },
    "score the items",
    { userFiles: { "agents/fan/graph.yaml": FAN, "agents/scorer/graph.yaml": SCORER } },
  );
  noRefusedSubmit(lines);
  assert.equal(requests.filter((r) => system(r).includes("SCORERX")).length, 2);
  const text = String(result.text);
  assert.match(text, /^FINAL:\nfan-\w+ completed:\nresults: /);
  const results = JSON.parse(text.match(/results: (\[.*\])/)![1]);
  assert.deepEqual(results, [{ item: "alpha", score: 5 }, { item: "beta", score: 4 }]);
  // The tree: sisyphus → fan → two scorer children.
  const fan = lines.find((l: Json) => l.agent === "fan")!;
  const scorers = lines.filter((l: Json) => l.agent === "scorer");
  assert.equal(new Set(scorers.map((l: Json) => l.agent_id)).size, 2);
  assert.ok(scorers.every((l: Json) => l.parent_id === fan.agent_id));
});

Deno.test("journey (more): --max-budget-tokens spans the tree — a child's tokens count, the child stops with max_budget (its parent is told), then the coordinator: exit 4, stop_reason max_budget", async () => {
  const big = { prompt_tokens: 20_000, completion_tokens: 10, total_tokens: 20_010 };
  const steps = coordinatorSteps([
    { ...call("agent__spawn", { agent: "reader", prompt: "keep reading src.txt" }), usage: tiny },
    { ...call("agent__collect", {}), usage: tiny },
  ]);
  const { result, requests, stderr, lines } = await journey(
    () => (r) =>
      system(r).startsWith("READERX")
        ? { ...call("fs_read", { path: "src.txt" }), usage: big }
        : steps.script(r),
    "read src.txt",
    {
      args: ["--max-budget-tokens", "30000"],
      userFiles: { "agents/reader.md": READER.replace("maxTurns: 2", "maxTurns: 10") },
      code: 4,
    },
  );
  // Two child requests passed the tree's 30000 tokens: no third, and no coordinator request after.
  assert.equal(requests.filter((r) => system(r).startsWith("READERX")).length, 2);
  assert.equal(result.stop_reason, "max_budget");
  assert.ok(result.usage.total_tokens >= 40_000, JSON.stringify(result.usage));
  assert.match(stderr, /budget reached after \d+ tokens/);
  // The collect result (the coordinator's last tool result, in its stream and transcript) says
  // why the child stopped.
  const collected = toolResultsOf(lines).at(-1)!;
  assert.match(collected, /^reader-\w+ completed \(stopped: max_budget, the budget ran out;/);
});
const tiny = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };

Deno.test("journey (more): a child that failed (its provider request refused) → agent__send resumes it in the same session with its task in context → it completes", async () => {
  const steps = coordinatorSteps([
    ...spawnAs("reader", "reader", "read src.txt"),
    (c) => {
      c.facts.failed = c.lastTool;
      return call("agent__send", { agent_id: c.facts.reader, message: "try again" });
    },
    call("agent__collect", {}),
  ]);
  let readerCalls = 0;
  const { result, lines, requests } = await journey(
    () => (r) => {
      if (!system(r).startsWith("READERX")) return steps.script(r);
      if (readerCalls++ === 0) {
        // Not a 400 (the server refuses the request itself: that turn leaves the history).
        return { status: 401, error_body: { error: { message: "key expired, try later" } } };
      }
      return { text: "READER again" };
    },
    "read src.txt",
    { userFiles: { "agents/reader.md": READER } },
  );
  assert.match(steps.facts.failed, /^reader-\w+ failed: [^]*key expired/);
  assert.match(String(result.text), /^FINAL:\nreader-\w+ completed:\nREADER again/);
  const reader = lines.filter((l: Json) => l.type === "session_update" && l.agent === "reader");
  assert.deepEqual([...new Set(reader.map((l: Json) => l.agent_id))], [steps.facts.reader]);
  assert.equal(new Set(reader.map((l: Json) => l.session_id)).size, 1);
  const resumed = requests.filter((r) => system(r).startsWith("READERX")).at(-1)!;
  // The failed turn's task and the follow-up, in one user message (two in a row are merged for
  // servers that insist roles alternate, core/provider/messages.ts).
  const users = messages(resumed).filter((m) => m.role === "user").map((m) => m.content);
  assert.deepEqual(users, ["read src.txt\n\ntry again"]);
});

Deno.test("journey (more, ACP): a child from the first prompt resumed in the second — agent__send in a later turn continues the same coder (its conversation, its id), its run on the send's card", async () => {
  const { acpTestEnv, startAcp, finishAcp } = await import("./support/acp_harness.ts");
  const steps = coordinatorSteps([
    ...spawnAs("coder", "coder", "make src.txt say fixed"),
    { text: "Turn one: the coder wrote half." },
    (c) =>
      call("agent__send", { agent_id: c.facts.coder, message: "It says half: make it fixed." }),
    call("agent__collect", {}),
  ]);
  let coderUsers: unknown[] = [];
  const e = await acpTestEnv((r: Parameters<typeof system>[0]) => {
    if (system(r).startsWith("CODERX")) {
      coderUsers = messages(r).filter((m) => m.role === "user").map((m) => m.content);
    }
    return llmCoder(r) ?? steps.script(r);
  });
  try {
    await Deno.writeTextFile(`${e.ws}/src.txt`, "broken\n");
    await Deno.mkdir(`${e.data}/config/agents`, { recursive: true });
    await Deno.writeTextFile(`${e.data}/config/agents/coder.md`, LLM_CODER);
    const h = await startAcp({ env: e.env, args: ["--no-sandbox"] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const ask = (text: string) =>
        h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      assert.equal((await ask("make src.txt say fixed")).stopReason, "end_turn");
      assert.equal(await Deno.readTextFile(`${e.ws}/src.txt`), "half\n");
      const r2 = await ask("it still says half");
      assert.equal(r2.stopReason, "end_turn", h.stderr().slice(-2000));
      assert.equal(await Deno.readTextFile(`${e.ws}/src.txt`), "fixed\n");
      assert.deepEqual(coderUsers, ["make src.txt say fixed", "It says half: make it fixed."]);
      const updates = h.updatesFor(sessionId) as Json[];
      const send = updates.find((u) =>
        u.sessionUpdate === "tool_call" && /^Send to coder-\w+: It says half/.test(u.title)
      );
      assert.ok(send, "the agent__send card");
      const onSend = updates.filter((u) =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === send.toolCallId &&
        u._meta?.coyote?.agent_id === steps.facts.coder
      );
      assert.ok(onSend.length > 0, "the resumed run reports on the send's card under the same id");
      const text = updates.filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => u.content.text).join("");
      assert.match(text, /fixed per review/);
    } finally {
      await finishAcp(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("journey (more, REPL): two children at once each read outside the workspace → two approvals asked one after the other, named by child; y for one, n for the other → one reads, the other is told it was denied", async () => {
  const { Tmux } = await import("./support/tmux.ts");
  const { childEnv, coyoteCommand, makeCoyoteEnv } = await import("./support/run_coyote.ts");
  const { startModelServer } = await import("./support/model_server.ts");
  const { repo } = await import("./support/journeys.ts");
  const env = await makeCoyoteEnv();
  const parent = await Deno.makeTempDir({ prefix: "coyote-journey-repl-" });
  const dir = await repo(parent);
  const outside = `${await Deno.realPath(parent)}/outside.txt`;
  await Deno.writeTextFile(outside, "the secret word is ocelot\n");
  await Deno.mkdir(`${env.configDir}/agents`, { recursive: true });
  await Deno.writeTextFile(`${env.configDir}/agents/reader.md`, READER);
  const steps = coordinatorSteps([
    {
      tool_calls: [1, 2].map((n) => ({
        name: "agent__spawn",
        arguments: { agent: "reader", prompt: `read the file outside (${n})` },
      })),
    },
    call("agent__collect", {}),
  ], (c) => ({ text: `FINAL ${c.lastTool.replace(/\s+/g, " ")}` }));
  const server = await startModelServer({
    script: (r) => {
      if (!system(r).startsWith("READERX")) return steps.script(r);
      const last = messages(r).at(-1)!;
      if (last.role === "user") return call("fs_read", { path: outside });
      const n = firstUser(r).match(/\((\d)\)/)![1];
      return { text: `R${n}: ${/ocelot/.test(String(last.content)) ? "READ" : "NOT READ"}` };
    },
  });
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand([]);
    await t.start([cmd, ...args], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
      width: 160,
      height: 50,
    });
    await t.waitFor(/› $/m, 120_000);
    await t.type("read the file outside twice");
    await t.keys("Enter");
    const ask = /sub-agent reader-[0-9a-f]{8} wants to read[^]*?deny always/;
    await t.waitForCount(ask, 1, 120_000);
    await t.keys("y");
    await t.waitForCount(ask, 2, 120_000);
    await t.keys("n");
    const screen = await t.waitFor(/FINAL [^]*› $/m, 120_000);
    const final = screen.slice(screen.lastIndexOf("FINAL "));
    assert.match(final, /R\d: READ/, screen);
    assert.match(final, /R\d: NOT READ/, screen);
    const asked = screen.split("\n").filter((l) => /sub-agent reader-[0-9a-f]{8} wants to/.test(l))
      .map((l) => l.match(/reader-[0-9a-f]{8}/)![0]);
    assert.equal(new Set(asked).size, 2, `one request per child:\n${screen}`);
    // The denied child saw why (its tool result) and said so.
    const denied = server.requests.filter((r) => system(r).startsWith("READERX"))
      .map((r) => String(messages(r).at(-1)!.content))
      .find((c) => /denied|refused|not allowed/i.test(c));
    assert.ok(denied, "a denied read's result");
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(parent, { recursive: true }).catch(() => {});
  }
});

Deno.test("journey (more): sisyphus → step-runner → its coder fails (the check never passes) → STEP_FAILED with the coder's failure reaches sisyphus; the request ends", async () => {
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "step-runner", prompt: "next" }),
    call("agent__collect", {}),
  ]);
  const { result, lines, file, requests } = await journey(
    // The coder writes `half` on every attempt: `make test` (grep -q fixed) keeps failing.
    () => (r) => stepRunnerNode(r) ?? graphCoder(r) ?? steps.script(r),
    "run the next step of the plan",
    { files: STEP },
  );
  noRefusedSubmit(lines);
  assert.equal(file, "half\n");
  const text = String(result.text);
  assert.match(text, /^FINAL:\nstep-runner-\w+ completed:\nSTEP_FAILED/);
  assert.match(
    text,
    /STEP_FAILED\nStep 1: Fix src\nCoder's report:\nCODER_FAILED\n[^]*Last failure: make test/,
  );
  assert.equal(
    requests.filter((r) => system(r).includes("You implement a planned change")).length,
    4 * 3,
    "the coder's bounded fix loop: 1 + 3 attempts, 3 requests each",
  );
  // A failed step calls for no reviewer (a spec exists: plans/), so nothing holds its end.
  const rev = gateEvents(lines).filter((g) => g.gate === "reviewers");
  assert.deepEqual(rev.map((g) => g.decision), ["none"]);
  assert.match(
    rev[0].reason,
    /step-runner-\w+ ended STEP_FAILED: a failed implementation calls for no reviewer/,
  );
  assert.deepEqual(result.gates, { complete: true, open: [], overrides: [] });
});

Deno.test("journey (more): gates.posture reaches a security-reviewer that a graph's agent node runs (sisyphus → graph → security-reviewer)", async () => {
  const graph = "name: secpass\ndescription: a security pass\nstart: s\nnodes:\n" +
    "  s: { type: agent, agent: security-reviewer, prompt: 'Review src.js.', next: z }\n" +
    "  z: { type: end, output: 'secpass: {{output}}' }\n";
  const steps = coordinatorSteps([
    call("agent__spawn", { agent: "secpass", prompt: "review" }),
    call("agent__collect", {}),
  ]);
  const { requests, result } = await journey(
    () => (r) =>
      system(r).startsWith("You are security-reviewer")
        ? { text: "Findings: none.\nSECURITY_REVIEW: PASS" }
        : steps.script(r),
    "review my change for security",
    {
      userFiles: {
        "config.yaml": "gates:\n  posture: prototype\n",
        "agents/secpass/graph.yaml": graph,
      },
    },
  );
  const sys = system(requests.find((r) => system(r).startsWith("You are security-reviewer"))!);
  assert.match(sys, /Posture: prototype\./);
  assert.match(String(result.text), /secpass: Findings: none\.\nSECURITY_REVIEW: PASS/);
});

Deno.test("journey (more): the same agent's max_turns at top level (-a reader): its own 2 bound the turn (exit 3, max_turn_requests); --max-turns 3 wins over it", async () => {
  const run = (args: string[]) =>
    journey(
      () => () => call("fs_read", { path: "src.txt" }),
      "keep reading src.txt",
      { args: ["-a", "reader", ...args], userFiles: { "agents/reader.md": READER }, code: 3 },
    );
  const own = await run([]);
  assert.equal(own.requests.length, 2);
  assert.equal(own.result.stop_reason, "max_turn_requests");
  const flag = await run(["--max-turns", "3"]);
  assert.equal(flag.requests.length, 3);
});
