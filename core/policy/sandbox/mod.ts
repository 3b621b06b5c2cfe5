/**
 * The OS sandbox every shell command runs in (issue 11 §1, docs/permissions.md "The OS sandbox"):
 * the fourth view of the one policy. `execute_command` uses it through {@link CommandSandbox};
 * the REPL's `!cmd` and graph `.sh` scripts are to call {@link sandboxedCommand}.
 *
 * - Backends: Linux `bwrap` (bubblewrap; ./bwrap.ts), macOS `sandbox-exec` with a generated
 *   SBPL profile (./sbpl.ts). Driven directly: npm `@anthropic-ai/sandbox-runtime` was evaluated
 *   (it imports under Deno in ~65 ms) but needs `socat` and `ripgrep` installed, is a process-wide
 *   singleton that runs its own proxy servers, and leaves the environment alone — Coyote needs a
 *   per-session profile, a scrubbed environment and no extra processes (docs/permissions.md).
 * - Modes ({@link SandboxSettings}): `auto` (default; on where a backend works, else a one-time
 *   warning, and the `init` event and `policy show` say so), `required` (commands are refused
 *   without a sandbox), `off` (`--no-sandbox`). `--dangerously-skip-permissions` keeps it.
 * - Protected names that do not exist yet (`.git`, `.coyote`, `.mcp.json` at any depth of the
 *   workspace, ./protected.ts) cannot be mounted read-only without creating them on the host:
 *   what a command creates is removed after it (the result says so), unless a `Write` allow rule
 *   names it.
 * - Permission mode `auto` (core/policy/mode.ts; the default, unless `auto_allow: false`): with
 *   the sandbox on, an `execute` access the guard would *ask* about by default runs without
 *   asking ({@link sandboxGuard}); deny rules and explicit `ask` rules still decide. In `plan`
 *   mode the workspace is mounted read-only (./profile.ts).
 * @module
 */
import type { Policy } from "../policy.ts";
import { deriveProfile, networkOf, type ProfileOptions, type SandboxProfile } from "./profile.ts";
import { bwrapArgs, PROC_READ_ONLY, setupRaced } from "./bwrap.ts";
import { planFile } from "./plan_file.ts";
import {
  DEFAULT_LIMITS,
  processLimit,
  rlimitLine,
  type SandboxLimits,
  tmpfsSize,
} from "./limits.ts";
import { sbplProfile } from "./sbpl.ts";
import { applyBwrapEnv, commandEnvironment } from "./env.ts";
import { GlobEngineNotLoaded } from "../rules.ts";
import { addProtectedPatterns } from "./protected.ts";
import { NodeModulesWatch } from "./node_modules_scan.ts";
import { protectedBefore, removeCreated } from "./cleanup.ts";
import { withDeniedCreated } from "./deny_created.ts";
import { NetProxy, proxyPrelude, SOCKET_NAME } from "./netproxy.ts";
import { netWord, type SandboxStatus } from "./describe.ts";
import { aheadKey, type AheadLaunch, LaunchAhead } from "./launch_ahead.ts";
import { killLive, prescanHome } from "./home_prescan.ts";
import { unixSocketFilterFile } from "./seccomp.ts";
import {
  type CgroupHost,
  cgroupHost,
  checkCgroup,
  type CommandCgroup,
  commandCgroup,
  setupLines,
  teardown,
} from "./cgroup.ts";

import type { SandboxSettings } from "./settings.ts";
import { detectBackend, type SandboxBackend, setprivPath, socatPath } from "./probe.ts";

export { deriveProfile, envDecision, type SandboxProfile } from "./profile.ts";
export { guardForcedAllow, type GuardLike, sandboxGuard } from "./guard.ts";
export { detectBackend, type SandboxBackend } from "./probe.ts";
export { describeSandbox, type SandboxStatus } from "./describe.ts";
export {
  DEFAULT_SANDBOX,
  SandboxConfigError,
  type SandboxMode,
  type SandboxSettings,
  sandboxSettings,
} from "./settings.ts";

