/**
 * Headless runs of Coyote against a scripted model. {@link headlessAttack}: one run that asks for every command of `attacks`
 * (tool call ids `a0`, `a1`, …) and then each of `others` (ids as given) in one turn, with
 * `flags` (e.g. `--deny 'Execute(rm *)'`) and `opts` (environment, inherited descriptors). Used
 * by the auto-allow-yields tests on real bwrap: the caller asserts which calls were denied and
 * what reached the model.
 *
 * Resolves with the run (exit code 0 asserted), its json `result`, the sorted ids of the denied
 * calls and the messages of the model's last request as JSON text. The workspace `ws` is the
 * caller's (removed by the caller); the config and data dirs are made and removed here.
 * @module
 */
import assert from "node:assert/strict";
import { requestMessages, startModelServer } from "./model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./run_coyote.ts";

export interface AttackRun {
  /** The run's json `result`. */
  out: { denied: { toolCallId: string }[] } & Record<string, unknown>;
  /** Sorted tool call ids of the denied calls. */
  denied: string[];
  /** The ids the attacks got (`a0`, `a1`, …), sorted: what `denied` should equal. */
  attackIds: string[];
  /** The last model request's messages, as JSON text: what reached the model. */
  sent: string;
}

export async function headlessAttack(
  ws: string,
  attacks: string[],
  others: { id: string; command: string }[],
  flags: string[],
  /**
   * `extra`: environment for the run (e.g. `COYOTE_TEST_GUARD: "allow"`, the guard forced open);
   * `inherit`: bash redirections coyote starts with (./run_coyote.ts `runCoyote`).
   */
  opts: { extra?: Record<string, string>; inherit?: string } = {},
): Promise<AttackRun> {
  const calls = [
    ...attacks.map((command, i) => ({ id: `a${i}`, command })),
    ...others,
  ];
  const run = await headlessTurns(ws, [calls], flags, opts);
  return {
    out: run.out as AttackRun["out"],
    denied: run.out.denied.map((d: { toolCallId: string }) => d.toolCallId).sort(),
    attackIds: attacks.map((_, i) => `a${i}`).sort(),
    sent: run.sent,
  };
}

/** What {@link headlessTurns} gives back. */
export interface TurnsRun {
  /** The run's json `result`. */
  out: { denied: { toolCallId: string }[] } & Record<string, unknown>;
  /** The last model request's messages, as JSON text. */
  sent: string;
  /** The text of tool call `id`'s result as the model got it (JSON of its content). */
  result(id: string): string;
}

/**
 * One headless run whose scripted model asks, in turn `i`, for `turns[i]` (calls of
 * `execute_command` by default, or of the tool `name` with `args`), then answers "done"; exit
 * code 0 asserted. Environment `opts.extra`, descriptors `opts.inherit` as {@link headlessAttack}.
 */
export async function headlessTurns(
  ws: string,
  turns: { id: string; command?: string; name?: string; args?: Record<string, unknown> }[][],
  flags: string[] = [],
  opts: { extra?: Record<string, string>; inherit?: string } = {},
): Promise<TurnsRun> {
  const env = await makeCoyoteEnv();
  const server = await startModelServer({
    script: [
      ...turns.map((calls) => ({
        tool_calls: calls.map((c) => ({
          id: c.id,
          name: c.name ?? "execute_command",
          arguments: c.args ?? { command: c.command },
        })),
      })),
      { text: "done" },
    ],
  });
  try {
    const r = await runCoyote(["--headless", "--output-format", "json", ...flags, "go"], {
      cwd: ws,
      env: childEnv(env, { baseURL: server.baseURL, extra: opts.extra }),
      inherit: opts.inherit,
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const msgs = requestMessages(server.requests.at(-1)!) as {
      role: string;
      tool_call_id?: string;
      content?: unknown;
    }[];
    return {
      out: JSON.parse(r.stdout),
      sent: JSON.stringify(msgs),
      result: (id) =>
        JSON.stringify(msgs.find((m) => m.role === "tool" && m.tool_call_id === id)?.content ?? ""),
    };
  } finally {
    await server.close();
    await env.cleanup();
  }
}
