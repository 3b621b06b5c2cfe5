/**
 * Linux backend of the OS sandbox: the bubblewrap (`bwrap`, Debian package `bubblewrap`)
 * argument list for a {@link SandboxProfile} (docs/permissions.md "The OS sandbox").
 *
 * - New PID, IPC (SysV IPC and POSIX message queues of the host stay out of reach, and what a
 *   command makes there ends with it) and (when the profile says `none`) network namespaces
 *   (UTS/cgroup namespaces are left out: each costs start-up time and guards nothing promised);
 *   `--die-with-parent` and the PID namespace end every process of the command — `cmd &` and `setsid` children
 *   included — when the command's shell exits or Coyote dies; `--new-session` (no TIOCSTI into the
 *   terminal); `--cap-drop ALL` (Coyote running as root must not keep `CAP_SYS_ADMIN`, which would
 *   let the command remount `/` read-write).
 * - `/proc/sys` and `/proc/sysrq-trigger` read-only (bwrap leaves them writable): a command running
 *   as root keeps uid 0 without capabilities, and the kernel lets uid 0 write most sysctls by file
 *   mode alone — `kernel.core_pattern` (`|program` runs as root outside every namespace when a
 *   process crashes), `kernel.modprobe`, `vm.*`. With a process limit only the namespace's own
 *   `pid_max` is bound writable for the outer shell, which remounts it read-only (./limits.ts).
 * - The root: bwrap's empty one (read-only once everything is mounted) with only the allow list
 *   of ./root_view.ts bound read-only (`/usr`, `/etc`, `/lib*`, `/opt`, …; attack pass 4: a FIFO
 *   in `/var/tmp`, `/run/secrets`, `/root`), a fresh `/dev` and `/proc` (only the sandbox's own
 *   processes), `/tmp` = the
 *   private temp dir (or a tmpfs), then the profile's mounts shallowest first so deeper ones win:
 *   writable roots `--bind`, protected paths `--ro-bind` (and the folders between one and its
 *   writable root bound onto themselves, so they cannot be renamed: {@link parentChain}), hidden
 *   directories an empty read-only tmpfs and hidden files an empty read-only file.
 * @module
 */
import type { SandboxProfile } from "./profile.ts";
import { hiddenByHome, homeMounts } from "./home_view.ts";
import { inRootView, type RootView } from "./root_view.ts";
import { isDirSync as isDir, lexistsSync as exists } from "../../util/files.ts";

let emptyFile: string | undefined;
/** An empty read-only file (created once per process) mounted over hidden files. */
export function emptyFilePath(): string {
  if (emptyFile) return emptyFile;
  const p = Deno.makeTempFileSync({ prefix: "coyote-empty-" });
  Deno.chmodSync(p, 0o444);
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(p);
    } catch { /* gone */ }
  });
  emptyFile = p;
  return p;
}

/** bwrap arguments that make the kernel's writable /proc files read-only (see the module doc). */
export const PROC_READ_ONLY: readonly string[] = [
  "--ro-bind",
  "/proc/sys",
  "/proc/sys",
  "--ro-bind-try",
  "/proc/sysrq-trigger",
  "/proc/sysrq-trigger",
];

const depth = (p: string) => p.split("/").filter(Boolean).length;
const inside = (p: string, d: string) => p === d || p.startsWith(d === "/" ? "/" : `${d}/`);

/**
 * The folders between each read-only path and the writable root it lies in (attack trial 2
 * item 1), each bound onto itself writable so that it is a mount point: the kernel refuses to
 * rename or remove a mount point (`EBUSY`), so a command can no longer move a protected path's
 * parent away (`mv tools tools.old`, `mv sub sub2`, `mv .vscode .v2`) and put its own file at the
 * old path, which existed when the command started and so escaped the cleanup. The same for each
 * hidden or masked path inside a writable root (eighth attacker pass): the mount over
 * `config/secret.txt` moves with its folder, so without this `mv config c2` succeeded and the next
 * command read `c2/secret.txt`, which a literal `Read(config/secret.txt)` rule no longer names.
 * The writable root itself is a mount point already. Folders at or under a hidden path are left
 * out (their mount point would have to be made in the hidden tmpfs).
 */