/** A command ready to spawn: program, arguments and the complete environment (clear the rest). */
export interface SandboxedCommand {
  program: string;
  args: string[];
  env: Record<string, string>;
  profile: SandboxProfile;
  /**
   * bwrap: the launch's tail as POSIX sh text (open the filter as fd 3 and the plan as fd 4, exec
   * bwrap), for a launching shell started ahead whose set-up already ran (./launch_ahead.ts).
   */
  aheadTail?: string;
}

/** POSIX shell quoting of one word. */
const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Bash text the sandboxed command's shell runs first (eighth attacker pass): it closes every
 * descriptor above 2. Deno.Command closes none that Coyote itself inherited without close-on-exec
 * (a socket an editor, ACP client or wrapper left open, a directory descriptor), and bwrap passes
 * them on: a connected unix socket inherited as fd 9 went around the socket filter
 * (./seccomp.ts) to a daemon on the host (`echo x >&9`), and a directory descriptor leads out of
 * the mount namespace (`/proc/self/fd/N/..`). Only for bash (dash takes one digit per descriptor).
 */
export const CLOSE_INHERITED_FDS =
  'for __f in /proc/self/fd/*; do __f=${__f##*/}; case $__f in 0|1|2) ;; *[!0-9]*) ;; *) eval "exec $__f>&-";; esac; done; unset __f; ';

/**
 * The one entry point for running a shell command inside the sandbox derived from `policy`
 * (execute_command, and later the REPL's `!cmd` and graph `.sh` scripts). Spawn the result with
 * `clearEnv: true`, `cwd` and stdin `null`.
 *
 * - `backend`: from {@link detectBackend} (callers decide what to do without one).
 * - `tmpDir`: the private temp dir (`/tmp` inside on Linux, `TMPDIR` on macOS); on Linux a
 *   fresh tmpfs per command when omitted.
 * - `secrets`: values never passed in the environment (the provider key).
 * - `shell`: `bash` (default) or `sh`.
 */
