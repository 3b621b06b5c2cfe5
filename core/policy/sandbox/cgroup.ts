/**
 * A cgroup per sandboxed command (issue 16 §4; docs/permissions.md "Limits"): where Coyote may
 * create cgroups, each command runs in its own child cgroup with a memory limit for the whole
 * process tree — heap, shared and anonymous shared mappings (`MAP_SHARED|MAP_ANONYMOUS`, memfd)
 * and tmpfs pages alike, which `RLIMIT_DATA` misses — and a process limit (`pids.max`), which
 * holds as root and on kernels without a per-namespace `pid_max`.
 *
 * Where a cgroup is writable ({@link cgroupHost}, probed once per process at the first command or
 * `policy show`, never at start):
 * - **cgroup v2** (one hierarchy, `/sys/fs/cgroup/cgroup.controllers`): the process's own cgroup
 *   when its `cgroup.subtree_control` already enables `memory` and `pids` (the root of a cgroup
 *   namespace), else its parent when that enables both and is writable — a systemd user manager
 *   delegates `memory` and `pids` under `user@UID.service` (`Delegate=yes`), so a terminal's
 *   `app.slice/….scope` has a writable parent. Per command: `memory.max`, `memory.swap.max = 0`
 *   (when the file exists), `pids.max`.
 * - **cgroup v1** (separate `memory` and `pids` hierarchies, e.g. a container run as root): a child
 *   of the process's own cgroup in each. Per command: `memory.limit_in_bytes`,
 *   `memory.memsw.limit_in_bytes` (no swap; when swap accounting exists),
 *   `memory.kmem.tcp.limit_in_bytes` (TCP/UDP socket buffers, which the memory limit does not
 *   count in v1: a quarter of it, ./limits.ts `tcpShareMb`; when the file exists), `pids.max`.
 * - Otherwise none: ./limits.ts falls back to `RLIMIT_DATA`, `pid_max` and `RLIMIT_NPROC`.
 *
 * Deno refuses `/proc` and `/sys` paths without `--allow-all`, which Coyote does not run with, so
 * every cgroup file is touched by `/bin/sh`: the probe (one synchronous `sh` run), the launching
 * shell of each command, which creates and limits the cgroup and writes its own PID into
 * `cgroup.procs` before it execs bwrap ({@link setupLines}: every process of the command is born
 * inside; a failure ends the command with exit 125 before it runs), and one `sh` after the
 * command ({@link teardown}) that reads the counters, SIGKILLs what is left (`cgroup.kill` on v2,
 * else each PID in `cgroup.procs`) and removes the cgroup. Names: `coyote-<Coyote's pid>-<n>`;
 * ones left by a Coyote that died are removed at the next probe when empty.
 *
 * Hits: memory = an OOM kill in the cgroup (v2 `memory.events` `oom_kill`/`oom`, v1
 * `memory.oom_control` `oom_kill`); processes = a refused fork (`pids.events` `max`).
 * @module
 */

import { tcpShareMb } from "./limits.ts";

/** A place where per-command cgroups can be created. */
export interface CgroupHost {
  version: 1 | 2;
  /** v2: the one parent directory; v1: the memory hierarchy's parent. */
  memory: string;
  /** v2: same as `memory`; v1: the pids hierarchy's parent. */
  pids: string;
  /** How `policy show` names it, e.g. "cgroup v2, delegated (/sys/fs/cgroup/user.slice/…)". */
  describe: string;
}

/** POSIX shell quoting of one word. */
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The probe, a POSIX `sh` script: `$1` the cgroup mount, `$2` a `/proc/PID/cgroup` file. Prints
 * `1` + the memory and pids parents, `2own`/`2del` + the parent, or `none`, one word a line.
 * A candidate counts only when a child could be made and removed there. Then removes the empty
 * `coyote-<pid>-*` cgroups of dead processes in the chosen parents.
 */
