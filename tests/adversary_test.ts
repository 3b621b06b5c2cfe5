/**
 * The adversary graph end to end: `coyote -a adversary --agent-variable project_dir DIR` as a real
 * subprocess on real temporary git repositories, against the scripted model answering per node
 * (matched on the node's instructions). The verdict is computed, so the sentinel text is asserted
 * exactly (durations aside).
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

type Msg = { role: string; content: string };
const system = (r: RecordedRequest) =>
  ((r.body as { messages: Msg[] }).messages.find((m) => m.role === "system")?.content) ?? "";
const lastUser = (r: RecordedRequest) =>
  (r.body as { messages: Msg[] }).messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
const submit = (args: unknown): ScriptedReply => ({
  tool_calls: [{ name: "submit_result", arguments: args as Record<string, unknown> }],
});

interface Plan {
  criteria: { id: string; text: string }[];
  commands: string[];
  /** Verdict per criterion id; `recheck` answers the gate's re-check. */
  verdicts: Record<string, Record<string, unknown>>;
  recheck?: Record<string, Record<string, unknown>>;
  extras?: unknown[];
}

function model(plan: Plan) {
  return (r: RecordedRequest): ScriptedReply => {
    const sys = system(r);
    const user = lastUser(r);
    if (sys.includes("You extract acceptance criteria")) {
      return submit({ criteria: plan.criteria, verification_commands: plan.commands });
    }
    if (sys.includes("You verify ONE acceptance criterion")) {
      const id = user.match(/^Criterion (C\d+):/)![1];
      const again = user.includes("was rejected by the gate");
      return submit({ criterion_id: id, ...(again ? plan.recheck?.[id] : plan.verdicts[id]) });
    }
    if (sys.includes("You look for problems")) return submit({ extras: plan.extras ?? [] });
    throw new Error(`unexpected request: ${sys.slice(0, 80)}`);
  };
}

async function git(cwd: string, ...args: string[]) {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@t", "-c", "user.name=t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** A repo with one commit, then an unstaged change adding greet() and its test. */
async function repo(parent: string): Promise<string> {
  const dir = join(parent, "repo");
  await Deno.mkdir(dir);
  await git(dir, "init", "-q");
  await Deno.writeTextFile(join(dir, "src.js"), "export const x = 1;\n");
  await git(dir, "add", ".");
  await git(dir, "commit", "-qm", "base");
  await Deno.writeTextFile(
    join(dir, "src.js"),
    "export const x = 1;\nexport function greet() { return 'hi'; }\n",
  );
  await Deno.writeTextFile(
    join(dir, "src_test.js"),
    "import { greet } from './src.js';\nif (greet() !== 'hi') throw 1;\n",
  );
  return dir;
}

async function review(plan: Plan, opts: { gitRepo?: boolean } = {}) {
  const server = await startModelServer({ script: model(plan) });
  const env = await makeCoyoteEnv();
  const parent = await Deno.makeTempDir({ prefix: "coyote-adv-" });
  try {
    const dir = opts.gitRepo === false ? join(parent, "plain") : await repo(parent);
    if (opts.gitRepo === false) await Deno.mkdir(dir);
    const r = await runCoyote([
      "-a",
      "adversary",
      "--agent-variable",
      "project_dir",
      dir,
      "--headless",
      "--output-format",
      "json",
      "Review the change against the plan.",
    ], { cwd: parent, env: childEnv(env, { baseURL: server.baseURL }) });
    const result = JSON.parse(r.stdout);
    assert.equal(r.code, 0, r.stderr);
    return { text: String(result.text).replace(/\d+\.\d s\)/g, "N s)"), requests: server.requests };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(parent, { recursive: true });
  }
}

const met = (file: string, line: number, test: { file: string; line: number } | null) => ({
  status: "MET",
  evidence: [{ file, line, note: "the change" }],
  test,
  explanation: "done as asked",
  fix: "",
});

