/**
 * The adversary's deterministic scripts (agents/adversary/scripts/), as functions: the verdict's
 * exact sentinel text, the gate's rules, ref resolution, and the checks runner with real commands.
 * tests/adversary_test.ts runs the whole graph on real git repositories.
 * @module
 */
import assert from "node:assert/strict";
import verdict, { computeVerdict } from "../agents/adversary/scripts/verdict.ts";
import critGate, { isRunCriterion } from "../agents/adversary/scripts/crit_gate.ts";
import { bound, DIFF_LIMIT, namedRef } from "../agents/adversary/scripts/diff_facts.ts";
import runChecks from "../agents/adversary/scripts/run_checks.ts";

const C = [{ id: "C1", text: "adds --json" }, { id: "C2", text: "the tests pass" }];
const met = (id: string, test = true) => ({
  criterion_id: id,
  status: "MET",
  evidence: [{ file: "src/cli.ts", line: 12, note: "flag added" }],
  test: test ? { file: "tests/cli_test.ts", line: 30 } : null,
  explanation: "done",
  fix: "",
});
const green = [{ command: "deno test", status: "PASS", exit_code: 0, duration_ms: 1234 }];

Deno.test("adversary verdict: CONFORMS only with all criteria met, no extras, no faults", () => {
  const report = computeVerdict({
    criteria: C,
    verdicts: [met("C1"), met("C2", false)],
    extras: [],
    faults: [],
    checks: green,
    checks_reached: true,
  });
  assert.equal(
    report,
    "ADVERSARIAL_REVIEW: CONFORMS\nCriteria: 2/2 met (all with tests).\n\nVerification runs:\n- PASS `deno test` (exit 0, 1.2 s)",
  );
});

Deno.test("adversary verdict: DIVERGES lists faults first, then criteria with file:line, then extras", () => {
  const report = computeVerdict({
    criteria: C,
    verdicts: [
      {
        ...met("C1"),
        status: "PARTIAL",
        explanation: "flag parsed but never used",
        fix: "wire it to the printer",
      },
      {
        ...met("C2"),
        status: "UNMET",
        evidence: [],
        explanation: "tests fail",
        fix: "fix the test",
      },
    ],
    extras: [{
      kind: "scope_drift",
      file: "src/x.ts",
      line: 3,
      complaint: "renames a public API",
      fix: "revert it",
    }],
    faults: ["PIPELINE-FAULT: diff_facts: git exited 128"],
    checks: [{
      command: "deno test",
      status: "FAIL",
      exit_code: 1,
      duration_ms: 500,
      tail: "error: 1 failed",
    }],
    checks_reached: true,
  });
  assert.equal(
    report,
    [
      "ADVERSARIAL_REVIEW: DIVERGES",
      "Criteria: 0/2 met, 1 partial, 1 unmet/diverged.",
      "Complaints:",
      "1. PIPELINE-FAULT: diff_facts: git exited 128",
      '2. Acceptance criterion "adds --json" — Partial — flag parsed but never used (src/cli.ts:12) — wire it to the printer',
      '3. Acceptance criterion "the tests pass" — Unmet — tests fail — fix the test',
      "4. Scope drift — renames a public API (src/x.ts:3) — revert it",
      "",
      "Verification runs:",
      "- FAIL `deno test` (exit 1, 0.5 s)",
      "    error: 1 failed",
    ].join("\n"),
  );
});

Deno.test("adversary verdict: no criteria, a faulted MET, a dead holistic pass, the markers, the crash guard", () => {
  const none = computeVerdict({
    criteria: [],
    verdicts: [],
    extras: [],
    faults: [],
    checks: [],
    checks_reached: true,
  });
  assert.match(
    none,
    /^ADVERSARIAL_REVIEW: DIVERGES\nCriteria: 0\/0 met, 0 partial, 0 unmet\/diverged\.\nComplaints:\n1\. No acceptance criteria/,
  );
  assert.match(none, /\n\nVerification runs: none declared\.$/);
  const faulted = computeVerdict({
    criteria: [C[0]],
    verdicts: [{
      ...met("C1"),
      evidence: [{ file: "", line: 0, note: "PIPELINE-FAULT: criterion C1: died" }],
    }],
    checks_reached: false,
  });
  assert.match(
    faulted,
    /^ADVERSARIAL_REVIEW: DIVERGES\nCriteria: 0\/1 met, 0 partial, 1 unmet\/diverged\./,
  );
  assert.match(
    faulted,
    /Verification runs: not run \(the review stopped before the verification stage\)\.$/,
  );
  const holistic = computeVerdict({
    criteria: [C[0]],
    verdicts: [met("C1")],
    checks: [],
    checks_reached: true,
    last_error: { node: "holistic", message: "provider down" },
  });
  assert.match(holistic, /Complaints:\n1\. PIPELINE-FAULT: holistic: provider down/);
  const crashed = verdict({ criteria: 7 as unknown as [] });
  assert.match(
    String(crashed.report),
    /^ADVERSARIAL_REVIEW: DIVERGES\nverdict computation error: /,
  );
  assert.doesNotMatch(String(crashed.report), /Verification runs/);
});