export function sandboxedCommand(
  policy: Policy,
  command: string,
  opts: {
    cwd: string;
    backend: SandboxBackend;
    tmpDir?: string;
    secrets?: readonly string[];
    shell?: string;
    baseEnv?: Record<string, string>;
    /** `host`: share the host network although the profile says `proxy` (no proxy could run). */
    network?: "host";
    /** Shell lines run before `command` outside the unix-socket filter (the proxy bridge). */
    prelude?: string;
    /** Process and memory limits (./limits.ts); {@link DEFAULT_LIMITS} when omitted. */
    limits?: SandboxLimits;
    /**
     * The command's own cgroup (./cgroup.ts), made and limited by the caller: the launching shell
     * joins it before bwrap starts, and its `pids.max` replaces the `pid_max` way.
     */
    cgroup?: CommandCgroup;
  } & ProfileOptions,
): SandboxedCommand {
  let profile = deriveProfile(policy, opts);
  if (opts.network === "host" && profile.network.mode === "proxy") {
    profile = {
      ...profile,
      network: { mode: "host", why: `${profile.network.why} — but socat is missing: shared` },
    };
  }
  const { env } = commandEnvironment({
    base: opts.baseEnv,
    rules: profile.envRules,
    secrets: opts.secrets,
    sandboxed: true,
  });
  const shell = opts.shell ?? "bash";
  let cwd = opts.cwd;
  try {
    cwd = Deno.realPathSync(opts.cwd);
  } catch { /* bwrap reports it */ }
  if (opts.backend.name === "bwrap") {
    // Python's user site off, PATH without plantable folders, git's generated global config.
    applyBwrapEnv(env, profile);
    // No unix sockets (./seccomp.ts) unless a Net(unix:…) rule names one.
    const filter = profile.unixSockets.length ? undefined : unixSocketFilterFile();
    const limits = opts.limits ?? DEFAULT_LIMITS;
    // Run before the command with the outer bwrap's capabilities (./limits.ts): the process
    // limit, and — when the filter is on — the proxy bridge (socat reaches Coyote's proxy by a
    // unix socket, so it starts outside the filter).
    const procs = processLimit(limits, !!opts.cgroup);
    const outer = procs.outer + (filter ? opts.prelude ?? "" : "");
    const inner = (shell === "bash" ? CLOSE_INHERITED_FDS : "") + procs.inner +
      (filter ? "" : opts.prelude ?? "") + command;
    let argv = [shell, "-c", inner];
    let seccompFd: number | undefined = filter ? 3 : undefined;
    let keepCaps: string[] | undefined;
    const setpriv = setprivPath();
    if (outer && !(filter && opts.prelude) && setpriv) {
      // Only the process limit: the outer shell (filtered already: it needs no unix socket) keeps
      // CAP_SYS_ADMIN to write pid_max and CAP_SETPCAP to drop the bounding set, then util-linux
      // setpriv drops every capability before the command runs (cheaper than a nested bwrap).
      keepCaps = ["CAP_SYS_ADMIN", "CAP_SETPCAP"];
      argv = [
        shell,
        "-c",
        outer + `exec "$0" --bounding-set=-all --inh-caps=-all --ambient-caps=-all -- "$@"`,
        setpriv,
        shell,
        "-c",
        inner,
      ];
    } else if (outer) {
      // A nested bwrap drops every capability, applies the filter (fd 3, inherited) and makes
      // /proc/sys read-only for the command alone. The outer keeps CAP_SYS_ADMIN (pid_max, and
      // as root the nested mount namespace) and as root CAP_SETPCAP (dropping the bounding set).
      seccompFd = undefined;
      keepCaps = Deno.uid() === 0 ? ["CAP_SYS_ADMIN", "CAP_SETPCAP"] : ["CAP_SYS_ADMIN"];
      const innerFlags = [
        "--cap-drop",
        "ALL",
        ...(filter ? ["--seccomp", "3"] : []),
        "--dev-bind",
        "/",
        "/",
        ...PROC_READ_ONLY,
      ].join(" ");
      argv = [
        shell,
        "-c",
        outer + `exec "$0" ${innerFlags} --chdir "$PWD" -- "$@"`,
        opts.backend.path,
        shell,
        "-c",
        inner,
      ];
    }
    const args = bwrapArgs(profile, argv, {
      cwd,
      tmpDir: opts.tmpDir,
      seccompFd,
      keepCaps,
      pidMaxWritable: procs.pidMax,
      tmpfsSize: tmpfsSize(limits),
      procMasks: opts.backend.procMasks,
    });
    // The mount plan (everything before `--chdir`) is read by bwrap from fd 4 (`--args`), so
    // bwrap's argv — /proc/1/cmdline inside the sandbox — names no hidden or masked path
    // (./plan_file.ts). Deno.Command adds no descriptors (those Coyote inherited pass on; the command's
    // bash closes them first: CLOSE_INHERITED_FDS): sh joins the command's cgroup,
    // sets the limits, opens the filter as fd 3 and the plan as fd 4 and execs bwrap.
    const at = args.lastIndexOf("--chdir");
    const plan = planFile(args.slice(0, at));
    const pre = (opts.cgroup ? setupLines(opts.cgroup) : "") + rlimitLine(limits) +
      (filter ? 'exec 3<"$0" && ' : "") + 'exec 4<"$1" && shift && ';
    const bwrap = [opts.backend.path, "--args", "4", ...args.slice(at)];
    return {
      program: "/bin/sh",
      args: ["-c", `${pre}exec "$@"`, filter ?? "sh", plan, ...bwrap],
      env,
      profile,
      aheadTail: (filter ? `exec 3<${shq(filter)} && ` : "") +
        `exec 4<${shq(plan)} && exec ${bwrap.map(shq).join(" ")}`,
    };
  }
  if (opts.tmpDir) env.TMPDIR = opts.tmpDir;
  return {
    program: opts.backend.path,
    args: ["-p", sbplProfile(profile, { tmpDir: opts.tmpDir }), shell, "-c", command],
    env,
    profile,
  };
}