Deno.test("adversary: every criterion met with a test and green checks → CONFORMS", async () => {
  const { text } = await review({
    criteria: [{ id: "C1", text: "adds greet()" }, { id: "C2", text: "the tests pass" }],
    commands: ["grep -q greet src.js"],
    verdicts: {
      C1: met("src.js", 2, { file: "src_test.js", line: 2 }),
      C2: met("src_test.js", 1, null),
    },
  });
  assert.equal(
    text,
    "ADVERSARIAL_REVIEW: CONFORMS\nCriteria: 2/2 met (all with tests).\n\nVerification runs:\n- PASS `grep -q greet src.js` (exit 0, N s)",
  );
});

Deno.test("adversary: MET without a test → PARTIAL after one re-check; no change → UNMET; PIPELINE-FAULT evidence never counts; a failing check is cited", async () => {
  const { text, requests } = await review({
    criteria: [
      { id: "C1", text: "adds greet()" },
      { id: "C2", text: "adds farewell()" },
      { id: "C3", text: "documents greet()" },
    ],
    commands: ["grep -q farewell src.js"],
    verdicts: {
      C1: met("src.js", 2, null),
      C2: {
        status: "UNMET",
        evidence: [],
        test: null,
        explanation: "no farewell() anywhere in the diff",
        fix: "add farewell() and a test",
      },
      C3: {
        ...met("README.md", 1, { file: "src_test.js", line: 1 }),
        evidence: [{ file: "", line: 0, note: "PIPELINE-FAULT: criterion C3: echoed" }],
      },
    },
    recheck: { C1: met("src.js", 2, null) },
  });
  assert.equal(
    text,
    [
      "ADVERSARIAL_REVIEW: DIVERGES",
      "Criteria: 0/3 met, 1 partial, 2 unmet/diverged.",
      "Complaints:",
      '1. Acceptance criterion "adds greet()" — Partial — done as asked (gate: MET without a proving test (cite the test\'s file and line); re-check exhausted) (src.js:2)',
      '2. Acceptance criterion "adds farewell()" — Unmet — no farewell() anywhere in the diff — add farewell() and a test',
      '3. Acceptance criterion "documents greet()" — Unmet — done as asked',
      "",
      "Verification runs:",
      "- FAIL `grep -q farewell src.js` (exit 1, N s)",
    ].join("\n"),
  );
  // One re-check request for C1 only, told why.
  const rechecks = requests.filter((r) => lastUser(r).includes("was rejected by the gate"));
  assert.equal(rechecks.length, 1);
  assert.match(lastUser(rechecks[0]), /^Criterion C1:/);
  // Each criterion was judged in its own fresh conversation (one user message each).
  const checks = requests.filter((r) => system(r).includes("You verify ONE acceptance criterion"));
  for (const c of checks) {
    assert.equal(
      (c.body as { messages: Msg[] }).messages.filter((m) => m.role === "user").length,
      1,
    );
  }
});

Deno.test("adversary: the diff stage failing → DIVERGES with PIPELINE-FAULT first", async () => {
  const { text } = await review({
    criteria: [{ id: "C1", text: "adds greet()" }],
    commands: [],
    verdicts: {},
  }, { gitRepo: false });
  assert.match(
    text,
    /^ADVERSARIAL_REVIEW: DIVERGES\nCriteria: 0\/1 met, 0 partial, 1 unmet\/diverged\.\nComplaints:\n1\. PIPELINE-FAULT: diff_facts: /,
  );
  assert.match(
    text,
    /\n2\. Acceptance criterion "adds greet\(\)" — Unmet — no verdict was recorded for it\n/,
  );
  assert.match(
    text,
    /\n\nVerification runs: not run \(the review stopped before the verification stage\)\.$/,
  );
});

Deno.test("adversary: no criteria → DIVERGES", async () => {
  const { text } = await review({ criteria: [], commands: [], verdicts: {} });
  assert.equal(
    text,
    [
      "ADVERSARIAL_REVIEW: DIVERGES",
      "Criteria: 0/0 met, 0 partial, 0 unmet/diverged.",
      "Complaints:",
      "1. No acceptance criteria were found: without a plan to check against, nothing can conform. Give the plan's acceptance criteria in the request.",
      "",
      "Verification runs: none declared.",
    ].join("\n"),
  );
});
