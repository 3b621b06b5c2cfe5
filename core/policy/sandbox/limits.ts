/**
 * Resource limits of a sandboxed command's process tree (issue 16 §4; docs/permissions.md
 * "Limits"): `sandbox.limits: {processes, memory_mb, tmpfs_mb, open_files, file_mb}` in config,
 * printed by `coyote policy show`.
 *
 * What holds where (Linux, bwrap):
 * - **A writable cgroup** (./cgroup.ts: v2 own or delegated, or v1 memory and pids): each command
 *   runs in its own child cgroup, `pids.max` = `processes` (the `pid_max` way below is then not
 *   used) and the memory limit = `memory_mb` for the whole tree, shared mappings and tmpfs pages
 *   included, no swap. `RLIMIT_DATA` and `RLIMIT_NPROC` are set as well. Otherwise:
 * - **Processes** (tasks: threads count too). Primary: the `pid_max` of the command's own PID
 *   namespace (Linux ≥ 6.14 has one per namespace, `/proc/sys/kernel/pid_max`): the sandbox's
 *   outer bwrap keeps `CAP_SYS_ADMIN` just long enough to write it and remount that file
 *   read-only (`/proc/sys` is read-only already, ./bwrap.ts), then util-linux `setpriv` (or a
 *   nested bwrap, with the `Net` proxy bridge) drops every capability before the command starts
 *   (core/policy/sandbox/mod.ts). Every process of the command needs a PID number there below
 *   `pid_max`, so the tree cannot grow past it — as root too (RLIMIT_NPROC never binds uid 0).
 *   The kernel's smallest `pid_max` is 301, so a limit under 299 is 299 this way.
 *   Also set: `RLIMIT_NPROC` (`ulimit -u`) inside the sandbox's user namespace, which binds a
 *   non-root user per sandbox (the count is per user namespace) on older kernels too.
 *   Not bounded: root on a kernel before 6.14 without a writable cgroup.
 * - **Memory**: `RLIMIT_DATA` (`ulimit -d`) of every process: heap and private writable mappings,
 *   per process (not the sum of the tree), binding root too. Not bounded by it: shared and
 *   anonymous shared mappings (`mmap(MAP_SHARED|MAP_ANONYMOUS)`, memfd) — only the memory cgroup
 *   above caps those and the tree's total. Files in the sandbox's tmpfs mounts use memory too:
 *   each is capped at `tmpfs_mb` (bwrap `--size`; the home, a tmpfs `/tmp`, `/dev/shm`, hidden
 *   folders). `RLIMIT_AS` is not used: V8 (node, deno) and the JVM reserve far more address space
 *   than they use and fail to start under it.
 * - **Socket buffers**: a cgroup v1 memory limit does not count them, so the command's cgroup gets
 *   `memory.kmem.tcp.limit_in_bytes` = a quarter of `memory_mb` ({@link tcpShareMb}; TCP and UDP
 *   buffers of the whole tree: a full socket then waits, nothing is killed); cgroup v2 counts them
 *   in `memory.max`. Unix socket buffers are charged to the memory limit itself.
 * - **Open files**: `RLIMIT_NOFILE` = `open_files` (soft and hard, per process: the command, even
 *   as root, cannot raise it — every capability is dropped).
 * - **File size**: `RLIMIT_FSIZE` = `file_mb` (soft and hard, per file, tmpfs and disk alike): a
 *   write past it fails (`EFBIG`; `SIGXFSZ` ends a process that does not ignore it). The total a
 *   command writes to the workspace or a disk `/tmp` is not capped (that needs quotas, i.e. root).
 * - macOS: no limit is applied (sandbox-exec has none; RLIMIT_NPROC there counts all of the user's
 *   processes).
 *
 * When a command hits a limit its tool result says so ({@link limitHit}): a fork failing for the
 * process limit ends the whole tree at once (a fork bomb otherwise spins until the timeout); a
 * failed allocation is reported as the memory limit.
 * @module
 */

/** `sandbox.limits` resolved. 0 = no limit of that kind. */
export interface SandboxLimits {
  /** Processes and threads of one command's tree at most. */
  processes: number;
  /**
   * Memory (MB, 2^20 bytes): with a cgroup (./cgroup.ts) the whole tree's, and always what one
   * process may allocate (RLIMIT_DATA).
   */
  memoryMb: number;
  /**
   * Size (MB) of each tmpfs the sandbox mounts — the empty home, the private `/tmp` when it is a
   * tmpfs, `/dev/shm`, the hidden folders' — (bwrap `--size`); undefined: {@link DEFAULT_TMPFS_MB}.
   */
  tmpfsMb?: number;
  /** Open file descriptors per process (RLIMIT_NOFILE); undefined: {@link DEFAULT_OPEN_FILES}. */
  openFiles?: number;
  /** Size (MB) of any one file a command writes (RLIMIT_FSIZE); undefined: {@link DEFAULT_FILE_MB}. */
  fileMb?: number;
}

