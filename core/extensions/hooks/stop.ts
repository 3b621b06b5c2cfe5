/**
 * Stop hooks (issue 8 §5; seed 003's stop hook; Claude Code's `Stop` hook convention): commands
 * that run when an agent is about to end its turn and may send it back to work.
 *
 * Configured as `hooks: { stop: [{ command, timeout_ms? }] }` in config.yaml (a workspace's only
 * when it is trusted), as Claude Code's `hooks.Stop` / `hooks.SubagentStop` groups (docs/hooks.md;
 * a sub-agent runs the `SubagentStop` ones), or contributed by a plugin. Each hook:
 * - runs `bash -c COMMAND` (`sh` without bash) in the session's working directory, stdin a JSON
 *   object `{session_id, agent, cwd, transcript_path, stop_hook_active}` (snake_case, as Claude
 *   Code sends it), the provider key and secret-looking variables removed from its environment;
 * - blocks the stop by printing `{"decision": "block", "reason": "…"}` on stdout, or by exiting
 *   with code 2 with the reason on stderr (Claude Code's convention); anything else lets it stop;
 *   a hook that fails to run, times out or prints junk is reported and lets it stop (a broken hook
 *   must not trap an agent).
 * A block gives the reason back to the agent as a new user message and emits a `stop_hook` event
 * of kind `stop-hook-error` (the seed's name: a signal, not an error). While a block is being
 * acted on, `stop_hook_active` is true, so a hook can let the second stop through; at most
 * `max_blocks` (default 3) blocks per turn are honoured.
 * @module
 */
import { secretName } from "../../tools/redact.ts";

/** One configured stop hook. */
export interface StopHookSpec {
  command: string;
  /** Milliseconds; default 60000. */
  timeout_ms?: number;
  /**
   * How to start the command instead of `bash -c` with {@link hookEnv}: a plugin's hook is
   * started inside the OS sandbox (core/policy/sandbox/ `CommandSandbox.prepare`). `refused` when it
   * cannot run there (the hook is then reported and lets the agent stop).
   */
  launch?: (command: string) =>
    | {
      program: string;
      args: string[];
      env: Record<string, string>;
      /** Run after the command ends (the sandbox removes protected paths it created). */
      after?: () => string | undefined;
    }
    | { refused: string };
  /** Where it came from, for messages (`plugin jira`). */
  source?: string;
}

/** The JSON a hook receives on stdin. */
export interface StopHookInput {
  /** `Stop`, or `SubagentStop` for a sub-agent's (Claude Code's names). */
  hook_event_name?: "Stop" | "SubagentStop";
  /** Claude Code's permission mode name (`default`, `plan`, `acceptEdits`, `auto`). */
  permission_mode?: string;
  session_id: string;
  agent: string;
  cwd: string;
  transcript_path: string | null;
  stop_hook_active: boolean;
}

/** What the hooks decided. */
export type StopHookDecision =
  | { block: false; problems: string[] }
  | { block: true; reason: string; hook: string; problems: string[] };

/** Default cap on honoured blocks per turn. */
export const DEFAULT_MAX_BLOCKS = 3;
/** Default per-hook timeout (ms). */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;

/**
 * The environment a hook runs with: ours, minus the provider key and secret-looking names (the
 * one rule of core/tools/redact.ts `secretName`).
 */
export function hookEnv(env: Record<string, string> = Deno.env.toObject()): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (!secretName(k)) out[k] = v;
  return out;
}

