/**
 * The gates' journeys (issue 17; core/supervisor/gate_keeper.ts, docs/subagents.md "Gates"): the
 * gates' decisions in the stream of `coyote --headless --output-format stream-json` from the
 * default agent (sisyphus) on a real git repository (tests/support/journey_headless.ts), and one
 * through ACP — the intent line and its nudge, plan review REJECT/OKAY, the reviewers a change
 * calls for and their order, the completion gate (DIVERGES, a security FAIL, reviewers not run)
 * and its overrides. The seeds' whole flow, with every gate, is in tests/journeys_test.ts and the
 * REPL/ACP journeys.
 * @module
 */
import assert from "node:assert/strict";
import type { RecordedRequest, ScriptedReply } from "./support/model_server.ts";
import {
  adversaryNode,
  call,
  coordinatorSteps,
  graphCoder,
  type Json,
  LLM_CODER,
  llmCoder,
  messages,
  met,
  resendLoop,
  system,
} from "./support/journeys.ts";
import {
  conflictingCoders,
  divergesGreet,
  gateEvents,
  halfThenMet,
  journey,
  noRefusedSubmit,
  sisyphus,
} from "./support/journey_headless.ts";

Deno.test("journey (gates): intent event → oracle PLAN_REVIEW: REJECT blocks the coder spawn → revised plan OKAY → coder → reviewers triggered from the diff", async () => {
  const script = () => {
    let oracleRuns = 0;
    const steps = coordinatorSteps([
      {
        text: "Intent: make src.txt say fixed — class: implementation",
        tool_calls: [{
          name: "agent__spawn",
          arguments: { agent: "oracle", prompt: "Review PLAN.md" },
        }],
      },
      call("agent__collect", {}),
      call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" }),
      call("agent__spawn", { agent: "oracle", prompt: "Review the revised PLAN.md" }),
      call("agent__collect", {}),
      call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" }),
      call("agent__collect", {}),
    ], (c) => ({ text: `FINAL:\n${c.last}` }));
    return (r: RecordedRequest): ScriptedReply => {
      if (system(r).startsWith("You are oracle")) {
        return {
          text: oracleRuns++ === 0
            ? "1. Step 2 has no test.\nPLAN_REVIEW: REJECT"
            : "Grounded and testable.\nPLAN_REVIEW: OKAY",
        };
      }
      return llmCoder(r) ?? steps.script(r);
    };
  };
  const { lines, requests, file, result } = await journey(script, "make src.txt say fixed", {
    userFiles: { "agents/coder.md": LLM_CODER },
    files: { "PLAN.md": "1. make src.txt say fixed\n", "auth/token.js": "export const t = 1;\n" },
  });
  assert.equal(file, "half\n");
  // It never ran the reviewers: the run ends, but not complete.
  assert.equal(result.gates.complete, false);
  assert.deepEqual(result.gates.open.map((o: Json) => o.gate), ["reviewers"]);
  const gates = gateEvents(lines);
  assert.ok(gates.every((g) => g.agent === "sisyphus"), "the gates are the coordinator's events");
  assert.deepEqual(gates[0], {
    event: "intent",
    class: "implementation",
    text: "make src.txt say fixed",
    agent: "sisyphus",
  });
  assert.deepEqual(
    gates.slice(1).map((g) => [g.gate, g.decision]),
    [
      ["plan_review", "block"], // the REJECT collected
      ["plan_review", "block"], // the coder spawn refused
      ["plan_review", "allow"], // the revised plan's OKAY
      ["reviewers", "require"], // the coder's change
      ["reviewers", "continue"], // the end held once: code-reviewer has not run
      ["reviewers", "incomplete"], // the same state again: the request ends incomplete
    ],
  );
  assert.match(gates[2].reason, /PLAN_REVIEW: REJECT in this request/);
  // The refused spawn is a tool error the coordinator reads; no coder ran before the OKAY.
  const afterRefusal = requests.find((r) =>
    messages(r).some((m) => m.role === "tool" && /plan review gate/.test(String(m.content)))
  );
  assert.ok(afterRefusal, "the coordinator was told why the spawn was refused");
  const coderStarts = requests.findIndex((r) => system(r).startsWith("CODERX"));
  const oracleAt = requests.flatMap((r, i) => system(r).startsWith("You are oracle") ? [i] : []);
  assert.equal(oracleAt.length, 2);
  assert.ok(coderStarts > oracleAt[1], "the coder started only after the OKAY");
  // Reviewers from the diff: 5 changed files (broad scope), PLAN.md (spec), auth/ (attack surface).
  const rev = gates.find((g) => g.decision === "require");
  assert.deepEqual(rev.reviewers.map((t: Json) => t.reviewer), [
    "code-reviewer",
    "adversary",
    "security-reviewer",
  ]);
  assert.match(rev.reason, /5 files changed/);
  assert.match(rev.reason, /a spec exists: PLAN\.md/);
  assert.match(rev.reason, /auth\/token\.js/);
  // …and the coordinator was told in the agent__collect result.
  const last = requests.at(-1)!;
  assert.match(
    String(messages(last).findLast((m) => m.role === "tool")!.content),
    /Review gate: run these reviewers in this order, one after another[^]*3\. security-reviewer \(attack_surface/,
  );
  assert.ok(!gates.some((g) => g.decision === "nudge"), "no nudge when the intent line is there");
});

Deno.test("journey (gates): no intent line → one nudge; adversary DIVERGES holds the end once → complaints sent to the same coder → CONFORMS → done", async () => {
  let loop!: ReturnType<typeof resendLoop>;
  const { result, lines, requests, file } = await journey(
    () => {
      const adv = halfThenMet();
      loop = resendLoop({ sendAfterGate: true });
      return (r) => adv(r) ?? llmCoder(r) ?? loop.script(r);
    },
    "make src.txt say fixed",
    { userFiles: { "agents/coder.md": LLM_CODER } },
  );
  assert.equal(file, "fixed\n");
  assert.match(String(result.text), /done:\n[^]*ADVERSARIAL_REVIEW: CONFORMS/);
  const gates = gateEvents(lines);
  const nudges = gates.filter((g) => g.gate === "intent");
  assert.deepEqual(nudges.map((g) => g.decision), ["nudge"], "one nudge, never twice");
  const nudged = requests.filter((r) =>
    messages(r).some((m) =>
      m.role === "tool" && String(m.content).includes("did not state the intent line")
    )
  );
  assert.ok(nudged.length >= 1, "the nudge reached the model");
  const toolNudges = messages(requests.at(-1)!).filter((m) =>
    String(m.content).includes("did not state the intent line")
  );
  assert.equal(toolNudges.length, 1, "the note was appended once");
  const adv = gates.filter((g) => g.gate === "adversary").map((g) => [
    g.decision,
    g.verdict ?? null,
  ]);
  const verdict = adv[0][1];
  assert.match(String(verdict), /^(DIVERGES|UNMET)$/);
  assert.deepEqual(adv, [["block", verdict], ["continue", verdict], ["allow", null]]);
  // The complaints went to the same coder, verbatim from the adversary's report.
  const sent = loop.facts.complaints;
  assert.match(sent, /^Complaints:\n1\. Acceptance criterion .* — Unmet — src\.txt says half/);
  assert.equal(
    requests.filter((r) => String(messages(r).at(-1)!.content).includes("Completion gate:")).length,
    1,
    "the completion gate held the end exactly once",
  );
  const followUp = requests.filter((r) => system(r).startsWith("CODERX")).find((r) =>
    messages(r).filter((m) => m.role === "user").length === 2
  )!;
  assert.equal(messages(followUp).filter((m) => m.role === "user")[1].content, sent);
});

Deno.test("journey (gates): security-reviewer findings → FAIL under gates.posture hardened (a High finding blocks), told in the collect result", async () => {
  const findings =
    "- [High] src.js:2 — greet() builds HTML from input — XSS — escape it\n- [Low] src.js:1 — no CSP — — add one\n";
  const { lines, requests } = await journey(
    () => {
      const s = sisyphus("security-reviewer", "Review the change in src.js for security problems.");
      return (r) =>
        system(r).startsWith("You are security-reviewer")
          ? { text: `Findings:\n${findings}` }
          : s(r);
    },
    "review my change for security",
    { userFiles: { "config.yaml": "gates:\n  posture: hardened\n" } },
  );
  const sec = gateEvents(lines).filter((g) => g.gate === "security");
  assert.deepEqual(sec.map((g) => g.decision), ["fail", "continue", "incomplete"]);
  assert.equal(sec[0].decision, "fail");
  assert.equal(sec[0].posture, "hardened");
  assert.deepEqual(sec[0].counts, { Critical: 0, High: 1, Medium: 0, Low: 1 });
  assert.match(sec[0].reason, /High block under posture hardened/);
  const told = requests.some((r) =>
    messages(r).some((m) =>
      m.role === "tool" && /Security gate \(posture hardened\): FAIL/.test(String(m.content))
    )
  );
  assert.ok(told, "the coordinator was told the security verdict");
});

Deno.test("journey (gates): gates.allow_divergent_completion lets the coordinator end on DIVERGES, recorded as an override", async () => {
  const { lines, requests, result } = await journey(divergesGreet, "review my change", {
    userFiles: { "config.yaml": "gates:\n  allow_divergent_completion: true\n" },
  });
  const adv = gateEvents(lines).filter((g) => g.gate === "adversary");
  assert.deepEqual(adv.map((g) => g.decision), ["block", "override"]);
  assert.deepEqual(result.gates.overrides.map((o: Json) => o.gate), ["adversary"]);
  assert.match(adv[1].reason, /allow_divergent_completion is true/);
  assert.ok(
    !requests.some((r) => String(messages(r).at(-1)!.content).includes("Completion gate:")),
    "no continuation under the override",
  );
});

/** The reviewers' answers (LLM agents): code-reviewer approves, security-reviewer's findings. */
function reviewer(r: RecordedRequest, security: string): ScriptedReply | null {
  const sys = system(r);
  if (sys.startsWith("You are code-reviewer")) {
    return { text: "[minor] src.txt:1 — terse — fine\napprove\nREVIEW_COMPLETE" };
  }
  if (sys.startsWith("You are security-reviewer")) return { text: `Findings:\n${security}` };
  return null;
}

Deno.test("journey (gates): a 5-file change with a spec and auth code → the end is held and an out-of-order reviewer refused until code-reviewer → adversary → security-reviewer ran in order → complete", async () => {
  const script = () => {
    // First it tries to end; held, it tries the security review first (refused); then in order.
    const steps = coordinatorSteps([
      call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" }),
      call("agent__collect", {}),
      { text: "Intent: done — class: implementation\nAll done." },
      call("agent__spawn", { agent: "security-reviewer", prompt: "Review auth/token.js." }),
      call("agent__spawn", { agent: "code-reviewer", prompt: "Review the change." }),
      call("agent__collect", {}),
      call("agent__spawn", { agent: "adversary", prompt: "Check against PLAN.md." }),
      call("agent__collect", {}),
      call("agent__spawn", { agent: "security-reviewer", prompt: "Review auth/." }),
      call("agent__collect", {}),
    ], (c) => ({ text: `FINAL:\n${c.last}` }));
    return (r: RecordedRequest): ScriptedReply =>
      adversaryNode(r, met("src.js", 2, { file: "src_test.js", line: 1 })) ?? llmCoder(r) ??
        reviewer(r, "- [Low] auth/token.js:1 — constant — — fine\nSECURITY_REVIEW: PASS") ??
        steps.script(r);
  };
  const { lines, requests, result } = await journey(script, "make src.txt say fixed", {
    userFiles: { "agents/coder.md": LLM_CODER },
    files: { "PLAN.md": "1. greet() exists\n", "auth/token.js": "export const t = 1;\n" },
  });
  noRefusedSubmit(lines);
  const rev = gateEvents(lines).filter((g) => g.gate === "reviewers");
  assert.deepEqual(rev.map((g) => [g.decision, g.next ?? null]), [
    ["require", null], // 5 files changed, PLAN.md, auth/token.js
    ["continue", "code-reviewer"], // the first end attempt
    ["block", "code-reviewer"], // security-reviewer spawned out of order
    ["next", "adversary"],
    ["next", "security-reviewer"],
    ["satisfied", null],
  ]);
  assert.deepEqual(rev[0].reviewers.map((t: Json) => t.reviewer), [
    "code-reviewer",
    "adversary",
    "security-reviewer",
  ]);
  assert.match(rev[0].reason, /5 files changed/);
  assert.equal(rev[2].reviewer, "security-reviewer");
  // The model was told, at the held end and at the refused spawn, which reviewer is next.
  const told = (re: RegExp) =>
    requests.some((r) => messages(r).some((m) => re.test(String(m.content))));
  assert.ok(
    told(
      /Completion gate: required reviewer\(s\) not run: code-reviewer → adversary → security-reviewer\. Spawn code-reviewer now/,
    ),
  );
  assert.ok(
    told(/error: review order gate: [^]*code-reviewer is next[^]*before security-reviewer/),
  );
  // The reviewers ran in the seeds' order, each after the one before it ended.
  const firstOf = (p: string) => requests.findIndex((r) => system(r).startsWith(p));
  const lastOf = (p: string) => requests.findLastIndex((r) => system(r).startsWith(p));
  const adv = requests.findIndex((r) => system(r).includes("You extract acceptance criteria"));
  assert.ok(firstOf("You are code-reviewer") > 0);
  assert.ok(adv > lastOf("You are code-reviewer"), "adversary after code-reviewer");
  assert.ok(firstOf("You are security-reviewer") > adv, "security-reviewer after adversary");
  assert.equal(
    requests.filter((r) => system(r).startsWith("You are security-reviewer")).length,
    1,
    "the refused spawn never started a reviewer",
  );
  assert.match(String(result.text), /^FINAL:/);
  assert.deepEqual(result.gates, { complete: true, open: [], overrides: [] });
});

Deno.test("journey (gates): a security-reviewer's Critical finding holds the end and leaves the request incomplete under every posture", async () => {
  for (const posture of ["prototype", "standard", "hardened"]) {
    const { lines, requests, result } = await journey(
      () => {
        const s = sisyphus("security-reviewer", "Review the change for security problems.");
        return (r) =>
          reviewer(
            r,
            "- [Critical] .env:1 — committed API key — anyone with the repo — remove it\n",
          ) ??
            s(r);
      },
      "review my change for security",
      { userFiles: { "config.yaml": `gates:\n  posture: ${posture}\n` } },
    );
    const sec = gateEvents(lines).filter((g) => g.gate === "security");
    assert.deepEqual(sec.map((g) => g.decision), ["fail", "continue", "incomplete"], posture);
    assert.equal(sec[0].posture, posture);
    assert.match(sec[0].reason, new RegExp(`Critical block under posture ${posture}`));
    assert.match(sec[1].reason, /security review security-reviewer-\w+ is FAIL/);
    assert.ok(
      requests.some((r) =>
        /Completion gate: security review [^]*run security-reviewer again/.test(
          String(messages(r).at(-1)!.content),
        )
      ),
      "the model was told why it cannot end",
    );
    assert.equal(result.gates.complete, false, posture);
    assert.deepEqual(result.gates.open.map((o: Json) => o.gate), ["security"]);
  }
});

Deno.test("journey (gates): a High finding does not hold the end under prototype; it does under hardened", async () => {
  const high = "- [High] src.js:2 — greet() builds HTML from input — XSS — escape it\n";
  const run = (posture: string) =>
    journey(
      () => {
        const s = sisyphus("security-reviewer", "Review src.js.");
        return (r) => reviewer(r, high) ?? s(r);
      },
      "review my change for security",
      { userFiles: { "config.yaml": `gates:\n  posture: ${posture}\n` } },
    );
  const proto = await run("prototype");
  assert.deepEqual(
    gateEvents(proto.lines).filter((g) => g.gate === "security").map((g) => g.decision),
    ["pass"],
  );
  assert.ok(
    !proto.requests.some((r) => String(messages(r).at(-1)!.content).includes("Completion gate:")),
  );
  assert.deepEqual(proto.result.gates, { complete: true, open: [], overrides: [] });
  const hard = await run("hardened");
  assert.deepEqual(
    gateEvents(hard.lines).filter((g) => g.gate === "security").map((g) => g.decision),
    ["fail", "continue", "incomplete"],
  );
  assert.equal(hard.result.gates.complete, false);
});

Deno.test("journey (gates): gates.allow_insecure_completion lets the request end on a Critical security FAIL, recorded as an override", async () => {
  const { lines, requests, result, transcripts } = await journey(
    () => {
      const s = sisyphus("security-reviewer", "Review the change for security problems.");
      return (r) => reviewer(r, "- [Critical] .env:1 — committed API key — — remove it\n") ?? s(r);
    },
    "review my change for security",
    { userFiles: { "config.yaml": "gates:\n  allow_insecure_completion: true\n" } },
  );
  const sec = gateEvents(lines).filter((g) => g.gate === "security");
  assert.deepEqual(sec.map((g) => g.decision), ["fail", "override"]);
  assert.match(sec[1].reason, /gates\.allow_insecure_completion is true/);
  assert.equal(sec[1].setting, "allow_insecure_completion");
  assert.ok(
    !requests.some((r) => String(messages(r).at(-1)!.content).includes("Completion gate:")),
  );
  assert.equal(result.gates.complete, true);
  assert.deepEqual(result.gates.overrides.map((o: Json) => o.gate), ["security"]);
  assert.match(result.gates.overrides[0].reason, /FAIL under posture standard/);
  // …and on record in the coordinator's transcript.
  const root = transcripts.find(([id]) => id === result.session_id)![1];
  const recorded = root.split("\n").filter(Boolean).map((l) => JSON.parse(l))
    .filter((l: Json) => l.type === "gate" && l.gate === "security");
  assert.deepEqual(recorded.map((l: Json) => l.decision), ["fail", "override"]);
  assert.equal(recorded[1].setting, "allow_insecure_completion");
});

Deno.test("journey (ACP, gates): a security Critical holds the end once (the gate events reach the client) and the prompt response says the request is incomplete", async () => {
  const { acpTestEnv, startAcp, finishAcp } = await import("./support/acp_harness.ts");
  const s = sisyphus("security-reviewer", "Review the change for security problems.");
  const e = await acpTestEnv((r: RecordedRequest) =>
    reviewer(r, "- [Critical] .env:1 — committed API key — — remove it\n") ?? s(r)
  );
  try {
    const h = await startAcp({ env: e.env, args: ["--no-sandbox"] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "review my change for security" }],
      });
      assert.equal(r.stopReason, "end_turn");
      const gates = (r._meta as Json).coyote.gates;
      assert.equal(gates.complete, false);
      assert.deepEqual(gates.open.map((o: Json) => o.gate), ["security"]);
      const seen = h.updatesFor(sessionId).flatMap((u: Json) =>
        u._meta?.coyote?.event === "gate"
          ? [`${u._meta.coyote.gate} ${u._meta.coyote.decision}`]
          : []
      );
      assert.deepEqual(seen, [
        "intent nudge", // the scripted coordinator states no intent line
        "security fail",
        "security continue",
        "security incomplete",
      ]);
    } finally {
      await finishAcp(h);
    }
  } finally {
    await e.close();
  }
});