export function parentChain(profile: SandboxProfile): string[] {
  const out = new Set<string>();
  const ro = new Set(profile.readOnly.map((r) => r.path));
  // A hidden or masked path gone since the profile was made gets no mount, so no chain either.
  const kept = [...profile.hidden, ...profile.masked ?? []].filter((h) => exists(h.path));
  const guarded = [...profile.readOnly, ...kept];
  for (const r of guarded) {
    const root = profile.writable.map((w) =>
      w.path
    ).filter((w) => inside(r.path, w) && w !== r.path)
      .sort((x, y) => y.length - x.length)[0];
    if (!root) continue;
    for (
      let d = r.path.slice(0, r.path.lastIndexOf("/"));
      d.length > root.length && inside(d, root);
      d = d.slice(0, d.lastIndexOf("/"))
    ) {
      if (ro.has(d) || profile.hidden.some((h) => inside(d, h.path))) continue;
      out.add(d);
    }
  }
  return [...out];
}

/**
 * Whether host path `p` shows in the sandbox at all: in the root view's folders, in a bound
 * root (workspace, `Read`/`Write` allow roots, git dirs) or in the home view's path.
 */
function visible(view: RootView, profile: SandboxProfile, p: string, roots: string[]): boolean {
  if (inRootView(view, p)) return true;
  if (roots.some((r) => inside(p, r))) return true;
  return !!profile.home && inside(p, profile.home.path);
}

/**
 * The `bwrap` arguments (without the program) that run `argv` under `profile` in `cwd`.
 * `tmpDir`: host directory mounted at `/tmp` (undefined: a tmpfs per command).
 */
