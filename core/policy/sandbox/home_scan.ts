/**
 * The credential scan of the home's toolchain stores (./home_view.ts mounts them read-only and
 * hides what {@link scanSecrets} finds), and its cache across processes ({@link ScanCache},
 * `<dataDir>/home-scan.json`). See docs/permissions.md "The home directory inside the sandbox".
 * @module
 */
import { dirname, join } from "../../util/path.ts";
import { credentialValue } from "../../tools/secret_value.ts";
import { secretAssignment } from "../../tools/secret_keys.ts";
import { writeTextAtomicSync } from "../../util/files.ts";
import { configPairs, nestedCredential } from "./store_values.ts";
import { packageFolder, packageTree } from "./store_packages.ts";
import {
  CONFIG_FILE_RE,
  CONFIG_MAX_BYTES,
  configHoldsCredential,
  configShaped,
  CONTENT_READ_BYTES,
  CONTENT_READ_LIMIT,
  historyFile,
  PREFIX_CODE_DIRS,
  specialFile,
  WEB_STORAGE_RE,
} from "./store_kinds.ts";

/**
 * Entry names inside a store that look like credentials and stay hidden: words `token`,
 * `credential(s)`, `secret(s)`, `password`, `auth`, `cookie(s)`, `session(s)` (as a word, so
 * `tokenizer.json` stays), keys and certificates (`*.pem`, `*.key`, `*.p12`, `*.pfx`, `id_rsa*`,
 * `id_ed25519*`…), `.netrc`, `.npmrc`, `.pypirc`, `.git-credentials`, `hosts.yml`, `auth.json`;
 * from the third attacker pass (issue 16 item 10): the word `bearer`, `*kubeconfig*`, dotenv files
 * (`.env`, `.env.*`, `*.env`), service-account keys (`*service-account*`, `*service_account*`,
 * `sa.json`, `sa-*.json`, `*-sa.json`), `*private-key*` / `*private_key*`, `*.kdbx`.
 */
export const SECRET_NAME_RE =
  /(^|[^a-z])(tokens?|credentials?|secrets?|passwords?|passwd|auth|cookies?|sessions?|apikey|api_key|bearer)([^a-z]|$)|\.(pem|key|p12|pfx|jks|keystore|asc|gpg|kdbx)$|^id_(rsa|dsa|ecdsa|ed25519)|^\.?(netrc|npmrc|pypirc|git-credentials)$|^hosts\.ya?ml$|kubeconfig|^\.env(\..+)?$|\.env$|service[-_]?account|^sa([-_.][^/]*)?\.json$|[-_.]sa\.json$|private[-_]?key/i;

/**
 * How deep below a store the credential scan looks (1 = the store's own entries): browser
 * profiles of test tools sit 4 to 6 levels deep (`~/.cache/ms-playwright/<name>/Default/Cookies`).
 */
export const SCAN_DEPTH = 10;
/**
 * At most this many entries are read per store scan, breadth first (a huge store is scanned
 * partly, its deepest folders last; see docs). Hash-bucket folders (content-addressed caches:
 * `go-build/00…ff`, `_cacache/content-v2/sha512/…`) and git object stores are not entered.
 */
export const SCAN_LIMIT = 30000;
/**
 * A store's scan and the whole view are reused this long (ms), so commands in a row neither
 * rescan nor re-stat: a store or credential file created later shows after at most this long.
 */
export const SCAN_TTL_MS = 60_000;

/**
 * Entries whose presence makes their folder a browser profile (Chromium: `Cookies`, `Login Data`,
 * `Web Data`, `Secure Preferences`, `Local Storage`, `Session Storage` — Electron apps too —,
 * `Local State` in the user-data folder above the profiles; Firefox: `cookies.sqlite`,
 * `key4.db`, `logins.json`, `cert9.db`; Safari/WebKit `Cookies.binarycookies`) or a mail cache
 * (Evolution's `folders.db`, Thunderbird's `panacea.dat`): the whole folder is hidden.
 */
export const PROFILE_MARKERS: ReadonlySet<string> = new Set([
  "Cookies",
  "Login Data",
  "Login Data For Account",
  "Web Data",
  "Local State",
  "Network Persistent State",
  "Secure Preferences",
  "Local Storage",
  "Session Storage",
  "cookies.sqlite",
  "key4.db",
  "key3.db",
  "logins.json",
  "cert9.db",
  "Cookies.binarycookies",
  "folders.db",
  "panacea.dat",
]);

/**
 * Folder names (any depth, any case) of mail clients, keyrings, password managers and browsers:
 * hidden wherever they appear inside a store.
 */
