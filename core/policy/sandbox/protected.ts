/**
 * Protected names inside the workspace at every depth (docs/permissions.md "The OS sandbox"):
 * `.git`, `.coyote`, `.mcp.json`, and the code other tools run later ({@link RUNS_LATER}, the
 * `core.hooksPath` folder), compared case-insensitively. Git runs hooks and
 * `core.fsmonitor` from the `.git` of the folder it runs in, and Coyote started in a sub-folder
 * loads that folder's `.coyote/` (plugins, permission rules) and `.mcp.json` (servers) — trusted
 * when a parent folder is — so a sandboxed command must not write one at ANY depth: existing ones
 * are mounted read-only ({@link findProtected} feeds `deriveProfile`), and the ones a command
 * creates are removed after it (core/policy/sandbox/mod.ts compares a scan before and after).
 *
 * The scan walks directories only (symlinks are not followed, protected folders are not
 * entered) and stops after {@link PROTECTED_SCAN_LIMIT} directories (the folders it did not
 * examine are reported to the caller, and the cleanup's result names them). `node_modules` folders are
 * not walked by it (they are big): their paths are reported to the caller, and
 * ./node_modules_scan.ts finds what a command created inside them.
 *
 * Fourth attacker pass: the `core.hooksPath` folder of every repository the scan meets (nested
 * repositories, submodules, their `modules/`: {@link repoHooks}) and every folder that is a git
 * dir by git's test ({@link isGitDirEntries}) are protected too, and the same scan fingerprints
 * dot-entries for the dot-entry rule of ./cleanup.ts ({@link ScanExtras}, {@link INERT_DOT_NAMES}).
 * @module
 */

import { gitTracks, isGitDirEntries, rememberRepos, repoHooks } from "./git_dirs.ts";
import {
  cacheOutputs,
  execFolder,
  HOST_RUN_LIMIT,
  hostRunFile,
  type HostRunKind,
  isBytecode,
} from "./host_run.ts";
import { addConfigKeys } from "./code_configs.ts";
import { rememberSources, startupSources } from "./startup_sources.ts";
import { specialFile } from "./store_kinds.ts";

export {
  gitIncludedFiles,
  hooksPathDir,
  isGitDirEntries,
  repoHooks,
  repoHooksFor,
} from "./git_dirs.ts";

/** Names Coyote and git load code or rules from (lower case). */
export const PROTECTED_NAMES: ReadonlySet<string> = new Set([".git", ".coyote", ".mcp.json"]);

/**
 * Code other tools run later without the user naming it (issue 16 §3), at any depth, compared
 * case-insensitively: git hooks managers (`.husky/`), direnv (`.envrc`), editors' auto-run files
 * (`.vscode/tasks.json` with `runOn: folderOpen`, `.vscode/settings.json`, `.vscode/launch.json`,
 * `.idea/runConfigurations`, `.devcontainer/`) and other agents' settings and hooks
 * (`.claude/settings*.json`, `.gemini/settings.json`, `.cursor/`, `.codex/`, …), hook runners'
 * configs, package managers' project configs that run code (`.npmrc`, `.yarnrc.yml`, …). A pattern is a name
 * or `folder/name`; `*` matches any run of characters within a name. The directory the
 * repository's `core.hooksPath` names is protected too ({@link hooksPathDir}).
 */
