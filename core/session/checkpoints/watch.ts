/**
 * The change detector of the checkpoint store (issue 18, ./store.ts, docs/modes.md "What a
 * checkpoint costs"): inotify watches (`Deno.watchFs`, one per folder, not recursive) on every
 * folder of the workspace that a checkpoint can hold — `.gitignore`d folders, symlinks, nested git
 * repositories and Coyote's own data dir are left out — record the paths that changed since the
 * last checkpoint, so the next one stages only those instead of rescanning the whole tree.
 *
 * Why not a recursive watch: Deno's recursive mode follows symbolic links to folders (a link to
 * `/usr` in the tree watched all of `/usr` and blocked for 2 s) and watches ignored trees such as
 * `node_modules`, which spends the user's inotify watches (`fs.inotify.max_user_watches`).
 *
 * What the detector answers ({@link ChangeWatcher.take}) is either the set of paths to stage
 * (workspace-relative, `/`-separated: files, folders and deleted paths, for
 * `git ls-files -c -o -- <paths>`) or a reason to rescan the whole tree (`doubt`), which holds:
 * before the first full scan since the watcher started; after a `rescan` flag (the kernel's
 * inotify queue overflowed, or Deno's per-watcher queue of 1024 events did and dropped some), a
 * watcher error or its end; after a change of a `.gitignore` file or of `.git/info/exclude` (what
 * is ignored changed); when a flush timed out.
 *
 * Folders created (or moved in) after the watches were laid have no watch: the event in their
 * parent names them, and they are scanned whole at every checkpoint ({@link ChangeWatcher.unwatched})
 * until a new watcher laid over the tree as it is then takes over ({@link ChangeWatcher.absorb}).
 * A moved folder's old watch reports its events under the old path (inotify watches follow the
 * inode): the moved folder is a created one at its new path, so it is scanned whole as well.
 *
 * Bounded set-up (eleventh attacker pass: 1,800 nested folders made by a command stalled the session
 * for over a minute): `Deno.watchFs` lays its watches synchronously, on the session's event loop,
 * at a cost that grows with the square of each folder's depth (measured: 100 nested folders 24 ms,
 * 400: 1 s, 800: 7 s). So a folder is watched only down to {@link MAX_WATCH_DEPTH} levels below the
 * workspace and while the summed cost ({@link WATCH_COST}, the squares of the folders' absolute
 * depths) stays within budget; a folder past either bound is one of {@link ChangeWatcher.beyond}:
 * not walked, not watched, and scanned whole (git) at every checkpoint. More than
 * {@link MAX_BEYOND} of those, or more than {@link MAX_WATCHED_DIRS} folders: no watcher, every
 * checkpoint rescans the tree.
 *
 * Events are asynchronous: {@link ChangeWatcher.flush} writes a sentinel file into a folder of the
 * store that the same watcher watches and waits for its event — the kernel queues the events of one
 * inotify instance in order, so every change made before the flush has been recorded by then.
 * Writes through a bind mount (the bubblewrap sandbox binds the workspace onto itself) are the same
 * inodes and reach the same watches. Not seen: writes through a memory mapping that is never closed
 * (`IN_CLOSE_WRITE` is seen), and writes to a hard link of a workspace file made from outside the
 * workspace.
 * @module
 */
import { join, relative, sep } from "../../util/path.ts";

/** Most folders watched; a tree with more is rescanned at every checkpoint instead. */
export const MAX_WATCHED_DIRS = 20_000;
/** Deepest folder watched, in levels below the workspace; deeper ones are scanned whole instead. */
export const MAX_WATCH_DEPTH = 64;
/**
 * Budget of one watcher's set-up: the sum over its folders of the square of each one's absolute
 * depth (path components), the shape of `Deno.watchFs`'s cost (here about 50 ns a unit, so
 * 6,000,000 is some 0.3 s: 20,000 folders 17 levels deep). Folders past it are scanned whole.
 */
export const WATCH_COST = 6_000_000;
/** Most folders scanned whole for lying past the bounds above; more: no watcher at all. */
export const MAX_BEYOND = 256;
/** How long a flush waits for its sentinel's event before the watcher is doubted. */
const FLUSH_MS = 2_000;

/** What changed since the last {@link ChangeWatcher.take}. */
export interface Changes {
  /** Why the whole tree must be rescanned instead (then `paths` is empty), or null. */
  doubt: string | null;
  /** Workspace-relative paths to stage: changed, created, deleted; unwatched folders whole. */
  paths: string[];
}