/** The default open-files cap of each process of a command (RLIMIT_NOFILE). */
export const DEFAULT_OPEN_FILES = 8192;
/** The default size cap (MB) of one file a command writes (RLIMIT_FSIZE). */
export const DEFAULT_FILE_MB = 4096;

/**
 * The socket buffer memory (MB) a command's tree may pin with a cgroup v1 memory limit of
 * `memoryMb` (`memory.kmem.tcp.limit_in_bytes`, ./cgroup.ts): a quarter of it, at least 16.
 */
export function tcpShareMb(memoryMb: number): number {
  return Math.max(16, Math.floor(memoryMb / 4));
}

/** The default size cap of each of the sandbox's tmpfs mounts (MB). */
export const DEFAULT_TMPFS_MB = 512;

/** bwrap arguments to put before a `--tmpfs` (`--size BYTES`); none when the cap is 0. */
export function tmpfsSize(l: SandboxLimits | undefined): string[] {
  const mb = l?.tmpfsMb ?? DEFAULT_TMPFS_MB;
  return mb ? ["--size", String(mb * 1024 * 1024)] : [];
}

/**
 * The defaults: 512 processes, 2048 MB per process, 512 MB per tmpfs, 8192 open files per
 * process, 4096 MB per file.
 */
export const DEFAULT_LIMITS: SandboxLimits = {
  processes: 512,
  memoryMb: 2048,
  tmpfsMb: DEFAULT_TMPFS_MB,
  openFiles: DEFAULT_OPEN_FILES,
  fileMb: DEFAULT_FILE_MB,
};

/** The kernel's smallest `pid_max` (RESERVED_PIDS + 1). */
const PID_MAX_MIN = 301;

/** True when this kernel has a `pid_max` per PID namespace (Linux 6.14 and later). */
export function perNamespacePidMax(release: string = Deno.osRelease()): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj > 6 || (maj === 6 && min >= 14);
}

/** What bounds the process count here, one phrase (for `policy show`). */
export function processMechanism(uid: number | null = Deno.uid()): string {
  if (perNamespacePidMax()) return "the sandbox's own PID namespace pid_max (Linux ≥ 6.14)";
  if (uid !== 0) return "RLIMIT_NPROC in the sandbox's user namespace";
  return "NOT bounded: root on Linux < 6.14 (no per-namespace pid_max; RLIMIT_NPROC does not bind root)";
}

const NPROC = (n: number) => `ulimit -u ${n} 2>/dev/null || ulimit -p ${n} 2>/dev/null\n`;

/**
 * How one command's process count is bounded: `outer` shell lines (POSIX sh and bash) for the
 * sandbox's outer shell, run with `CAP_SYS_ADMIN` before the nested bwrap drops it — the
 * namespace's `pid_max` (bwrap's PID 1 and the outer shell take a PID each; ./bwrap.ts binds that
 * one file writable over the read-only `/proc/sys`, and the lines remount it read-only, so no
 * process can raise it through `/proc/1/root/proc/sys`) — and `inner` lines put before the
 * command (RLIMIT_NPROC, for a non-root user on a kernel without a per-namespace `pid_max`).
 * `pidMax`: true when `outer` writes it. On an older kernel `pid_max` is global and never written.
 * `cgroup`: the command's own cgroup bounds it (`pids.max`, ./cgroup.ts): no `pid_max`, so the
 * outer bwrap keeps no capability.
 */
export function processLimit(
  l: SandboxLimits,
  cgroup = false,
): { outer: string; inner: string; pidMax: boolean } {
  if (!l.processes) return { outer: "", inner: "", pidMax: false };
  if (cgroup || !perNamespacePidMax()) {
    return { outer: "", inner: NPROC(l.processes), pidMax: false };
  }
  const pidMax = Math.max(l.processes + 2, PID_MAX_MIN);
  return {
    outer: `{ echo ${pidMax} > /proc/sys/kernel/pid_max && ` +
      `mount -n -i -o remount,bind,ro /proc/sys/kernel/pid_max; } 2>/dev/null || ` +
      `echo "coyote: the sandbox's process limit could not be set" >&2\n` + NPROC(l.processes),
    inner: "",
    pidMax: true,
  };
}

/**
 * The launching `/bin/sh`'s rlimit lines, inherited by bwrap and the whole tree: `ulimit -d`
 * (KiB; a failure ends the launch), then `ulimit -n` (descriptors) and `ulimit -f` (POSIX
 * 512-byte blocks), each setting soft and hard; those two only fail where the hard limit is lower
 * already, which then holds. Empty parts for a limit of 0.
 */
export function rlimitLine(l: SandboxLimits): string {
  const files = l.openFiles ?? DEFAULT_OPEN_FILES, mb = l.fileMb ?? DEFAULT_FILE_MB;
  return (l.memoryMb ? `ulimit -d ${l.memoryMb * 1024} && ` : "") +
    (files ? `{ ulimit -n ${files}; } 2>/dev/null; ` : "") +
    (mb ? `{ ulimit -f ${mb * 2048}; } 2>/dev/null; ` : "");
}