export const RUNS_LATER: readonly string[] = [
  ".husky",
  ".envrc",
  ".devcontainer",
  ".cursor",
  ".codex",
  ".vscode/tasks.json",
  ".vscode/settings.json",
  ".vscode/launch.json",
  ".idea/runConfigurations",
  ".claude/settings*.json",
  ".gemini/settings.json",
  // Second attacker pass: hook runners' configs (run by the installed git hook), package
  // managers' project configs that run code on every call (`.npmrc` node-options/script-shell,
  // `.yarnrc.yml` yarnPath, `.pnpmfile.cjs`, `bunfig.toml` preload), mise tasks and hooks, editor
  // files run on open, more agents' settings.
  ".pre-commit-config.y*ml",
  // Tenth attacker pass: lefthook's whole name family (`lefthook` or `lefthook-local`, with or
  // without a dot, also in `.config/`; YAML, JSON(C), TOML; lefthook.dev "Config file name") and
  // its script folders `.lefthook/`, `.lefthook-local/` (`source_dir`).
  "lefthook*.y*ml",
  "lefthook*.json*",
  "lefthook*.toml",
  ".lefthook*",
  ".overcommit.yml",
  ".lintstagedrc*",
  "lint-staged.config.*",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pnpmfile.cjs",
  // pnpm ≥ 10 reads every setting but auth and registries from here (`nodeOptions`,
  // `scriptShell`, `pnpmfile`): the same code-running settings that made `.npmrc` protected.
  "pnpm-workspace.yaml",
  "bunfig.toml",
  "mise.toml",
  ".mise.toml",
  "mise.local.toml",
  ".mise.local.toml",
  ".mise",
  "*.code-workspace",
  ".nvim.lua",
  ".nvimrc",
  ".exrc",
  ".zed",
  ".aider.conf.yml",
  "opencode.json",
  ".opencode",
  ".windsurf",
  ".roo",
  ".kiro",
  ".continue",
  // Third attacker pass (item 8): more editor, dev-container, version-manager and agent files
  // loaded or run on open; REPL and debugger start-up files read from the current folder.
  ".devcontainer.json",
  "opencode.jsonc",
  ".config/mise",
  ".config/mise.toml",
  "mise/config.toml",
  "mise.*.toml",
  ".mise.*.toml",
  ".qwen",
  ".amazonq",
  ".kilocode",
  ".vscode/mcp.json",
  ".crush.json",
  "crush.json",
  ".helix",
  ".run/*.run.xml",
  ".idea/workspace.xml",
  ".dir-locals.el",
  ".dir-locals-2.el",
  ".claude/hooks",
  ".gitpod.yml",
  ".pdbrc",
  ".irbrc",
  ".pryrc",
  ".Rprofile",
  // Fifth attacker pass: editors' plugins load these on open (ESLint, Prettier, Jest and Vitest
  // extensions run the config's code) — not dot-files, so the dot-entry rule missed them.
  "eslint.config.*",
  "prettier.config.*",
  ".prettierrc*",
  "jest.config.*",
  "vitest.config.*",
  // Fourth attacker pass (class 3): more version-control, toolchain, build-tool, editor and agent
  // files other tools load or run without the user naming them. Paths of more than two segments
  // match the end of a path (`.jj/repo/config.toml`).
  ".hg/hgrc",
  ".jj/repo/config.toml",
  ".cargo/config.toml",
  ".cargo/config",
  "rust-toolchain.toml",
  "rust-toolchain",
  ".mvn/extensions.xml",
  ".mvn/jvm.config",
  ".mvn/maven.config",
  "gradle.properties",
  "gradle-wrapper.properties",
  // Eleventh attacker pass: the wrappers' jars an IDE import runs (binaries: not reviewable by
  // reading, so protected like the properties that come with them), Maven's too.
  "gradle-wrapper.jar",
  "maven-wrapper.jar",
  "maven-wrapper.properties",
  // vitest's workspace file is loaded like `vitest.config.*` by the editor's Vitest extension.
  "vitest.workspace.*",
  ".gemini/extensions",
  ".idea/watcherTasks.xml",
  ".theia/tasks.json",
  ".theia/settings.json",
  ".theia/launch.json",
  ".lazy.lua",
  ".autoenv.zsh",
  ".autoenv_leave.zsh",
  ".clinerules/hooks",
  ".factory/settings.json",
  ".factory/hooks",
  // Sixth attacker pass: Python imports these at every start from any folder on sys.path (a
  // venv's site-packages, a folder a `.pth` adds); ./host_run.ts reviews `.pth` files.
  "sitecustomize.py",
  "usercustomize.py",
  // Eighth attacker pass: more configs that are code, loaded by editors' lint plugins when a file
  // opens — ESLint's legacy `.eslintrc.js`/`.cjs` (the fifth pass named only `eslint.config.*`),
  // stylelint's JS configs, pylint's `init-hook` (Python), RuboCop's `require:` (Ruby), the Lua
  // language server's `runtime.plugin`, YouCompleteMe's `.ycm_extra_conf.py`.
  ".eslintrc*",
  ".stylelintrc*",
  "stylelint.config.*",
  ".pylintrc",
  "pylintrc",
  ".rubocop.yml",
  ".luarc.json",
  ".luarc.jsonc",
  ".ycm_extra_conf.py",
  // Tenth attacker pass (class 3): the rest of the hook runners' config families — commitlint's
  // (JS/TS run by the commit-msg hook husky installs; commitlint.js.org "Configuration", also
  // cosmiconfig's `.config/` places), simple-git-hooks' and nano-staged's dot-configs, overcommit's
  // hook folder —
  // and rust-analyzer's project files (`rust-analyzer.toml`: `cargo.buildScripts.overrideCommand`,
  // `check.overrideCommand` run when the folder opens; `rust-project.json`: flycheck runnables,
  // `proc_macro_dylib_path`), coc.nvim's workspace settings (language-server commands).
  ".commitlintrc*",
  "commitlint.config.*",
  ".config/commitlintrc*",
  // (Their names without a dot are also the packages' own main files in node_modules —
  // `simple-git-hooks.js` —: flagged instead, ./code_configs.ts.)
  ".simple-git-hooks*",
  ".nano-staged*",
  ".git-hooks",
  "rust-analyzer.toml",
  ".rust-analyzer.toml",
  "rust-project.json",
  ".vim/coc-settings.json",
  // asdf and mise take `<tool> path:/dir` in `.tool-versions`: the shims then run that folder's
  // binaries (as `rust-toolchain.toml`'s `path` does for rustup).
  ".tool-versions",
];