/** The folders to watch (workspace-relative, "" for the root) and the nested repositories. */
export interface WatchPlan {
  dirs: string[];
  nested: string[];
  /** The folders left out on purpose (ignored ones, the data dir). */
  skip: Set<string>;
  /**
   * Folders past {@link MAX_WATCH_DEPTH} or {@link WATCH_COST} (their parent is watched): not
   * walked, not watched, scanned whole at every checkpoint.
   */
  beyond: string[];
}

/** The bounds of {@link planWatch}; the module's constants by default. */
export interface WatchBounds {
  /** Most folders watched (past it: null). */
  dirs: number;
  /** Deepest folder watched, in levels below the workspace. */
  depth: number;
  /** Budget of the summed squares of the watched folders' absolute depths. */
  cost: number;
  /** Most folders past `depth` or `cost` (past it: null). */
  beyond: number;
}

/** The module's bounds: {@link MAX_WATCHED_DIRS}, {@link MAX_WATCH_DEPTH}, {@link WATCH_COST}, {@link MAX_BEYOND}. */
export const WATCH_BOUNDS: Readonly<WatchBounds> = {
  dirs: MAX_WATCHED_DIRS,
  depth: MAX_WATCH_DEPTH,
  cost: WATCH_COST,
  beyond: MAX_BEYOND,
};

/**
 * Lists the folders of `workTree` to watch, breadth first: every folder but symlinks, `.git`,
 * nested git repositories (listed apart in `nested`: their gitlink is restaged at every
 * checkpoint), the `skip` folders (ignored ones, the data dir; workspace-relative) and the
 * folders past `bounds.depth` or `bounds.cost` (listed apart in `beyond`, their insides not
 * walked). Resolves null past `bounds.dirs` folders or `bounds.beyond` folders beyond.
 */
export async function planWatch(
  workTree: string,
  skip: Set<string>,
  bounds: Partial<WatchBounds> = {},
): Promise<WatchPlan | null> {
  const b = { ...WATCH_BOUNDS, ...bounds };
  const base = workTree.split(sep).filter(Boolean).length;
  const dirs: string[] = [];
  const nested: string[] = [];
  const beyond: string[] = [];
  let cost = 0;
  const queue = [""];
  for (let head = 0; head < queue.length; head++) {
    const rel = queue[head];
    const depth = rel ? rel.split("/").length : 0;
    const unit = (base + depth) ** 2;
    if (rel && (depth > b.depth || cost + unit > b.cost)) {
      beyond.push(rel);
      if (beyond.length > b.beyond) return null;
      continue;
    }
    const sub: string[] = [];
    let isRepo = false;
    try {
      for await (const e of Deno.readDir(join(workTree, rel))) {
        if (e.name === ".git") isRepo = true;
        else if (e.isDirectory && !e.isSymlink) sub.push(rel ? `${rel}/${e.name}` : e.name);
      }
    } catch {
      continue; // gone since it was listed: its parent's event names it
    }
    if (isRepo && rel) {
      nested.push(rel);
      continue;
    }
    dirs.push(rel);
    cost += unit;
    if (dirs.length > b.dirs) return null;
    for (const s of sub) if (!skip.has(s)) queue.push(s);
  }
  return { dirs, nested, skip, beyond };
}

/**
 * A watcher over `workTree` as it is now, minus the `skip` folders (ignored ones) and the data
 * dir (`dataInside`, workspace-relative, when inside): the folders are walked once before the
 * watches are laid and once after — a folder the second walk finds that has no watch (created in
 * between) is one of {@link ChangeWatcher.unwatched}, one it finds past the bounds is one of
 * {@link ChangeWatcher.beyond}. Resolves null past the bounds of {@link planWatch}
 * ({@link WATCH_BOUNDS}). `doubt`: see the {@link ChangeWatcher} constructor.
 * @throws when a watch cannot be laid.
 */
export async function layWatcher(
  workTree: string,
  sentinelDir: string,
  skip: Set<string>,
  dataInside: string | null,
  doubt: string | null,
  bounds: Partial<WatchBounds> = {},
): Promise<ChangeWatcher | null> {
  if (dataInside) skip.add(dataInside);
  const plan = await planWatch(workTree, skip, bounds);
  if (!plan) return null;
  const w = new ChangeWatcher(workTree, sentinelDir, plan, doubt, dataInside ? [dataInside] : []);
  const again = await planWatch(workTree, skip, { ...bounds, dirs: Infinity, beyond: Infinity });
  for (const d of [...again!.dirs, ...again!.nested]) {
    if (!w.covers(d)) w.unwatched.add(d);
  }
  for (const d of again!.beyond) if (!w.covers(d)) w.beyond.add(d);
  return w;
}

/**
 * A stamp of the exclude files no watch covers: the workspace's `.git/info/exclude` (the watcher
 * sees it too) and the user's global one (`~/.config/git/ignore`, which git reads without any
 * config) — inode, size, mtime and ctime of each; a different stamp: what is ignored may have
 * changed.
 */