Deno.test("adversary gate: MET needs a test (or a green run for run criteria); one re-check, then PARTIAL", () => {
  assert.ok(isRunCriterion("the tests pass"));
  assert.ok(isRunCriterion("CI is green"));
  assert.ok(!isRunCriterion("adds a --json flag"));
  const state = {
    criteria: C,
    verdicts: [met("C1", false), met("C2", false)],
    checks: green,
    gate_round: 0,
  };
  const first = critGate(state);
  assert.equal(first._next, "recheck_map");
  assert.deepEqual(first.recheck, [{
    ...C[0],
    rejection: "MET without a proving test (cite the test's file and line)",
  }]);
  // Still no test on the re-check: PARTIAL, and on to holistic.
  const second = critGate({ ...state, ...first, rechecked: [met("C1", false)] });
  assert.equal(second._next, "holistic");
  const v = second.verdicts as { status: string }[];
  assert.deepEqual(v.map((x) => x.status), ["PARTIAL", "MET"]);
  // A MET carrying PIPELINE-FAULT evidence is UNMET and never re-checked.
  const f = critGate({
    criteria: [C[0]],
    verdicts: [{
      ...met("C1"),
      evidence: [{ file: "", line: 0, note: "PIPELINE-FAULT: criterion C1: x" }],
    }],
    gate_round: 0,
  });
  assert.equal(f._next, "holistic");
  assert.equal((f.verdicts as { status: string }[])[0].status, "UNMET");
  // Without a recorded green run a "tests pass" MET is rejected too.
  const r = critGate({ criteria: [C[1]], verdicts: [met("C2", false)], checks: [], gate_round: 0 });
  assert.equal(r._next, "recheck_map");
});

Deno.test("adversary diff_facts: the ref a request names, and the size bound", () => {
  assert.equal(namedRef("Review against --base main please"), "main");
  assert.equal(namedRef("check a1b2c3..HEAD for C1"), "a1b2c3..HEAD");
  assert.equal(namedRef("the change in HEAD~2"), "HEAD~2");
  assert.equal(namedRef("base: release/1.2, criteria: …"), "release/1.2");
  assert.equal(namedRef("Review the staged changes against the plan"), undefined);
  const big = Array.from(
    { length: 20 },
    (_, i) => `diff --git a/f${i} b/f${i}\n${"+x\n".repeat(5000)}`,
  ).join("");
  const b = bound(big);
  assert.ok(b.length <= DIFF_LIMIT + 200, String(b.length));
  assert.match(b, /characters of this file's diff cut/);
  assert.match(b, /diff cut at 60000 characters; 20 files in all/);
});

Deno.test("adversary run_checks: only the declared commands, in order, with exit codes, tails and SKIPPED", async () => {
  const ran: string[] = [];
  const exec = async (command: string, opts?: { timeout_ms?: number }) => {
    ran.push(command);
    const out = await new Deno.Command("bash", {
      args: ["-c", command],
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    assert.ok((opts?.timeout_ms ?? 0) > 0);
    return {
      exit_code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  let clock = 0;
  const r = await runChecks(
    { verification_commands: ["true", "echo boom >&2; exit 3", "true"], checks_deadline_s: 10 },
    {
      exec: async (c, o) => {
        const x = await exec(c, o);
        clock += 6000;
        return x;
      },
      now: () => clock,
    },
  );
  assert.deepEqual(ran, ["true", "echo boom >&2; exit 3"]);
  const checks = r.checks as {
    status: string;
    exit_code: number | null;
    tail?: string;
    reason?: string;
  }[];
  assert.deepEqual(checks.map((c) => c.status), ["PASS", "FAIL", "SKIPPED"]);
  assert.equal(checks[1].exit_code, 3);
  assert.match(checks[1].tail!, /boom/);
  assert.equal(checks[2].reason, "no time left of the 10 s deadline");
  assert.equal(r.checks_reached, true);
  const denied = await runChecks({ verification_commands: ["rm -rf /"] }, {
    exec: () => Promise.resolve({ exit_code: null, stdout: "", stderr: "", denied: "rule denies" }),
  });
  assert.deepEqual(
    (denied.checks as { status: string; tail: string }[]).map((c) => [c.status, c.tail]),
    [[
      "FAIL",
      "denied: rule denies",
    ]],
  );
});
