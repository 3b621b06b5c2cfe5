/**
 * A `.gitignore`-aware directory walker shared by `fs_ls`, `fs_glob` and
 * `fs_grep`.
 *
 * Rules (git's, via npm `ignore`): every `.gitignore` from the repository top
 * (the nearest ancestor holding `.git`; without one, the session cwd when the
 * walk starts inside it, else the walk root) down to each visited folder
 * applies to the paths below it, a deeper file's rules win (so `!negations`
 * re-include), and `.git/info/exclude` applies at the top. An ignored folder
 * is not entered (as in git, nothing inside it can be re-included), unless it
 * is the folder asked for (then only the rules inside it apply). `.git/`
 * is always skipped. Hidden files are NOT skipped (unlike ripgrep's default):
 * `.github/` or `.env.example` matter to a coding agent. Symbolic links are
 * not followed.
 *
 * The walk is synchronous per folder (fast: ~50k entries in tens of ms) and
 * yields to the event loop every few folders so workers and aborts progress.
 * @module
 */
import { dirname, join, relative, sep as SEPARATOR } from "../../core/util/path.ts";
import { setImmediate } from "node:timers";

/** The part of npm `ignore`'s API the walker uses. */
interface IgnoreLike {
  add(patterns: string): IgnoreLike;
  test(path: string): { ignored: boolean; unignored: boolean };
}

/** Rules of one `.gitignore`, applying to paths under `base` (relative to top, `""` or ending in `/`). */
interface Matcher {
  base: string;
  ig: IgnoreLike;
}

let ignoreFactory: (() => IgnoreLike) | undefined;
/** Loads npm `ignore` lazily (kept out of the start-up path). */
async function loadIgnore(): Promise<() => IgnoreLike> {
  if (!ignoreFactory) {
    const mod = await import("ignore");
    // deno-lint-ignore no-explicit-any
    const f = ((mod as any).default ?? mod) as (opts?: unknown) => IgnoreLike;
    ignoreFactory = () => f({ allowRelativePaths: true, ignorecase: false });
  }
  return ignoreFactory;
}