export async function ignoreStamp(workTree: string): Promise<string> {
  const home = Deno.env.get("HOME");
  const files = [join(workTree, ".git", "info", "exclude")];
  if (home) files.push(join(home, ".config", "git", "ignore"));
  const parts: string[] = [];
  for (const f of files) {
    try {
      const st = await Deno.stat(f);
      parts.push(`${st.ino}:${st.size}:${st.mtime?.getTime()}:${st.ctime?.getTime()}`);
    } catch {
      parts.push("-");
    }
  }
  return parts.join(" ");
}

/** Watches of one workspace's folders and the paths changed under them; see the module doc. */
export class ChangeWatcher {
  #fsw: Deno.FsWatcher;
  #dirty = new Set<string>();
  #created = new Set<string>();
  #scanOnce = new Set<string>();
  #doubt: string | null;
  #flushes = new Map<string, () => void>();
  #n = 0;
  /** Names this watcher's sentinel files apart from another process's (one store, two sessions). */
  readonly #id = crypto.randomUUID().slice(0, 8);
  #closed = false;
  readonly #plan: WatchPlan;
  readonly #sentinelDir: string;
  /**
   * The watches no longer fit the tree — what is ignored changed, or the watcher failed or ended:
   * after the rescan the store lays a new watcher.
   */
  stale = false;
  /** Folders with no watch (created after the watches were laid): scanned at every checkpoint. */
  readonly unwatched = new Set<string>();
  /**
   * Folders past the watch bounds (./watch.ts module doc; {@link WatchPlan.beyond}): no watch
   * inside, scanned whole at every checkpoint; a relay does not change that.
   */
  readonly beyond: Set<string>;
  /** Folders watched (workspace-relative). */
  readonly watched: Set<string>;
  /** Nested repositories: restaged (their gitlink) at every checkpoint. */
  readonly nested: string[];

  /**
   * Lays the watches of `plan` and of `sentinelDir` (created; a folder of the store) in one
   * watcher. `doubt`: the reason the first {@link take} asks for a full rescan (null when this
   * watcher takes over from another with {@link absorb}).
   * @throws when a watch cannot be laid (the inotify limits, a folder gone meanwhile).
   */
  constructor(
    readonly workTree: string,
    sentinelDir: string,
    plan: WatchPlan,
    doubt: string | null = "no full scan since the watcher started",
    /** Workspace-relative folders whose events are not changes (the data dir inside the tree). */
    readonly skip: string[] = [],
  ) {
    Deno.mkdirSync(sentinelDir, { recursive: true });
    this.#sentinelDir = sentinelDir;
    this.#doubt = doubt;
    this.#plan = plan;
    this.watched = new Set(plan.dirs);
    this.beyond = new Set(plan.beyond);
    this.nested = plan.nested;
    const paths = plan.dirs.map((d) => d ? join(workTree, d) : workTree);
    // The user's `.git` and `.git/info`: only to see `info/exclude` change.
    for (const g of [".git", ".git/info"]) {
      try {
        if (Deno.lstatSync(join(workTree, g)).isDirectory) paths.push(join(workTree, g));
      } catch { /* none */ }
    }
    paths.push(sentinelDir);
    this.#fsw = Deno.watchFs(paths, { recursive: false });
    void this.#run();
  }

