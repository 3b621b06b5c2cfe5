/**
 * The pure gate decisions (core/supervisor/gates.ts) and the config's `gates:` validation; the
 * gates in a running coordinator are asserted in tests/journeys_test.ts.
 * @module
 */
import assert from "node:assert/strict";
import {
  gateSettings,
  globToRegExp,
  implementationFailure,
  parseAdversary,
  parseFindings,
  parseIntent,
  parsePlanReview,
  pathMatches,
  reviewerTriggers,
  securityVerdict,
} from "../core/supervisor/gates.ts";
import { GateKeeper } from "../core/supervisor/gate_keeper.ts";
import type { EngineEvent } from "../core/protocol/types.ts";

Deno.test("gates: the Phase 0 intent line is parsed (dash variants, markup), absent is null", () => {
  assert.deepEqual(parseIntent("Intent: add greet() — class: implementation"), {
    text: "add greet()",
    class: "implementation",
  });
  assert.deepEqual(parseIntent("ok\n**Intent:** find the router -- class: find in code\nmore"), {
    text: "find the router",
    class: "find in code",
  });
  assert.equal(parseIntent("I will add greet() now."), null);
  assert.equal(parseIntent("My intent: x"), null);
});

Deno.test("gates: PLAN_REVIEW and ADVERSARIAL_REVIEW verdict lines (the last one counts)", () => {
  assert.equal(parsePlanReview("1. step 3 untestable\nPLAN_REVIEW: REJECT"), "REJECT");
  assert.equal(parsePlanReview("PLAN_REVIEW: REJECT\nrevised\n`PLAN_REVIEW: OKAY`"), "OKAY");
  assert.equal(parsePlanReview("the verdict PLAN_REVIEW: OKAY is what I'd give"), null);
  assert.equal(parsePlanReview("nothing"), null);
  const d = parseAdversary("ADVERSARIAL_REVIEW: DIVERGES\nCriteria: 0/1\nComplaints:\n1. bad\n");
  assert.deepEqual(d, { verdict: "DIVERGES", complaints: "Complaints:\n1. bad" });
  assert.equal(parseAdversary("ADVERSARIAL_REVIEW: CONFORMS\n")?.verdict, "CONFORMS");
  assert.equal(parseAdversary("ADVERSARIAL_REVIEW: UNMET")?.verdict, "UNMET");
  assert.equal(parseAdversary("no verdict"), null);
});

Deno.test("gates: globs match relative paths at any depth", () => {
  assert.ok(pathMatches("src/auth/login.ts", "**/*auth*"));
  assert.ok(!globToRegExp("**/*auth*").test("src/auth/login.ts"));
  assert.ok(globToRegExp("**/*auth*").test("oauth.ts"));
  assert.ok(globToRegExp("**/package.json").test("package.json"));
  assert.ok(globToRegExp("**/package.json").test("web/package.json"));
  assert.ok(!globToRegExp("**/package.json").test("package.json.bak"));
  assert.ok(globToRegExp("**/protocol/**").test("core/protocol/types.ts"));
  assert.ok(!globToRegExp("src/*.ts").test("src/a/b.ts"));
});

Deno.test("gates: reviewer triggers — broad scope (coders, files, boundary), spec, attack surface", () => {
  const s = gateSettings(undefined);
  assert.deepEqual(reviewerTriggers(["src.txt"], 1, null, s), []);
  const two = reviewerTriggers(["a.txt"], 2, null, s);
  assert.deepEqual(two.map((t) => [t.reviewer, t.trigger]), [["code-reviewer", "broad_scope"]]);
  assert.match(two[0].reason, /2 coders/);
  const five = reviewerTriggers(["a", "b", "c", "d", "e"], 1, null, s);
  assert.match(five[0].reason, /5 files changed \(broad_scope\.files 5\)/);
  assert.match(reviewerTriggers(["core/protocol/x.ts"], 1, null, s)[0].reason, /boundary/);
  const all = reviewerTriggers(["package.json", "src/x.js"], 1, "PLAN.md", s);
  assert.deepEqual(all.map((t) => t.reviewer), ["adversary", "security-reviewer"]);
  assert.match(all[1].reason, /package\.json/);
  // Configurable thresholds and patterns.
  const c = gateSettings({ broad_scope: { files: 2, boundaries: [] }, attack_surface: ["*.sql"] });
  assert.deepEqual(
    reviewerTriggers(["q.sql", "package.json"], 1, null, c).map((t) => t.reviewer),
    ["code-reviewer", "security-reviewer"],
  );
});

