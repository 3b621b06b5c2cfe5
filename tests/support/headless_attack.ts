/**
 * One headless run of Coyote against a scripted model that asks for every command of `attacks`
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
  const env = await makeCoyoteEnv();
  const call = (id: string, command: string) => ({
    id,
    name: "execute_command",
    arguments: { command },
  });
  const server = await startModelServer({
    script: [
      {
        tool_calls: [
          ...attacks.map((command, i) => call(`a${i}`, command)),
          ...others.map((o) => call(o.id, o.command)),
        ],
      },
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
    const out = JSON.parse(r.stdout);
    return {
      out,
      denied: out.denied.map((d: { toolCallId: string }) => d.toolCallId).sort(),
      attackIds: attacks.map((_, i) => `a${i}`).sort(),
      sent: JSON.stringify(requestMessages(server.requests.at(-1)!)),
    };
  } finally {
    await server.close();
    await env.cleanup();
  }
}
