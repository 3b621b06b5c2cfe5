/**
 * The checkpoint store (issue 18, docs/modes.md "Checkpoints and rewind"): a shadow git
 * repository per workspace under `<dataDir>/checkpoints/<sha-256 of the workspace path, 16 hex>/`
 * (a bare repository; the file `workspace` beside its objects names the path), driven by the real
 * `git` program with `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE` pointing at it — the
 * workspace's own `.git` (index, refs, config, hooks) is never read or written, and no user or
 * system git config applies (`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM`).
 *
 * A checkpoint ({@link CheckpointStore.create}) is one commit of the whole workspace tree: the
 * changed, deleted and new files (`.gitignore` files, `.git/info/exclude` of the workspace
 * respected) go into the persistent shadow index (`git add -A`; its stat cache is why only changed
 * files are read and stored), then `git write-tree`, and the commit object is written here with
 * the previous checkpoint as parent; the ref `refs/heads/checkpoints` keeps them all. Its id is
 * the commit's full hex name. Once {@link CheckpointStore.watch} runs, the change detector
 * (./watch.ts: inotify watches on the workspace's folders) names the paths that changed since the
 * last checkpoint and only those are staged (`git add -A -- <paths>`); with no change no git runs
 * at all (the tree staged last is reused); on any doubt the whole tree is rescanned as before.
 * Contents are stored as bytes: `$GIT_DIR/info/attributes` unsets `text`, `filter`, `ident`, `eol`
 * and `working-tree-encoding` for every path, so no line-ending conversion or filter (LFS) runs
 * either way. Executable bits and symlinks are kept (git's modes 100755, 120000); other mode bits, empty
 * directories, ignored files and the contents of nested git repositories are not part of a
 * checkpoint.
 *
 * A checkpoint that would store more than `maxBytes` of new content, or track more than `maxFiles`
 * files, is skipped ({@link CheckpointSkipped}) — a huge tree the user did not `.gitignore`.
 *
 * {@link CheckpointStore.restore} makes the workspace the checkpoint's tree byte for byte after
 * checkpointing the current state first (so a restore can itself be rewound): `git read-tree -m
 * -u <current> <target>` writes changed and deleted files back and removes files created since.
 * Calls on one store are serialised in this process; another process holding the shadow index
 * lock is waited for (bounded).
 * @module
 */
import { isAbsolute, join, relative } from "../../util/path.ts";
import {
  type ChangeWatcher,
  ignoreStamp,
  layWatcher,
  MAX_BEYOND,
  MAX_WATCHED_DIRS,
} from "./watch.ts";
import { CheckpointError, parseRawDiff, type RestoreChange, writeCommit } from "./objects.ts";
import {
  checkLimits,
  type CheckpointLimits,
  CheckpointSkipped,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_FILES,
  indexEntries,
} from "./limits.ts";

export { CheckpointError, CheckpointSkipped, DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES };
export type { CheckpointLimits, RestoreChange };

const REF = "refs/heads/checkpoints";
/**
 * A checkpoint's tree: stage every change (the stat cache skips unchanged files), write the tree.
 * The commit object is written in-process (./objects.ts), one git process less per turn.
 */
const STORE_SCRIPT = "git add -A && git write-tree";
/**
 * The tree after staging the watcher's changed paths (the script's arguments): `git ls-files`
 * names the files among them that `git add -A` would stage (tracked, deleted, untracked and not
 * ignored — naming an ignored or vanished path to `git add` itself is an error), `git add -A` of
 * exactly those (one a line, C-quoted where git quotes, which `--pathspec-from-file` reads back;
 * a list left empty is `none`: an empty pathspec list would mean the whole tree), then the tree.
 * One shell and no program but git: each process start counts. No preloading of the index (threads that
 * lstat every entry the pathspec matches: a few, not worth the threads).
 */