const glob = (seg: string) =>
  new RegExp(
    `^${
      seg.toLowerCase().split("*").map((x) => x.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")
    }$`,
  );
/** A pattern's segments as globs, last segment last; it matches the end of a path. */
const compile = (p: string) => ({ pattern: p, segs: p.split("/").filter(Boolean).map(glob) });
const RUNS_LATER_RE: { pattern: string; segs: RegExp[] }[] = RUNS_LATER.map(compile);
/** Any pattern's last segment, as one expression (the scan tests every entry against it). */
let lastAny = union();
function union(): RegExp {
  return new RegExp(
    RUNS_LATER_RE.map((r) => r.segs.at(-1)!.source.slice(1, -1)).map((x) => `^(?:${x})$`)
      .join("|"),
  );
}
/** The pattern whose segments match the end of `segs` (lower case) up to index `end`. */
const matchAt = (segs: readonly string[], end: number) =>
  RUNS_LATER_RE.find((r) =>
    r.segs.length <= end + 1 &&
    r.segs.every((g, i) => g.test(segs[end - r.segs.length + 1 + i]))
  );
const extra = new Set<string>();

/**
 * Adds `sandbox.protected_paths` patterns (same syntax as {@link RUNS_LATER}) for the rest of the
 * process: the sandbox keeps them read-only and removes created ones, the file tools ask.
 * Patterns only accumulate (a process serving several configurations protects their union).
 */
export function addProtectedPatterns(patterns: readonly string[]): void {
  for (const p of patterns) {
    if (extra.has(p) || RUNS_LATER.includes(p)) continue;
    extra.add(p);
    RUNS_LATER_RE.push(compile(p));
    lastAny = union();
  }
}