Deno.test("gates: security findings → PASS/FAIL by posture (Critical always blocks)", () => {
  const text =
    "Findings:\n- [High] src/a.ts:3 — injection — … — fix\n[Low] b.ts:1 — x — y — z\n**Medium** c.ts:2 — …";
  assert.deepEqual(parseFindings(text), { Critical: 0, High: 1, Medium: 1, Low: 1 });
  // The ladder agents/security-reviewer states: prototype Critical; standard +High; hardened +Medium.
  assert.equal(securityVerdict(text, "prototype").verdict, "PASS");
  assert.equal(securityVerdict(text, "standard").verdict, "FAIL");
  assert.equal(securityVerdict(text, "hardened").verdict, "FAIL");
  const medium = "[Medium] c.ts:2 — no input length check — … — cap it";
  assert.equal(securityVerdict(medium, "standard").verdict, "PASS");
  assert.equal(securityVerdict(medium, "hardened").verdict, "FAIL");
  const crit = "[Critical] .env:1 — committed secret — … — remove";
  for (const p of ["prototype", "standard", "hardened"] as const) {
    const v = securityVerdict(crit, p);
    assert.equal(v.verdict, "FAIL");
    assert.match(v.reason, new RegExp(`Critical block under posture ${p}`));
  }
  assert.equal(securityVerdict("No findings.", "hardened").verdict, "PASS");
});

function keeper(raw = {}) {
  const events: Json[] = [] as Json[];
  const k = new GateKeeper("sisyphus", raw, undefined);
  k.beginRequest((ev: EngineEvent) => events.push((ev as Json)._meta.coyote));
  return { k, events };
}
// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("gate keeper: a missing intent line nudges once per request; a present one is an event", async () => {
  const { k, events } = keeper();
  k.firstResponse("Intent: fix it — class: trivial");
  assert.deepEqual(events, [{ event: "intent", class: "trivial", text: "fix it" }] as Json[]);
  k.beginRequest((ev: EngineEvent) => events.push((ev as Json)._meta.coyote));
  k.firstResponse("doing it");
  assert.equal(events.at(-1).decision, "nudge");
  const first = await k.collected([]);
  assert.match(first, /Intent: <what you heard> — class: <class>/);
  assert.equal(await k.collected([]), "", "never twice per request");
  // Not a coordinator: no gates.
  const other = new GateKeeper("coyote", undefined, undefined);
  assert.equal(other.active, false);
});

Deno.test("gate keeper: REJECT blocks implementation spawns until OKAY; DIVERGES holds the end once", async () => {
  const { k, events } = keeper();
  await k.collected([{
    id: "oracle-1",
    agent: "oracle",
    status: "completed",
    text: "1. x\nPLAN_REVIEW: REJECT",
  }]);
  assert.match(k.beforeSpawn("coder")!, /oracle-1 answered PLAN_REVIEW: REJECT/);
  assert.equal(k.beforeSpawn("explore"), null);
  await k.collected([{
    id: "oracle-2",
    agent: "oracle",
    status: "completed",
    text: "PLAN_REVIEW: OKAY",
  }]);
  assert.equal(k.beforeSpawn("coder"), null);
  assert.deepEqual(events.map((e) => [e.gate, e.decision]), [
    ["plan_review", "block"],
    ["plan_review", "block"],
    ["plan_review", "allow"],
  ]);
  await k.collected([{
    id: "adversary-1",
    agent: "adversary",
    status: "completed",
    text: "ADVERSARIAL_REVIEW: DIVERGES\nComplaints:\n1. nope",
  }]);
  const cont = (await k.beforeTurnEnd())!;
  assert.match(cont, /last adversary verdict \(adversary-1\) is DIVERGES[^]*Complaints:\n1\. nope/);
  assert.equal(await k.beforeTurnEnd(), null, "once per request");
  const o = keeper({ allow_divergent_completion: true });
  await o.k.collected([{
    id: "adversary-2",
    agent: "adversary",
    status: "completed",
    text: "ADVERSARIAL_REVIEW: UNMET",
  }]);
  assert.equal(await o.k.beforeTurnEnd(), null);
  assert.equal(o.events.at(-1).decision, "override");
});