export const PRIVATE_DIR_RE =
  /^\.?(evolution|thunderbird|icedove|mozilla|mutt|neomutt|aerc|geary|claws-mail|kmail2?|akonadi|mailspring|keyrings?|gnome-keyring|kwallet\w*|1password|bitwarden|keepassxc|password-store|gnupg|ssh|google-chrome\w*|chromium|bravesoftware|microsoft-edge\w*|vivaldi|opera|chrome-profile\w*|user-data-dir)$/i;

/** A folder of content-addressed blobs: many entries, all hex names of one length. */
function hashBuckets(entries: Deno.DirEntry[]): boolean {
  if (entries.length < 16) return false;
  const len = entries[0].name.length;
  return len >= 2 &&
    entries.slice(0, 64).every((e) => e.name.length === len && /^[0-9a-f]+$/.test(e.name));
}

const scans = new Map<string, { at: number; found: string[] }>();

/**
 * What {@link scanSecrets} found in `dir` within the last {@link SCAN_TTL_MS} − `marginMs`
 * (this process's own scan or one taken over by {@link takeScans}), else undefined.
 */
export function recentScan(dir: string, marginMs = 0): string[] | undefined {
  const hit = scans.get(dir);
  return hit && Date.now() - hit.at < SCAN_TTL_MS - marginMs ? hit.found : undefined;
}

/**
 * Takes over scans made elsewhere (./home_prescan.ts, a helper process): `found` per store (its
 * real path), made no earlier than `at` (ms since the epoch: when the helper was started).
 */
export function takeScans(found: Record<string, string[]>, at: number): void {
  for (const [dir, f] of Object.entries(found)) scans.set(dir, { at, found: f });
}

/** How deep the name rules ({@link SECRET_NAME_RE}, {@link PRIVATE_DIR_RE}) look: deeper, names are a package's files (`cookie`, `session.js`). */
export const NAME_DEPTH = 3;

/**
 * What to hide below `dir` (relative paths), breadth first to {@link SCAN_DEPTH} levels and
 * {@link SCAN_LIMIT} entries:
 * - by structure, at every depth: browser profiles and mail caches ({@link PROFILE_MARKERS}; a
 *   Maildir's `cur`/`new`/`tmp`; keyring files `*.keyring`, `*.kwl`, `pubring.kbx`), config
 *   files holding a credential (named ones, {@link CONFIG_FILE_RE}: a clone's `.git/config`, a
 *   bare clone's `config` with a token URL or an auth header; and any configuration-shaped text
 *   file, ./store_kinds.ts `configShaped`: a virtualenv's `pip.conf`, a `gradle.properties`, a
 *   tool's `config.json` — the value and key rules of core/tools/secret_value.ts; at most
 *   {@link CONTENT_READ_LIMIT} reads, past it such files are hidden unread), history files and
 *   web storage (./store_kinds.ts `historyFile`, {@link WEB_STORAGE_RE}), and sockets, FIFOs and
 *   device nodes by type ({@link specialFile}: a daemon's endpoint, no cache content);
 * - by name, to {@link NAME_DEPTH} levels: credential-looking names ({@link SECRET_NAME_RE}) and
 *   private folders ({@link PRIVATE_DIR_RE}), except a folder that is a package tree
 *   ({@link packageTree}: the npm packages `cookie`, `google-auth-library` in Deno's cache).
 * Not entered: hash-bucket folders, git object stores, package folders ({@link packageFolder};
 * their `.git/config` and named config files are still read) — except an install prefix (`bin`
 * next to `lib`), whose folders other than its code ({@link PREFIX_CODE_DIRS}) are entered. Symbolic links are not followed; only plain files are read.
 */