/** The `protected:` and `dot-entries:` lines of `coyote policy show` (./mod.ts `describeSandbox`). */
export function protectedShowLines(): string[] {
  const extra = extraProtectedPatterns();
  return [
    `  protected: .git .coyote .mcp.json ${
      RUNS_LATER.join(" ")
    } (any depth; node_modules too), every repository's core.hooksPath (nested, submodules), files protected start-up files load (source in .envrc, source() in .Rprofile, …), folders that are git dirs${
      extra.length ? `; from sandbox.protected_paths: ${extra.join(" ")}` : ""
    }`,
    `  dot-entries: new ones a command makes are moved to <data dir>/quarantine/, changed ones flagged (not: ${
      [...INERT_DOT_NAMES].join(" ")
    }, folders with CACHEDIR.TAG, node_modules)`,
    `  host-run files in kept folders: a created or changed .pth with an import line is quarantined; venv bin/ and pyvenv.cfg, .yarn/{releases,plugins,sdks}, .pnp.cjs, .pnp.loader.mjs, .terraform/providers, .terraform.lock.hcl, build.rs conftest.py build.gradle(.kts) settings.gradle(.kts) CMakeLists.txt CMakePresets.json CMakeUserPresets.json Directory.Build.props/.targets WORKSPACE(.bazel) *.bzl BUILD.bazel *.nims gradlew mvnw … flagged; agent instruction files (AGENTS.md CLAUDE.md GEMINI.md COYOTE.md …) created are quarantined, changed flagged; new names that are not valid UTF-8 quarantined`,
    `  configs that are code (created or changed, kept and flagged): *.config.{js,cjs,mjs,ts,cts,mts} karma/wdio/protractor.conf.* gulpfile.* gruntfile.* simple-git-hooks.* nano-staged.* mypy.ini setup.cfg tox.ini pytest.ini pyproject.toml Gemfile hie.yaml pom.xml nx.json project.json babel.config.json phpstan.neon psalm.xml phpunit.xml …; package.json when its lifecycle scripts or hook keys change (husky simple-git-hooks pre-commit lint-staged commitlint gitHooks packageManager jest …), deno.json(c) when lint.plugins does; Cargo.toml when [package] build/links or [lib] proc-macro/path change, and the build script or proc-macro root it names`,
    `  Python bytecode: *.pyc/*.pyo a command created or changed outside venvs and inert folders are removed; Python in the sandbox writes no bytecode (PYTHONDONTWRITEBYTECODE) and reads no user site (PYTHONNOUSERSITE)`,
  ];
}

/** The `sandbox.protected_paths` patterns added so far ({@link addProtectedPatterns}). */
export function extraProtectedPatterns(): string[] {
  return [...extra];
}

/**
 * True when an entry `name` inside the folder `parent` (a path, or only its last segments: a
 * pattern of N segments needs N - 1 of them) matches {@link RUNS_LATER}.
 */
export function runsLater(parent: string, name: string): boolean {
  const n = name.toLowerCase();
  if (!lastAny.test(n)) return false;
  const segs = `${parent}/${n}`.toLowerCase().split("/").filter(Boolean);
  return matchAt(segs, segs.length - 1) !== undefined;
}

/**
 * The pattern of {@link RUNS_LATER} (or `sandbox.protected_paths`) an absolute path `p` is at or
 * inside, if any (every folder/name pair along it is tried).
 */
export function runsLaterPath(p: string): string | undefined {
  const segs = p.toLowerCase().split("/").filter(Boolean);
  for (let i = 0; i < segs.length; i++) {
    const r = matchAt(segs, i);
    if (r) return r.pattern;
  }
  return undefined;
}

/** Directories examined per scan at most (a scan of a few thousand takes milliseconds). */
export const PROTECTED_SCAN_LIMIT = 20_000;

/**
 * Dot-entries known to be inert (caches, build output, ignore lists: no tool runs code from
 * them), compared case-insensitively. The dot-entry rule (./cleanup.ts `reviewDotEntries`) does
 * not look at them or inside them. Documented in docs/permissions.md ("New dot-entries").
 */
