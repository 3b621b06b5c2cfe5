/**
 * The host root as commands see it on Linux (issue 16, attack pass 4 classes 1–2;
 * docs/permissions.md "The OS sandbox"): an allow list instead of the whole root read-only.
 *
 * A read-only mount stops neither writing into a FIFO a host process reads (`/var/tmp/x.fifo`)
 * nor reading what the mode allows (`/run/secrets/kubernetes.io/serviceaccount/token`, and as
 * root `/etc/shadow`, `/etc/ssh/ssh_host_*_key`, `/root`), and a deny list of such places cannot be
 * complete. So bwrap starts from its own empty root and binds in, read-only, only the top-level
 * entries of {@link SYSTEM_ROOTS} that exist (a symlink such as `/bin -> usr/bin` is recreated as
 * the same symlink); the workspace, the private `/tmp`, the home view, the roots of `Read`/`Write`
 * allow rules and a linked worktree's git dirs are bound on top as before (./bwrap.ts). Everything
 * else of the root — `/var`, `/run`, `/srv`, `/mnt`, `/media`, `/home`, `/root`, `/boot`, the
 * host's `/tmp`, anything an image adds (`/work`, `/data`, …) — is absent, except the toolchain
 * prefixes of {@link TOOLCHAIN_PREFIXES} (Homebrew on Linux, NixOS's system profile).
 *
 * Inside `/etc` (root-owned, but read by every program) what its mode does not let others read is
 * hidden — a file without `o+r` becomes an empty file, a folder without `o+r`/`o+x` an empty one,
 * and FIFOs, sockets and devices there are hidden too: `/etc/shadow`, `/etc/gshadow`, the ssh host
 * keys, `/etc/sudoers(.d)`, `/etc/ssl/private`, … by that rule, not by name. The scan is cached
 * per process and done again when the modification time of `/etc` (or `/`, `/home`, `/run`)
 * changes (replacing or adding a file there changes it; a file whose mode changes in a subfolder
 * later is seen by the next process); past 20,000 folders the rest of `/etc` is not scanned.
 *
 * A world-readable file of `/etc` that holds a credential (`/etc/pip.conf` with
 * `index-url = https://user:pass@…`, `/etc/npmrc` with `_authToken=`) is shown with those lines
 * masked ({@link RootView.etcMasked}, ./secret_lines.ts: by content, not by name; verdicts cached
 * across processes by each file's stamp, and checked again after a minute within a process).
 *
 * One exception outside the list: when `/etc/resolv.conf` is a link to a file elsewhere
 * (systemd-resolved's `/run/systemd/resolve/stub-resolv.conf`), that one file is bound at its
 * path, so name resolution works where the network is shared.
 * @module
 */

/**
 * Top-level entries of the host root commands see, read-only: programs, their libraries and
 * configuration (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`), add-on software (`/opt`, the Nix store
 * `/nix`, snaps `/snap`). `/sys` is not whole: only the folders of {@link SYS_VIEW}.
 */
export const SYSTEM_ROOTS: readonly string[] = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
  "/nix",
  "/snap",
];

/**
 * The folders of `/sys` commands see, read-only (leak pass item 2: `/sys` whole showed the host's
 * MAC addresses in `/sys/class/net/<if>/address`, DMI serials in `/sys/class/dmi/id`, `/sys/firmware`):
 * what toolchains read to size thread pools and heaps — the CPU topology and online set
 * (`/sys/devices/system/cpu`: glibc `get_nprocs`, Node `os.cpus`), NUMA nodes
 * (`/sys/devices/system/node`), the cgroup limits (`/sys/fs/cgroup`: `cpu.max`, `memory.max`,
 * read by Go, Rust, the JVM and Node) and the huge-page setting (`/sys/kernel/mm/transparent_hugepage`,
 * read by the JVM and jemalloc). The rest of `/sys` is absent.
 */
export const SYS_VIEW: readonly string[] = [
  "/sys/devices/system/cpu",
  "/sys/devices/system/node",
  "/sys/fs/cgroup",
  "/sys/kernel/mm/transparent_hugepage",
];

/**
 * Toolchain prefixes outside {@link SYSTEM_ROOTS} that distributions put on `PATH`, shown too
 * when they exist (read-only; a symlink recreated): Homebrew on Linux
 * (`/home/linuxbrew/.linuxbrew`, the rest of `/home` stays absent) and NixOS's system profile
 * (`/run/current-system`, a link into the visible `/nix/store`; the rest of `/run` stays absent).
 */
export const TOOLCHAIN_PREFIXES: readonly string[] = [
  "/home/linuxbrew/.linuxbrew",
  "/run/current-system",
];

