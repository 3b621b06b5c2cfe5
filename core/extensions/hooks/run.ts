/**
 * Running one hook command the way Claude Code does: `bash -c COMMAND` (`sh` without bash) in the
 * session's working directory, the event's JSON on stdin, `CLAUDE_PROJECT_DIR` (and
 * `COYOTE_PROJECT_DIR`) set to the workspace, the provider key and secret-looking variables
 * removed from the environment (core/extensions/hooks/stop.ts `hookEnv`), killed after its timeout
 * (default 60 s). A workspace's or plugin's hook is started through `launch` instead (inside the
 * session's OS sandbox). Never throws for the hook's own failure.
 * @module
 */
import { DEFAULT_HOOK_TIMEOUT_MS, hookEnv } from "./stop.ts";

/** How to start a command instead of `bash -c` (the OS sandbox's `CommandSandbox.prepare`). */
export type HookLaunch = (command: string) =>
  | {
    program: string;
    args: string[];
    env: Record<string, string>;
    /** Run after the command ends (the sandbox removes protected paths it created). */
    after?: () => string | undefined;
  }
  | { refused: string };

/** What one run of a hook command gave. */
export type HookRun =
  | { ran: true; code: number; stdout: string; stderr: string }
  | { ran: false; problem: string };

/** Longest stdout / stderr kept from a hook (characters); Claude Code caps hook output too. */
export const HOOK_OUTPUT_MAX = 10_000;

/**
 * Runs `command` with `input` (JSON) on stdin.
 * @returns the exit code and output, or `{ran: false, problem}` when it could not run, timed out
 *   (`problem` says so) or was cancelled.
 */
export async function runHookCommand(o: {
  command: string;
  input: unknown;
  cwd: string;
  timeoutMs?: number;
  launch?: HookLaunch;
  signal: AbortSignal;
}): Promise<HookRun> {
  const timeoutMs = o.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  let start: Exclude<ReturnType<HookLaunch>, { refused: string }>;
  const project = { CLAUDE_PROJECT_DIR: o.cwd, COYOTE_PROJECT_DIR: o.cwd };
  if (o.launch) {
    const l = o.launch(o.command);
    if ("refused" in l) return { ran: false, problem: `not run: ${l.refused}` };
    start = { ...l, env: { ...l.env, ...project } };
  } else {
    const shell = await Deno.stat("/bin/bash").then(() => "/bin/bash", () => "/bin/sh");
    start = { program: shell, args: ["-c", o.command], env: { ...hookEnv(), ...project } };
  }
  const timeout = AbortSignal.timeout(timeoutMs);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(start.program, {
      args: start.args,
      cwd: o.cwd,
      env: start.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    start.after?.();
    return { ran: false, problem: `could not start: ${(e as Error).message}` };
  }
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  };
  const both = AbortSignal.any([o.signal, timeout]);
  both.addEventListener("abort", kill, { once: true });
  try {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(JSON.stringify(o.input))).catch(() => {});
    await w.close().catch(() => {});
    const out = await child.output();
    if (timeout.aborted) {
      return { ran: false, problem: `timed out after ${Math.round(timeoutMs / 100) / 10} s` };
    }
    if (o.signal.aborted) return { ran: false, problem: "cancelled" };
    const text = (b: Uint8Array) => new TextDecoder().decode(b).trim().slice(0, HOOK_OUTPUT_MAX);
    return { ran: true, code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
  } catch (e) {
    return { ran: false, problem: `failed: ${(e as Error).message}` };
  } finally {
    both.removeEventListener("abort", kill);
    start.after?.();
  }
}