let warned = false;

/**
 * A command's cgroup as its runner sees it (plugins/exec/mod.ts `LaunchPlan.cgroup`): `check`
 * reads the counters while it runs; `finish` (once; later calls share the first) reads them, kills
 * what is left and removes the cgroup. The plan's `after` calls `finish` too, and `close` does for
 * any cgroup left.
 */
export interface LiveCgroup {
  check(): Promise<"processes" | "memory" | undefined>;
  finish(): Promise<"processes" | "memory" | undefined>;
}

/**
 * A session's sandbox: settings + backend + private temp dir. Implements the exec plugin's
 * `CommandLauncher` (plugins/exec/mod.ts) structurally.
 */
export class CommandSandbox {
  #tmpDir?: string;
  #proxy?: NetProxy;
  #trees = new Set<{ pid: number; marker: string }>();
  #killTree?: (t: { pid: number; marker: string }) => void;
  #watch = new NodeModulesWatch();
  #cgroups = new Set<LiveCgroup>();
  #ahead = new LaunchAhead();
  /** What the last `ahead` command ran with: the next launching shell is started for it. */
  #next?: {
    key: string;
    host: CgroupHost;
    limits: SandboxLimits;
    env: Record<string, string>;
    markerVar: string;
  };

  /** The PID of the launching shell waiting for the next command (./launch_ahead.ts), if any. */
  get aheadPid(): number | undefined {
    return this.#ahead.pid;
  }

  /** The process and memory limits of each command (`sandbox.limits`, ./limits.ts). */
  get limits(): SandboxLimits {
    return this.settings.limits ?? DEFAULT_LIMITS;
  }

  private constructor(
    readonly policy: Policy,
    readonly settings: SandboxSettings,
    readonly status: SandboxStatus,
    readonly backend: SandboxBackend | undefined,
    secrets: readonly string[] | (() => readonly string[]),
  ) {
    this.#secrets = secrets;
  }

  #secrets: readonly string[] | (() => readonly string[]);

  /**
   * Values never passed in a command's environment (the provider key, the workspace's known
   * secrets); computed at the first command when given as a function.
   */
  get secrets(): readonly string[] {
    if (typeof this.#secrets === "function") this.#secrets = this.#secrets();
    return this.#secrets;
  }

  /**
   * Probes the backend and builds the session's sandbox. In `auto` mode without a backend, `log`
   * gets a one-time (per process) warning.
   */
  static async create(
    policy: Policy,
    settings: SandboxSettings,
    opts: {
      /** Values kept out of commands' environments; a function is called at the first command. */
      secrets?: readonly string[] | (() => readonly string[]);
      log?: (line: string) => void;
      killTree?: (t: { pid: number; marker: string }) => void;
    } = {},
  ): Promise<CommandSandbox> {
    // The profile compiles the policy's path globs: npm picomatch must have loaded (rules.ts).
    await policy.globsReady();
    // `sandbox.protected_paths`: protected for the sandbox and the file tools alike.
    addProtectedPatterns(settings.protectedPaths ?? []);
    let backend: SandboxBackend | undefined;
    let reason: string;
    if (settings.mode === "off") reason = "off (sandbox: off or --no-sandbox)";
    else {
      const d = await detectBackend();
      backend = d.backend;
      reason = backend
        ? `${backend.name}: workspace ${
          policy.mode === "plan" ? "read-only (plan mode)" : "writable"
        }, network ${netWord(networkOf(policy.rules()), backend)}`
        : d.reason;
    }
    const status: SandboxStatus = {
      mode: settings.mode,
      active: !!backend,
      backend: backend?.name ?? null,
      autoAllow: settings.autoAllow,
      reason,
      limits: settings.limits ?? DEFAULT_LIMITS,
    };
    if (settings.mode === "auto" && !backend && !warned) {
      warned = true;
      opts.log?.(
        `coyote: warning: the OS sandbox is not available (${reason}); commands run unsandboxed and the guard alone decides`,
      );
    }
    const sb = new CommandSandbox(policy, settings, status, backend, opts.secrets ?? []);
    sb.#killTree = opts.killTree;
    return sb;
  }

  /**
   * One sentence for the model (appended to `execute_command`'s description): what the sandbox
   * lets a command do, so a "Read-only file system" or a refused connection is expected.
   */
  modelNote(): string {
    const mode = networkOf(this.policy.rules()).mode;
    const net = mode === "none"
      ? "no network"
      : mode === "proxy" && this.backend?.name === "bwrap" && socatPath()
      ? "network only through an HTTP(S) proxy to the hosts the user allowed"
      : "network on";
    return `Runs in an OS sandbox: only the workspace and /tmp are writable (.git/ is read-only), the home shows only toolchain caches (read-only), ${net}, no unix sockets (docker, ssh-agent, D-Bus unreachable), background processes end with the command.`;
  }

  /** `CommandLauncher.ready`: on bwrap, the host scans in a helper (./home_prescan.ts); never rejects. */
  ready(): Promise<void> {
    if (this.backend?.name !== "bwrap") return Promise.resolve();
    return prescanHome(this.policy.home, this.policy.dataDir).then(() => {});
  }

  /**
   * The exec plugin's `CommandLauncher.prepare`. `opts.dotEntries: false` (the user's own `!cmd`
   * in the REPL) turns the dot-entry rule of ./cleanup.ts off for this command: the user ran it.
   * `opts.ahead` (the exec plugin's runner, which calls `started` and then {@link finished}; its
   * process-tree variable): the plan may come with `started`, a launching shell started ahead (./launch_ahead.ts); spawn that
   * instead of `program`, whose cgroup the plan's `cgroup` is not.
   */
  prepare(
    command: string,
    cwd: string,
    shell: string,
    opts: { dotEntries?: boolean; ahead?: { markerVar: string } } = {},
  ):
    | {
      program: string;
      args: string[];
      env: Record<string, string>;
      sandboxed: boolean;
      after?: () => string | undefined;
      limits?: SandboxLimits;
      cgroup?: LiveCgroup;
      started?: () => { child: Deno.ChildProcess; marker: string };
    }
    | { refused: string } {
    if (!this.backend) {
      if (this.settings.mode === "required") {
        return {
          refused:
            `error: the OS sandbox is required (sandbox: required) but not available: ${this.status.reason}. The command was not run.`,
        };
      }
      const { env } = commandEnvironment({
        rules: this.policy.rules().filter((r) => r.kind === "env"),
        secrets: this.secrets,
      });
      return { program: shell, args: ["-c", command], env, sandboxed: false };
    }
    this.#tmpDir ??= Deno.makeTempDirSync({ prefix: "coyote-sbx-" });
    try {
      // Net rules allow hosts: the command reaches them only through the filtering proxy (a bridge
      // inside the sandbox to Coyote's proxy on a socket in the private /tmp; core/policy/sandbox/netproxy.ts).
      let prelude: string | undefined;
      let network: "host" | undefined;
      if (networkOf(this.policy.rules()).mode === "proxy") {
        if (this.backend.name === "bwrap" && socatPath()) {
          const policy = this.policy;
          this.#proxy ??= NetProxy.start(
            `${this.#tmpDir}/${SOCKET_NAME}`,
            (host, port) => {
              // A rule may name the host or host:port (`Net(api.example.com)`, `Net(10.0.0.5:8080)`);
              // a deny of either refuses.
              const v = [host, `${host}:${port}`].map((h) =>
                policy.decide({ type: "net", host: h }).decision
              );
              return Promise.resolve(!v.includes("deny") && v.includes("allow"));
            },
          );
          prelude = proxyPrelude(shell);
        } else network = "host";
      }
      // The command's own cgroup where one is writable (./cgroup.ts; probed at the first command).
      const l = this.limits;
      const h = this.backend.name === "bwrap" && (l.memoryMb || l.processes) ? cgroupHost() : null;
      const cg = h ? commandCgroup(h, l.memoryMb, l.processes) : undefined;
      const c = sandboxedCommand(this.policy, command, {
        cgroup: cg,
        prelude,
        cwd,
        backend: this.backend,
        tmpDir: this.#tmpDir,
        secrets: this.secrets,
        shell,
        network,
        limits: this.limits,
        nodeModulesGitDirs: this.#watch.gitDirsOf,
      });
      // The launching shell started ahead for this environment and these limits, if one waits;
      // the next command's is started when this one has finished (./launch_ahead.ts).
      let ahead: AheadLaunch | undefined;
      if (opts.ahead && h && c.aheadTail) {
        const key = aheadKey(c.env, h, l.memoryMb, l.processes, rlimitLine(l));
        ahead = this.#ahead.take(key);
        this.#next = { key, host: h, limits: l, env: c.env, markerVar: opts.ahead.markerVar };
      }
      const live = ahead ? this.#live(ahead.cg) : cg ? this.#live(cg) : undefined;
      const tail = c.aheadTail!;
      const ws = c.profile.workspace;
      const before = protectedBefore(
        c.profile.protectedPaths,
        c.profile.protectedUnchecked,
        opts.dotEntries === false ? undefined : c.profile.dotEntries,
        { ...c.profile.dotScan, ws },
      );
      const watch = this.#watch;
      watch.baseline(c.profile.nodeModules ?? []);
      return {
        program: c.program,
        args: c.args,
        env: c.env,
        sandboxed: true,
        limits: this.backend.name === "bwrap" ? this.limits : undefined,
        ...(live ? { cgroup: live } : {}),
        ...(ahead ? { started: () => ahead.go(tail) } : {}),
        ...(this.backend.name === "bwrap"
          ? {
            setupRaced: (code: number | null, stderr: string) =>
              setupRaced(c.profile, code, stderr),
          }
          : {}),
        after: () => {
          // Callers that do not tear the cgroup down themselves (hooks, `!cmd`): in the background.
          void live?.finish();
          const note = removeCreated(this.policy, ws, before, watch);
          return withDeniedCreated(note, c.profile, this.policy.dataDir);
        },
      };
    } catch (e) {
      // A path glob that cannot compile yet (npm picomatch still loading, rules.ts): the profile
      // cannot be derived, so the command does not run (fail closed).
      if (!(e instanceof GlobEngineNotLoaded)) throw e;
      return {
        refused:
          `error: the sandbox profile could not be derived (${e.message}). The command was not run; try again.`,
      };
    }
  }

  /** Tracks `c` until its teardown (./cgroup.ts) has run; see {@link LiveCgroup}. */
  #live(c: CommandCgroup): LiveCgroup {
    let done: Promise<"processes" | "memory" | undefined> | undefined;
    const live: LiveCgroup = {
      check: () => checkCgroup(c),
      finish: () => done ??= teardown(c).finally(() => this.#cgroups.delete(live)),
    };
    this.#cgroups.add(live);
    return live;
  }

  started(t: { pid: number; marker: string }): void {
    this.#trees.add(t);
  }
  /** Also starts the next command's launching shell ahead (./launch_ahead.ts). */
  finished(t: { pid: number; marker: string }): void {
    this.#trees.delete(t);
    const n = this.#next;
    if (!n) return;
    const cg = commandCgroup(n.host, n.limits.memoryMb, n.limits.processes);
    this.#ahead.start(n.key, cg, setupLines(cg) + rlimitLine(n.limits), n.env, n.markerVar);
  }

  /** Ends the session's live commands, the network proxy, and removes the private temp dir. */
  close(): void {
    this.#ahead.close();
    killLive();
    this.#proxy?.close();
    this.#proxy = undefined;
    for (const t of this.#trees) this.#killTree?.(t);
    this.#trees.clear();
    // Cgroups not torn down yet (commands still running): killed and removed in the background.
    for (const cg of this.#cgroups) void cg.finish();
    if (this.#tmpDir) {
      try {
        Deno.removeSync(this.#tmpDir, { recursive: true });
      } catch { /* gone */ }
      this.#tmpDir = undefined;
    }
  }
}