/**
 * One entry of {@link SYSTEM_ROOTS} or {@link TOOLCHAIN_PREFIXES} that exists: a folder bound
 * read-only or a symlink made.
 */
export interface RootEntry {
  path: string;
  /** Set for a symlink into another entry (`/bin -> usr/bin`): recreated with this target. */
  link?: string;
  /**
   * Set for a symlink to a folder outside every entry (Fedora's `/snap -> /var/lib/snapd/snap`,
   * an `/opt -> /var/opt`): that folder (a real path) is bound read-only at {@link path}, so the
   * link does not dangle and nothing else of where it points shows.
   */
  from?: string;
}

/**
 * The entry for top-level path `p` (see {@link RootEntry}), or undefined when it is neither a
 * folder nor a link to one. `roots`: the list whose folders a link may point into.
 */
export function rootEntry(
  p: string,
  roots: readonly string[] = SYSTEM_ROOTS,
): RootEntry | undefined {
  try {
    const st = Deno.lstatSync(p);
    if (st.isDirectory) return { path: p };
    if (!st.isSymlink) return undefined;
    const target = Deno.realPathSync(p);
    if (!Deno.statSync(target).isDirectory) return undefined;
    const into = roots.some((r) => {
      if (r === p) return false;
      try {
        if (!Deno.lstatSync(r).isDirectory) return false;
      } catch {
        return false;
      }
      return target === r || target.startsWith(`${r}/`);
    });
    return into ? { path: p, link: Deno.readLinkSync(p) } : { path: p, from: target };
  } catch {
    return undefined; // absent here, or a dangling link
  }
}

import { etcCredentialFiles, type FileStamp, MASK_MAX_BYTES, maskedCopy } from "./secret_lines.ts";

/** The root view (see the module doc). */
export interface RootView {
  entries: RootEntry[];
  /** Files outside the list bound read-only at their own path (the resolver's config). */
  files: string[];
  /** Paths in `/etc` others may not read (or FIFOs, sockets, devices), hidden; `dir` for folders. */
  etcHidden: { path: string; dir: boolean }[];
  /**
   * Files in `/etc` others may read that hold a credential line (./secret_lines.ts): `source`, a
   * copy with those lines masked, is bound read-only over `path`.
   */
  etcMasked: { path: string; source: string }[];
}

/** Folders examined at most by the `/etc` scan (a typical `/etc` has a few hundred). */
const ETC_SCAN_LIMIT = 20_000;

/**
 * The `/etc` scan below `root` (a test passes its own folder): what the mode hides, and the
 * world-readable plain files of at most {@link MASK_MAX_BYTES} with their stamps (`texts`), whose
 * content ./secret_lines.ts judges.
 */
export function scanEtc(
  root = "/etc",
  texts: FileStamp[] = [],
): { path: string; dir: boolean }[] {
  const out: { path: string; dir: boolean }[] = [];
  const stack = [root];
  let seen = 0;
  while (stack.length && seen++ < ETC_SCAN_LIMIT) {
    const d = stack.pop()!;
    let list: Deno.DirEntry[];
    try {
      list = [...Deno.readDirSync(d)];
    } catch {
      continue;
    }
    for (const e of list) {
      if (e.isSymlink) continue; // its target is judged where it lies
      const p = `${d}/${e.name}`;
      let mode: number;
      let st: Deno.FileInfo;
      try {
        st = Deno.lstatSync(p);
        mode = st.mode ?? 0o777;
      } catch {
        continue;
      }
      if (e.isDirectory) {
        if ((mode & 0o005) !== 0o005) out.push({ path: p, dir: true });
        else stack.push(p);
      } else if (!e.isFile || (mode & 0o004) === 0) {
        out.push({ path: p, dir: false });
      } else if (st.size <= MASK_MAX_BYTES) {
        texts.push({
          path: p,
          mtime: st.mtime?.getTime() ?? -2,
          ctime: st.ctime?.getTime() ?? -2,
          size: st.size,
        });
      }
    }
  }
  return out;
}

let cache: { key: string; view: RootView; texts: FileStamp[]; at: number } | undefined;

/** How long (ms) the content verdicts of `/etc` are reused before each file is stat'ed again. */
const ETC_CONTENT_TTL_MS = 60_000;

/** The masked files among `texts` (see {@link RootView.etcMasked}). */
function masked(texts: readonly FileStamp[], cacheDir?: string): RootView["etcMasked"] {
  return maskedOf(etcCredentialFiles(texts, cacheDir));
}