async function runOne(
  hook: StopHookSpec,
  input: StopHookInput,
  signal: AbortSignal,
): Promise<{ block?: string; problem?: string }> {
  let start: {
    program: string;
    args: string[];
    env: Record<string, string>;
    after?: () => string | undefined;
  };
  if (hook.launch) {
    const l = hook.launch(hook.command);
    if ("refused" in l) return { problem: `stop hook \`${hook.command}\` not run: ${l.refused}` };
    start = l;
  } else {
    const shell = await Deno.stat("/bin/bash").then(() => "/bin/bash", () => "/bin/sh");
    start = { program: shell, args: ["-c", hook.command], env: hookEnv() };
  }
  const timeout = AbortSignal.timeout(hook.timeout_ms ?? DEFAULT_HOOK_TIMEOUT_MS);
  const child = new Deno.Command(start.program, {
    args: start.args,
    cwd: input.cwd,
    env: start.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  };
  const both = AbortSignal.any([signal, timeout]);
  both.addEventListener("abort", kill, { once: true });
  try {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(JSON.stringify(input))).catch(() => {});
    await w.close().catch(() => {});
    const out = await child.output();
    if (timeout.aborted) return { problem: `stop hook \`${hook.command}\` timed out` };
    const stdout = new TextDecoder().decode(out.stdout).trim();
    const stderr = new TextDecoder().decode(out.stderr).trim();
    if (out.code === 2) return { block: stderr || "a stop hook asked to continue" };
    if (out.code !== 0) {
      return {
        problem: `stop hook \`${hook.command}\` exited ${out.code}${
          stderr ? `: ${stderr.slice(0, 300)}` : ""
        }`,
      };
    }
    if (!stdout) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(stdout);
    } catch {
      return { problem: `stop hook \`${hook.command}\` printed something that is not JSON` };
    }
    const o = parsed as { decision?: unknown; reason?: unknown };
    if (o && o.decision === "block") {
      return {
        block: typeof o.reason === "string" && o.reason
          ? o.reason
          : "a stop hook asked to continue",
      };
    }
    return {};
  } finally {
    both.removeEventListener("abort", kill);
    // The sandbox's clean-up: `.git`/`.coyote`/`.mcp.json` the hook created are removed.
    start.after?.();
  }
}

/**
 * Runs `hooks` in order; the first that blocks wins (the rest do not run).
 * Never throws for a hook's own failure: it is listed in `problems`.
 */
export async function runStopHooks(
  hooks: StopHookSpec[],
  input: StopHookInput,
  signal: AbortSignal,
): Promise<StopHookDecision> {
  const problems: string[] = [];
  for (const h of hooks) {
    if (signal.aborted) break;
    try {
      const r = await runOne(h, input, signal);
      if (r.problem) problems.push(r.problem);
      if (r.block) return { block: true, reason: r.block, hook: h.command, problems };
    } catch (e) {
      problems.push(`stop hook \`${h.command}\` could not run: ${(e as Error).message}`);
    }
  }
  return { block: false, problems };
}

/**
 * The per-turn state machine around {@link runStopHooks}: `check` is called each time the agent
 * is about to end its turn and returns the reason to continue with, or `null` to let it stop.
 * `stop_hook_active` is true after a block; blocks beyond `maxBlocks` are not honoured.
 */
export class StopHookGate {
  #blocks = 0;
  constructor(
    readonly hooks: StopHookSpec[],
    readonly maxBlocks = DEFAULT_MAX_BLOCKS,
  ) {}

  /** Resets the per-turn count (call at the start of a turn). */
  reset(): void {
    this.#blocks = 0;
  }

  async check(
    base: Omit<StopHookInput, "stop_hook_active">,
    signal: AbortSignal,
    onEvent: (e: { kind: "stop-hook-error"; reason: string; hook: string; blocks: number }) => void,
    log: (line: string) => void = () => {},
  ): Promise<string | null> {
    if (!this.hooks.length || this.#blocks >= this.maxBlocks) return null;
    const d = await runStopHooks(
      this.hooks,
      { ...base, stop_hook_active: this.#blocks > 0 },
      signal,
    );
    for (const p of d.problems) log(p);
    if (!d.block) return null;
    this.#blocks++;
    onEvent({ kind: "stop-hook-error", reason: d.reason, hook: d.hook, blocks: this.#blocks });
    return d.reason;
  }
}
