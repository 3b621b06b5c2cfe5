/**
 * The next command's launching shell, started ahead of time (bwrap with a per-command cgroup,
 * ./cgroup.ts). Joining a cgroup (the write to `cgroup.procs`) takes the kernel's
 * `cgroup_threadgroup_rwsem` for writing, which first waits for an RCU grace period when no
 * other attach happened just before: ~10–20 ms on a 2-vCPU VM, paid by every command, and more
 * than bwrap's namespaces and mounts together (measured: `deno task bench sandbox`, issue 16's
 * "within 15 ms of today's"). A process must be born inside its cgroup (its limits bind the whole
 * tree), so the wait cannot be skipped; it is moved off the command's path instead: once a command
 * has ended, the sandbox starts the next one's `/bin/sh` — it makes the next cgroup, sets its
 * limits and the rlimits, joins it, and then blocks reading one line from its stdin — while the
 * model is still thinking. The next command, when its environment and limits are the same (the
 * {@link aheadKey}), writes the path of a one-use script (./plan_file.ts `scriptFile`: open the
 * seccomp filter as fd 3 and the mount plan as fd 4, exec bwrap) to that shell's stdin; stdin then
 * becomes `/dev/null`, as for a command started cold. Anything else (another environment, limits,
 * a shell that already exited — a failed cgroup set-up prints its error and exits 125) is
 * discarded: killed, its cgroup torn down, and the command starts cold, exactly as before.
 *
 * One shell waits at a time (commands in parallel start cold). The waiting shell holds nothing of
 * the command: its environment is what a cold start would pass, its cgroup is empty but for
 * itself, and when Coyote dies its stdin ends and it exits (the empty cgroup is removed at the
 * next probe, ./cgroup.ts).
 * @module
 */

import { type CgroupHost, type CommandCgroup, teardown } from "./cgroup.ts";
import { scriptFile } from "./plan_file.ts";

/** A launching shell waiting for its command (see the module doc). */
export interface AheadLaunch {
  /** {@link aheadKey} of the environment and limits it was started with. */
  readonly key: string;
  /** The cgroup it made and joined: the command's. */
  readonly cg: CommandCgroup;
  /**
   * Starts the command: `rest` is POSIX sh text run in place of the launch's tail (it must end in
   * an `exec`). Returns the child (stdout and stderr piped, its own process group, `env[TREE_MARKER]
   * = marker`). Throws what writing the script file throws.
   */
  go(rest: string): { child: Deno.ChildProcess; marker: string };
}

/** What must be equal for a waiting shell to serve a command: environment, cgroup and rlimits. */
export function aheadKey(
  env: Record<string, string>,
  host: CgroupHost,
  memoryMb: number,
  processes: number,
  rlimits: string,
): string {
  const vars = Object.keys(env).sort().map((k) => [k, env[k]]);
  return JSON.stringify([vars, host.memory, host.pids, memoryMb, processes, rlimits]);
}

interface Waiting extends AheadLaunch {
  child: Deno.ChildProcess;
  exited: boolean;
  discard(): void;
}

/**
 * Shell text for a waiting shell whose stdin ended: it moves itself to each cgroup's parent and
 * removes the cgroup (a process cannot remove the cgroup it is in; one with other processes stays
 * for the teardown or the next probe, ./cgroup.ts).
 */
function leave(cg: CommandCgroup): string {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  return cg.dirs.map((d) =>
    `{ echo $$ > ${q(`${d.slice(0, d.lastIndexOf("/"))}/cgroup.procs`)}; rmdir ${
      q(d)
    }; } 2>/dev/null;`
  ).join(" ");
}

/** The one waiting launch of a session's sandbox (see the module doc). */
export class LaunchAhead {
  #waiting?: Waiting;
  #closed = false;

  /** The waiting shell's PID, if one waits (diagnostics and tests). */
  get pid(): number | undefined {
    const w = this.#waiting;
    return w && !w.exited ? w.child.pid : undefined;
  }

  /** The waiting launch when its key is `key` and its shell still waits; else discards it. */
  take(key: string): AheadLaunch | undefined {
    const w = this.#waiting;
    this.#waiting = undefined;
    if (!w) return undefined;
    if (w.key === key && !w.exited) return w;
    w.discard();
    return undefined;
  }

  /**
   * Starts the next command's launching shell (replacing one still waiting): `setup` is the
   * launch's set-up text (./cgroup.ts `setupLines` for `cg`, then ./limits.ts `rlimitLine`);
   * `markerVar`: the runner's process-tree variable (plugins/exec/tree.ts `TREE_MARKER`), set to a
   * fresh marker in the shell's environment. Never throws: a shell that cannot start leaves the
   * next command to start cold.
   */
  start(
    key: string,
    cg: CommandCgroup,
    setup: string,
    env: Record<string, string>,
    markerVar: string,
  ): void {
    if (this.#closed) return;
    this.#waiting?.discard();
    this.#waiting = undefined;
    const marker = [...crypto.getRandomValues(new Uint8Array(16))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command("/bin/sh", {
        args: [
          "-c",
          `${setup}IFS= read -r __f || { ${leave(cg)} exit 0; }; exec 0</dev/null; . "$__f"`,
        ],
        cwd: "/",
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        env: { ...env, [markerVar]: marker },
        clearEnv: true,
        detached: true,
      }).spawn();
    } catch {
      return;
    }
    // Not a reason to keep Coyote alive while it waits.
    child.unref();
    let used = false;
    const w: Waiting = {
      key,
      cg,
      child,
      exited: false,
      go: (rest) => {
        used = true;
        child.ref();
        const f = scriptFile(`rm -f "$__f"\n${rest}\n`);
        const writer = child.stdin.getWriter();
        void writer.write(new TextEncoder().encode(`${f}\n`)).then(() => writer.close()).catch(
          () => {},
        );
        return { child, marker };
      },
      discard: () => {
        if (used) return;
        used = true;
        // Its stdin ends: the shell leaves its cgroup, removes it and exits — also when Coyote
        // exits right after (a headless run's close), before a teardown of ours could run.
        void child.stdin.close().catch(() => {});
        void child.stdout.cancel().catch(() => {});
        void child.stderr.cancel().catch(() => {});
        const stop = setTimeout(() => {
          try {
            // Still there after 2 s: it and anything it started (its own process group).
            Deno.kill(-child.pid, "SIGKILL");
          } catch { /* gone */ }
        }, 2000);
        Deno.unrefTimer(stop);
        void child.status.then(() => {
          clearTimeout(stop);
          return teardown(cg);
        }).catch(() => {});
      },
    };
    void child.status.then(() => (w.exited = true), () => (w.exited = true));
    this.#waiting = w;
  }

  /** Discards the waiting launch; no more are started. */
  close(): void {
    this.#closed = true;
    this.#waiting?.discard();
    this.#waiting = undefined;
  }
}