/** Masked copies of `credentials` (files of `/etc` holding a credential line). */
function maskedOf(credentials: readonly string[]): RootView["etcMasked"] {
  const out: RootView["etcMasked"] = [];
  for (const path of credentials) {
    const source = maskedCopy(path);
    if (source) out.push({ path, source });
  }
  return out;
}

/** Fresh stamps of `texts` (a file edited in place does not move its folder's mtime). */
function restat(texts: readonly FileStamp[]): FileStamp[] {
  const out: FileStamp[] = [];
  for (const t of texts) {
    try {
      const st = Deno.lstatSync(t.path);
      if (!st.isFile) continue;
      out.push({
        path: t.path,
        mtime: st.mtime?.getTime() ?? -2,
        ctime: st.ctime?.getTime() ?? -2,
        size: st.size,
      });
    } catch { /* gone */ }
  }
  return out;
}

const mtimeOf = (p: string) => {
  try {
    return Deno.statSync(p).mtime?.getTime() ?? 0;
  } catch {
    return -1;
  }
};

/** The stamp of the folders whose entries the view lists: a change in one makes it again. */
export function rootViewKey(): string {
  return ["/etc", "/", "/home", "/run"].map(mtimeOf).join(" ");
}

/**
 * The `/etc` part of the view as a helper process makes it (./home_prescan.ts): the
 * {@link rootViewKey} taken before the scan, what {@link scanEtc} hides, its candidate files and
 * which of them hold a credential (./secret_lines.ts `etcCredentialFiles`).
 */
export interface EtcScan {
  key: string;
  hidden: { path: string; dir: boolean }[];
  texts: FileStamp[];
  credentials: string[];
}

/** The `/etc` scan now, for a helper process (`cacheDir`: where the content verdicts are kept). */
export function etcScanNow(cacheDir?: string): EtcScan {
  const key = rootViewKey();
  const texts: FileStamp[] = [];
  const hidden = scanEtc("/etc", texts);
  return { key, hidden, texts, credentials: etcCredentialFiles(texts, cacheDir) };
}

let taken: EtcScan | undefined;

/** Takes a helper's `/etc` scan: {@link rootView} uses it while the view's key is the scan's. */
export function takeEtcScan(scan: EtcScan): void {
  taken = scan;
}

/**
 * The root view of this machine now (cached; see the module doc). `cacheDir` (Coyote's data
 * dir): where the content verdicts of `/etc` are kept across processes (./secret_lines.ts).
 */
export function rootView(cacheDir?: string): RootView {
  const key = rootViewKey();
  if (cache?.key === key) {
    if (Date.now() - cache.at >= ETC_CONTENT_TTL_MS) {
      cache.texts = restat(cache.texts);
      cache.view = { ...cache.view, etcMasked: masked(cache.texts, cacheDir) };
      cache.at = Date.now();
    }
    return cache.view;
  }
  const entries: RootEntry[] = [];
  for (const p of [...SYSTEM_ROOTS, ...TOOLCHAIN_PREFIXES]) {
    const e = rootEntry(p);
    if (e) entries.push(e);
  }
  // Not stat'ed: Deno lets only `--allow-all` stat under /sys (`NotCapable` under the `coyote`
  // task's `--allow-read`, which left every folder out); bwrap's `--ro-bind-try` skips an absent one.
  for (const p of SYS_VIEW) entries.push({ path: p });
  const files: string[] = [];
  try {
    const r = Deno.realPathSync("/etc/resolv.conf");
    if (!SYSTEM_ROOTS.some((s) => r === s || r.startsWith(`${s}/`)) && Deno.statSync(r).isFile) {
      files.push(r);
    }
  } catch { /* none */ }
  // A helper's scan of the same `/etc` (./home_prescan.ts) is taken as it is; else scanned here.
  const pre = taken?.key === key ? taken : undefined;
  taken = undefined;
  const texts: FileStamp[] = pre?.texts ?? [];
  const etcHidden = pre?.hidden ?? scanEtc("/etc", texts);
  const etcMasked = pre ? maskedOf(pre.credentials) : masked(texts, cacheDir);
  const view = { entries, files, etcHidden, etcMasked };
  cache = { key, view, texts, at: Date.now() };
  return view;
}

/**
 * Whether host path `p` (a real path) shows through the root view's bound folders, i.e. lies
 * in one of its folder entries (links resolve into another entry: `/lib -> usr/lib`).
 */
export function inRootView(view: RootView, p: string): boolean {
  return view.entries.some((e) =>
    !e.link && !e.from && (p === e.path || p.startsWith(`${e.path}/`))
  ) ||
    view.files.includes(p);
}