export function scanSecrets(dir: string, disk?: ScanCache): string[] {
  const hit = scans.get(dir);
  const now = Date.now();
  if (hit && now - hit.at < SCAN_TTL_MS) return hit.found;
  readBudget = CONTENT_READ_LIMIT;
  byteBudget = CONTENT_READ_BYTES;
  // The cached tree is updated in place: each queued folder carries its slot in its parent's
  // `sub` (the store's own slot is `top`); an unchanged folder keeps its record object.
  const top: Slot = ["", (disk && folderRecord(disk.stores[dir])) ? disk.stores[dir] : 0];
  const found: string[] = [];
  let seen = 0;
  let reused = 0;
  let visited = 0;
  let changed = false;
  // A stamp within 2 s of the scan (or without a time) could hide a change made in the same
  // millisecond after it: such a folder or file is read again next time instead of trusted.
  const racy = (m: number, c: number) => m === -2 || m >= now - 2000 || c >= now - 2000;
  const queue: [abs: string, rel: string, depth: number, slot: Slot][] = [[dir, "", 1, top]];
  for (let q = 0; q < queue.length && seen <= SCAN_LIMIT; q++) {
    const [abs, rel, depth, slot] = queue[q];
    visited++;
    const [m, c] = stampOf(abs, false); // before the read: a change during it moves the mtime past this
    const old = folderRecord(slot[1]) ? slot[1] as FolderRecord : undefined;
    let rec: FolderRecord;
    if (
      old && old.m === m && old.c === c && m !== -2 &&
      (old.dep ?? []).every(([r, f, dm, dc, ds]) =>
        sameStamp(stampOf(`${dir}/${r}`, f === 1), dm, dc, ds)
      )
    ) {
      reused++;
      rec = old;
      if (
        old.cfg?.some(([r, cm, cc, cs]) =>
          cm === -2 || !sameStamp(stampOf(`${dir}/${r}`, false), cm, cc, cs)
        )
      ) rec = { ...old, cfg: old.cfg.map(([r]) => configStamp(dir, r)) };
    } else {
      rec = scanFolder(dir, abs, rel, depth, m, c, old);
    }
    let keep: FolderRecord | 0 = 0;
    if (!racy(rec.m, rec.c) && (rec.dep ?? []).every(([, , dm, dc]) => !racy(dm, dc))) {
      keep = rec.cfg?.some(([, cm, cc]) => racy(cm, cc))
        ? {
          ...rec,
          cfg: rec.cfg.map(([r, cm, cc, cs, h]) =>
            racy(cm, cc) ? [r, -2, -2, -1, h] : [r, cm, cc, cs, h]
          ),
        }
        : rec;
    }
    if (slot[1] !== keep) changed = true;
    slot[1] = keep;
    seen += rec.n;
    if (rec.f) { for (const f of rec.f) found.push(f); }
    if (rec.cfg) { for (const [r, , , , h] of rec.cfg) if (h) found.push(r); }
    if (rec.sub) {
      for (const child of rec.sub) {
        const name = child[0];
        if (typeof name !== "string") continue;
        queue.push([
          `${abs}/${name}`,
          rel ? `${rel}/${name}` : name,
          depth + 1,
          child,
        ]);
      }
    }
  }
  scans.set(dir, { at: now, found });
  if (disk) {
    disk.reused += reused;
    if (changed) {
      if (top[1] && visited <= SCAN_CACHE_MAX_FOLDERS) disk.stores[dir] = top[1];
      else delete disk.stores[dir];
      disk.dirty = true;
    }
  }
  return found;
}

/** Files and bytes left to read in the running store scan ({@link CONTENT_READ_LIMIT}, {@link CONTENT_READ_BYTES}). */
let readBudget = CONTENT_READ_LIMIT;
let byteBudget = CONTENT_READ_BYTES;

/**
 * A config file's stamp and whether it holds a credential (read when it is a plain small text
 * file). Past the scan's read budget the file is not read: it counts as holding one (hidden) and
 * its stamp as unknown, so a later scan reads it.
 */
function configStamp(dir: string, rel: string): ConfigStamp {
  const p = `${dir}/${rel}`;
  const [m, c, size] = stampOf(p, false);
  let holds = 0 as 0 | 1;
  try {
    const st = Deno.lstatSync(p);
    if (st.isFile && st.size <= CONFIG_MAX_BYTES && st.size > 0) {
      if (readBudget <= 0 || byteBudget < st.size) return [rel, -2, -2, -1, 1];
      readBudget--;
      byteBudget -= st.size;
      const b = Deno.readFileSync(p);
      if (
        !b.includes(0) &&
        configHoldsCredential(new TextDecoder().decode(b), rel.slice(rel.lastIndexOf("/") + 1))
      ) holds = 1;
    }
  } catch { /* absent or unreadable (then not inside the sandbox either) */ }
  return [rel, m, c, size, holds];
}

