/**
 * Journeys: the seeds' flows driven from the DEFAULT agent (sisyphus), as a user runs them —
 * `coyote --headless --output-format stream-json` as a real subprocess on a real git repository,
 * against the scripted model server answering per agent and per graph node (matched on the
 * node's instructions). This is the place where a cross-module flow gets its test: each agent
 * also works alone (tests/adversary_test.ts, tests/coder_test.ts), but these flows cross the
 * supervisor, the session's tool ceiling and the graph engine (issue 17: a spawned graph's
 * `submit_result` was refused by its parent's tool ceiling).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { transcriptPath } from "../core/transcript/store.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
type Msg = { role: string; content: string | null; tool_calls?: Json[] };
const messages = (r: RecordedRequest) => (r.body as { messages: Msg[] }).messages;
const system = (r: RecordedRequest) => messages(r).find((m) => m.role === "system")?.content ?? "";
const submit = (args: Record<string, unknown>): ScriptedReply => ({
  tool_calls: [{ name: "submit_result", arguments: args }],
});
const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
  tool_calls: [{ name, arguments: args }],
});

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

/** A git repo with one commit, then an unstaged change adding greet() and its test. */
async function repo(parent: string): Promise<string> {
  const dir = join(parent, "repo");
  await Deno.mkdir(dir);
  await git(dir, "init", "-q");
  await Deno.writeTextFile(join(dir, "src.js"), "export const x = 1;\n");
  await Deno.writeTextFile(join(dir, "src.txt"), "broken\n");
  // The coder's verification, detected from the project (agents/coder/scripts/verify.ts).
  await Deno.writeTextFile(join(dir, "Makefile"), "test:\n\tgrep -q fixed src.txt\n");
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

const met = (file: string, line: number, test: { file: string; line: number } | null) => ({
  status: "MET",
  evidence: [{ file, line, note: "the change" }],
  test,
  explanation: "done as asked",
  fix: "",
});

/** The adversary's nodes: criteria C1 (and the verdict given for it). */
function adversaryNode(r: RecordedRequest, c1: Record<string, unknown>): ScriptedReply | null {
  const sys = system(r);
  if (sys.includes("You extract acceptance criteria")) {
    return submit({
      criteria: [{ id: "C1", text: "adds greet()" }],
      verification_commands: ["grep -q greet src.js"],
    });
  }
  if (sys.includes("You verify ONE acceptance criterion")) {
    return submit({ criterion_id: "C1", ...c1 });
  }
  if (sys.includes("You look for problems")) return submit({ extras: [] });
  return null;
}

/** The coder's nodes: plan, write `fixed`, review clean. */
function coderNode(r: RecordedRequest): ScriptedReply | null {
  const sys = system(r);
  const last = messages(r).at(-1)!;
  if (sys.includes("You plan a code change")) {
    return submit({
      plan_summary: "make src.txt say fixed",
      files_to_modify: ["src.txt"],
      files_to_create: [],
      complexity_score: 2,
      risks: [],
    });
  }
  if (sys.includes("You implement a planned change")) {
    const calls = messages(r).flatMap((m) => m.tool_calls ?? []).map((c) => c.function?.name);
    if (!calls.includes("fs_read")) return call("fs_read", { path: "src.txt" });
    if (!calls.includes("fs_write")) {
      return call("fs_write", { path: "src.txt", content: "fixed\n" });
    }
    if (last.role === "tool") return { text: "done" };
  }
  if (sys.includes("You review a change you made")) {
    return submit({ review_clean: true, review_notes: "clean" });
  }
  return null;
}

/**
 * sisyphus (any request no graph node claims): spawns `agent` with `prompt`, collects, and
 * answers with the collected result verbatim.
 */
function sisyphus(agent: string, prompt: string) {
  return (r: RecordedRequest): ScriptedReply => {
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    if (!calls.length) return call("agent__spawn", { agent, prompt });
    if (calls.length === 1) return call("agent__collect", {});
    // The collected result (after a completion gate's note too: the coordinator stops there).
    return { text: `FINAL:\n${ms.filter((m) => m.role === "tool").at(-1)!.content}` };
  };
}

/**
 * Runs sisyphus (the default agent: no `-a`; or `args`) headless on a fresh git repo with `files`
 * written into it.
 */
async function journey(
  script: (r: RecordedRequest) => ScriptedReply,
  prompt: string,
  opts: {
    args?: string[];
    files?: Record<string, string>;
    /** Files written into the user's config dir (`agents/x.md` is a user agent). */
    userFiles?: Record<string, string>;
  } = {},
) {
  const server = await startModelServer({ script });
  const env = await makeCoyoteEnv();
  const parent = await Deno.makeTempDir({ prefix: "coyote-journey-" });
  try {
    const dir = await repo(parent);
    for (const [p, text] of Object.entries(opts.userFiles ?? {})) {
      await Deno.mkdir(join(env.configDir, p, ".."), { recursive: true });
      await Deno.writeTextFile(join(env.configDir, p), text);
    }
    for (const [p, text] of Object.entries(opts.files ?? {})) {
      await Deno.mkdir(join(dir, p, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, p), text);
    }
    const r = await runCoyote(
      [...(opts.args ?? []), "--headless", "--output-format", "stream-json", prompt],
      { cwd: dir, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    const lines: Json[] = parseJsonLines(r.stdout);
    const transcript = async (sessionId: string) =>
      await Deno.readTextFile(transcriptPath(env.dataDir, sessionId));
    return {
      transcripts: await Promise.all(
        [...new Set(lines.map((l: Json) => l.session_id).filter(Boolean))].map(async (id) =>
          [id, await transcript(id)] as const
        ),
      ),
      lines,
      result: lines.at(-1)!,
      requests: server.requests,
      file: await Deno.readTextFile(join(dir, "src.txt")),
      stderr: r.stderr,
    };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(parent, { recursive: true });
  }
}

/** No submit_result anywhere was refused (the issue 17 bug). */
function noRefusedSubmit(lines: Json[]) {
  const refused = lines.filter((l) =>
    l.type === "session_update" && JSON.stringify(l.update).includes("submit_result is not among")
  );
  assert.deepEqual(refused, [], "a child graph's submit_result was refused");
}

Deno.test("journey: sisyphus → agent__spawn adversary → a computed CONFORMS reaches the parent", async () => {
  const { result, lines, requests } = await journey(
    (r) =>
      adversaryNode(r, met("src.js", 2, { file: "src_test.js", line: 2 })) ??
        sisyphus("adversary", "Review the change: it must add greet().")(r),
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
  const { result, lines } = await journey((r) =>
    adversaryNode(r, {
      status: "UNMET",
      evidence: [],
      test: null,
      explanation: "greet() returns the wrong word",
      fix: "return 'hello'",
    }) ?? sisyphus("adversary", "Review the change: it must add greet().")(r), "review my change");
  noRefusedSubmit(lines);
  const text = String(result.text);
  assert.match(
    text,
    /FINAL:\n[^]*ADVERSARIAL_REVIEW: DIVERGES\nCriteria: 0\/1 met, 0 partial, 1 unmet\/diverged\.\nComplaints:\n1\. Acceptance criterion "adds greet\(\)" — Unmet — greet\(\) returns the wrong word — return 'hello'\n/,
  );
  assert.doesNotMatch(text, /PIPELINE-FAULT/);
});

Deno.test("journey: sisyphus → agent__spawn coder → CODER_COMPLETE with its structured plan and review", async () => {
  const { result, lines, file } = await journey(
    (r) => coderNode(r) ?? sisyphus("coder", "make src.txt say fixed")(r),
    "fix src.txt",
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(
    String(result.text),
    /FINAL:\n[^]*CODER_COMPLETE\nmake src\.txt say fixed\nVerification: \["attempt 1: `make test` exit 0"\]\nReview: clean/,
  );
});

/** step-runner's own llm nodes: orient, edge-case sweep, and a handoff written then submitted. */
function stepRunnerNode(r: RecordedRequest): ScriptedReply | null {
  const sys = system(r);
  if (sys.includes("You prepare one step of a phased plan")) {
    return submit({
      plan_summary: "make src.txt say fixed",
      implementation_brief: "make src.txt say fixed",
      staleness_report: "nothing stale",
      has_major_deviation: false,
      deviation_summary: "",
    });
  }
  if (sys.includes("You hunt edge cases")) {
    return submit({
      edge_case_report: "none found",
      downstream_updates: "none",
      needs_independent_review: false,
    });
  }
  if (sys.includes("You write the handoff")) {
    const calls = messages(r).flatMap((m) => m.tool_calls ?? []).map((c) => c.function?.name);
    if (calls.includes("fs_write")) {
      return submit({ step_summary: "src.txt fixed", result: "complete" });
    }
    const prompt = String(messages(r).find((m) => m.role === "user")?.content);
    const path = prompt.match(/^Handoff file: (.+)$/m)![1];
    const sections = [
      "Summary",
      "Completed",
      "Not completed",
      "Deviations",
      "Downstream plan updates",
      "Edge cases discovered",
      "Evidence",
      "Notes for next step",
    ].map((s) => `## ${s}\nsrc.txt fixed\n`).join("\n");
    return call("fs_write", {
      path,
      content: `---\nstep: 1\ntitle: Fix src\nresult: complete\n---\n${sections}`,
    });
  }
  return null;
}

const PLAN = {
  "plans/plan.md": "# plan\n",
  "plans/steps/01-fix.md":
    "---\nstep: 1\ntitle: Fix src\ndepends_on: []\nstatus: pending\n---\n## Objective\nmake src.txt say fixed\n\n## Test commands\n- grep -q fixed src.txt\n",
};

Deno.test("journey: step-runner → its coder child (agent node) → STEP_COMPLETE with the handoff written", async () => {
  const { result, lines, file } = await journey(
    (r) =>
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

/**
 * The user's own LLM coder (a user agent named `coder` stands in for the built-in graph one):
 * reads src.txt, writes `half`; a follow-up (a second user message) makes it write `fixed`.
 */
const LLM_CODER =
  "---\nname: coder\ndescription: The user's coder\ntools: [fs_read, fs_write]\n---\n" +
  "CODERX agent: edits files as asked.\n";

function llmCoder(r: RecordedRequest): ScriptedReply | null {
  if (!system(r).startsWith("CODERX")) return null;
  const ms = messages(r);
  const last = ms.at(-1)!;
  const users = ms.filter((m) => m.role === "user").length;
  const lastCall = ms.filter((m) => m.role === "assistant").at(-1)?.tool_calls?.at(-1)?.function
    ?.name;
  if (last.role === "user" && users === 1) return call("fs_read", { path: "src.txt" });
  if (last.role === "user") return call("fs_write", { path: "src.txt", content: "fixed\n" });
  if (lastCall === "fs_read") return call("fs_write", { path: "src.txt", content: "half\n" });
  return { text: users === 1 ? "wrote half" : "fixed per review" };
}

Deno.test("journey: coder → adversary DIVERGES → agent__send the complaints to the same coder → adversary CONFORMS → done", async () => {
  let verdicts = 0;
  const complaintsOf: string[] = [];
  const coderId: string[] = [];
  const script = (r: RecordedRequest): ScriptedReply => {
    const first = system(r).includes("You verify ONE acceptance criterion") && verdicts++ === 0;
    const adv = adversaryNode(
      r,
      first
        ? {
          status: "UNMET",
          evidence: [{ file: "src.txt", line: 1, note: "says half" }],
          test: null,
          explanation: "src.txt says half",
          fix: "make it say fixed",
        }
        : met("src.txt", 1, { file: "src_test.js", line: 1 }),
    );
    if (adv) return adv;
    const coder = llmCoder(r);
    if (coder) return coder;
    // sisyphus: the seeds' loop, one step per request.
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    const last = String(ms.at(-1)!.content);
    switch (calls.length) {
      case 0:
        return call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" });
      case 1:
        coderId.push(JSON.parse(last).id);
        return call("agent__collect", {});
      case 2:
        return call("agent__spawn", { agent: "adversary", prompt: "Check: src.txt says fixed." });
      case 3:
        return call("agent__collect", {});
      case 4: {
        const complaints = last.slice(last.indexOf("Complaints:"));
        complaintsOf.push(complaints);
        return call("agent__send", { agent_id: coderId[0], message: complaints });
      }
      case 5:
        return call("agent__collect", {});
      case 6:
        return call("agent__spawn", { agent: "adversary", prompt: "Check: src.txt says fixed." });
      case 7:
        return call("agent__collect", {});
      default:
        return { text: `FINAL:\n${last}` };
    }
  };
  const { result, lines, requests, file, transcripts } = await journey(
    script,
    "make src.txt say fixed",
    {
      userFiles: { "agents/coder.md": LLM_CODER },
    },
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(
    complaintsOf[0],
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
  assert.equal(ms.at(-1)!.content, complaintsOf[0]);
  // One coder child: both of its runs' events carry the same agent_id (the one spawn returned).
  const coderLines = lines.filter((l: Json) => l.type === "session_update" && l.agent === "coder");
  assert.deepEqual([...new Set(coderLines.map((l: Json) => l.agent_id))], [coderId[0]]);
  const coderSessions = new Set(coderLines.map((l: Json) => l.session_id));
  assert.equal(coderSessions.size, 1, "the follow-up ran in the same child session");
  // Its one transcript records both tasks: the first prompt and the complaints.
  const t = transcripts.find(([id]) => coderSessions.has(id))![1];
  assert.ok(t.includes(JSON.stringify("make src.txt say fixed")));
  assert.ok(t.includes(JSON.stringify(complaintsOf[0])), "the follow-up is in its transcript");
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

/**
 * The built-in graph coder: its first run writes `half`; a run whose planning prompt carries the
 * `followup` block (a follow-up to the same coder) writes `fixed`.
 */
function graphCoder(r: RecordedRequest): ScriptedReply | null {
  const sys = system(r);
  const user = String(messages(r).find((m) => m.role === "user")?.content);
  const followUp = user.includes("This is a follow-up");
  if (sys.includes("You implement a planned change")) {
    const calls = messages(r).flatMap((m) => m.tool_calls ?? []).map((c) => c.function?.name);
    if (!calls.includes("fs_read")) return call("fs_read", { path: "src.txt" });
    if (!calls.includes("fs_write")) {
      return call("fs_write", { path: "src.txt", content: followUp ? "fixed\n" : "half\n" });
    }
    return { text: followUp ? "fixed per review" : "wrote half" };
  }
  return coderNode(r);
}

Deno.test("journey: sisyphus → graph coder → adversary DIVERGES → agent__send the complaints → the same coder's graph sees its earlier change, result and the complaints", async () => {
  let verdicts = 0;
  const complaintsOf: string[] = [];
  const coderId: string[] = [];
  const script = (r: RecordedRequest): ScriptedReply => {
    const first = system(r).includes("You verify ONE acceptance criterion") && verdicts++ === 0;
    const adv = adversaryNode(
      r,
      first
        ? {
          status: "UNMET",
          evidence: [{ file: "src.txt", line: 1, note: "says half" }],
          test: null,
          explanation: "src.txt says half",
          fix: "make it say fixed",
        }
        : met("src.txt", 1, { file: "src_test.js", line: 1 }),
    );
    if (adv) return adv;
    const coder = graphCoder(r);
    if (coder) return coder;
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    const last = String(ms.at(-1)!.content);
    switch (calls.length) {
      case 0:
        return call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" });
      case 1:
        coderId.push(JSON.parse(last).id);
        return call("agent__collect", {});
      case 2:
        return call("agent__spawn", { agent: "adversary", prompt: "Check: src.txt says fixed." });
      case 3:
        return call("agent__collect", {});
      case 4: {
        const complaints = last.slice(last.indexOf("Complaints:"));
        complaintsOf.push(complaints);
        return call("agent__send", { agent_id: coderId[0], message: complaints });
      }
      case 5:
        return call("agent__collect", {});
      case 6:
        return call("agent__spawn", { agent: "adversary", prompt: "Check: src.txt says fixed." });
      case 7:
        return call("agent__collect", {});
      default:
        return { text: `FINAL:\n${last}` };
    }
  };
  const { result, lines, requests, file, transcripts } = await journey(
    script,
    "make src.txt say fixed",
    // The coder's verification passes either way (the adversary is the one that objects).
    { files: { Makefile: "test:\n\ttrue\n" } },
  );
  noRefusedSubmit(lines);
  assert.equal(file, "fixed\n");
  assert.match(
    complaintsOf[0],
    /^Complaints:\n1\. Acceptance criterion .* — Unmet — src\.txt says half/,
  );
  assert.match(String(result.text), /FINAL:\n[^]*ADVERSARIAL_REVIEW: CONFORMS/);
  // The coder graph's first llm node, on the follow-up: its earlier request, the file it changed,
  // its earlier result, then the complaints verbatim as this run's request.
  const plans = requests.filter((r) => system(r).includes("You plan a code change"));
  assert.equal(plans.length, 2, "the coder's graph ran twice");
  assert.doesNotMatch(String(messages(plans[0]).at(-1)!.content), /follow-up/);
  const prompt = String(messages(plans[1]).find((m) => m.role === "user")!.content);
  assert.match(prompt, /^This is a follow-up: you already ran 1 time in this session\./);
  assert.match(prompt, /## Earlier run 1\nRequest:\nmake src\.txt say fixed\n/);
  assert.match(prompt, /Files you changed: src\.txt\n/);
  assert.match(prompt, /Your result:\nCODER_COMPLETE\nmake src\.txt say fixed\n/);
  assert.ok(prompt.endsWith(complaintsOf[0]), "the complaints verbatim end the prompt");
  // Its implement node sees the same context.
  const impl = requests.filter((r) => system(r).includes("You implement a planned change"));
  assert.ok(
    impl.some((r) =>
      String(messages(r).find((m) => m.role === "user")!.content).includes(
        "Files you changed: src.txt",
      )
    ),
  );
  // One coder child, one session, one transcript with both tasks.
  const coderLines = lines.filter((l: Json) => l.type === "session_update" && l.agent === "coder");
  assert.deepEqual([...new Set(coderLines.map((l: Json) => l.agent_id))], [coderId[0]]);
  const coderSessions = new Set(coderLines.map((l: Json) => l.session_id));
  assert.equal(coderSessions.size, 1, "the follow-up ran in the same child session");
  const t = transcripts.find(([id]) => coderSessions.has(id))![1];
  assert.ok(t.includes(JSON.stringify("make src.txt say fixed")));
  assert.ok(t.includes(JSON.stringify(complaintsOf[0])), "the follow-up is in its transcript");
});

/** The gates' decisions in the stream (core/supervisor/gate_keeper.ts): `intent` and `gate` events. */
function gateEvents(lines: Json[]): Json[] {
  return lines.filter((l: Json) =>
    l.type === "session_update" && ["intent", "gate"].includes(l.update?._meta?.coyote?.event)
  ).map((l: Json) => ({ ...l.update._meta.coyote, agent: l.agent }));
}

Deno.test("journey (gates): intent event → oracle PLAN_REVIEW: REJECT blocks the coder spawn → revised plan OKAY → coder → reviewers triggered from the diff", async () => {
  let oracleRuns = 0;
  const script = (r: RecordedRequest): ScriptedReply => {
    if (system(r).startsWith("You are oracle")) {
      return {
        text: oracleRuns++ === 0
          ? "1. Step 2 has no test.\nPLAN_REVIEW: REJECT"
          : "Grounded and testable.\nPLAN_REVIEW: OKAY",
      };
    }
    const coder = llmCoder(r);
    if (coder) return coder;
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    switch (calls.length) {
      case 0:
        return {
          text: "Intent: make src.txt say fixed — class: implementation",
          tool_calls: [{
            name: "agent__spawn",
            arguments: { agent: "oracle", prompt: "Review PLAN.md" },
          }],
        };
      case 1:
      case 4:
      case 6:
        return call("agent__collect", {});
      case 2:
      case 5:
        return call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" });
      case 3:
        return call("agent__spawn", { agent: "oracle", prompt: "Review the revised PLAN.md" });
      default:
        return { text: `FINAL:\n${ms.at(-1)!.content}` };
    }
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
  let verdicts = 0;
  const coderId: string[] = [];
  const sent: string[] = [];
  const script = (r: RecordedRequest): ScriptedReply => {
    const first = system(r).includes("You verify ONE acceptance criterion") && verdicts++ === 0;
    const adv = adversaryNode(
      r,
      first
        ? {
          status: "UNMET",
          evidence: [{ file: "src.txt", line: 1, note: "says half" }],
          test: null,
          explanation: "src.txt says half",
          fix: "make it say fixed",
        }
        : met("src.txt", 1, { file: "src_test.js", line: 1 }),
    );
    if (adv) return adv;
    const coder = llmCoder(r);
    if (coder) return coder;
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    const last = String(ms.at(-1)!.content);
    if (last.includes("Completion gate:")) {
      const complaints = last.slice(
        last.indexOf("Complaints:"),
        last.indexOf("</system-reminder>"),
      );
      sent.push(complaints);
      return call("agent__send", { agent_id: coderId[0], message: complaints });
    }
    switch (calls.length) {
      case 0:
        return call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" });
      case 1:
        coderId.push(JSON.parse(last).id);
        return call("agent__collect", {});
      case 2:
      case 6:
        return call("agent__spawn", { agent: "adversary", prompt: "Check: src.txt says fixed." });
      case 3:
      case 5:
      case 7:
        return call("agent__collect", {});
      default:
        return { text: `done:\n${last}` };
    }
  };
  const { result, lines, requests, file } = await journey(script, "make src.txt say fixed", {
    userFiles: { "agents/coder.md": LLM_CODER },
  });
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
  const adv = gates.filter((g) => g.gate === "adversary").map((
    g,
  ) => [g.decision, g.verdict ?? null]);
  const verdict = adv[0][1];
  assert.match(String(verdict), /^(DIVERGES|UNMET)$/);
  assert.deepEqual(adv, [["block", verdict], ["continue", verdict], ["allow", null]]);
  // The complaints went to the same coder, verbatim from the adversary's report.
  assert.equal(sent.length, 1, "the completion gate held the end exactly once");
  assert.match(sent[0], /^Complaints:\n1\. Acceptance criterion .* — Unmet — src\.txt says half/);
  const followUp = requests.filter((r) => system(r).startsWith("CODERX")).find((r) =>
    messages(r).filter((m) => m.role === "user").length === 2
  )!;
  assert.equal(messages(followUp).filter((m) => m.role === "user")[1].content, sent[0]);
});

Deno.test("journey (gates): security-reviewer findings → FAIL under gates.posture hardened (a High finding blocks), told in the collect result", async () => {
  const findings =
    "- [High] src.js:2 — greet() builds HTML from input — XSS — escape it\n- [Low] src.js:1 — no CSP — — add one\n";
  const { lines, requests } = await journey(
    (r) =>
      system(r).startsWith("You are security-reviewer")
        ? { text: `Findings:\n${findings}` }
        : sisyphus("security-reviewer", "Review the change in src.js for security problems.")(r),
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
  const { lines, requests, result } = await journey(
    (r) =>
      adversaryNode(r, {
        status: "UNMET",
        evidence: [],
        test: null,
        explanation: "greet() returns the wrong word",
        fix: "return 'hello'",
      }) ?? sisyphus("adversary", "Review the change: it must add greet().")(r),
    "review my change",
    { userFiles: { "config.yaml": "gates:\n  allow_divergent_completion: true\n" } },
  );
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
  const script = (r: RecordedRequest): ScriptedReply => {
    const done = adversaryNode(r, met("src.js", 2, { file: "src_test.js", line: 1 })) ??
      llmCoder(r) ??
      reviewer(r, "- [Low] auth/token.js:1 — constant — — fine\nSECURITY_REVIEW: PASS");
    if (done) return done;
    const ms = messages(r);
    const calls = ms.filter((m) => m.role === "assistant").flatMap((m) => m.tool_calls ?? []);
    const last = ms.at(-1)!;
    switch (calls.length) {
      case 0:
        return call("agent__spawn", { agent: "coder", prompt: "make src.txt say fixed" });
      case 1:
      case 4:
      case 6:
      case 8:
        return call("agent__collect", {});
      case 2:
        // First it tries to end; held, it tries the security review first; refused.
        return last.role === "tool"
          ? { text: "Intent: done — class: implementation\nAll done." }
          : call("agent__spawn", { agent: "security-reviewer", prompt: "Review auth/token.js." });
      case 3:
        return call("agent__spawn", { agent: "code-reviewer", prompt: "Review the change." });
      case 5:
        return call("agent__spawn", { agent: "adversary", prompt: "Check against PLAN.md." });
      case 7:
        return call("agent__spawn", { agent: "security-reviewer", prompt: "Review auth/." });
      default:
        return { text: `FINAL:\n${last.content}` };
    }
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
      (r) =>
        reviewer(
          r,
          "- [Critical] .env:1 — committed API key — anyone with the repo — remove it\n",
        ) ??
          sisyphus("security-reviewer", "Review the change for security problems.")(r),
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
      (r) => reviewer(r, high) ?? sisyphus("security-reviewer", "Review src.js.")(r),
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
    (r) =>
      reviewer(r, "- [Critical] .env:1 — committed API key — — remove it\n") ??
        sisyphus("security-reviewer", "Review the change for security problems.")(r),
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
  const e = await acpTestEnv((r: RecordedRequest) =>
    reviewer(r, "- [Critical] .env:1 — committed API key — — remove it\n") ??
      sisyphus("security-reviewer", "Review the change for security problems.")(r)
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

Deno.test("journey: sisyphus → two built-in coders at once → the second works in its own worktree (graph scripts and checks there), both CODER_COMPLETE, its patch applied", async () => {
  const collected: string[] = [];
  const { lines, file, transcripts } = await journey((r) => {
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