Deno.test("gate keeper: required reviewers run in the seeds' order; the end is held once per state, then incomplete", async () => {
  // A git workspace with 6 untracked files: broad scope (5+), a spec (PLAN.md), auth.js.
  const dir = await Deno.makeTempDir();
  try {
    const run = (cmd: string[]) =>
      new Deno.Command(cmd[0], { args: cmd.slice(1), cwd: dir }).output();
    await run(["git", "init", "-q"]);
    for (const f of ["a", "b", "c", "d", "auth.js"]) await Deno.writeTextFile(`${dir}/${f}`, f);
    await Deno.writeTextFile(`${dir}/PLAN.md`, "1. x");
    const g = new GateKeeper("sisyphus", undefined, dir);
    const ev: Json[] = [];
    g.beginRequest((e: EngineEvent) => ev.push((e as Json)._meta.coyote));
    const note = await g.collected([{
      id: "coder-1",
      agent: "coder",
      status: "completed",
      text: "",
    }]);
    assert.match(
      note,
      /in this order, one after another[^]*1\. code-reviewer[^]*2\. adversary[^]*3\. security-reviewer/,
    );
    assert.match(g.beforeSpawn("security-reviewer")!, /code-reviewer is next/);
    assert.match(g.beforeSpawn("adversary")!, /code-reviewer is next/);
    assert.equal(g.beforeSpawn("code-reviewer"), null);
    assert.match(
      (await g.beforeTurnEnd())!,
      /Completion gate: required reviewer\(s\) not run: code-reviewer → adversary → security-reviewer\. Spawn code-reviewer now/,
    );
    assert.equal(await g.beforeTurnEnd(), null, "the same state holds the end once");
    assert.deepEqual(g.outcome()?.complete, false);
    await g.collected([{
      id: "code-reviewer-1",
      agent: "code-reviewer",
      status: "completed",
      text: "approve",
    }]);
    assert.match((await g.beforeTurnEnd())!, /Spawn adversary now/, "a new state holds again");
    assert.equal(g.beforeSpawn("adversary"), null);
    await g.collected([{
      id: "adversary-1",
      agent: "adversary",
      status: "completed",
      text: "ADVERSARIAL_REVIEW: CONFORMS",
    }]);
    await g.collected([{
      id: "security-reviewer-1",
      agent: "security-reviewer",
      status: "failed",
      text: "",
    }]);
    assert.equal(g.beforeSpawn("security-reviewer"), null, "a failed run counts for nothing");
    await g.collected([{
      id: "security-reviewer-2",
      agent: "security-reviewer",
      status: "completed",
      text: "[Low] a:1 — x — y — z",
    }]);
    assert.equal(await g.beforeTurnEnd(), null);
    assert.deepEqual(g.outcome(), { complete: true, open: [], overrides: [] });
    assert.deepEqual(
      ev.filter((e) => e.gate === "reviewers").map((e) => [e.decision, e.next ?? null]),
      [
        ["require", null],
        ["block", "code-reviewer"],
        ["block", "code-reviewer"],
        ["continue", "code-reviewer"],
        ["incomplete", "code-reviewer"],
        ["next", "adversary"],
        ["continue", "adversary"],
        ["next", "security-reviewer"],
        ["satisfied", null],
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gate keeper: a security FAIL and a Critical code-review finding hold the end like DIVERGES; the override is recorded", async () => {
  for (const posture of ["prototype", "standard", "hardened"] as const) {
    const { k, events } = keeper({ posture });
    await k.collected([{
      id: "security-reviewer-1",
      agent: "security-reviewer",
      status: "completed",
      text: "[Critical] .env:1 — secret — — remove",
    }]);
    assert.match(
      (await k.beforeTurnEnd())!,
      new RegExp(`security review security-reviewer-1 is FAIL under posture ${posture}`),
    );
    assert.equal(await k.beforeTurnEnd(), null);
    assert.equal(k.outcome()!.complete, false);
    assert.deepEqual(events.filter((e) => e.gate === "security").map((e) => e.decision), [
      "fail",
      "continue",
      "incomplete",
    ]);
  }
  const hi = "[High] a.js:1 — injection — — escape";
  const proto = keeper({ posture: "prototype" });
  await proto.k.collected([{
    id: "s-1",
    agent: "security-reviewer",
    status: "completed",
    text: hi,
  }]);
  assert.equal(await proto.k.beforeTurnEnd(), null, "a High does not block under prototype");
  assert.equal(proto.k.outcome()!.complete, true);
  const hard = keeper({ posture: "hardened" });
  await hard.k.collected([{
    id: "s-1",
    agent: "security-reviewer",
    status: "completed",
    text: hi,
  }]);
  assert.ok(await hard.k.beforeTurnEnd(), "a High blocks under hardened");
  await hard.k.collected([{
    id: "s-2",
    agent: "security-reviewer",
    status: "completed",
    text: "No findings.",
  }]);
  assert.equal(hard.k.outcome()!.complete, true, "a later PASS lifts it");
  // Critical from the code reviewer blocks too; the user's override lets the turn end, recorded.
  const o = keeper({ allow_insecure_completion: true });
  await o.k.collected([{
    id: "code-reviewer-1",
    agent: "code-reviewer",
    status: "completed",
    text: "[critical] x.ts:3 — drops data — fix",
  }]);
  assert.equal(o.events.at(-1).gate, "code_review");
  assert.equal(await o.k.beforeTurnEnd(), null);
  assert.deepEqual(o.events.at(-1), {
    event: "gate",
    gate: "code_review",
    decision: "override",
    reason:
      "the request ends while code review code-reviewer-1 has 1 Critical finding(s); Critical blocks in every posture: gates.allow_insecure_completion is true",
    critical: 1,
    setting: "allow_insecure_completion",
  });
  const out = o.k.outcome()!;
  assert.equal(out.complete, true);
  assert.deepEqual(out.overrides.map((x) => x.gate), ["code_review"]);
});

Deno.test("gates: config.yaml `gates:` is validated, the error names the field", async () => {
  const { parseConfig } = await import("../core/config/config.ts");
  const ok = await parseConfig(
    "gates:\n  posture: hardened\n  broad_scope: {files: 3}\n  attack_surface: ['**/*.sql']\n",
    "/x/config.yaml",
  );
  assert.equal(ok.gates?.posture, "hardened");
  assert.equal(gateSettings(ok.gates).broad_scope.files, 3);
  assert.equal(gateSettings(ok.gates).broad_scope.coders, 2);
  await assert.rejects(
    () => parseConfig("gates:\n  posture: strict\n", "/x/config.yaml"),
    /gates\.posture: expected prototype, standard or hardened/,
  );
  await assert.rejects(
    () => parseConfig("gates:\n  broad_scope: {files: 0}\n", "/x/config.yaml"),
    /gates\.broad_scope\.files/,
  );
  await assert.rejects(
    () => parseConfig("gates:\n  postur: hardened\n", "/x/config.yaml"),
    /gates\.postur: unknown key/,
  );
});

Deno.test("gates: an implementation child failed by its status or its marker line (CODER_FAILED, STEP_FAILED, …_REJECTED)", () => {
  assert.equal(implementationFailure("failed", ""), "failed");
  assert.equal(
    implementationFailure("completed", "CODER_FAILED\nLast failure: make test"),
    "CODER_FAILED",
  );
  assert.equal(implementationFailure("completed", "\n**STEP_FAILED**\nStep 1"), "STEP_FAILED");
  assert.equal(
    implementationFailure("completed", "CODER_REJECTED\nout of scope"),
    "CODER_REJECTED",
  );
  assert.equal(implementationFailure("completed", "CODER_COMPLETE\nfixed"), null);
  assert.equal(
    implementationFailure("completed", "done; no CODER_FAILED here"),
    null,
    "first line only",
  );
});