/** The scan's reading of one folder (`rel` below the store `dir`, at `depth`; `m`, `c`: its stamp). */
function scanFolder(
  dir: string,
  abs: string,
  rel: string,
  depth: number,
  m: number,
  c: number,
  old: FolderRecord | undefined,
): FolderRecord {
  const rec: FolderRecord = { m, c, n: 0 };
  const f: string[] = [];
  const sub: Slot[] = [];
  const cfg: ConfigStamp[] = [];
  const dep: Stamp[] = [];
  const done = () => {
    if (f.length) rec.f = f;
    if (sub.length) rec.sub = sub;
    if (cfg.length) rec.cfg = cfg;
    if (dep.length) rec.dep = dep;
    return rec;
  };
  // A changed folder's children keep their records: each is checked by its own stamp.
  const before = new Map<string, FolderRecord | 0>();
  for (const s of old?.sub ?? []) {
    if (Array.isArray(s) && typeof s[0] === "string") before.set(s[0], s[1]);
  }
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(abs)];
  } catch {
    return done();
  }
  rec.n = entries.length;
  const names = new Set(entries.map((e) => e.name));
  if (
    rel &&
    (entries.some((e) => PROFILE_MARKERS.has(e.name) || /\.(keyring|kwl)$/.test(e.name)) ||
      names.has("pubring.kbx") || (names.has("cur") && names.has("new") && names.has("tmp")))
  ) {
    f.push(rel);
    return done();
  }
  if (hashBuckets(entries)) return done();
  const pkg = packageFolder(names, entries);
  const note = (r: string, follow: boolean) => {
    dep.push([r, follow ? 1 : 0, ...stampOf(`${dir}/${r}`, follow)]);
  };
  const listDir = (a: string, r: string) => {
    note(r, false);
    return [...Deno.readDirSync(a)];
  };
  // An install prefix (a Python or Node version, a virtualenv): its code folders are not
  // entered, the rest is (`envs/<name>`, `etc/`), and its top files are read like any folder's.
  const prefix = pkg && names.has("bin") && names.has("lib");
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    // A socket, FIFO or device node (eleventh attacker pass, class 1): a daemon's endpoint (an
    // ssh ControlMaster, an app's IPC socket), never a cache's content — hidden by type.
    if (!e.isFile && !e.isDirectory && !e.isSymlink && specialFile(`${abs}/${e.name}`)) {
      f.push(r);
      continue;
    }
    const byKind = (e.isFile && historyFile(e.name)) || WEB_STORAGE_RE.test(e.name);
    if (
      (byKind ||
        (depth <= NAME_DEPTH &&
          (SECRET_NAME_RE.test(e.name) || (e.isDirectory && PRIVATE_DIR_RE.test(e.name))))) &&
      !(e.isDirectory && packageTree(`${abs}/${e.name}`, r, listDir, note))
    ) {
      f.push(r);
    } else if (
      e.isFile && (CONFIG_FILE_RE.test(e.name) || ((!pkg || prefix) && configShaped(e.name)))
    ) {
      cfg.push(configStamp(dir, r));
    } else if (e.isDirectory && pkg && !(prefix && !PREFIX_CODE_DIRS.test(e.name))) {
      if (e.name === ".git") cfg.push(configStamp(dir, `${r}/config`));
    } else if (
      e.isDirectory && depth < SCAN_DEPTH && !(e.name === "objects" && names.has("HEAD"))
    ) {
      sub.push([e.name, before.get(e.name) ?? 0]);
    }
  }
  return done();
}

/**
 * A path the scan read, relative to the store: whether it was stat'ed through links (1) or not
 * (0), then mtime and ctime (ms since the epoch) and size (bytes); `-1, -1, -1`: absent or
 * unreadable; mtime `-2`: no time (never trusted).
 */
type Stamp = [rel: string, follow: 0 | 1, mtime: number, ctime: number, size: number];
/** A config file the scan read (relative to the store), its mtime, ctime, size, and whether it holds a credential (1). */
type ConfigStamp = [rel: string, mtime: number, ctime: number, size: number, holds: 0 | 1];

/**
 * What the scan made of one folder, reused while the folder's mtime and ctime stay (an entry
 * added, removed or renamed in it moves its mtime; a permission change its ctime): `n` entries
 * (counted against {@link SCAN_LIMIT}); what it hides (relative to the store; the
 * folder itself when it is a profile; `f`), `sub`: the folders entered next, in order, each with its
 * own record (the cache is a tree); `cfg`: the
 * config files read (each re-read when its own stamp moves); `dep`: the folders and files the
 * package-tree test read (any moved: the folder is read again).
 */
interface FolderRecord {
  m: number;
  c: number;
  n: number;
  f?: string[];
  sub?: Slot[];
  cfg?: ConfigStamp[];
  dep?: Stamp[];
}
/** A subfolder entered next: its name and its record (0: none kept, read it). */
type Slot = [name: string, rec: FolderRecord | 0];

function sameStamp(st: [number, number, number], m: number, c: number, size: number): boolean {
  return st[0] === m && st[1] === c && st[2] === size;
}