/** Messages of a fork that failed for lack of a PID (bash, dash, python, node, glibc threads). */
const FORK_FAILED =
  /fork: retry: Resource temporarily unavailable|fork: Resource temporarily unavailable|Cannot fork|can't fork|BlockingIOError: \[Errno 11\]|spawn EAGAIN|pthread_create: Resource temporarily unavailable|Resource temporarily unavailable \(os error 11\)|can't start new thread|unable to create native thread/;
/** Messages of an allocation that failed. */
const ALLOC_FAILED =
  /Cannot allocate memory|MemoryError|std::bad_alloc|memory allocation of \d+ bytes failed|Array buffer allocation failed|JavaScript heap out of memory|out of memory/i;

/** Messages of a write past RLIMIT_FSIZE (the shell's report of SIGXFSZ; EFBIG). */
const FILE_TOO_BIG = /File size limit exceeded|File too large|EFBIG/;
/** Messages of a descriptor refused for RLIMIT_NOFILE (EMFILE). */
const TOO_MANY_FILES = /Too many open files(?! in system)|EMFILE/;

/** A limit of ./limits.ts a command can hit. */
export type LimitKind = "processes" | "memory" | "open_files" | "file_size";

/** Which limit a piece of the command's stderr shows it hit, if any. */
export function limitHit(text: string): LimitKind | undefined {
  if (FORK_FAILED.test(text)) return "processes";
  if (FILE_TOO_BIG.test(text)) return "file_size";
  if (TOO_MANY_FILES.test(text)) return "open_files";
  if (ALLOC_FAILED.test(text)) return "memory";
  return undefined;
}

/**
 * The first line of a tool result for a command that hit `which`; `cgroup`: the command ran in
 * its own cgroup (./cgroup.ts), so the memory limit was the whole tree's.
 */
export function limitMessage(which: LimitKind, l: SandboxLimits, cgroup = false): string {
  if (which === "file_size") {
    return `command hit the file size limit (${
      l.fileMb ?? DEFAULT_FILE_MB
    } MB per file, RLIMIT_FSIZE; sandbox.limits.file_mb)`;
  }
  if (which === "open_files") {
    return `command hit the open files limit (${
      l.openFiles ?? DEFAULT_OPEN_FILES
    } per process, RLIMIT_NOFILE; sandbox.limits.open_files)`;
  }
  return which === "processes"
    ? `command hit the process limit (${l.processes}); its process tree was ended (sandbox.limits.processes)`
    : `command hit the memory limit (${l.memoryMb} MB ${
      cgroup ? "for its whole process tree, memory cgroup" : "per process"
    }; sandbox.limits.memory_mb)`;
}

/**
 * `policy show` lines. `cgroup`: how ./cgroup.ts `cgroupHost` names the writable cgroup, or null
 * (none here: the rlimit and `pid_max` limits hold); `version`: that cgroup's version.
 */
export function describeLimits(
  l: SandboxLimits,
  backend: string | null,
  cgroup: string | null = null,
  version?: 1 | 2,
): string[] {
  if (backend !== "bwrap") return ["  limits:   none on this platform (Linux bwrap only)"];
  return [
    `  limits:   processes ${l.processes || "unlimited"}${
      l.processes
        ? ` (${cgroup ? `pids.max of the command's own cgroup: ${cgroup}` : processMechanism()})`
        : ""
    }`,
    `            memory ${
      l.memoryMb
        ? cgroup
          ? `${l.memoryMb} MB for the command's whole tree, shared mappings and tmpfs pages included (memory cgroup, no swap), and per process (RLIMIT_DATA)`
          : `${l.memoryMb} MB per process (RLIMIT_DATA; shared mappings not counted: no writable cgroup here)`
        : "unlimited"
    } (sandbox.limits)`,
    `            tmpfs ${
      (l.tmpfsMb ?? DEFAULT_TMPFS_MB)
        ? `${l.tmpfsMb ?? DEFAULT_TMPFS_MB} MB each (home, /tmp if tmpfs, /dev/shm)`
        : "unlimited (half the RAM each)"
    } (sandbox.limits.tmpfs_mb)`,
    `            socket buffers ${
      !cgroup || !l.memoryMb
        ? "not bounded (no memory cgroup here)"
        : version === 2
        ? "in the tree's memory limit (cgroup v2 memory.max)"
        : `${
          tcpShareMb(l.memoryMb)
        } MB for the tree's TCP/UDP (memory.kmem.tcp.limit_in_bytes, a quarter of memory_mb)`
    }`,
    `            open files ${
      (l.openFiles ?? DEFAULT_OPEN_FILES) || "unlimited"
    } per process (RLIMIT_NOFILE, hard) (sandbox.limits.open_files)`,
    `            file size ${
      (l.fileMb ?? DEFAULT_FILE_MB) ? `${l.fileMb ?? DEFAULT_FILE_MB} MB` : "unlimited"
    } per file (RLIMIT_FSIZE, hard; the total written to disk is not capped) (sandbox.limits.file_mb)`,
  ];
}
