/**
 * The `exec` tool pack: `execute_command {command, timeout_ms?}` (issue 2,
 * "Core tools"). The guard checks the command before `run` (access
 * `{type: "execute", command}`); this module only runs it.
 *
 * - Runs `bash -c COMMAND` (`sh -c` when bash is absent) in the session cwd,
 *   stdin closed (`null`: never the terminal), with the environment of
 *   core/policy/sandbox/env.ts: secrets scrubbed, pagers `cat`, editors `false`,
 *   `GIT_TERMINAL_PROMPT=0`, so nothing waits for a human.
 * - A {@link CommandLauncher} decides how the shell is started: the session's
 *   one (core/policy/sandbox/mod.ts) runs it inside the OS sandbox derived from the
 *   policy, or refuses when `sandbox: required` cannot be met; without one
 *   (this module's {@link executeCommandTool}) the shell runs directly.
 * - The whole process tree ends with the call (./tree.ts): the shell leads its
 *   own session and process group (setsid(2) via `detached`), and descendants
 *   that leave it are found by a marker variable. A timeout or an abort
 *   (`ctx.signal`) sends SIGTERM, then SIGKILL after a grace period; when the
 *   shell exits, whatever it left running (`sleep 100 &`) is killed.
 * - stdout and stderr are captured separately, each bounded to
 *   {@link OUTPUT_LIMIT} bytes by keeping head and tail; the cut is marked
 *   with the number of bytes dropped.
 * - When the frontend offers a client terminal (`ctx.host.runInTerminal`,
 *   ACP `terminal/*`), the command runs there instead (output combined).
 *
 * A non-zero exit, a timeout or a kill is reported with `isError: true` (the
 * ACP tool call ends `failed`); the content always has the exit code and both
 * streams.
 * @module
 */