export const INERT_DOT_NAMES: ReadonlySet<string> = new Set([
  ".gitignore",
  ".gitattributes",
  ".gitkeep",
  ".keep",
  ".ds_store",
  ".venv",
  ".cache",
  ".pytest_cache",
  ".mypy_cache",
  ".ruff_cache",
  ".hypothesis",
  ".tox",
  ".nox",
  ".coverage",
  ".ipynb_checkpoints",
  ".next",
  ".nuxt",
  ".turbo",
  ".parcel-cache",
  ".svelte-kit",
  ".angular",
  ".vite",
  ".docusaurus",
  ".expo",
  ".eslintcache",
  ".stylelintcache",
  ".nyc_output",
  ".sass-cache",
  ".gradle",
  ".dart_tool",
  ".build",
  ".stack-work",
  ".terraform",
  ".terraform.lock.hcl",
  ".pnpm-store",
  ".fingerprint",
  ".rustc_info.json",
  ".cargo-lock",
  ".package-lock.json",
  ".kotlin",
  // A package manager's install output, like node_modules (the project's code, run when the
  // user runs the project): Yarn's cache and Plug'n'Play files. `.yarnrc.yml` stays protected.
  ".yarn",
  ".pnp.cjs",
  ".pnp.loader.mjs",
  ".pnp.data.json",
]);

/** Dot-entries fingerprinted per scan at most (past that the rest is not reviewed; said so). */
export const DOT_ENTRY_LIMIT = 5_000;

/** What {@link findProtected} collects besides the protected paths, when asked. */
export interface ScanExtras {
  /** Why each protected path that is not a protected name is protected (hooks, git dirs). */
  reasons?: Map<string, string>;
  /**
   * Filled with every dot-entry outside `node_modules`, {@link INERT_DOT_NAMES} and folders
   * holding a `CACHEDIR.TAG`, and every entry inside such a dot-folder, at any depth, with its
   * fingerprint (`lstat`: inode, size and mtime for a file, inode for a folder).
   */
  dots?: Map<string, string>;
  /** Set when {@link DOT_ENTRY_LIMIT} was reached. */
  dotsTruncated?: boolean;
  /** Filled with (at most 1,000 of) the dot-entries not fingerprinted past {@link DOT_ENTRY_LIMIT}. */
  dotsSkipped?: string[];
  /**
   * Filled with the folders the scan could not read (issue 16, fifth pass): a read error other
   * than the folder having vanished (`chmod 000`), or a name that does not round-trip (not valid
   * UTF-8: `Deno.readDirSync` gives a lossy name, U+FFFD, whose path does not exist). Their
   * subtree is unchecked; ./cleanup.ts quarantines the new ones.
   */
  unreadable?: string[];
  /**
   * Filled with the entries whose name does not round-trip (not valid UTF-8) and that are not
   * folders (files, symlinks): no check can name them (a `.pth` or workflow by such a name still
   * loads); ./cleanup.ts quarantines the new ones.
   */
  undecodable?: string[];
  /**
   * Filled with the host-run entries (./host_run.ts: `.pth` files, execution folders' entries,
   * loader files) outside reviewed dot-folders, path → `kind|fingerprint`.
   */
  hostRun?: Map<string, string>;
  /** Set when {@link HOST_RUN_LIMIT} was reached. */
  hostRunTruncated?: boolean;
  /** Filled with the folders whose `CACHEDIR.TAG` the scan honoured (their entries not reviewed). */
  cacheTags?: Set<string>;
  /**
   * When given, a `CACHEDIR.TAG` is honoured only in these folders (the ones the scan before the
   * command honoured), present or not: a tag the command makes is a new entry, a tag it removes
   * does not turn the folder's entries into new ones.
   */
  honourTags?: ReadonlySet<string>;
  /**
   * Filled with every nested `.git` entry and embedded git dir met, and the Mercurial and
   * Jujutsu configs (`.hg/hgrc`, `.jj/repo/config.toml`, where their folder is): what
   * ./profile.ts masks credential lines in (./repo_configs.ts; tenth attacker pass).
   */
  vcs?: { gitDirs: string[]; configs: string[] };
  /** Filled with the sockets, FIFOs and device nodes met (./store_kinds.ts `specialFile`; ./profile.ts hides them). */
  special?: string[];
}