export function bwrapArgs(
  profile: SandboxProfile,
  argv: string[],
  opts: {
    cwd: string;
    tmpDir?: string;
    seccompFd?: number;
    keepCaps?: string[];
    /**
     * Bind `/proc/sys/kernel/pid_max` writable over the read-only `/proc/sys`: only for an outer
     * bwrap whose shell writes it and remounts it read-only (./limits.ts `processLimit`).
     */
    pidMaxWritable?: boolean;
    /** `--size BYTES` put before every `--tmpfs` (./limits.ts `tmpfsSize`); none: no cap. */
    tmpfsSize?: string[];
    /** Files of `/proc` shown empty (./probe.ts `SandboxBackend.procMasks`: those this kernel has). */
    procMasks?: readonly string[];
  },
): string[] {
  const a = [
    // ./seccomp.ts: no AF_UNIX sockets (read by bwrap from this inherited descriptor).
    ...(opts.seccompFd === undefined ? [] : ["--seccomp", String(opts.seccompFd)]),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    // Only for a nested bwrap that drops them all again (mod.ts sandboxedCommand).
    ...(opts.keepCaps ?? []).flatMap((c) => ["--cap-add", c]),
    "--unshare-pid",
    // SysV message queues, semaphores, shared memory and POSIX message queues are per IPC
    // namespace: shared with the host, a command wrote to the host's queues and segments and left
    // segments behind that outlived it (attack pass 4).
    "--unshare-ipc",
  ];
  if (profile.network.mode !== "host") a.push("--unshare-net");
  const size = opts.tmpfsSize ?? [];
  // /dev/shm: its own capped tmpfs (in bwrap's /dev it would share the /dev tmpfs, half the RAM).
  // /dev read-only once /dev/shm is in (attack pass 4: bwrap's /dev tmpfs has no --size, so a
  // command could fill half the RAM there); device nodes stay writable on a read-only mount.
  // The root: bwrap's own empty one with only the allow list of ./root_view.ts bound in
  // read-only (a profile without one, made by hand in a test: the whole host root read-only).
  // `--ro-bind-try`: a folder of the (cached) view gone by launch time is left out, not an error
  // that fails the command (a Homebrew prefix removed between two commands).
  const view = profile.root;
  if (view) {
    for (const e of view.entries) {
      a.push(
        ...(e.link ? ["--symlink", e.link, e.path] : ["--ro-bind-try", e.from ?? e.path, e.path]),
      );
    }
    for (const f of view.files) a.push("--ro-bind-try", f, f);
  } else a.push("--ro-bind", "/", "/");
  a.push(
    "--dev",
    "/dev",
    ...size,
    "--tmpfs",
    "/dev/shm",
    "--remount-ro",
    "/dev",
  );
  a.push("--proc", "/proc");
  a.push(...PROC_READ_ONLY);
  for (const f of opts.procMasks ?? []) a.push("--ro-bind", emptyFilePath(), `/proc/${f}`);
  if (opts.pidMaxWritable) {
    a.push("--bind", "/proc/sys/kernel/pid_max", "/proc/sys/kernel/pid_max");
  }
  if (opts.tmpDir) a.push("--bind", opts.tmpDir, "/tmp");
  else a.push(...size, "--tmpfs", "/tmp");
  type Mount = { path: string; order: number; args: string[] };
  const mounts: Mount[] = [];
  for (const w of profile.writable) {
    mounts.push({ path: w.path, order: 0, args: ["--bind", w.path, w.path] });
  }
  for (const r of profile.readable) {
    mounts.push({ path: r.path, order: 0, args: ["--ro-bind", r.path, r.path] });
  }
  // A socket a `Net(unix:…)` rule names is bound in; a hidden dir above it stays a writable
  // (empty, sandbox-only) tmpfs so its mount point can be made.
  const sockets = profile.unixSockets ?? [];
  const roots = [...profile.writable, ...profile.readable].map((r) => r.path);
  const own = ownFilesHidden(roots, size);
  /** Hidden folders mounted as a read-only tmpfs (no root inside them). */
  const sealed: string[] = own.filter((m) => m.args.includes("--tmpfs")).map((m) => m.path);
  for (const h of profile.hidden) {
    // Already invisible: inside the home's empty tmpfs, under no store or root (./home_view.ts).
    if (profile.home && hiddenByHome(profile.home, h.path, roots)) continue;
    // …or outside everything bound: absent from the root view (/run/user, other homes).
    if (view && !visible(view, profile, h.path, roots)) continue;
    // …or gone since the profile was made (a cached /etc scan): nothing left to hide, and its
    // mount point could not be made under a read-only folder.
    if (!exists(h.path)) continue;
    // …and so does one with a root inside it (a workspace inside the hidden data dir).
    const keepRw = [...sockets, ...roots].some((s) => s.startsWith(`${h.path}/`));
    mounts.push({
      path: h.path,
      order: 2,
      args: isDir(h.path)
        ? [
          "--perms",
          "0555",
          ...size,
          "--tmpfs",
          h.path,
          ...(keepRw ? [] : ["--remount-ro", h.path]),
        ]
        : ["--ro-bind", emptyFilePath(), h.path],
    });
    if (!keepRw && isDir(h.path)) sealed.push(h.path);
  }
  // A read-only path inside a hidden folder that holds no root is hidden with it: its mount point
  // could not be made in that folder's read-only tmpfs, and bwrap would fail every command (a
  // checkpoint store under a data dir inside the workspace: `coyote` started in `~` or `/tmp`).
  const underSealed = (p: string) => sealed.some((h) => p !== h && inside(p, h));
  for (const r of profile.readOnly) {
    if (underSealed(r.path)) continue;
    mounts.push({ path: r.path, order: 1, args: ["--ro-bind", r.path, r.path] });
  }
  for (const d of parentChain(profile)) {
    if (underSealed(d)) continue;
    mounts.push({ path: d, order: 0, args: ["--bind", d, d] });
  }
  for (const s of sockets) mounts.push({ path: s, order: 3, args: ["--ro-bind", s, s] });
  // Files with their credential lines masked (./secret_lines.ts): the copy over the original.
  for (const m of profile.masked ?? []) {
    if (!exists(m.path) || underSealed(m.path)) continue; // gone, or hidden with its folder
    if (view && !visible(view, profile, m.path, roots)) continue;
    mounts.push({ path: m.path, order: 3, args: ["--ro-bind", m.source, m.path] });
  }
  // The home: an empty tmpfs with the toolchain stores and a generated .gitconfig (./home_view.ts).
  if (profile.home) mounts.push(...homeMounts(profile.home, emptyFilePath(), size));
  mounts.push(...own);
  mounts.sort((x, y) => depth(x.path) - depth(y.path) || x.order - y.order);
  for (const m of mounts) a.push(...m.args);
  // The home's tmpfs goes read-only once everything inside it is mounted (tenth attacker pass:
  // start-up files, Python's user site and PATH folders planted there ran within the command).
  if (profile.home) a.push("--remount-ro", profile.home.path);
  // bwrap's root tmpfs (mount points only) read-only: nothing to create at `/`.
  if (view) a.push("--remount-ro", "/");
  a.push("--chdir", opts.cwd, "--", ...argv);
  return a;
}

