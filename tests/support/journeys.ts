/**
 * The journeys' shared script (tests/journeys_test.ts headless stream-json,
 * tests/journeys_repl_test.ts the REPL in tmux, tests/journeys_acp_test.ts ACP with the SDK's
 * client): the scripted model server's answers for the default agent (sisyphus) and each agent it
 * runs — told apart by their system prompts (a graph node by its instructions) — and a real git
 * repository to run them on.
 *
 * - {@link coordinatorSteps}: a coordinator's replies, one per response it gives, with facts
 *   (ids, texts) recorded for the test; the one switch the journeys' coordinators share.
 * - {@link seedFlow}: the seeds' whole flow from one user prompt — explore fan-out → plan
 *   (PLAN.md) → plan review REJECT, the coder spawn refused → revised plan → OKAY → graph coder
 *   (its check fails, it fixes, it passes) → the reviewers the review gate names, in its order →
 *   adversary DIVERGES → the completion gate holds the end → the complaints to the same coder
 *   (agent__send) → the reviewers again → CONFORMS → done — and {@link SEED_GATES}, the gate
 *   decisions it makes, in order.
 * - Node scripts of the built-in graphs: {@link adversaryNode}, {@link coderNode},
 *   {@link graphCoder}, {@link stepRunnerNode}; the user's LLM coder {@link llmCoder}.
 * @module
 */
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "./model_server.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;
export type Msg = { role: string; content: string | null; tool_calls?: Json[] };

/** The request's chat messages. */
export const messages = (r: RecordedRequest) => (r.body as { messages: Msg[] }).messages;
/** The request's system prompt ("" without one). */
export const system = (r: RecordedRequest) =>
  messages(r).find((m) => m.role === "system")?.content ?? "";
/** The first user message (a graph node's prompt, a child's task). */
export const firstUser = (r: RecordedRequest) =>
  String(messages(r).find((m) => m.role === "user")?.content ?? "");
/** A reply calling `submit_result` (a graph llm node's structured output). */
export const submit = (args: Record<string, unknown>): ScriptedReply => ({
  tool_calls: [{ name: "submit_result", arguments: args }],
});
/** A reply calling one tool. */
export const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
  tool_calls: [{ name, arguments: args }],
});
/** Names of the tools called so far in the request's conversation. */
const calledTools = (r: RecordedRequest) =>
  messages(r).flatMap((m) => m.tool_calls ?? []).map((c) => c.function?.name);

/** Runs git in `cwd` (a fixed identity); throws with its stderr on failure. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@t", "-c", "user.name=t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/**
 * A git repository `repo` under `parent` with one commit — `src.txt` ("broken"), `src.js`, and a
 * Makefile whose `make test` (the coder's detected check) passes once src.txt says `fixed` — then
 * an unstaged change adding greet() and its untracked test. Returns its real path.
 */
