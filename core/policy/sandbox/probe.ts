/**
 * Which OS sandbox backend this machine has (core/policy/sandbox/mod.ts uses it): bwrap on Linux,
 * proven by a probe run (cached per bwrap binary, kernel and user when it succeeds),
 * `sandbox-exec` on macOS; and `socat`, the bridge the filtering network proxy needs.
 * @module
 */
import { writeTextAtomic } from "../../util/files.ts";

/** A working backend. */
export interface SandboxBackend {
  name: "bwrap" | "sandbox-exec";
  /** Absolute path of the program. */
  path: string;
  /**
   * bwrap: the files of {@link PROC_MASK_CANDIDATES} this kernel's `/proc` has (found by the
   * probe inside its sandbox), each shown as an empty file to commands (./bwrap.ts).
   */
  procMasks?: string[];
}

/**
 * `/proc` files that tell a command about the host and are masked as Docker's `MaskedPaths`
 * does (plus `key-users`; issue 16, ninth attacker pass: as root there is no user namespace, so
 * `/proc/keys` listed the user's keyring — ids and descriptions naming services and accounts).
 */
export const PROC_MASK_CANDIDATES = [
  "keys",
  "key-users",
  "kcore",
  "timer_list",
  "timer_stats",
  "sched_debug",
  "latency_stats",
  "interrupts",
] as const;

/** `name` on `PATH`, or undefined. */
export function which(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    if (!dir) continue;
    try {
      const p = `${dir}/${name}`;
      if (Deno.statSync(p).isFile) return p;
    } catch { /* not here */ }
  }
  return undefined;
}

let probe: Promise<{ backend?: SandboxBackend; reason: string }> | undefined;

let socat: { path?: string } | undefined;
/** `socat`, the bridge the filtering proxy needs inside a bwrap sandbox; looked up once. */
export function socatPath(): string | undefined {
  socat ??= { path: which("socat") };
  return socat.path;
}

let setprivFound: { path?: string } | undefined;
/** util-linux `setpriv` (drops the capabilities once the process limit is set); looked up once. */
export function setprivPath(): string | undefined {
  setprivFound ??= { path: which("setpriv") };
  return setprivFound.path;
}

/** The probe's arguments: a change here is a new cache key. */
const PROBE_ARGS = [
  "--die-with-parent",
  "--cap-drop",
  "ALL",
  "--unshare-pid",
  "--unshare-net",
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--",
  "/bin/sh",
  "-c",
  `for f in ${PROC_MASK_CANDIDATES.join(" ")}; do [ -f "/proc/$f" ] && echo "$f"; done; exit 0`,
];

/** The probe's output as {@link SandboxBackend.procMasks}: candidates only, one per line. */
function procMasksOf(stdout: string): string[] {
  const got = new Set(stdout.split("\n").map((l) => l.trim()));
  return PROC_MASK_CANDIDATES.filter((f) => got.has(f));
}

/**
 * What a successful probe depends on: the bwrap binary (path, size, mtime), the kernel release
 * and the user. Another bwrap, kernel or user is a new key, so a stale entry is never used.
 */
function probeKey(bwrap: string): string | undefined {
  try {
    const st = Deno.statSync(bwrap);
    return JSON.stringify([
      1,
      bwrap,
      st.size,
      st.mtime?.getTime() ?? 0,
      Deno.osRelease(),
      Deno.uid(),
      PROBE_ARGS,
    ]);
  } catch {
    return undefined;
  }
}

/**
 * Finds a working backend once per process: on Linux `bwrap` on `PATH`, proven by running `true`
 * with the namespaces the profile uses (user namespaces may be disabled, e.g. in some containers);
 * on macOS `/usr/bin/sandbox-exec`.
 *
 * With `cacheDir` (Coyote's data dir), a **successful** Linux probe is remembered in
 * `<cacheDir>/sandbox-probe.json`, keyed by {@link probeKey}, so later starts spawn no probe
 * before their first request (issue 22: a 3–20 ms subprocess). A failure is never cached: a
 * machine where the sandbox once failed probes again at each start, so it is never left
 * unsandboxed by an old answer. A cached "works" that no longer holds makes commands fail with
 * bwrap's own error (fail closed), not run unsandboxed. Only the first call's options count.
 */
export function detectBackend(
  opts: { cacheDir?: string } = {},
): Promise<{ backend?: SandboxBackend; reason: string }> {
  probe ??= (async () => {
    if (Deno.build.os === "darwin") {
      const p = "/usr/bin/sandbox-exec";
      try {
        Deno.statSync(p);
        return { backend: { name: "sandbox-exec" as const, path: p }, reason: "sandbox-exec" };
      } catch {
        return { reason: "/usr/bin/sandbox-exec not found" };
      }
    }
    if (Deno.build.os !== "linux") {
      return { reason: `no OS sandbox for ${Deno.build.os} (Linux bwrap and macOS only)` };
    }
    const bwrap = which("bwrap");
    if (!bwrap) return { reason: "bwrap (package bubblewrap) is not installed" };
    const key = opts.cacheDir ? probeKey(bwrap) : undefined;
    const cacheFile = opts.cacheDir && key ? `${opts.cacheDir}/sandbox-probe.json` : undefined;
    if (cacheFile) {
      try {
        const c = JSON.parse(await Deno.readTextFile(cacheFile));
        if (c?.key === key && c?.ok === true && Array.isArray(c.procMasks)) {
          const procMasks = PROC_MASK_CANDIDATES.filter((f) => c.procMasks.includes(f));
          return { backend: { name: "bwrap" as const, path: bwrap, procMasks }, reason: "bwrap" };
        }
      } catch { /* no entry yet */ }
    }
    try {
      const o = await new Deno.Command(bwrap, {
        args: PROBE_ARGS,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        clearEnv: true,
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      }).output();
      if (o.success) {
        const procMasks = procMasksOf(new TextDecoder().decode(o.stdout));
        if (cacheFile) {
          try {
            await Deno.mkdir(opts.cacheDir!, { recursive: true });
            await writeTextAtomic(cacheFile, JSON.stringify({ key, ok: true, procMasks }));
          } catch { /* a read-only data dir: probe at every start */ }
        }
        return { backend: { name: "bwrap" as const, path: bwrap, procMasks }, reason: "bwrap" };
      }
      const msg = new TextDecoder().decode(o.stderr).trim().split("\n")[0];
      return { reason: `bwrap cannot create namespaces here (${msg || `exit ${o.code}`})` };
    } catch (e) {
      return { reason: `bwrap failed to start (${(e as Error).message})` };
    }
  })();
  return probe;
}
