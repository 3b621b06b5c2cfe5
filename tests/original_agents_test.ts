/**
 * The original Coyote's coder and step-runner, as re-created in tests/fixtures/original/{coder,
 * step-runner} from their facts (same node ids, kinds, keys, routing, state and script contract;
 * the README there says why not the files themselves), installed in the user's agents dir where
 * they replace the built-ins of the same names: `coyote graph check` passes on both; a scripted
 * headless run of coder goes through its fix loop (build passes, tests fail once) to
 * CODER_COMPLETE; a scripted ACP run of step-runner (the official client answering its approval
 * gate) resolves the step, orients, drives coder through the agent node, verifies, sweeps, writes
 * and checks the handoff, and ends STEP_COMPLETE.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { childEnv, makeCoyoteEnv, REPO_ROOT, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";
import { acpTestEnv, finishAcp, startAcp } from "./support/acp_harness.ts";

const FIXTURES = join(REPO_ROOT, "tests/fixtures/original");

async function install(configDir: string): Promise<void> {
  await Deno.mkdir(join(configDir, "agents"), { recursive: true });
  for (const a of ["coder", "step-runner", ".shared"]) {
    const cp = await new Deno.Command("cp", {
      args: ["-r", join(FIXTURES, a), join(configDir, "agents", a)],
    }).output();
    assert.equal(cp.code, 0);
  }
}

/** A git repository whose Makefile's `check` wants hello.txt and `test` wants it to say hello. */
async function project(dir: string): Promise<void> {
  await Deno.writeTextFile(
    join(dir, "Makefile"),
    "check:\n\ttest -f hello.txt\ntest:\n\tgrep -qx hello hello.txt\n",
  );
  await new Deno.Command("git", { args: ["init", "-q", dir] }).output();
}

const call = (name: string, args: Record<string, unknown>) => ({
  tool_calls: [{ name, arguments: args }],
});
const plan = call("submit_result", {
  plan_summary: "create hello.txt",
  files_to_modify: [],
  files_to_create: ["hello.txt"],
  complexity_score: 2,
  risks: [],
});
/** The coder's turns: a plan, a wrong first write, the fix after its tests fail, a clean review. */
const CODER_TURNS = [
  plan,
  call("fs_write", { path: "hello.txt", content: "hullo\n" }),
  { text: "wrote hello.txt" },
  call("fs_write", { path: "hello.txt", content: "hello\n" }),
  { text: "fixed hello.txt" },
  call("submit_result", { review_clean: true, review_notes: "matches the plan" }),
];