const PROBE = String.raw`
root=$1; m=; p=; u=; hm=0; hp=0; hu=0
while IFS=: read -r id ctl path; do
  [ "$path" = / ] && path=
  case ",$ctl," in *,memory,*) m=$path; hm=1;; esac
  case ",$ctl," in *,pids,*) p=$path; hp=1;; esac
  [ -z "$ctl" ] && [ -n "$id" ] && { u=$path; hu=1; }
done < "$2"
try() { mkdir "$1/coyote-$$-probe" 2>/dev/null && rmdir "$1/coyote-$$-probe"; }
en() {
  s=; { read -r s < "$1/cgroup.subtree_control"; } 2>/dev/null
  case " $s " in *" memory "*) case " $s " in *" pids "*) return 0;; esac;; esac
  return 1
}
sweep() {
  for x in "$1"/coyote-*-*; do
    [ -d "$x" ] || continue
    n=\${x##*/coyote-}; n=\${n%%-*}
    [ -d "/proc/$n" ] || rmdir "$x" 2>/dev/null
  done
}
if [ $hm = 1 ] && [ $hp = 1 ] && [ -e "$root/memory$m/memory.limit_in_bytes" ] &&
  [ -e "$root/pids$p/cgroup.procs" ] && try "$root/memory$m" && try "$root/pids$p"; then
  sweep "$root/memory$m"; sweep "$root/pids$p"
  printf '1\n%s\n%s\n' "$root/memory$m" "$root/pids$p"; exit 0
fi
if [ $hu = 1 ] && [ -e "$root/cgroup.controllers" ]; then
  d=$root$u
  if en "$d" && try "$d"; then sweep "$d"; printf '2own\n%s\n' "$d"; exit 0; fi
  if [ -n "$u" ]; then
    d=\${d%/*}
    if en "$d" && [ -w "$d/cgroup.procs" ] && try "$d"; then sweep "$d"; printf '2del\n%s\n' "$d"; exit 0; fi
  fi
fi
echo none
`.replaceAll("\\$", "$");

/**
 * Finds where this process may create per-command cgroups (see the module doc), or null; runs
 * {@link PROBE} in `/bin/sh` synchronously (a few ms). `root`: the cgroup mount; `procCgroup`: the
 * `/proc/PID/cgroup` file to read (default: the probing shell's own, which is Coyote's cgroup).
 */