function readTextOrNull(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

function toPosix(p: string): string {
  return SEPARATOR === "/" ? p : p.replaceAll(SEPARATOR, "/");
}

/** The folder whose `.gitignore` rules start applying to a walk of `root`. */
export function findTop(root: string, cwd: string): string {
  let dir = root;
  while (true) {
    try {
      Deno.statSync(join(dir, ".git"));
      return dir;
    } catch { /* keep going up */ }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const rel = relative(cwd, root);
  return rel.startsWith("..") ? root : cwd;
}

/** Ignore rules for one walk: a stack of matchers, deepest last. */
export class IgnoreRules {
  private constructor(
    private readonly make: () => IgnoreLike,
    /** Absolute path of the top folder. */
    readonly top: string,
    private readonly matchers: Matcher[],
  ) {}

  /** Rules for walking `root`: `.git/info/exclude` and every `.gitignore` from the top down to `root`'s parent. */
  static async forRoot(root: string, cwd: string): Promise<IgnoreRules> {
    const make = await loadIgnore();
    const top = findTop(root, cwd);
    const rules = new IgnoreRules(make, top, []);
    const exclude = readTextOrNull(join(top, ".git", "info", "exclude"));
    if (exclude) rules.matchers.push({ base: "", ig: make().add(exclude) });
    const rel = toPosix(relative(top, root));
    const parts = rel === "" ? [] : rel.split("/");
    // .gitignore files of top … root's parent; root's own is read by the walk.
    for (let i = 0; i < parts.length; i++) {
      const base = parts.slice(0, i).join("/");
      rules.load(base === "" ? "" : base + "/", join(top, ...parts.slice(0, i)));
    }
    // A folder named explicitly but ignored itself (`fs_ls build`) is shown as
    // asked: only the .gitignore files inside it apply then.
    if (rel !== "" && rules.ignored(rel, true)) rules.truncate(0);
    return rules;
  }

  /** Reads `<dirAbs>/.gitignore` (if any) for paths under `base`. Returns whether one was added. */
  load(base: string, dirAbs: string): boolean {
    const text = readTextOrNull(join(dirAbs, ".gitignore"));
    if (text === null) return false;
    this.matchers.push({ base, ig: this.make().add(text) });
    return true;
  }

  /** Number of matchers (to pop back to after leaving a folder). */
  get depth(): number {
    return this.matchers.length;
  }

  truncate(depth: number): void {
    this.matchers.length = depth;
  }

  /** Whether `rel` (POSIX path relative to top) is ignored; `isDir` for folder-only rules (`build/`). */
  ignored(rel: string, isDir: boolean): boolean {
    for (let i = this.matchers.length - 1; i >= 0; i--) {
      const m = this.matchers[i];
      if (m.base !== "" && !rel.startsWith(m.base)) continue;
      const sub = m.base === "" ? rel : rel.slice(m.base.length);
      const r = m.ig.test(isDir ? sub + "/" : sub);
      if (r.ignored) return true;
      if (r.unignored) return false;
    }
    return false;
  }

  /** Path of `abs` relative to top, POSIX. */
  rel(abs: string): string {
    return toPosix(relative(this.top, abs));
  }
}

/** One entry of a folder listing. */
export interface ListedEntry {
  name: string;
  isDir: boolean;
  isSymlink: boolean;
}

/**
 * Lists one folder (sorted by name), without `.git` and ignored entries.
 * Returns the kept entries and how many were hidden by ignore rules.
 */
export async function listDir(
  dir: string,
  cwd: string,
): Promise<{ entries: ListedEntry[]; hidden: number }> {
  const rules = await IgnoreRules.forRoot(dir, cwd);
  const base = rules.rel(dir);
  const prefix = base === "" ? "" : base + "/";
  rules.load(prefix, dir);
  const entries: ListedEntry[] = [];
  let hidden = 0;
  for (const e of Deno.readDirSync(dir)) {
    if (e.name === ".git") {
      hidden++;
      continue;
    }
    let isDir = e.isDirectory;
    if (e.isSymlink) {
      try {
        isDir = Deno.statSync(join(dir, e.name)).isDirectory;
      } catch { /* dangling link */ }
    }
    if (rules.ignored(prefix + e.name, isDir)) {
      hidden++;
      continue;
    }
    entries.push({ name: e.name, isDir, isSymlink: e.isSymlink });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, hidden };
}

/** Options of {@link walkFiles}. */
export interface WalkOptions {
  /** Session cwd (for locating ignore rules when there is no git repository). */
  cwd: string;
  signal?: AbortSignal;
  /** Files per yielded batch (default 256). */
  batchSize?: number;
  /** Called with each folder's path relative to `root` (POSIX, `""` for root); false skips it. */
  enterDir?: (relToRoot: string) => boolean;
}

/**
 * Walks the files under `root` (absolute folder) in a stable order (entries by
 * name, a folder's files before its subfolders), skipping ignored paths, and
 * yields absolute file paths in batches. Unreadable folders are skipped.
 */
export async function* walkFiles(root: string, opts: WalkOptions): AsyncGenerator<string[]> {
  const rules = await IgnoreRules.forRoot(root, opts.cwd);
  const batchSize = opts.batchSize ?? 256;
  const rootRel = rules.rel(root);
  const rootPrefix = rootRel === "" ? "" : rootRel + "/";
  // Stack of folders still to visit: absolute path, path relative to top, matcher depth to restore.
  const stack: { abs: string; rel: string; depth: number }[] = [{
    abs: root,
    rel: rootRel,
    depth: rules.depth,
  }];
  let batch: string[] = [];
  let dirsSinceYield = 0;
  while (stack.length > 0) {
    if (opts.signal?.aborted) return;
    const dir = stack.pop()!;
    rules.truncate(dir.depth);
    const prefix = dir.rel === "" ? "" : dir.rel + "/";
    let names: { name: string; isDir: boolean }[] = [];
    try {
      for (const e of Deno.readDirSync(dir.abs)) {
        if (e.isSymlink || e.name === ".git") continue;
        if (e.isFile || e.isDirectory) names.push({ name: e.name, isDir: e.isDirectory });
      }
    } catch {
      continue;
    }
    if (names.some((n) => n.name === ".gitignore" && !n.isDir)) rules.load(prefix, dir.abs);
    const depth = rules.depth;
    names = names.filter((n) => !rules.ignored(prefix + n.name, n.isDir));
    names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const sub: { abs: string; rel: string; depth: number }[] = [];
    for (const n of names) {
      const abs = dir.abs === SEPARATOR ? SEPARATOR + n.name : dir.abs + SEPARATOR + n.name;
      if (n.isDir) {
        const rel = prefix + n.name;
        if (opts.enterDir && !opts.enterDir(rel.slice(rootPrefix.length))) continue;
        sub.push({ abs, rel, depth });
      } else {
        batch.push(abs);
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
      }
    }
    for (let i = sub.length - 1; i >= 0; i--) stack.push(sub[i]);
    if (++dirsSinceYield >= 32) {
      dirsSinceYield = 0;
      // setImmediate, not setTimeout: nested timers are clamped to several ms.
      await new Promise((r) => setImmediate(r));
    }
  }
  if (batch.length > 0) yield batch;
}