Deno.test("original coder and step-runner: graph check passes on both", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-orig-" });
  try {
    await install(env.configDir);
    for (const [a, n] of [["coder", 13], ["step-runner", 24]] as const) {
      const dir = join(env.configDir, "agents", a);
      const r = await runCoyote(["graph", "check", dir], { cwd, env: childEnv(env) });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), `${join(dir, "graph.yaml")}: ok (${n} nodes)`);
      // Only the skill keys are left unused, each named.
      for (const line of r.stderr.trim().split("\n")) {
        assert.match(line, /^coyote: warning: .*graph\.yaml: .*skills are not loaded/);
      }
    }
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("original coder: a scripted headless run goes through its fix loop to CODER_COMPLETE", async () => {
  const server = await startModelServer({ script: CODER_TURNS });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-orig-" });
  try {
    await install(env.configDir);
    await project(cwd);
    const r = await runCoyote(
      ["-a", "coder", "--headless", "--output-format", "json", "create hello.txt saying hello"],
      { cwd, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    const text = String(JSON.parse(r.stdout).text);
    assert.match(text, /^CODER_COMPLETE\nPlan: create hello\.txt\n/);
    assert.match(text, /Tests: make test: exit 0/);
    assert.match(text, /Fix attempts: 1\n/);
    assert.equal(await Deno.readTextFile(join(cwd, "hello.txt")), "hello\n");
    assert.equal(server.requests.length, 6);
    // The second implement turn got the failing test's output from fix_loop_gate.
    assert.match(
      JSON.stringify(server.requests[3].body),
      /A check failed; fix it:.*make test: exit 2/,
    );
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("original step-runner: a scripted ACP run drives coder and stops at its approval gate, answered: STEP_COMPLETE", async () => {
  const handoff = [
    "---",
    "step: 1",
    "title: Hello",
    "result: complete",
    "---",
    ...[
      "Summary",
      "Completed",
      "Not completed",
      "Deviations",
      "Downstream plan updates",
      "Edge cases discovered",
      "Evidence",
      "Notes for next step",
    ].flatMap((s) => ["", `## ${s}`, s === "Evidence" ? "make test: exit 0" : "None"]),
    "",
  ].join("\n");
  const e = await acpTestEnv([
    call("fs_cat", { path: "plans/steps/01-hello.md" }), // orient
    call("submit_result", {
      plan_summary: "create hello.txt",
      implementation_brief: "Create hello.txt holding hello.",
      staleness_report: "none",
      has_major_deviation: false,
      deviation_summary: "",
    }),
    ...CODER_TURNS, // the agent node: coder, in its own session
    call("submit_result", {
      edge_case_report: "none",
      downstream_updates: "none",
      needs_independent_review: false,
    }),
    call("fs_write", { path: "plans/handoffs/01-hello.md", content: handoff }), // write_handoff
    call("submit_result", { step_summary: "Step 1 created hello.txt; its checks pass." }),
  ], "coyote-orig-acp");
  try {
    await install(join(e.data, "config"));
    await project(e.ws);
    await Deno.mkdir(join(e.ws, "plans/steps"), { recursive: true });
    await Deno.mkdir(join(e.ws, "plans/handoffs"), { recursive: true });
    const stepPlan = join(e.ws, "plans/steps/01-hello.md");
    await Deno.writeTextFile(
      stepPlan,
      "---\nstep: 1\ntitle: Hello\ndepends_on: []\nstatus: pending\n---\n\n## Objective\nhello.txt says hello.\n\n## Test commands\nmake test\n",
    );
    const h = await startAcp({ env: e.env, permissionAnswers: ["option-0"] });
    const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    await h.agent.request("session/set_config_option", {
      sessionId,
      configId: "agent",
      value: "step-runner",
    } as acp.SetSessionConfigOptionRequest);
    const r = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "run the next step" }],
    });
    assert.equal(r.stopReason, "end_turn", h.stderr().slice(-2000));
    // The one question: gate_user_review, with its options (+ a free answer).
    assert.equal(h.permissionRequests.length, 1);
    const gate = h.permissionRequests[0];
    assert.match(gate.toolCall.title ?? "", /^Step 1 \(Hello\) is done: Step 1 created hello\.txt/);
    assert.deepEqual(gate.options.map((o) => o.name), ["approve", "revise", "other"]);
    const said = h.updatesFor(sessionId)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => ((u as { content: { text?: string } }).content.text ?? "")).join("");
    assert.match(
      said,
      /STEP_COMPLETE\nStep 1 \(Hello\); handoff .*plans\/handoffs\/01-hello\.md\n/,
    );
    assert.match(said, /Fix attempts: 0\/2\n/, "step-runner's own checks passed at once");
    assert.equal(e.requests(), 11);
    assert.doesNotMatch(h.stderr(), /not one of its routes|failed/);
    assert.equal(await Deno.readTextFile(join(e.ws, "hello.txt")), "hello\n");
    assert.equal(await Deno.readTextFile(join(e.ws, "plans/handoffs/01-hello.md")), handoff);
    assert.match(
      await Deno.readTextFile(stepPlan),
      /^status: complete$/m,
      "check_handoff marked it",
    );
    await finishAcp(h);
  } finally {
    await e.close();
  }
});