export function findCgroupHost(
  root = "/sys/fs/cgroup",
  procCgroup = "/proc/self/cgroup",
): CgroupHost | null {
  if (Deno.build.os !== "linux") return null;
  let out: string;
  try {
    const o = new Deno.Command("/bin/sh", {
      args: ["-c", PROBE, "sh", root, procCgroup],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    out = new TextDecoder().decode(o.stdout);
  } catch {
    return null;
  }
  const [kind, a, b] = out.replace(/\n$/, "").split("\n");
  if (kind === "1" && a && b) {
    return { version: 1, memory: a, pids: b, describe: `cgroup v1, writable (${a}, ${b})` };
  }
  if ((kind === "2own" || kind === "2del") && a) {
    return {
      version: 2,
      memory: a,
      pids: a,
      describe: `cgroup v2, ${kind === "2own" ? "own" : "delegated"} (${a})`,
    };
  }
  return null;
}

let host: { h: CgroupHost | null } | undefined;
let offHere = false;

/**
 * Turns cgroups off (`true`) or back to what `COYOTE_CGROUP` says (`false`) in this isolate only:
 * how a test exercises the fallback, since `Deno.env` is the whole process's and
 * `deno test --parallel` runs test modules side by side in one process.
 */
export function cgroupsOffHere(off: boolean): void {
  offHere = off;
}

/**
 * This process's {@link CgroupHost}, probed once and then cached. `COYOTE_CGROUP=off` in Coyote's
 * environment (read at each call) turns cgroups off: the fallback limits of ./limits.ts hold.
 */
export function cgroupHost(): CgroupHost | null {
  if (offHere || Deno.env.get("COYOTE_CGROUP") === "off") return null;
  host ??= { h: findCgroupHost() };
  return host.h;
}

/** A `key value` line's number from a cgroup file's text (`memory.events`, …); 0 if absent. */
export function counter(text: string | undefined, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, "m").exec(text ?? "");
  return m ? Number(m[1]) : 0;
}

let seq = 0;
/** This isolate's random part of its cgroup names (see {@link commandCgroup}). */
const ISOLATE = crypto.randomUUID().slice(0, 8);

/** The prefix of every cgroup name this isolate makes: `coyote-<pid>-<random>-` (tests count their own). */
export const OWN_CGROUP_PREFIX = `coyote-${Deno.pid}-${ISOLATE}-`;

/** One command's cgroup: its directories (v1: memory then pids; v2: one) and limits. */
export interface CommandCgroup {
  host: CgroupHost;
  dirs: string[];
  memoryMb: number;
  processes: number;
}

/**
 * Names a new command cgroup under `h` (created by the launching shell, {@link setupLines}):
 * `coyote-<pid>-<random>-<n>` — the pid first for the dead-process sweep, a random part since
 * several isolates of one process (`deno test --parallel`'s modules, each with its own counter)
 * share the pid: equal names made one command's setup fail and another's counters be read.
 */
export function commandCgroup(h: CgroupHost, memoryMb: number, processes: number): CommandCgroup {
  const name = `${OWN_CGROUP_PREFIX}${++seq}`;
  return {
    host: h,
    dirs: h.version === 2 ? [`${h.memory}/${name}`] : [`${h.memory}/${name}`, `${h.pids}/${name}`],
    memoryMb,
    processes,
  };
}

/**
 * The launching `/bin/sh`'s lines (each ends in `; `): make the cgroup, set its limits, move the
 * shell itself in — or print why not and exit 125 (the command does not run).
 */
export function setupLines(c: CommandCgroup): string {
  const [m, p] = [c.dirs[0], c.dirs[c.dirs.length - 1]];
  const bytes = String(c.memoryMb * 1024 * 1024);
  const steps = [`mkdir ${c.dirs.map(q).join(" ")}`];
  if (c.memoryMb) {
    if (c.host.version === 2) {
      steps.push(
        `echo ${bytes} > ${q(`${m}/memory.max`)}`,
        `{ [ ! -e ${q(`${m}/memory.swap.max`)} ] || echo 0 > ${q(`${m}/memory.swap.max`)}; }`,
      );
    } else {
      const sw = q(`${m}/memory.memsw.limit_in_bytes`);
      const tcp = q(`${m}/memory.kmem.tcp.limit_in_bytes`);
      steps.push(
        `echo ${bytes} > ${q(`${m}/memory.limit_in_bytes`)}`,
        `{ [ ! -e ${sw} ] || echo ${bytes} > ${sw}; }`,
        // v1 leaves socket buffers out of the limit above (v2 counts them in memory.max).
        `{ [ ! -e ${tcp} ] || echo ${tcpShareMb(c.memoryMb) * 1024 * 1024} > ${tcp}; }`,
      );
    }
  }
  if (c.processes) steps.push(`echo ${c.processes} > ${q(`${p}/pids.max`)}`);
  for (const d of c.dirs) steps.push(`echo $$ > ${q(`${d}/cgroup.procs`)}`);
  return `{ ${
    steps.join(" && ")
  }; } 2>/dev/null || { echo "coyote: the command's cgroup could not be set up (sandbox.limits; COYOTE_CGROUP=off turns cgroups off)" >&2; exit 125; }; `;
}

/** The counter files of `c`: pids' events, then the memory OOM file. */
function counterFiles(c: CommandCgroup): string[] {
  const [m, p] = [c.dirs[0], c.dirs[c.dirs.length - 1]];
  return [
    `${p}/pids.events`,
    c.host.version === 2 ? `${m}/memory.events` : `${m}/memory.oom_control`,
  ];
}

/** Reads `files` (`@@ path` before each) with shell builtins. */
const READ = String
  .raw`for f; do echo "@@ $f"; [ -e "$f" ] && while read -r l; do echo "$l"; done < "$f"; done`;

/** Which limit the counters' text shows hit, if any. */
function hitOf(c: CommandCgroup, text: string): "processes" | "memory" | undefined {
  const parts = text.split(/^@@ .*$/m);
  const [pids, mem] = [parts[1] ?? "", parts[2] ?? ""];
  if (c.processes && counter(pids, "max") > 0) return "processes";
  if (c.memoryMb && (counter(mem, "oom_kill") > 0 || counter(mem, "oom") > 0)) return "memory";
  return undefined;
}

/** The limit `c` shows hit so far (one `sh` run; for a command still running). */
export async function checkCgroup(c: CommandCgroup): Promise<"processes" | "memory" | undefined> {
  try {
    const o = await new Deno.Command("/bin/sh", {
      args: ["-c", READ, "sh", ...counterFiles(c)],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return hitOf(c, new TextDecoder().decode(o.stdout));
  } catch {
    return undefined;
  }
}

/** Kills what is left in the cgroups of `$@` and removes them; retried for up to ~2 s. */
const REMOVE = String.raw`
i=0
while :; do
  left=
  for d; do
    [ -d "$d" ] || continue
    { echo 1 > "$d/cgroup.kill"; } 2>/dev/null
    { while read -r pid; do kill -9 "$pid"; done < "$d/cgroup.procs"; } 2>/dev/null
    rmdir "$d" 2>/dev/null || left=1
  done
  [ -z "$left" ] && exit 0
  i=$((i+1)); [ $i -gt 200 ] && exit 1
  sleep 0.01
done
`;

/**
 * After the command: the limit it hit (read first), then everything left in its cgroup killed and
 * the cgroup removed — one `sh` run. Resolves when the cgroup is gone (or after ~2 s of retries).
 */
export async function teardown(c: CommandCgroup): Promise<"processes" | "memory" | undefined> {
  try {
    const o = await new Deno.Command("/bin/sh", {
      args: [
        "-c",
        `set -- ${counterFiles(c).map(q).join(" ")}; ${READ}; set -- ${
          c.dirs.map(q).join(" ")
        }; ${REMOVE}`,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return hitOf(c, new TextDecoder().decode(o.stdout));
  } catch {
    return undefined;
  }
}