/** Two coders, no reviewer required (broad_scope.coders 3): only the worktree gate decides. */
const ONE_GATE = "gates:\n  broad_scope: { coders: 3 }\n";

Deno.test("journey (gates): two coders' patches conflict → the worktree gate holds the end once (the file and the patch named) → the request ends incomplete with gates.open [worktree]", async () => {
  const collected: string[] = [];
  const { lines, requests, result, file } = await journey(
    (dir) => conflictingCoders(dir, collected),
    "two changes to src.txt",
    { files: { Makefile: "test:\n\ttrue\n" }, userFiles: { "config.yaml": ONE_GATE } },
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n", "the first coder's change stands");
  const wt = gateEvents(lines).filter((g) => g.gate === "worktree");
  assert.deepEqual(wt.map((g) => g.decision), ["block", "continue", "incomplete"]);
  assert.deepEqual(wt[0].files, ["src.txt"]);
  assert.match(wt[0].patch, /coder-\w+\.patch$/);
  assert.match(collected[0], /Worktree gate: coder-\w+'s change conflicts [^]*src\.txt; patch /);
  const held = requests.map((r) => String(messages(r).at(-1)!.content))
    .filter((t) => t.includes("Completion gate:"));
  assert.equal(held.length, 1, "held once per state");
  assert.ok(held[0].includes(wt[0].patch), "the note names the patch");
  assert.match(held[0], /src\.txt[^]*[Aa]pply or merge that patch[^]*re-run the coder/);
  assert.equal(result.gates.complete, false);
  assert.deepEqual(result.gates.open.map((o: Json) => o.gate), ["worktree"]);
  assert.match(result.gates.open[0].reason, /conflicts and was not applied \(src\.txt; patch /);
});

Deno.test("journey (gates): gates.allow_conflicted_completion lets the request end complete on a worktree conflict, recorded as an override", async () => {
  const collected: string[] = [];
  const { lines, requests, result } = await journey(
    (dir) => conflictingCoders(dir, collected),
    "two changes to src.txt",
    {
      files: { Makefile: "test:\n\ttrue\n" },
      userFiles: { "config.yaml": `${ONE_GATE}  allow_conflicted_completion: true\n` },
    },
  );
  const wt = gateEvents(lines).filter((g) => g.gate === "worktree");
  assert.deepEqual(wt.map((g) => g.decision), ["block", "override"]);
  assert.match(wt[1].reason, /allow_conflicted_completion is true/);
  assert.equal(wt[1].setting, "allow_conflicted_completion");
  assert.ok(
    !requests.some((r) => String(messages(r).at(-1)!.content).includes("Completion gate:")),
    "no continuation under the override",
  );
  assert.equal(result.gates.complete, true);
  assert.deepEqual(result.gates.overrides.map((o: Json) => o.gate), ["worktree"]);
});

Deno.test("journey (gates): the coordinator writes the conflicted child's change itself after the hold → its patch is in the workspace → the gate is lifted → complete", async () => {
  const collected: string[] = [];
  const { lines, result, file } = await journey(
    (dir) =>
      conflictingCoders(
        dir,
        collected,
        (n) =>
          n === 3
            ? call("fs_read", { path: "src.txt" })
            : n === 4
            ? call("fs_write", { path: "src.txt", content: "other\n" })
            : { text: n === 2 ? "FINAL" : "FINAL: src.txt has the second coder's change" },
      ),
    "two changes to src.txt",
    { files: { Makefile: "test:\n\ttrue\n" }, userFiles: { "config.yaml": ONE_GATE } },
  );
  assert.equal(file, "other\n");
  const wt = gateEvents(lines).filter((g) => g.gate === "worktree");
  assert.deepEqual(wt.map((g) => g.decision), ["block", "continue", "allow"]);
  assert.match(wt[2].reason, /conflict is resolved: its patch is in the workspace/);
  assert.equal(result.gates.complete, true);
  assert.deepEqual(result.gates.open, []);
});

Deno.test("journey (gates): a coder that ends CODER_FAILED with a spec present → no reviewer required (decision none) → the request ends complete; the failed change is still in the tree", async () => {
  const { lines, result, file } = await journey(
    () => {
      const s = sisyphus("coder", "make src.txt say fixed");
      return (r) => graphCoder(r) ?? s(r);
    },
    "make src.txt say fixed",
    { files: { "PLAN.md": "1. make src.txt say fixed\n" } },
  );
  noRefusedSubmit(lines);
  assert.match(String(result.text), /^FINAL:\ncoder-\w+ completed:\nCODER_FAILED/);
  assert.equal(file, "half\n", "its change stays in the workspace");
  const rev = gateEvents(lines).filter((g) => g.gate === "reviewers");
  assert.deepEqual(rev.map((g) => g.decision), ["none"]);
  assert.match(
    rev[0].reason,
    /coder-\w+ ended CODER_FAILED: a failed implementation calls for no reviewer by itself/,
  );
  assert.deepEqual(result.gates, { complete: true, open: [], overrides: [] });
});