export async function repo(parent: string): Promise<string> {
  const dir = join(await Deno.realPath(parent), "repo");
  await Deno.mkdir(dir);
  await git(dir, "init", "-q");
  await Deno.writeTextFile(join(dir, "src.js"), "export const x = 1;\n");
  await Deno.writeTextFile(join(dir, "src.txt"), "broken\n");
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

/** An adversary criterion verdict: MET with evidence at `file:line`. */
export const met = (file: string, line: number, test: { file: string; line: number } | null) => ({
  status: "MET",
  evidence: [{ file, line, note: "the change" }],
  test,
  explanation: "done as asked",
  fix: "",
});

/** An UNMET verdict saying src.txt says half (the journeys' first adversary run). */
export const unmetHalf = {
  status: "UNMET",
  evidence: [{ file: "src.txt", line: 1, note: "says half" }],
  test: null,
  explanation: "src.txt says half",
  fix: "make it say fixed",
};

/** The adversary graph's nodes: criterion C1 `text` (verified by `command`) gets `c1`. */
export function adversaryNode(
  r: RecordedRequest,
  c1: Record<string, unknown>,
  criterion = { text: "adds greet()", command: "grep -q greet src.js" },
): ScriptedReply | null {
  const sys = system(r);
  if (sys.includes("You extract acceptance criteria")) {
    return submit({
      criteria: [{ id: "C1", text: criterion.text }],
      verification_commands: [criterion.command],
    });
  }
  if (sys.includes("You verify ONE acceptance criterion")) {
    return submit({ criterion_id: "C1", ...c1 });
  }
  if (sys.includes("You look for problems")) return submit({ extras: [] });
  return null;
}

/** The built-in graph coder's plan and self-review nodes; its implement node writes `fixed`. */
export function coderNode(r: RecordedRequest): ScriptedReply | null {
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
    const calls = calledTools(r);
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
 * The built-in graph coder whose implement node writes `write(r)` (path and content) after
 * reading src.txt, then says what it did.
 */
export function graphCoder(
  r: RecordedRequest,
  write: (r: RecordedRequest) => { path: string; content: string } = (r) => ({
    path: "src.txt",
    content: firstUser(r).includes("This is a follow-up") ? "fixed\n" : "half\n",
  }),
): ScriptedReply | null {
  if (system(r).includes("You implement a planned change")) {
    const calls = calledTools(r);
    const w = write(r);
    if (!calls.includes("fs_read")) return call("fs_read", { path: "src.txt" });
    if (!calls.includes("fs_write")) return call("fs_write", w);
    return { text: `wrote ${w.path}: ${w.content.trim()}` };
  }
  return coderNode(r);
}

/** step-runner's own llm nodes: orient, edge-case sweep, and a handoff written then submitted. */
export function stepRunnerNode(r: RecordedRequest): ScriptedReply | null {
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
    if (calledTools(r).includes("fs_write")) {
      return submit({ step_summary: "src.txt fixed", result: "complete" });
    }
    const path = firstUser(r).match(/^Handoff file: (.+)$/m)![1];
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

/**
 * The user's own LLM coder (a user agent named `coder`, standing in for the built-in graph one):
 * reads src.txt, writes `half`; a follow-up (a second user message) makes it write `fixed`.
 */
export const LLM_CODER =
  "---\nname: coder\ndescription: The user's coder\ntools: [fs_read, fs_write]\n---\n" +
  "CODERX agent: edits files as asked.\n";

/** {@link LLM_CODER}'s replies (null for any other agent's request). */
export function llmCoder(r: RecordedRequest): ScriptedReply | null {
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

/** What a coordinator step sees: the request, its last message's text, the facts so far. */
export interface StepContext {
  r: RecordedRequest;
  /** The last message's text (a tool result, or a system note the coordinator was sent). */
  last: string;
  /** The last tool result's text. */
  lastTool: string;
  facts: Record<string, string>;
}
/** One coordinator response: a reply, or a function of the request that makes one. */
export type Step = ScriptedReply | ((c: StepContext) => ScriptedReply);

/**
 * A coordinator script: the reply to its request after N responses is `steps[N]` (the same step
 * for a retried request), `final` after the last. `facts` records what steps learn (a spawned
 * child's id) for later steps and for the test's assertions; a step may `insert` more steps to
 * run next (the reviewers a gate names).
 */
export function coordinatorSteps(
  steps: Step[],
  final: Step = (c) => ({ text: `FINAL:\n${c.lastTool}` }),
) {
  const facts: Record<string, string> = {};
  const agenda = [...steps];
  const replies: ScriptedReply[] = [];
  const insert = (...more: Step[]) => agenda.unshift(...more);
  const script = (r: RecordedRequest): ScriptedReply => {
    const n = messages(r).filter((m) => m.role === "assistant").length;
    if (n < replies.length) return replies[n];
    if (n > replies.length) {
      throw new Error(`coordinator request after ${n} responses: out of step`);
    }
    const ms = messages(r);
    const step = agenda.shift() ?? final;
    const lastTool = String(ms.filter((m) => m.role === "tool").at(-1)?.content ?? "");
    const c = { r, last: String(ms.at(-1)!.content), lastTool, facts };
    const reply = typeof step === "function" ? step(c) : step;
    replies.push(reply);
    return reply;
  };
  return { script, facts, insert };
}

/** A spawn step that records the child's id (from the next request's tool result) as `fact`. */
export const spawnAs = (fact: string, agent: string, prompt: string): Step[] => [
  call("agent__spawn", { agent, prompt }),
  (c) => {
    c.facts[fact] = JSON.parse(c.last).id;
    return call("agent__collect", {});
  },
];

/** The text after `Complaints:` up to a system note's end (the adversary's complaints, verbatim). */
export function complaintsIn(text: string): string {
  const at = text.indexOf("Complaints:");
  const end = text.indexOf("</system-reminder>", at);
  return text.slice(at, end < 0 ? undefined : end).trim();
}

/**
 * The seeds' coder → adversary DIVERGES → agent__send the complaints → adversary again loop
 * (`sendAfterGate`: the coordinator first tries to end and sends what the completion gate's note
 * quotes). Facts: `coder`, `complaints`.
 */
export function resendLoop(opts: { sendAfterGate?: boolean } = {}) {
  const check = () =>
    call("agent__spawn", { agent: "adversary", prompt: "Check: src.txt says fixed." });
  const send: Step = (c) => {
    c.facts.complaints = complaintsIn(c.last);
    return call("agent__send", { agent_id: c.facts.coder, message: c.facts.complaints });
  };
  return coordinatorSteps([
    ...spawnAs("coder", "coder", "make src.txt say fixed"),
    check(),
    call("agent__collect", {}),
    ...(opts.sendAfterGate ? [{ text: "The change is done." }] : []),
    send,
    call("agent__collect", {}),
    check(),
    call("agent__collect", {}),
  ], opts.sendAfterGate ? (c) => ({ text: `done:\n${c.last}` }) : undefined);
}

/** The reviewers a review gate's note names, in its order (`code-reviewer (broad_scope: …)`). */
export function reviewersIn(text: string): string[] {
  const at = text.indexOf("Review gate:");
  if (at < 0) return [];
  return [...text.slice(at).matchAll(/(code-reviewer|adversary|security-reviewer) \(/g)]
    .map((m) => m[1]);
}

/** The seed flow's user prompt. */
export const SEED_PROMPT = "make src.txt say fixed";
/** Its plan before and after the plan review (PLAN.md). */
export const PLAN_V1 = "1. make src.txt say fixed\n";
export const PLAN_V2 = "1. make src.txt say fixed\n2. test: `make test` passes\n";
/** The note the coder's follow-up writes (NOTES.md): what the adversary's criterion asks. */
export const NOTES = "src.txt says fixed; `make test` checks it\n";

/**
 * The gate decisions of {@link seedFlow}, in order (`[gate, decision]`; `intent` is the Phase 0
 * event): the intent line; PLAN_REVIEW REJECT collected, the coder spawn refused, the revised
 * plan's OKAY; the reviewers the first change calls for (a spec exists); the adversary's DIVERGES
 * collected, the end held once; the reviewers of the follow-up's change (5 files: broad scope
 * too); the CONFORMS that lifts the hold.
 */
export const SEED_GATES: [string, string][] = [
  ["intent", "implementation"],
  ["plan_review", "block"],
  ["plan_review", "block"],
  ["plan_review", "allow"],
  ["reviewers", "require"],
  ["adversary", "block"],
  ["adversary", "continue"],
  ["reviewers", "require"],
  ["adversary", "allow"],
];

/** `[gate, decision]` of gate/intent event data (`_meta.coyote`); intent as `[intent, class]`. */
export const gatePairs = (events: Json[]): [string, string][] =>
  events.map((e) => e.event === "intent" ? ["intent", e.class] : [e.gate, e.decision]);

/**
 * Whether `expected` occurs in `actual` in order (other decisions may come between: a frontend
 * or a gate may add its own).
 */
export function inOrder(actual: [string, string][], expected: [string, string][]): boolean {
  let i = 0;
  for (const a of actual) {
    if (i < expected.length && a[0] === expected[i][0] && a[1] === expected[i][1]) i++;
  }
  return i === expected.length;
}

/**
 * The seeds' flow (see the module doc) for the repository `dir`; its children decide from the
 * repository's files (PLAN.md's test line, NOTES.md), so a frontend's approvals change nothing
 * but when they run. Facts: `coder` (its id), `complaints` (sent verbatim), `reviewers` (each
 * round's, `;`-joined).
 */
export function seedFlow(dir: string) {
  const read = (p: string) => {
    try {
      return Deno.readTextFileSync(join(dir, p));
    } catch {
      return "";
    }
  };
  const reviewerRound: Step = (c) => {
    const names = reviewersIn(c.last);
    const list = names.length ? names : ["adversary"];
    c.facts.reviewers = [c.facts.reviewers, list.join(",")].filter(Boolean).join(";");
    const round: Step[] = list.flatMap((agent) => [
      call("agent__spawn", {
        agent,
        prompt: agent === "adversary"
          ? "Check the change against PLAN.md: src.txt says fixed and NOTES.md says why."
          : "Review the change in this repository.",
      }),
      call("agent__collect", {}),
    ]);
    flow.insert(...round.slice(1), conclude);
    return round[0] as ScriptedReply;
  };
  const conclude: Step = (c) => {
    if (/ADVERSARIAL_REVIEW: (DIVERGES|UNMET)/.test(c.last)) {
      flow.insert(sendComplaints);
      return { text: "The change is done." }; // the completion gate holds this end
    }
    return { text: `DONE: src.txt says fixed, NOTES.md written.\n${c.last}` };
  };
  const sendComplaints: Step = (c) => {
    c.facts.complaints = complaintsIn(c.last);
    flow.insert(call("agent__collect", {}), reviewerRound);
    return call("agent__send", { agent_id: c.facts.coder, message: c.facts.complaints });
  };
  const flow = coordinatorSteps([
    {
      text: `Intent: ${SEED_PROMPT} — class: implementation`,
      tool_calls: [
        { name: "agent__spawn", arguments: { agent: "explore", prompt: "What does src.txt say?" } },
        {
          name: "agent__spawn",
          arguments: { agent: "explore", prompt: "What does make test check?" },
        },
      ],
    },
    call("agent__collect", {}),
    call("fs_write", { path: "PLAN.md", content: PLAN_V1 }),
    call("agent__spawn", { agent: "oracle", prompt: "Review the plan in PLAN.md." }),
    call("agent__collect", {}),
    call("agent__spawn", { agent: "coder", prompt: SEED_PROMPT }), // refused: REJECT stands
    call("fs_write", { path: "PLAN.md", content: PLAN_V2 }),
    call("agent__spawn", { agent: "oracle", prompt: "Review the revised plan in PLAN.md." }),
    call("agent__collect", {}),
    ...spawnAs("coder", "coder", SEED_PROMPT),
    reviewerRound,
  ], conclude);

  const child = (r: RecordedRequest): ScriptedReply | null => {
    const sys = system(r);
    const last = messages(r).at(-1)!;
    if (sys.startsWith("You are explore")) {
      const path = firstUser(r).includes("make test") ? "Makefile" : "src.txt";
      if (last.role === "user") return call("fs_read", { path });
      return { text: `${path}:1 — ${read(path).split("\n")[0]}\nEXPLORE_COMPLETE` };
    }
    if (sys.startsWith("You are oracle")) {
      return {
        text: read("PLAN.md").includes("test:")
          ? "Grounded and testable.\nPLAN_REVIEW: OKAY"
          : "1. The plan has no test step: add one.\nPLAN_REVIEW: REJECT",
      };
    }
    if (sys.startsWith("You are code-reviewer")) {
      return { text: "No findings.\napprove\nREVIEW_COMPLETE" };
    }
    if (sys.startsWith("You are security-reviewer")) {
      return { text: "Findings: none.\nSECURITY_REVIEW: PASS" };
    }
    const adv = adversaryNode(
      r,
      read("NOTES.md") ? met("NOTES.md", 1, { file: "Makefile", line: 2 }) : {
        status: "UNMET",
        evidence: [{ file: "NOTES.md", line: 1, note: "missing" }],
        test: null,
        explanation: "NOTES.md does not say why",
        fix: "write NOTES.md",
      },
      { text: "src.txt says fixed and NOTES.md says why", command: "grep -q fixed src.txt" },
    );
    if (adv) return adv;
    // The graph coder: half (its check fails) → fixed (passes); the follow-up writes NOTES.md.
    return graphCoder(r, (r) => {
      const p = firstUser(r);
      if (p.includes("This is a follow-up")) return { path: "NOTES.md", content: NOTES };
      return { path: "src.txt", content: p.includes("Verification failed") ? "fixed\n" : "half\n" };
    });
  };
  return {
    facts: flow.facts,
    script: (r: RecordedRequest): ScriptedReply => child(r) ?? flow.script(r),
  };
}