  async #run(): Promise<void> {
    try {
      for await (const ev of this.#fsw) {
        if (ev.flag === "rescan") {
          // Its paths are every watched folder, not changes: the whole tree is rescanned.
          this.#doubt ??= "the watcher dropped events (queue overflow)";
          continue;
        }
        for (const p of ev.paths) this.#record(ev.kind, p);
      }
      if (!this.#closed) this.distrust("the watcher ended", true);
    } catch (e) {
      this.distrust(`the watcher failed: ${(e as Error)?.message ?? e}`, true);
    }
    for (const done of this.#flushes.values()) done();
  }

  #record(kind: Deno.FsEvent["kind"], p: string): void {
    if (p.startsWith(this.#sentinelDir + sep)) {
      this.#flushes.get(p)?.();
      return;
    }
    const rel = relative(this.workTree, p).split(sep).join("/");
    if (!rel || rel.startsWith("../") || rel === "..") {
      if (rel) this.#doubt ??= `a change outside the workspace: ${p}`;
      return;
    }
    const parts = rel.split("/");
    const git = parts.indexOf(".git");
    if (git === 0) {
      // The user's repository: only what it ignores matters.
      if (parts[1] === "info" || parts.length === 1) {
        if (parts.length <= 2 || parts[2] === "exclude") {
          this.distrust("the workspace's .git/info/exclude may have changed", true);
        }
      }
      return;
    }
    if (git > 0) {
      // A nested repository's own data: its gitlink may have moved.
      this.#dirty.add(parts.slice(0, git).join("/"));
      return;
    }
    if (this.skip.some((s) => rel === s || rel.startsWith(s + "/"))) return;
    if (parts[parts.length - 1] === ".gitignore") {
      this.distrust(`${rel} changed (what is ignored may have changed)`, true);
    }
    this.#dirty.add(rel);
    if (kind !== "modify" && kind !== "access") this.#created.add(rel);
  }

  /** Why the next {@link take} would ask for a full rescan, or null. */
  get doubt(): string | null {
    return this.#doubt;
  }

  /** Marks the state unknown: the next {@link take} asks for a full rescan; `stale`: see {@link stale}. */
  distrust(why: string, stale = false): void {
    this.#doubt ??= why;
    if (stale) this.stale = true;
  }

  /**
   * Resolves once every change made before the call has been recorded (the sentinel's event has
   * come through). Past {@link FLUSH_MS} the watcher is doubted instead.
   */
  async flush(): Promise<void> {
    if (this.#closed || this.#doubt) return;
    const file = join(this.#sentinelDir, `flush-${this.#id}-${++this.#n}`);
    const seen = new Promise<void>((resolve) => this.#flushes.set(file, resolve));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.#doubt ??= "the watcher did not answer a flush in time";
        resolve();
      }, FLUSH_MS);
    });
    try {
      await Deno.writeFile(file, new Uint8Array());
      await Promise.race([seen, late]);
    } catch (e) {
      this.#doubt ??= `the watcher's flush failed: ${(e as Error)?.message ?? e}`;
    } finally {
      clearTimeout(timer);
      this.#flushes.delete(file);
      Deno.remove(file).catch(() => {});
    }
  }

  /**
   * What changed since the last call (call {@link flush} first), and starts a new interval. A
   * created path that is a folder now becomes one of {@link unwatched}.
   */
  async take(): Promise<Changes> {
    const dirty = this.#dirty, created = this.#created, once = this.#scanOnce;
    const doubt = this.#doubt;
    this.#dirty = new Set();
    this.#created = new Set();
    this.#scanOnce = new Set();
    this.#doubt = null;
    for (const p of created) {
      try {
        if ((await Deno.lstat(join(this.workTree, p))).isDirectory) this.unwatched.add(p);
      } catch { /* gone: staged as deleted */ }
    }
    const paths = new Set([
      ...dirty,
      ...once,
      ...this.unwatched,
      ...this.beyond,
      ...this.nested,
    ]);
    // An unwatched folder (or one beyond the bounds) that is gone is staged (as deleted) this once.
    for (const set of [this.unwatched, this.beyond]) {
      for (const p of set) {
        if (!(await Deno.lstat(join(this.workTree, p)).then(() => true, () => false))) {
          set.delete(p);
        }
      }
    }
    if (doubt) return { doubt, paths: [] };
    return { doubt: null, paths: [...paths] };
  }

  /**
   * Takes over from `old` (flushed by the caller; this watcher was laid after `old` started): its
   * unstaged changes and doubt carry over; its unwatched folders (and those beyond its bounds)
   * that this one accounts for are scanned once more (their changes before this watcher started
   * are unknown), the others stay unwatched (beyond). `old` is closed.
   */
  absorb(old: ChangeWatcher): void {
    for (const p of old.#dirty) this.#dirty.add(p);
    for (const p of old.#created) this.#created.add(p);
    for (const p of old.#scanOnce) this.#scanOnce.add(p);
    for (const p of old.unwatched) {
      if (this.covers(p)) this.#scanOnce.add(p);
      else this.unwatched.add(p);
    }
    for (const p of old.beyond) {
      if (this.covers(p)) this.#scanOnce.add(p);
      else this.beyond.add(p);
    }
    this.#doubt ??= old.#doubt;
    this.stale ||= old.stale;
    old.close();
  }

  /**
   * Whether this watcher accounts for folder `p` (workspace-relative): watched, left out on
   * purpose (it or a folder above it ignored, the data dir, a nested repository), or scanned whole
   * (it or a folder above it one of {@link beyond}).
   */
  covers(p: string): boolean {
    if (this.watched.has(p)) return true;
    const parts = p.split("/");
    for (let i = parts.length; i > 0; i--) {
      const up = parts.slice(0, i).join("/");
      if (this.#plan.skip.has(up) || this.#plan.nested.includes(up) || this.beyond.has(up)) {
        return true;
      }
    }
    return false;
  }

  /** Removes the watches. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#fsw.close();
    } catch { /* closed */ }
  }
}