const STAGE_SCRIPT = `set -e
list=$(git ls-files -c -o --exclude-standard -- "$@")
if [ -n "$list" ]; then
  printf '%s\\n' "$list" | git -c core.preloadIndex=false add -A --pathspec-from-file=-
else
  echo none
fi
git write-tree`;
/** More changed paths than this in one turn: the whole tree is rescanned instead. */
const MAX_CHANGED_PATHS = 1_000;
const ATTRIBUTES = "* -text -filter -ident !eol !working-tree-encoding\n";
/** Per git directory: the tail of its queue of store calls (this process). */
const queues = new Map<string, Promise<unknown>>();

async function hex(s: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The shadow repository of one workspace. Open it with {@link CheckpointStore.open}. */
export class CheckpointStore {
  private constructor(
    /** The shadow git directory. */
    readonly gitDir: string,
    /** The workspace (absolute). */
    readonly workTree: string,
    readonly limits: CheckpointLimits,
    /** The data dir relative to the workspace when it lies inside it, else null. */
    readonly dataInside: string | null = null,
  ) {}

  /** Where the store of `workspace` lives under `dataDir`. */
  static async dirFor(dataDir: string, workspace: string): Promise<string> {
    return join(dataDir, "checkpoints", (await hex(workspace)).slice(0, 16));
  }

  /**
   * Opens (creating on first use) the store of `workspace`.
   * @throws CheckpointSkipped when `git` cannot be run.
   */
  static async open(
    dataDir: string,
    workspace: string,
    limits: Partial<CheckpointLimits> = {},
  ): Promise<CheckpointStore> {
    const dir = await CheckpointStore.dirFor(dataDir, workspace);
    const rel = relative(workspace, dataDir);
    const s = new CheckpointStore(dir, workspace, {
      maxFiles: limits.maxFiles ?? DEFAULT_MAX_FILES,
      maxBytes: limits.maxBytes ?? DEFAULT_MAX_BYTES,
    }, rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : null);
    await s.#serial(() => s.#init(dataDir));
    return s;
  }

  async #init(dataDir: string): Promise<void> {
    try {
      await Deno.stat(join(this.gitDir, "HEAD"));
      return;
    } catch { /* first use */ }
    await Deno.mkdir(this.gitDir, { recursive: true });
    try {
      await this.#git(["init", "-q", "--bare"]);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) {
        throw new CheckpointSkipped("git is not installed (checkpoints need git on PATH)");
      }
      throw e;
    }
    const config: [string, string][] = [
      ["core.autocrlf", "false"],
      ["core.safecrlf", "false"],
      ["core.filemode", "true"],
      ["core.symlinks", "true"],
      ["core.fsmonitor", "false"],
      ["core.hooksPath", "/dev/null"],
      ["core.quotepath", "false"],
      ["core.untrackedCache", "false"],
      ["gc.auto", "0"],
      ["index.version", "4"],
      // Fast zlib for the loose objects of a checkpoint (the first one stores every file).
      ["core.looseCompression", "1"],
    ];
    for (const [k, v] of config) await this.#git(["config", k, v]);
    await Deno.mkdir(join(this.gitDir, "info"), { recursive: true });
    await Deno.writeTextFile(join(this.gitDir, "info", "attributes"), ATTRIBUTES);
    // Coyote's own data (this store, transcripts) when the data dir is inside the workspace.
    const rel = relative(this.workTree, dataDir);
    if (rel && !rel.startsWith("..") && !isAbsolute(rel)) {
      await Deno.writeTextFile(join(this.gitDir, "info", "exclude"), `/${rel}/\n`);
    }
    await Deno.writeTextFile(join(this.gitDir, "workspace"), this.workTree + "\n");
  }

  /** The environment of every git run: this store's repository, index and work tree, no user config. */
  async #env(): Promise<Record<string, string>> {
    const env: Record<string, string> = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      GIT_DIR: this.gitDir,
      GIT_WORK_TREE: this.workTree,
      GIT_INDEX_FILE: join(this.gitDir, "index"),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      GIT_AUTHOR_NAME: "coyote",
      GIT_AUTHOR_EMAIL: "coyote@localhost",
      GIT_COMMITTER_NAME: "coyote",
      GIT_COMMITTER_EMAIL: "coyote@localhost",
      LC_ALL: "C",
      ...(await this.#excludes()),
    };
    const home = Deno.env.get("HOME");
    if (home) env.HOME = home;
    return env;
  }

  /** Runs `f` after every earlier call on this store (this process). */
  #serial<T>(f: () => Promise<T>): Promise<T> {
    const prev = queues.get(this.gitDir) ?? Promise.resolve();
    const run = prev.then(f, f);
    queues.set(this.gitDir, run.catch(() => {}));
    return run;
  }

  /** Runs git on this store; resolves stdout bytes. Waits (bounded) for another process's index lock. */
  async #git(
    argv: string[],
    stdin?: Uint8Array,
    extra: Record<string, string> = {},
  ): Promise<Uint8Array> {
    const [program, ...args] = argv[0] === "git" || argv[0] === "sh" ? argv : ["git", ...argv];
    const env = { ...(await this.#env()), ...extra };
    // `git init --bare` refuses a work tree.
    if (args[0] === "init") delete env.GIT_WORK_TREE;
    for (let attempt = 0;; attempt++) {
      const child = new Deno.Command(program, {
        args,
        cwd: this.workTree,
        env,
        clearEnv: true,
        stdin: stdin ? "piped" : "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      if (stdin) {
        const w = child.stdin.getWriter();
        await w.write(stdin);
        await w.close();
      }
      const o = await child.output();
      if (o.success) return o.stdout;
      const msg = new TextDecoder().decode(o.stderr).trim();
      if (/index\.lock/.test(msg) && attempt < 50) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      throw new CheckpointError(
        `git ${args[0] === "-c" ? "add" : args[0]} failed: ${msg || `exit ${o.code}`}`,
      );
    }
  }

  async #gitText(args: string[], stdin?: Uint8Array): Promise<string> {
    return new TextDecoder().decode(await this.#git(args, stdin)).trim();
  }

  /**
   * Git config of every run, in the environment: a split index (`core.splitIndex`: a checkpoint
   * that stages a few files rewrites a small index file, not the entries of the whole tree) and
   * the workspace's own exclude file (`.git/info/exclude`) when it has one.
   */
  async #excludes(): Promise<Record<string, string>> {
    if (this.#excludeEnv) return this.#excludeEnv;
    const p = join(this.workTree, ".git", "info", "exclude");
    const has = await Deno.stat(p).then(() => true, () => false);
    const config: [string, string][] = [["core.splitIndex", "true"]];
    if (has) config.push(["core.excludesFile", p]);
    const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    return this.#excludeEnv = env;
  }
  #excludeEnv?: Record<string, string>;
  /** The size limits were checked ({@link #precheck}). */
  #checked = false;

  /**
   * Records the workspace as a new checkpoint; resolves its id (commit hex).
   * @param message the commit message (session, turn).
   * @throws CheckpointSkipped past a limit (nothing was stored); CheckpointError when git fails.
   */
  create(message: string): Promise<string> {
    return this.#serial(() => this.#create(message));
  }

  async #create(message: string): Promise<string> {
    if (!this.#checked) {
      await this.#precheck();
      this.#checked = true;
    }
    this.#rescanWhy = this.#watcher ? null : "no watcher";
    let tree = await this.#stageChanges();
    if (tree === null) {
      tree = await this.#stageAll();
      this.lastStage = { how: "all", paths: 0, why: this.#rescanWhy ?? "git failed" };
    }
    const w = this.#watcher;
    if (w?.stale) this.#restartWatch();
    else if (w?.unwatched.size && !this.#relaying) this.#relayRun = this.#relay();
    const parent = await this.head();
    // Nothing changed since the last checkpoint of this store: the same checkpoint.
    if (parent && this.#last?.commit === parent && this.#last.tree === tree) return parent;
    const commit = await writeCommit(this.gitDir, tree, parent, message);
    await Deno.mkdir(join(this.gitDir, "refs", "heads"), { recursive: true });
    await Deno.writeTextFile(join(this.gitDir, REF), commit + "\n");
    this.#last = { commit, tree };
    return commit;
  }

  /**
   * Stages the paths the watcher saw change since the last checkpoint (`git ls-files -c -o
   * --exclude-standard -- <paths>` names the files among them that a full `git add -A` would
   * stage: tracked ones, deleted ones, untracked ones not ignored; then `git add -A` of exactly
   * those) and writes the tree; no change at all is the tree staged last, with no git run.
   * Resolves null when the whole tree must be rescanned ({@link #stageAll}): no watcher or no
   * baseline yet, the watcher's doubt (./watch.ts), an ignore file outside the watched folders
   * changed, too many paths, a git failure. Past a limit of `checkpoints:` the size check of the
   * whole tree runs again (it throws {@link CheckpointSkipped}, or the tree is rescanned).
   */
  async #stageChanges(): Promise<string | null> {
    const w = this.#watcher;
    if (!w || this.#indexTree === undefined) {
      this.#rescanWhy ??= "no baseline";
      return null;
    }
    await w.flush();
    if (await this.#ignoreSourcesChanged()) w.distrust("an exclude file changed", true);
    const { doubt, paths } = await w.take();
    this.#rescanWhy = doubt ?? (paths.length > MAX_CHANGED_PATHS ? "too many changed paths" : null);
    if (this.#rescanWhy) return null;
    this.lastStage = { how: "none", paths: 0 };
    if (!paths.length) return this.#indexTree;
    // Near or past a limit of `checkpoints:` (the files named, their sizes now): the exact check
    // of the whole tree decides.
    let bytes = 0;
    for (const p of paths) {
      try {
        const st = await Deno.lstat(join(this.workTree, p));
        if (st.isFile) bytes += st.size;
      } catch { /* deleted */ }
    }
    if (
      bytes > this.limits.maxBytes ||
      (await indexEntries(this.gitDir)) + paths.length > this.limits.maxFiles
    ) {
      this.#checked = false;
      try {
        await this.#precheck();
      } catch (e) {
        w.distrust("the last checkpoint was skipped");
        throw e;
      }
      this.#checked = true;
      this.#rescanWhy = "near a limit of checkpoints:";
      return null;
    }
    let out: string[];
    try {
      out = new TextDecoder().decode(
        await this.#git(["sh", "-c", STAGE_SCRIPT, "sh", ...paths], undefined, {
          GIT_LITERAL_PATHSPECS: "1",
        }),
      ).trim().split("\n");
    } catch (e) {
      this.#rescanWhy = `staging the changed paths failed: ${(e as Error).message}`;
      return null;
    }
    const tree = out[out.length - 1];
    if (!/^[0-9a-f]{40}$/.test(tree)) return null;
    this.lastStage = { how: out[0] === "none" ? "none" : "changed", paths: paths.length };
    return this.#indexTree = tree;
  }

  /** Stages the whole tree (`git add -A`; git's stat cache reads only changed files) and writes the tree. */
  async #stageAll(): Promise<string> {
    const w = this.#watcher;
    // The scan below sees every change made until now: the watcher's interval restarts here.
    if (w) {
      await w.flush();
      await w.take();
    }
    await this.#ignoreSourcesChanged();
    this.#indexTree = undefined;
    let tree: string;
    try {
      // One shell for both git runs (each process start counts at this size).
      tree = new TextDecoder().decode(await this.#git(["sh", "-c", STORE_SCRIPT])).trim();
      if (!/^[0-9a-f]{40}$/.test(tree)) throw new CheckpointError(`git write-tree: ${tree}`);
    } catch (e) {
      w?.distrust("the last full scan failed");
      throw e;
    }
    return this.#indexTree = tree;
  }

  /**
   * Whether an exclude file that no watch covers changed since the last call: the workspace's
   * `.git/info/exclude` (the watcher sees it too) and the user's global one
   * (`~/.config/git/ignore`, which git reads without any config). A change also makes the next
   * git run look for the workspace's exclude file again.
   */
  async #ignoreSourcesChanged(): Promise<boolean> {
    const stamp = await ignoreStamp(this.workTree);
    if (stamp === this.#ignoreStamp) return false;
    const first = this.#ignoreStamp === undefined;
    this.#ignoreStamp = stamp;
    this.#excludeEnv = undefined;
    return !first;
  }
  #ignoreStamp?: string;
  /** The tree of the shadow index as this process last staged it; undefined: unknown. */
  #indexTree?: string;

  /** The change detector (./watch.ts) once {@link watch} laid it. */
  #watcher: ChangeWatcher | null = null;
  #watching?: Promise<void>;
  #relaying = false;
  #closed = false;

  /**
   * Starts the change detector (./watch.ts) in the background: the watches are laid, then one
   * full scan makes the baseline, after which a checkpoint stages only the paths that changed.
   * Resolves when that is done, or when watching is not possible (more than
   * {@link MAX_WATCHED_DIRS} folders or {@link MAX_BEYOND} past the bounds of ./watch.ts, the inotify limits; every checkpoint then rescans the
   * tree, as without a watcher); never rejects. Only after a checkpoint of this store succeeded
   * (the size limits were checked). {@link close} removes the watches.
   */
  watch(): Promise<void> {
    return this.#watching ??= this.#startWatch();
  }

  /** Why there is no watcher after {@link watch}, or null. */
  watchError: string | null = null;

  async #startWatch(): Promise<void> {
    try {
      const w = await this.#layWatcher("no full scan since the watcher started");
      if (!w) {
        this.watchError =
          `more than ${MAX_WATCHED_DIRS} folders to watch, or more than ${MAX_BEYOND} past the watch bounds`;
        return;
      }
      if (this.#closed) return w.close();
      this.#watcher = w;
      await this.#serial(async () => {
        if (this.#checked && !this.#closed) await this.#stageAll();
      });
    } catch (e) {
      this.watchError = (e as Error)?.message ?? String(e);
    }
  }

  /**
   * A watcher over the tree as it is now: the folders that are not ignored
   * (`git ls-files -o -i --directory` names the ignored ones), walked once before the watches are
   * laid and once after — a folder the second walk finds that has no watch (created in between)
   * is scanned whole at every checkpoint. Resolves null past {@link MAX_WATCHED_DIRS} folders.
   */
  async #layWatcher(doubt: string | null): Promise<ChangeWatcher | null> {
    const out = await this.#git([
      "ls-files",
      "-z",
      "-o",
      "-i",
      "--exclude-standard",
      "--directory",
    ]);
    const ignored = new TextDecoder().decode(out).split("\0").filter((p) => p.endsWith("/"));
    const skip = new Set(ignored.map((p) => p.slice(0, -1)));
    return await layWatcher(
      this.workTree,
      join(this.gitDir, "watch"),
      skip,
      this.dataInside,
      doubt,
    );
  }

  /** Replaces the watcher by one laid over the tree as it is now (its unwatched folders get watches). */
  /** The last {@link #relay} started (awaited by {@link close}). */
  #relayRun: Promise<void> | null = null;

  async #relay(): Promise<void> {
    this.#relaying = true;
    try {
      const next = await this.#layWatcher(null);
      if (!next) return;
      await this.#serial(async () => {
        const old = this.#watcher;
        if (!old || this.#closed) return next.close();
        await old.flush();
        next.absorb(old);
        this.#watcher = next;
      });
    } catch {
      /* the old watcher goes on, its unwatched folders scanned whole */
    } finally {
      this.#relaying = false;
    }
  }

  /**
   * Drops a stale watcher (./watch.ts `stale`) and lays a new one over the tree as it is now, in
   * the background; checkpoints rescan the tree until its baseline scan is done.
   */
  #restartWatch(): void {
    this.#watcher?.close();
    this.#watcher = null;
    if (!this.#closed) this.#watching = this.#startWatch();
  }

  /**
   * Removes the watches of {@link watch} (the store stays usable: checkpoints rescan the tree).
   * Resolves once the work already started in the background — the baseline scan, a watcher
   * being laid again — has ended, so nothing writes into the store after a session closed.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#watcher?.close();
    this.#watcher = null;
    await this.#watching?.catch(() => {});
    await this.#relayRun?.catch(() => {});
    await this.#serial(() => Promise.resolve()).catch(() => {});
  }

  /**
   * How the last {@link create} staged the tree: `changed` — only the `paths` files the watcher
   * named; `none` — nothing it named was to be staged (no git run when it named nothing); `all` —
   * the whole tree was rescanned, `why`.
   */
  lastStage: { how: "changed" | "none" | "all"; paths: number; why?: string } | null = null;
  /** Why the tree is being rescanned (for {@link lastStage}). */
  #rescanWhy: string | null = null;
  /** The last checkpoint this store made and its tree. */
  #last?: { commit: string; tree: string };

  /** The size check of the whole tree (./limits.ts), with this store's git environment. */
  async #precheck(): Promise<void> {
    await checkLimits({
      gitDir: this.gitDir,
      workTree: this.workTree,
      env: await this.#env(),
      limits: this.limits,
    });
  }

  /** The latest checkpoint's id, or null before the first. */
  async head(): Promise<string | null> {
    try {
      return (await Deno.readTextFile(join(this.gitDir, REF))).trim() || null;
    } catch {
      return null;
    }
  }

  /**
   * The full id of a checkpoint given as an id or a unique prefix (≥ 7 hex).
   * @throws CheckpointError when it names no checkpoint of this workspace.
   */
  async resolve(ref: string): Promise<string> {
    if (!/^[0-9a-f]{7,40}$/i.test(ref)) {
      throw new CheckpointError(`"${ref}" is not a checkpoint id (7 to 40 hex digits)`);
    }
    try {
      return await this.#gitText(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    } catch {
      throw new CheckpointError(`no checkpoint ${ref} for ${this.workTree}`);
    }
  }

  /** What restoring `target` would change, from checkpoint `current` (see {@link RestoreChange}). */
  diff(current: string, target: string): Promise<RestoreChange[]> {
    return this.#serial(() => this.#diff(current, target));
  }

  async #diff(current: string, target: string): Promise<RestoreChange[]> {
    const raw = new TextDecoder().decode(
      await this.#git(["diff-tree", "-r", "-z", "-M", "--raw", "--no-commit-id", current, target]),
    );
    return parseRawDiff(raw);
  }

  /**
   * Checkpoints the workspace as it is (the undo of this restore), then makes it `target`'s tree.
   * Resolves the new checkpoint's id (restore it to undo) and what changed. `confirm` sees the
   * changes before any is made (a summary to show); `false` from it leaves the workspace as it is.
   * @throws CheckpointSkipped when the current state cannot be checkpointed (it would be lost);
   *   CheckpointError when git fails (the workspace is then as git left it; the undo id is in the message).
   */
  restore(
    target: string,
    message: string,
    confirm?: (changes: RestoreChange[]) => boolean | void | Promise<boolean | void>,
  ): Promise<{ undo: string; changes: RestoreChange[]; cancelled?: boolean }> {
    return this.#serial(async () => {
      const undo = await this.#create(message);
      const changes = await this.#diff(undo, target);
      if (!changes.length) return { undo, changes };
      if ((await confirm?.(changes)) === false) return { undo, changes, cancelled: true };
      try {
        this.#indexTree = undefined;
        await this.#git(["read-tree", "-m", "-u", `${undo}^{tree}`, `${target}^{tree}`]);
        // The index is the target's tree now (the watcher sees the files the restore wrote).
        this.#indexTree = await this.#gitText(["rev-parse", `${target}^{tree}`]);
      } catch (e) {
        throw new CheckpointError(
          `${(e as Error).message} (the state before the restore is checkpoint ${undo})`,
        );
      }
      return { undo, changes };
    });
  }
}