const fingerprint = (p: string): string | undefined => {
  try {
    const st = Deno.lstatSync(p);
    return st.isDirectory ? `d${st.ino}` : `${st.ino}:${st.size}:${st.mtime?.getTime()}`;
  } catch {
    return undefined;
  }
};

/**
 * Absolute paths (as found under `root`, not resolved) of every entry named like a protected
 * name, any case, at any depth below `root`; every folder below `root` that is a git dir by
 * git's test ({@link isGitDirEntries}: an embedded bare repository); the `core.hooksPath` folder
 * and included config files of every repository met ({@link repoHooks}: the workspace's, nested
 * repositories', submodules'), where they exist. Unreadable directories are skipped (named in `extras.unreadable`). The
 * `node_modules` folders met are not entered; they are added to `nodeModules` when given.
 */
export function findProtected(
  root: string,
  limit = PROTECTED_SCAN_LIMIT,
  nodeModules?: string[],
  /** Filled with the folders not examined when the scan stopped at `limit` (empty: complete). */
  unchecked?: string[],
  extras: ScanExtras = {},
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (p: string, why?: string) => {
    if (seen.has(p)) return;
    seen.add(p);
    out.push(p);
    if (why) extras.reasons?.set(p, why);
  };
  const exists = (p: string) => {
    try {
      Deno.lstatSync(p);
      return true;
    } catch {
      return false;
    }
  };
  const top = repoHooks(root, [root]);
  for (const [p, why] of top) if (exists(p)) add(p, why);
  const dots = extras.dots;
  const repos: string[] = [];
  // Modes: 0 ordinary, 1 inside a reviewed dot-folder (every entry fingerprinted), 2 not reviewed;
  // `exec`: inside an execution folder (./host_run.ts); `site`: inside a venv (its installed code,
  // bytecode included, is not reviewed, like node_modules).
  const stack: [string, number, boolean, boolean][] = [[root, 0, false, false]];
  const hostRun = extras.hostRun;
  let scanned = 0, bytecode = 0;
  while (stack.length && scanned < limit) {
    const [dir, mode, exec, site] = stack.pop()!;
    scanned++;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch (e) {
      // Vanished meanwhile: nothing to check. Anything else hides a subtree: fail closed.
      if (!(e instanceof Deno.errors.NotFound) && dir !== root) extras.unreadable?.push(dir);
      continue;
    }
    if (isGitDirEntries(entries, dir)) {
      // The workspace itself made a git dir (no `.git` of its own to win over it): its HEAD.
      if (dir === root) {
        if (!entries.some((e) => e.name.toLowerCase() === ".git")) {
          add(`${root}/HEAD`, "makes the workspace a git dir (with objects/ and refs/)");
        }
      } else {
        extras.vcs?.gitDirs.push(dir);
        add(
          dir,
          "a git dir (HEAD, objects/, refs/): git runs its hooks and core.fsmonitor when started in it",
        );
        continue;
      }
    }
    const hasTag = entries.some((e) => e.name === "CACHEDIR.TAG");
    // Never at the workspace root or in a folder git tracks; after the command, only where the
    // scan before it honoured one (fifth attacker pass).
    const cacheDir = !!dots && mode !== 2 && dir !== root &&
      (extras.honourTags
        ? extras.honourTags.has(dir)
        : hasTag && !gitTracks(root, dir.slice(root.length + 1)));
    if (cacheDir) extras.cacheTags?.add(dir);
    if (hasTag && extras.hostRun && mode !== 2 && dir !== root) cacheOutputs(dir, extras.hostRun);
    const venv = !!hostRun && mode !== 1 && entries.some((e) => e.name === "pyvenv.cfg");
    const dirName = dir.slice(dir.lastIndexOf("/") + 1);
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (seen.has(path)) continue;
      if (e.name.includes("\uFFFD") && !exists(path)) {
        // Not valid UTF-8: the lossy name built no path to it. A folder's subtree cannot be
        // checked; a file cannot be named by any check (sixth attacker pass).
        if (e.isDirectory) extras.unreadable?.push(path);
        else extras.undecodable?.push(path);
        continue;
      }
      if (extras.special && !e.isFile && !e.isDirectory && !e.isSymlink && specialFile(path)) {
        extras.special.push(path);
      }
      const lower = e.name.toLowerCase();
      if (extras.vcs && e.isDirectory && (lower === ".hg" || lower === ".jj")) {
        extras.vcs.configs.push(lower === ".hg" ? `${path}/hgrc` : `${path}/repo/config.toml`);
      }
      if (PROTECTED_NAMES.has(lower) || runsLater(dir, e.name)) {
        if (lower === ".git" && dir !== root) {
          repos.push(dir);
          extras.vcs?.gitDirs.push(path);
        }
        add(path);
        continue;
      }
      let kind: HostRunKind | undefined;
      if (hostRun && !e.isDirectory) {
        // Bytecode in the project's own folders, dot-folders too (tenth attacker pass).
        if (mode !== 2 && !site && isBytecode(lower)) kind = "y";
        else if (mode !== 1) kind = hostRunFile(e.name, venv, exec, mode === 0 && !site);
      }
      if (kind) {
        const y = kind === "y";
        if (y ? bytecode >= HOST_RUN_LIMIT : hostRun!.size - bytecode >= HOST_RUN_LIMIT) {
          extras.hostRunTruncated = true;
        } else {
          if (y) bytecode++;
          const f = fingerprint(path);
          if (f) hostRun!.set(path, `${kind}|${f}`);
        }
      }
      let sub = mode;
      if (dots && mode !== 2) {
        if (cacheDir || INERT_DOT_NAMES.has(lower)) {
          sub = 2;
          // An ignore list runs nothing but can hide what a command wrote from `git status`:
          // fingerprinted, and flagged when changed (./cleanup.ts `reviewDotEntries`).
          if (lower === ".gitignore" && !cacheDir && dots.size < DOT_ENTRY_LIMIT) {
            const f = fingerprint(path);
            if (f) dots.set(path, f);
          }
        } else if (mode === 1 || e.name.startsWith(".") || e.name === "CACHEDIR.TAG") {
          sub = 1;
          if (dots.size >= DOT_ENTRY_LIMIT) {
            extras.dotsTruncated = true;
            if (extras.dotsSkipped && extras.dotsSkipped.length < 1_000) {
              extras.dotsSkipped.push(path);
            }
          } else {
            const f = fingerprint(path);
            if (f) dots.set(path, f);
          }
        }
      }
      if (e.isDirectory) {
        if (e.name !== "node_modules") {
          stack.push([
            path,
            sub,
            !!hostRun && sub !== 1 && execFolder(dirName, e.name, venv, exec),
            site || venv,
          ]);
        } else nodeModules?.push(path);
      }
    }
  }
  unchecked?.push(...stack.map(([d]) => d));
  // package.json and Cargo.toml: the keys that run code, and the files a Cargo.toml names.
  if (hostRun) addConfigKeys(hostRun, fingerprint);
  // What the start-up files found load (`source("renv/activate.R")`), protected like them.
  const loaded = startupSources(root, out);
  rememberSources(root, loaded);
  for (const [p, why] of loaded) if (exists(p)) add(p, why);
  rememberRepos(root, repos);
  if (repos.length) {
    for (const [p, why] of repoHooks(root, repos)) if (!top.has(p) && exists(p)) add(p, why);
  }
  return out;
}