import { builtinInputs } from "../../core/tools/lazy.ts";
import type { EXEC_INPUTS } from "./inputs.ts";
import { definePlugin, defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { commandEnvironment } from "../../core/policy/sandbox/env.ts";
import {
  limitHit,
  type LimitKind,
  limitMessage,
  type SandboxLimits,
} from "../../core/policy/sandbox/limits.ts";
import { forget, newMarker, type ProcessTree, signalTree, track, TREE_MARKER } from "./tree.ts";

/** Default timeout (ms). */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Largest accepted `timeout_ms`; larger values are clamped. */
export const MAX_TIMEOUT_MS = 600_000;
/** Bytes kept per stream (half head, half tail). */
export const OUTPUT_LIMIT = 30_000;
/** Time between SIGTERM and SIGKILL of the process group (ms). */
export const KILL_GRACE_MS = 2_000;
/** How often a running command's cgroup counters are read (ms; one `sh` run each). */
const CGROUP_POLL_MS = 1_000;
/** After the shell exits, how long background children may keep the pipes open before we stop reading (ms). */
export const DRAIN_MS = 300;

/** Keeps the first and last `limit/2` bytes of a stream and counts what falls between. */
export class BoundedCapture {
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private tail: Uint8Array[] = [];
  private tailBytes = 0;
  /** Total bytes seen. */
  total = 0;
  constructor(private readonly limit: number = OUTPUT_LIMIT) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    const headRoom = (this.limit >> 1) - this.headBytes;
    if (headRoom > 0) {
      const h = chunk.subarray(0, headRoom);
      this.head.push(h.slice());
      this.headBytes += h.length;
      chunk = chunk.subarray(h.length);
      if (chunk.length === 0) return;
    }
    this.tail.push(chunk.slice());
    this.tailBytes += chunk.length;
    const keep = this.limit - (this.limit >> 1);
    while (this.tailBytes - this.tail[0].length >= keep) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  /** Bytes dropped between head and tail. */
  get dropped(): number {
    return Math.max(
      0,
      this.total - this.headBytes - Math.min(this.tailBytes, this.limit - (this.limit >> 1)),
    );
  }

  /** The kept text; a `[… N bytes cut …]` marker stands for what was dropped. */
  text(): string {
    const dec = new TextDecoder();
    const head = dec.decode(concat(this.head));
    let tailBytes = concat(this.tail);
    const keep = this.limit - (this.limit >> 1);
    if (tailBytes.length > keep) tailBytes = tailBytes.subarray(tailBytes.length - keep);
    const tail = dec.decode(tailBytes);
    const cut = this.dropped;
    return cut > 0 ? `${head}\n[… ${cut} bytes cut …]\n${tail}` : head + tail;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

let shellCache: string | undefined;
/** `bash` when it runs, else `sh` (checked once). */
async function shell(): Promise<string> {
  if (shellCache) return shellCache;
  try {
    const o = await new Deno.Command("bash", {
      args: ["-c", "true"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    })
      .output();
    shellCache = o.success ? "bash" : "sh";
  } catch {
    shellCache = "sh";
  }
  return shellCache;
}

/** Outcome of one command. */
export interface CommandOutcome {
  /** What the launcher reported after the command (e.g. a protected path it removed). */
  note?: string;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
  /** The sandbox limit the command hit (core/policy/sandbox/limits.ts), with its message. */
  limit?: { which: LimitKind; message: string };
}

/** How to start one command's shell: program, arguments, environment; or why it may not run. */
export type LaunchPlan =
  | {
    program: string;
    args: string[];
    env: Record<string, string>;
    sandboxed: boolean;
    /** Called once the command's tree has ended; a returned note is appended to the result. */
    after?: () => string | undefined;
    /**
     * The sandbox's limits: stderr showing a failed fork ends the tree (a fork bomb would spin at
     * the limit until the timeout) and the result names the limit.
     */
    limits?: SandboxLimits;
    /**
     * The command's own cgroup (core/policy/sandbox/cgroup.ts): checked every second while it
     * runs (a refused fork ends the tree, also when the bomb prints nothing), then torn down —
     * awaited when the command failed, for the limit it hit (an OOM kill prints nothing).
     */
    cgroup?: {
      check(): Promise<"processes" | "memory" | undefined>;
      finish(): Promise<"processes" | "memory" | undefined>;
    };
    /**
     * Whether a run that exited with `exitCode` and printed `stderr` failed in the sandbox's own
     * set-up because the host changed between the plan and the start (a path it hides was removed
     * meanwhile), so the command never ran: {@link runCommand} prepares and runs it once more.
     */
    setupRaced?: (exitCode: number | null, stderr: string) => boolean;
    /**
     * Given only to a caller that passed `ahead` to `prepare`: the command's launching
     * shell was started ahead of time (core/policy/sandbox/launch_ahead.ts: its cgroup join, which
     * waits for an RCU grace period, happened while the model thought). Starts the command and
     * returns that child — stdout and stderr piped, its own process group, `env[TREE_MARKER]` =
     * `marker` — to use instead of spawning `program`.
     */
    started?: () => { child: Deno.ChildProcess; marker: string };
  }
  | { refused: string };

/**
 * Starts commands (core/policy/sandbox/mod.ts `CommandSandbox` is the session's). `shell` is `bash` or
 * `sh`; the plan must run `shell -c command` in `cwd`.
 */
export interface CommandLauncher {
  /**
   * `opts.ahead`: the caller spawns through the plan's `started` when given, and calls `finished`;
   * `markerVar` names its process-tree variable (./tree.ts `TREE_MARKER`).
   */
  prepare(
    command: string,
    cwd: string,
    shell: string,
    opts?: { ahead?: { markerVar: string } },
  ): LaunchPlan | Promise<LaunchPlan>;
  /** Awaited before {@link prepare} when present: work the plan needs done first (never rejects). */
  ready?(): Promise<void>;
  /** Told about each live process tree (to end it when the session closes). */
  started?(tree: ProcessTree): void;
  finished?(tree: ProcessTree): void;
}

/** Runs the shell directly, with the scrubbed non-interactive environment (no sandbox). */
export const directLauncher: CommandLauncher = {
  prepare: (command, _cwd, shell) => ({
    program: shell,
    args: ["-c", command],
    env: commandEnvironment().env,
    sandboxed: false,
  }),
};

/** Runs `command` in its own process group; see the module doc. */
export async function runCommand(
  command: string,
  opts: {
    cwd: string;
    timeoutMs: number;
    signal: AbortSignal;
    limit?: number;
    launcher?: CommandLauncher;
  },
): Promise<CommandOutcome & { sandboxed: boolean }> {
  const first = await runOnce(command, opts);
  // The sandbox could not be set up because the host changed under it (the command did not run).
  if (first.raced) return (await runOnce(command, opts)).outcome;
  return first.outcome;
}

async function runOnce(
  command: string,
  opts: Parameters<typeof runCommand>[1],
): Promise<{ outcome: CommandOutcome & { sandboxed: boolean }; raced: boolean }> {
  const started = performance.now();
  const sh = await shell();
  const launcher = opts.launcher ?? directLauncher;
  await launcher.ready?.();
  const plan = await launcher.prepare(command, opts.cwd, sh, { ahead: { markerVar: TREE_MARKER } });
  if ("refused" in plan) throw new CommandRefused(plan.refused);
  const ahead = plan.started?.();
  const marker = ahead?.marker ?? newMarker();
  // `detached` spawns the shell with setsid(2): it leads a new session and
  // process group, so the whole group can be killed.
  const child = ahead?.child ?? new Deno.Command(plan.program, {
    args: plan.args,
    cwd: opts.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { ...plan.env, [TREE_MARKER]: marker },
    clearEnv: true,
    detached: true,
  }).spawn();
  const pid = child.pid;
  const tree: ProcessTree = { pid, marker };
  track(tree);
  launcher.started?.(tree);
  const out = new BoundedCapture(opts.limit ?? OUTPUT_LIMIT);
  const err = new BoundedCapture(opts.limit ?? OUTPUT_LIMIT);
  const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
  let hit: LimitKind | undefined;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const cg = plan.cgroup;
  // A fork refused by the cgroup's pids.max ends the tree even when the bomb prints nothing.
  let checking = false;
  const poll = cg
    ? setInterval(() => {
      if (checking || hit === "processes") return;
      checking = true;
      cg.check().then((h) => {
        if (h === "processes" && hit !== "processes") {
          hit = h;
          signalTree(tree, "SIGKILL");
        }
      }).finally(() => checking = false);
    }, CGROUP_POLL_MS)
    : undefined;
  const kill = () => {
    signalTree(tree, "SIGTERM");
    killTimer ??= setTimeout(() => signalTree(tree, "SIGKILL"), KILL_GRACE_MS);
  };
  const pump = async (
    stream: ReadableStream<Uint8Array>,
    cap: BoundedCapture,
    watchLimits = false,
  ) => {
    const reader = stream.getReader();
    readers.push(reader);
    const dec = new TextDecoder();
    let tail = "";
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        cap.push(value);
        if (watchLimits && hit !== "processes") {
          const text = tail + dec.decode(value, { stream: true });
          const h = limitHit(text);
          if (h === "processes") {
            hit = h;
            // Kill at once: the tree ends with the limit, not at the timeout.
            signalTree(tree, "SIGKILL");
          } else if (h) hit ??= h;
          tail = text.slice(-200);
        }
      }
    } catch { /* cancelled */ }
  };
  const pumps = [pump(child.stdout, out), pump(child.stderr, err, !!plan.limits)];

  let timedOut = false;
  let cancelled = false;
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, opts.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    kill();
  };
  if (opts.signal.aborted) onAbort();
  else opts.signal.addEventListener("abort", onAbort, { once: true });

  let status: Deno.CommandStatus;
  try {
    status = await child.status;
    // The shell is gone: whatever it left running (`cmd &`, setsid children) ends with the call.
    // A sandbox that exited normally took its PID namespace with it: the group is enough.
    signalTree(tree, "SIGKILL", !plan.sandboxed || timedOut || cancelled || !!status.signal);
    // Stragglers may still hold the pipes for a moment: wait a little, then stop reading.
    let drainTimer: ReturnType<typeof setTimeout> | undefined;
    const drained = await Promise.race([
      Promise.all(pumps).then(() => true),
      new Promise<boolean>((r) => (drainTimer = setTimeout(() => r(false), DRAIN_MS))),
    ]);
    clearTimeout(drainTimer);
    if (!drained) {
      await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
      await Promise.all(pumps);
    }
  } finally {
    clearInterval(poll);
    clearTimeout(timer);
    clearTimeout(killTimer);
    opts.signal.removeEventListener("abort", onAbort);
    forget(tree);
    launcher.finished?.(tree);
  }
  if (cg) {
    // A failed command: the cgroup's counters say whether a limit ended it (an OOM kill of a
    // shared mapping or a tmpfs file prints nothing). A successful one: torn down meanwhile.
    if (!status.success || hit) {
      const h = await cg.finish();
      if (h === "processes" || (h && !hit)) hit = h;
    } else void cg.finish();
  }
  const note = plan.after?.();
  // A process killed by SIGXFSZ wrote past RLIMIT_FSIZE (its shell may have printed nothing);
  // bwrap reports its command's death by a signal as exit code 128 + 25.
  if (status.signal === "SIGXFSZ" || (plan.limits && status.code === 153)) hit ??= "file_size";
  // A failed allocation, a too-large file or too many open files only count when the command
  // failed (its stderr may have quoted the message).
  if (hit !== "processes" && status.success) hit = undefined;
  const raced = !status.success && !timedOut && !cancelled &&
    !!plan.setupRaced?.(status.signal ? null : status.code, err.text());
  return {
    raced,
    outcome: {
      ...(note ? { note } : {}),
      ...(hit && plan.limits
        ? { limit: { which: hit, message: limitMessage(hit, plan.limits, !!cg) } }
        : {}),
      sandboxed: plan.sandboxed,
      exitCode: status.signal ? null : status.code,
      signal: status.signal ?? null,
      stdout: out.text(),
      stderr: err.text(),
      stdoutBytes: out.total,
      stderrBytes: err.total,
      truncated: out.dropped > 0 || err.dropped > 0,
      timedOut,
      cancelled,
      durationMs: Math.round(performance.now() - started),
    },
  };
}

function describe(o: {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  timeoutMs: number;
}): string {
  if (o.timedOut) return `timed out after ${o.timeoutMs} ms; process group killed`;
  if (o.cancelled) return "cancelled; process group killed";
  if (o.exitCode === null) return `killed by ${o.signal ?? "a signal"}`;
  return `exit code ${o.exitCode}`;
}

/** A command the launcher refused to start (e.g. `sandbox: required` without a sandbox). */
export class CommandRefused extends Error {
  override name = "CommandRefused";
}

/** POSIX shell quoting of one word. */
/**
 * What to tell the model when a sandboxed command failed writing a repository's `.git/` (kept
 * read-only inside the OS sandbox: hooks and config there run later, outside it;
 * docs/permissions.md "protected paths"): `git add`, `git commit` or `git checkout -b` cannot work
 * here, and retrying will not help — the user can allow it. Undefined for any other failure.
 */
export function readOnlyGitNote(exitCode: number | null, stderr: string): string | undefined {
  if (exitCode === 0 || !/\.git\/[^\n]*Read-only file system/.test(stderr)) return undefined;
  return "the OS sandbox keeps .git/ read-only (git hooks and config run later, outside it), so commands that write the repository (git add, git commit, git checkout -b) fail here; do not retry — tell the user, who can allow it with --allow 'Write(.git/**)' or run the git command themselves";
}

export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/** `execute_command {command, timeout_ms?}` starting shells through `launcher`; see the module doc. */
export function makeExecuteCommandTool(
  launcher: CommandLauncher = directLauncher,
  /** Appended to the description (e.g. what the OS sandbox allows), so the model expects it. */
  note?: string,
) {
  return defineTool({
    name: "execute_command",
    description:
      "Run a shell command (bash -c) in the working directory. Returns exit code, stdout and stderr (long output keeps head and tail). No stdin. Default timeout 120000 ms, max 600000." +
      (note ? ` ${note}` : ""),
    input: builtinInputs<typeof EXEC_INPUTS>("plugins")("execute_command"),
    kind: "execute",
    title: (i) => i.command.length > 80 ? `${i.command.slice(0, 77)}...` : i.command,
    access: (i) => [{ type: "execute", command: i.command }],
    async run(input, ctx): Promise<ToolResult> {
      const timeoutMs = Math.min(input.timeout_ms ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
      if (ctx.signal.aborted) {
        return { content: "cancelled before the command started", isError: true };
      }
      if (ctx.host?.runInTerminal) {
        // The client's terminal runs `/bin/sh -c TEXT`: a sandboxed plan becomes
        // `exec env -i VARS… bwrap … bash -c COMMAND` so the client starts the same sandbox.
        let text = input.command;
        let after: (() => string | undefined) | undefined;
        let cgroup: { finish(): Promise<unknown> } | undefined;
        if (launcher !== directLauncher) {
          await launcher.ready?.();
          const plan = await launcher.prepare(input.command, ctx.cwd, await shell());
          if ("refused" in plan) return { content: plan.refused, isError: true };
          after = plan.after;
          cgroup = plan.cgroup;
          if (plan.sandboxed) {
            text = ["exec", "env", "-i", ...Object.entries(plan.env).map(([k, v]) => `${k}=${v}`)]
              .concat(plan.program, ...plan.args).map(shellQuote).join(" ");
          }
        }
        const r = await ctx.host.runInTerminal(text, {
          cwd: ctx.cwd,
          timeoutMs,
          outputByteLimit: OUTPUT_LIMIT * 2,
          signal: ctx.signal,
          toolCallId: ctx.toolCallId,
        }).finally(() => cgroup?.finish());
        const cancelled = ctx.signal.aborted;
        const status = describe({ ...r, timedOut: false, cancelled, timeoutMs });
        const body = r.output === ""
          ? ""
          : `\n--- output${r.truncated ? " (truncated)" : ""} ---\n${r.output}`;
        const note = after?.();
        return {
          content: `${status}${body}${note ? `\n--- coyote ---\n${note}` : ""}`,
          isError: r.exitCode !== 0,
          rawOutput: {
            exitCode: r.exitCode,
            signal: r.signal,
            truncated: r.truncated,
            terminal: true,
          },
        };
      }
      let o: CommandOutcome & { sandboxed: boolean };
      try {
        o = await runCommand(input.command, {
          cwd: ctx.cwd,
          timeoutMs,
          signal: ctx.signal,
          launcher,
        });
      } catch (err) {
        if (err instanceof CommandRefused) return { content: err.message, isError: true };
        if (err instanceof Deno.errors.NotFound) {
          return {
            content: `cannot run the command: working directory ${ctx.cwd} or shell not found`,
            isError: true,
          };
        }
        throw err;
      }
      const parts = [describe({ ...o, timeoutMs })];
      if (o.limit) parts.unshift(o.limit.message);
      if (o.stdout !== "") parts.push(`--- stdout ---\n${o.stdout.replace(/\n$/, "")}`);
      if (o.stderr !== "") parts.push(`--- stderr ---\n${o.stderr.replace(/\n$/, "")}`);
      if (o.stdout === "" && o.stderr === "") parts.push("(no output)");
      const note = [o.note, o.sandboxed ? readOnlyGitNote(o.exitCode, o.stderr) : undefined]
        .filter(Boolean).join("\n");
      if (note) parts.push(`--- coyote ---\n${note}`);
      return {
        content: parts.join("\n"),
        isError: o.exitCode !== 0 || !!o.limit,
        rawOutput: {
          ...(o.limit ? { limit: o.limit.which } : {}),
          exitCode: o.exitCode,
          signal: o.signal,
          timedOut: o.timedOut,
          cancelled: o.cancelled,
          stdoutBytes: o.stdoutBytes,
          stderrBytes: o.stderrBytes,
          truncated: o.truncated,
          durationMs: o.durationMs,
          sandboxed: o.sandboxed,
        },
      };
    },
  });
}

/** `execute_command` without a sandbox (the session replaces it with its own; core/session/runtime.ts). */
export const executeCommandTool = makeExecuteCommandTool();

/** The `exec` plugin. */
export const execPlugin = definePlugin({
  name: "exec",
  version: "1.0.0",
  description: "Run shell commands in the workspace.",
  tools: [executeCommandTool],
});

export default execPlugin;
