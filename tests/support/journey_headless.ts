/**
 * The headless journeys' runner (tests/journeys_test.ts, tests/journeys_gates_test.ts):
 * `coyote --headless --output-format stream-json` as a real subprocess, from the default agent
 * (sisyphus) unless told otherwise, on a fresh git repository (tests/support/journeys.ts `repo`)
 * against the scripted model server, and what the tests read of its stream.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { transcriptPath } from "../../core/transcript/store.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./run_coyote.ts";
import { type RecordedRequest, type ScriptedReply, startModelServer } from "./model_server.ts";
import {
  adversaryNode,
  call,
  coderNode,
  coordinatorSteps,
  firstUser,
  type Json,
  messages,
  met,
  repo,
  system,
  unmetHalf,
} from "./journeys.ts";

/**
 * Runs sisyphus (the default agent: no `-a`; or `args`) headless on a fresh git repo with `files`
 * written into it; `script` is made for the repo's directory. Resolves with the stream's lines,
 * its `result` line, the model requests, the transcripts of every session in the stream, and
 * src.txt, and PLAN.md, NOTES.md and the `read` files (`files`) as the run left them (null: absent).
 */
export async function journey(
  script: (dir: string) => (r: RecordedRequest) => ScriptedReply,
  prompt: string,
  opts: {
    args?: string[];
    files?: Record<string, string>;
    /** Files written into the user's config dir (`agents/x.md` is a user agent). */
    userFiles?: Record<string, string>;
    /** More of the repository's files to return (`read`: path → text, null when absent). */
    read?: string[];
    /** The exit code the run must end with (default 0). */
    code?: number;
  } = {},
) {
  const parent = await Deno.makeTempDir({ prefix: "coyote-journey-" });
  const dir = await repo(parent);
  const server = await startModelServer({ script: script(dir) });
  const env = await makeCoyoteEnv();
  try {
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
      { cwd: dir, env: childEnv(env, { baseURL: server.baseURL }), timeoutMs: 180_000 },
    );
    assert.equal(r.code, opts.code ?? 0, r.stderr);
    const lines: Json[] = parseJsonLines(r.stdout);
    const transcript = async (sessionId: string) =>
      await Deno.readTextFile(transcriptPath(env.dataDir, sessionId));
    const files = Object.fromEntries(
      await Promise.all(
        ["PLAN.md", "NOTES.md", ...(opts.read ?? [])].map(async (p) =>
          [p, await Deno.readTextFile(join(dir, p)).catch(() => null)] as const
        ),
      ),
    );
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
      files,
      stderr: r.stderr,
    };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(parent, { recursive: true });
  }
}

/** No submit_result anywhere was refused (the issue 17 bug). */
export function noRefusedSubmit(lines: Json[]) {
  const refused = lines.filter((l) =>
    l.type === "session_update" && JSON.stringify(l.update).includes("submit_result is not among")
  );
  assert.deepEqual(refused, [], "a child graph's submit_result was refused");
}

/** The gates' decisions in the stream (core/supervisor/gate_keeper.ts): `intent` and `gate` events. */
export function gateEvents(lines: Json[]): Json[] {
  return lines.filter((l: Json) =>
    l.type === "session_update" && ["intent", "gate"].includes(l.update?._meta?.coyote?.event)
  ).map((l: Json) => ({ ...l.update._meta.coyote, agent: l.agent }));
}

/**
 * sisyphus (any request no child claims): spawns `agent` with `prompt`, collects, answers with
 * the collected result (`FINAL:\n…`) — at every later end too (a gate may hold the first).
 * One script per run.
 */
export const sisyphus = (agent: string, prompt: string) =>
  coordinatorSteps([call("agent__spawn", { agent, prompt }), call("agent__collect", {})]).script;

/** Adversary nodes: the first verdict UNMET (src.txt says half), the later ones MET. */
export function halfThenMet() {
  let verdicts = 0;
  return (r: RecordedRequest) => {
    const first = system(r).includes("You verify ONE acceptance criterion") && verdicts++ === 0;
    return adversaryNode(
      r,
      first ? unmetHalf : met("src.txt", 1, { file: "src_test.js", line: 1 }),
    );
  };
}

/** sisyphus spawning the adversary, whose criterion "adds greet()" is UNMET: DIVERGES. */
export const divergesGreet = () => {
  const s = sisyphus("adversary", "Review the change: it must add greet().");
  return (r: RecordedRequest) =>
    adversaryNode(r, {
      status: "UNMET",
      evidence: [],
      test: null,
      explanation: "greet() returns the wrong word",
      fix: "return 'hello'",
    }) ?? s(r);
};

/**
 * sisyphus → two built-in coders at once that change the same line of src.txt: the first writes
 * `fixed` in the shared tree, the second (its own worktree) `other` once the first's change is
 * in the workspace — its patch conflicts. The coordinator spawns both, collects (the result into
 * `collected`), then each later response is `then(n)` (n: its assistant messages so far; default
 * `FINAL`). `dir` is the repository (the journey's `script(dir)`).
 */
export function conflictingCoders(
  dir: string,
  collected: string[],
  then: (n: number, r: RecordedRequest) => ScriptedReply = () => ({ text: "FINAL" }),
) {
  const main = () => Deno.readTextFileSync(`${dir}/src.txt`);
  return (r: RecordedRequest): ScriptedReply => {
    const sys = system(r);
    if (sys.includes("You implement a planned change")) {
      const other = firstUser(r).includes("say other");
      const last = messages(r).at(-1)!;
      const wrote = messages(r).some((m) =>
        m.tool_calls?.some((c: Json) => c.function?.name === "fs_write")
      );
      if (wrote) return { text: other ? "wrote other" : "wrote fixed" };
      // Each reads src.txt first; the second writes only once the first one's change is in the
      // workspace (it polls).
      if (last.role === "user" || (other && main() !== "fixed\n")) {
        return { ...call("fs_read", { path: "src.txt" }), delay_ms: other ? 400 : 0 };
      }
      return call("fs_write", { path: "src.txt", content: other ? "other\n" : "fixed\n" });
    }
    const node = coderNode(r);
    if (node) return node;
    const ms = messages(r);
    const n = ms.filter((m) => m.role === "assistant").length;
    if (n === 0) {
      return {
        tool_calls: ["make src.txt say fixed", "make src.txt say other"].map((prompt) => ({
          name: "agent__spawn",
          arguments: { agent: "coder", prompt },
        })),
      };
    }
    if (n === 1) return call("agent__collect", {});
    if (n === 2) collected.push(String(ms.at(-1)!.content));
    return then(n, r);
  };
}