function stampOf(p: string, follow: boolean): [number, number, number] {
  try {
    const st = follow ? Deno.statSync(p) : Deno.lstatSync(p);
    const m = st.mtime?.getTime();
    const c = st.ctime?.getTime();
    return m === undefined || c === undefined ? [-2, -2, st.size] : [m, c, st.size];
  } catch {
    return [-1, -1, -1];
  }
}

/** A store with more folders than this is not kept in the cache file (its size stays bounded). */
export const SCAN_CACHE_MAX_FOLDERS = 30000;
/** Bump when the scan's rules change in a way the key below does not see (it hashes the scan's code and rule constants). */
const SCAN_CACHE_VERSION = 4;

/**
 * The home scan's cache across processes: `<dataDir>/home-scan.json`, `{key, stores: {<store's
 * real path>: FolderRecord}}` (a tree of folder records). The scan walks the same folders in the same order;
 * a folder whose mtime and ctime (and its package-tree reads) are unchanged is not read again
 * ({@link FolderRecord}), a changed one is, so one new entry deep in a store costs one directory
 * read. `key` hashes the scan's rules: other rules, empty cache.
 */
export interface ScanCache {
  file: string;
  key: string;
  /** Per store (its real path): the record of the store's folder, its subfolders' inside. */
  stores: Record<string, FolderRecord>;
  /** A store was scanned: {@link saveScanCache} writes the file. */
  dirty: boolean;
  /** How many folders were taken from the file (stat only, no directory read) since it was opened. */
  reused: number;
}

let cacheKey: string | undefined;

function scanCacheKey(): string {
  if (cacheKey) return cacheKey;
  const text = [
    SCAN_CACHE_VERSION,
    SCAN_DEPTH,
    SCAN_LIMIT,
    NAME_DEPTH,
    CONFIG_MAX_BYTES,
    [...PROFILE_MARKERS].join("/"),
    PRIVATE_DIR_RE.source,
    SECRET_NAME_RE.source,
    CONFIG_FILE_RE.source,
    scanSecrets,
    scanFolder,
    configStamp,
    packageTree,
    packageFolder,
    hashBuckets,
    configHoldsCredential,
    nestedCredential,
    configPairs,
    credentialValue,
    secretAssignment,
    configShaped,
    historyFile,
    specialFile,
    CONTENT_READ_LIMIT,
    CONTENT_READ_BYTES,
    WEB_STORAGE_RE.source,
    PREFIX_CODE_DIRS.source,
  ].map(String).join("\0");
  let h = 0x811c9dc5; // FNV-1a, 32 bits
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return cacheKey = `${(h >>> 0).toString(16)}-${text.length}`;
}

/** Reads the scan cache of `cacheDir` (Coyote's data dir); absent, corrupt or of other rules: an empty one. */
export function openScanCache(cacheDir: string): ScanCache {
  const file = join(cacheDir, "home-scan.json");
  const key = scanCacheKey();
  let stores: ScanCache["stores"] = {};
  try {
    const c = JSON.parse(Deno.readTextFileSync(file));
    if (c?.key === key && c.stores && typeof c.stores === "object") {
      for (const [k, v] of Object.entries(c.stores as ScanCache["stores"])) {
        if (folderRecord(v)) stores[k] = v; // its subfolders' records are checked as they are met
      }
    }
  } catch {
    stores = {};
  }
  return { file, key, stores, dirty: false, reused: 0 };
}

/** Whether `v` (from the cache file) has the shape of a {@link FolderRecord} (its subfolders' records not checked). */
function folderRecord(v: unknown): v is FolderRecord {
  const r = v as FolderRecord;
  const num = (x: unknown) => typeof x === "number";
  const str = (x: unknown) => typeof x === "string";
  const list = (x: unknown, item: (y: unknown) => boolean) =>
    x === undefined || (Array.isArray(x) && x.every(item));
  const stamp = (x: unknown) =>
    Array.isArray(x) && x.length === 5 && str(x[0]) && x.slice(1).every(num);
  return !!r && typeof r === "object" && num(r.m) && num(r.c) && num(r.n) && list(r.f, str) &&
    list(r.sub, (x) => Array.isArray(x) && x.length === 2 && str(x[0])) && list(r.cfg, stamp) &&
    list(r.dep, stamp);
}

/** Writes `cache` if a store was scanned again (atomically: a concurrent reader sees the old or the new file). Best effort: errors are ignored. */
export function saveScanCache(cache: ScanCache): void {
  if (!cache.dirty) return;
  try {
    Deno.mkdirSync(dirname(cache.file), { recursive: true });
    writeTextAtomicSync(cache.file, JSON.stringify({ key: cache.key, stores: cache.stores }));
    cache.dirty = false;
  } catch { /* read-only or full: scanned again next time */ }
}
