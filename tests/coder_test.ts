/**
 * The coder graph end to end (`coyote -a coder` as a subprocess, stream-json): the validation
 * loop fixes a failing check on the second iteration with its events in order, and a change that
 * never passes stops at the bound with CODER_FAILED.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";

type Msg = { role: string; content: string | null };
const messages = (r: RecordedRequest) => (r.body as { messages: Msg[] }).messages;
const system = (r: RecordedRequest) => messages(r).find((m) => m.role === "system")?.content ?? "";
const submit = (args: Record<string, unknown>): ScriptedReply => ({
  tool_calls: [{ name: "submit_result", arguments: args }],
});

function coderModel(fixOnAttempt: number | null) {
  let implementations = 0;
  return (r: RecordedRequest): ScriptedReply => {
    const sys = system(r);
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
      // Read src.txt, then write it (an existing file is overwritten only after a read: issue 18),
      // then done.
      const tools = messages(r).filter((m) => m.role === "tool").length;
      if (tools === 0) return { tool_calls: [{ name: "fs_read", arguments: { path: "src.txt" } }] };
      if (tools > 1) return { text: "done" };
      implementations++;
      const content = fixOnAttempt !== null && implementations >= fixOnAttempt
        ? "fixed\n"
        : "broken\n";
      return { tool_calls: [{ name: "fs_write", arguments: { path: "src.txt", content } }] };
    }
    if (sys.includes("You review a change you made")) {
      return submit({ review_clean: true, review_notes: "clean" });
    }
    throw new Error(`unexpected request: ${sys.slice(0, 60)}`);
  };
}

async function runCoder(fixOnAttempt: number | null) {
  const server = await startModelServer({ script: coderModel(fixOnAttempt) });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-coder-" });
  try {
    await Deno.writeTextFile(join(dir, "src.txt"), "broken\n");
    const r = await runCoyote([
      "-a",
      "coder",
      "--agent-variable",
      "verify_commands",
      "grep -q fixed src.txt",
      "--headless",
      "--output-format",
      "stream-json",
      "make src.txt say fixed",
    ], { cwd: dir, env: childEnv(env, { baseURL: server.baseURL }) });
    assert.equal(r.code, 0, r.stderr);
    const lines = parseJsonLines(r.stdout);
    const events = lines.filter((l) => l.type === "session_update").map((l) =>
      (l.update as {
        _meta?: {
          coyote?: { event?: string; attempt?: number; passed?: boolean; failing_command?: string };
        };
      })
        ._meta?.coyote
    ).filter((m) => m?.event?.startsWith("validation_loop"));
    return { result: lines.at(-1)!, events, file: await Deno.readTextFile(join(dir, "src.txt")) };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("coder: a failing check is fixed on the second iteration; the loop's events come in order", async () => {
  const { result, events, file } = await runCoder(2);
  assert.equal(file, "fixed\n");
  assert.match(
    String(result.text),
    /^CODER_COMPLETE\nmake src\.txt say fixed\nVerification: \["attempt 1: `grep -q fixed src\.txt` exit 1","attempt 2: `grep -q fixed src\.txt` exit 0"\]/,
  );
  assert.deepEqual(
    events.map((e) => [e!.event, e!.attempt, e!.passed ?? null, e!.failing_command ?? null]),
    [
      ["validation_loop_iteration", 1, false, "grep -q fixed src.txt"],
      ["validation_loop_rerun", 2, null, null],
      ["validation_loop_iteration", 2, true, null],
    ],
  );
});

Deno.test("coder: a change that never passes stops at max_fix_attempts with CODER_FAILED", async () => {
  const { result, events } = await runCoder(null);
  assert.match(String(result.text), /^CODER_FAILED\n/);
  assert.match(String(result.text), /Last failure: grep -q fixed src\.txt/);
  const iterations = events.filter((e) => e!.event === "validation_loop_iteration");
  assert.deepEqual(iterations.map((e) => [e!.attempt, e!.passed]), [[1, false], [2, false], [
    3,
    false,
  ], [4, false]]);
});