/**
 * Coyote's own files in the host temp dir (`coyote-*`: the seccomp filter bwrap reads, the mount
 * plans, the empty and masked copies bound over hidden files, the generated git config, other
 * sessions' command temp dirs) hidden when a bound root contains that dir (a workspace of `/tmp`,
 * `/` or a home holding `$TMPDIR`): a command could otherwise rewrite the next command's seccomp
 * filter or plan, or read another session's files. Files get `/dev/null` read-only over them,
 * folders an empty read-only tmpfs; an entry holding a root (a workspace made as
 * `/tmp/coyote-x`) stays. bwrap resolves every bind source on the host side, so the copies still
 * mount where they belong. `tmpDir` defaults to `$TMPDIR` or `/tmp` (tests pass their own rather
 * than change the process-wide variable other test modules share).
 */
export function ownFilesHidden(
  roots: readonly string[],
  size: readonly string[] = [],
  tmpDir: string = Deno.env.get("TMPDIR") || "/tmp",
): { path: string; order: number; args: string[] }[] {
  let tmp: string;
  try {
    tmp = Deno.realPathSync(tmpDir);
  } catch {
    return [];
  }
  if (!roots.some((r) => inside(tmp, r))) return [];
  const out: { path: string; order: number; args: string[] }[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(tmp)];
  } catch {
    return [];
  }
  for (const e of entries) {
    if (!e.name.startsWith("coyote-")) continue;
    const p = `${tmp}/${e.name}`;
    if (roots.some((r) => inside(r, p))) continue;
    out.push({
      path: p,
      order: 4,
      args: e.isDirectory
        ? ["--perms", "0555", ...size, "--tmpfs", p, "--remount-ro", p]
        : e.isFile
        ? ["--ro-bind", "/dev/null", p]
        : [],
    });
  }
  return out.filter((m) => m.args.length);
}

/**
 * Whether bwrap failed in its own set-up — its first stderr line `bwrap: Can't … <path>…`, exit
 * code 1 — at a path the profile hides that is gone now (a host folder of /etc removed between the
 * cached scan and the start: its mount point could not be made under the read-only /etc). The
 * command did not run; the caller runs it again on a fresh profile (plugins/exec/mod.ts).
 */
export function setupRaced(
  profile: { hidden: { path: string }[]; masked?: { path: string }[] },
  code: number | null,
  stderr: string,
): boolean {
  if (code !== 1) return false;
  const m = /^bwrap: Can't [^/\n]*(\/[^\n]*?)(?:: [^\n]*)?$/m.exec(stderr.split("\n", 1)[0]);
  if (!m) return false;
  const p = m[1];
  if (![...profile.hidden, ...profile.masked ?? []].some((h) => p === h.path)) return false;
  try {
    Deno.lstatSync(p);
    return false;
  } catch {
    return true;
  }
}
