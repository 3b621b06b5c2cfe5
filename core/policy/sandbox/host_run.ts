/**
 * Files that a tool runs on the host, later, from folders the after-command review otherwise keeps
 * (docs/permissions.md "Host-run files in kept folders"; issue 16, sixth attacker pass). The
 * dot-entry rule (./cleanup.ts) does not look inside the inert dot-folders (`.venv`, `.yarn`,
 * `.terraform`, …, ./protected.ts `INERT_DOT_NAMES`), folders tagged `CACHEDIR.TAG`, or non-dot
 * folders at all; yet some loaders run code from them at their next start outside the sandbox.
 * Not a list of file names but the loaders' own mechanisms, wherever they occur in the scan
 * (./protected.ts `findProtected`, outside reviewed dot-folders, which the dot-entry rule covers):
 *
 * - **Python start-up hooks**: every `*.pth` file (Python's `site` executes each line that begins
 *   with `import` + space or tab, in any `.pth` of a site dir, at every interpreter start). One the
 *   command created or changed that holds such a line is moved to the quarantine; one of path
 *   lines only (it adds folders to `sys.path`) is kept and flagged. (`sitecustomize.py` and
 *   `usercustomize.py` are protected names, ./protected.ts `RUNS_LATER`.)
 * - **Execution folders**, every entry below them: a venv's `bin/` and `Scripts/` (a venv is a
 *   folder holding `pyvenv.cfg`, any name: activate scripts and the commands `activate` puts first
 *   on PATH) and its `pyvenv.cfg`; `.terraform/providers/` (binaries terraform executes);
 *   `.yarn/releases/`, `.yarn/plugins/`, `.yarn/sdks/` (code yarn and editors load); and the
 *   loader files `.pnp.cjs`, `.pnp.loader.mjs` (node requires them) and `.terraform.lock.hcl`
 *   (the checksums terraform trusts providers by). Created or changed ones are kept — an honest
 *   `pip install`, `yarn install` or `terraform init` makes them — and flagged by name.
 * - **Build files editors run on open** (`build.rs`, `conftest.py`, Gradle and CMake files, …;
 *   `OPENED_BY_EDITORS`): kept and flagged by name the same way.
 * - **Configs that are code** (./code_configs.ts, tenth attacker pass: `*.config.*`, Python tool
 *   configs, package.json's and deno.json's code-running keys, Cargo.toml's build settings and the
 *   files they name): kept and flagged on their own line, in the project's own folders only.
 * - **Python bytecode** (`*.pyc`, `*.pyo`, tenth attacker pass) in the project's folders, dot-folders
 *   included, outside venvs and inert or cache folders: created or changed ones are removed
 *   ({@link bytecodeCleanup}) — Python on the host would load one instead of the source beside it.
 * @module
 */

import { changedKeys, type ConfigKind, configKind } from "./code_configs.ts";

/**
 * A host-run entry's kind in the scan's map: `p` a `.pth`, `r` an entry a loader runs, `y` Python
 * bytecode ({@link isBytecode}), `a` an agent instruction file ({@link AGENT_INSTRUCTIONS}), and the configs of ./code_configs.ts (`c`, `j`, `k`, `b`).
 */
export type HostRunKind = "p" | "r" | "y" | "a" | ConfigKind | "b";

/** Host-run entries fingerprinted per scan at most, and bytecode files apart (past that: said so). */
export const HOST_RUN_LIMIT = 5_000;

const LOADER_FILES = new Set([".pnp.cjs", ".pnp.loader.mjs", ".terraform.lock.hcl"]);

/**
 * Build files an editor runs when the folder opens, before anyone names a command (sixth attacker
 * pass): rust-analyzer runs `build.rs` build scripts, VS Code's Python test discovery imports
 * `conftest.py`, Gradle and CMake imports evaluate `build.gradle(.kts)`/`settings.gradle(.kts)`
 * and `CMakeLists.txt` (`exec`, `execute_process`), and MSBuild design-time builds run
 * `Directory.Build.*` and every project file (names ending in {@link OPENED_BY_EDITORS_SUFFIXES}:
 * `app.csproj`). Created or changed ones are kept (writing them is ordinary work) and flagged by
 * name.
 */
const OPENED_BY_EDITORS = new Set([
  "build.rs",
  "conftest.py",
  "build.gradle",
  "build.gradle.kts",
  "settings.gradle",
  "settings.gradle.kts",
  "cmakelists.txt",
  "cmakepresets.json",
  "cmakeuserpresets.json",
  "directory.build.props",
  "directory.build.targets",
  // Tenth attacker pass: SourceKit-LSP runs `Package.swift`, ElixirLS compiles `mix.exs`, Metals
  // loads `build.sbt`/`project/*.sbt`, Meson and ZLS run `meson.build`/`build.zig`, the Haskell
  // language server runs cabal/stack (`Setup.hs` is code), dune, rebar3, Perl's build scripts and
  // Leiningen evaluate theirs; MSBuild resolves SDKs by `global.json` and imports
  // `Directory.Packages.props`; the Bazel LSPs evaluate `MODULE.bazel`.
  "package.swift",
  "mix.exs",
  "meson.build",
  "meson.options",
  "meson_options.txt",
  "build.zig",
  "build.zig.zon",
  "cabal.project",
  "cabal.project.local",
  "setup.hs",
  "stack.yaml",
  "dune-project",
  "makefile.pl",
  "build.pl",
  "rebar.config",
  "project.clj",
  "directory.packages.props",
  "directory.solution.props",
  "directory.solution.targets",
  "global.json",
  "module.bazel",
  // Eleventh attacker pass: Bazel's LSPs run `bazel query`, which evaluates the workspace files
  // and runs repository rules (`.bzl` code: `repository_ctx.execute`); Nim's nimsuggest runs
  // NimScript (`config.nims`, `*.nims`, `*.nimble`: `exec`); IDE imports run the Gradle and
  // Maven wrapper scripts.
  "workspace",
  "workspace.bazel",
  "workspace.bzlmod",
  "build.bazel",
  "config.nims",
  "gradlew",
  "gradlew.bat",
  "mvnw",
  "mvnw.cmd",
]);
/** Name endings of build files editors evaluate on open (MSBuild projects, cabal, sbt). */
const OPENED_BY_EDITORS_SUFFIXES = [
  ".csproj",
  ".fsproj",
  ".vbproj",
  ".vcxproj",
  ".proj",
  ".cabal",
  ".sbt",
  ".bzl",
  ".nims",
  ".nimble",
];

/**
 * Agent instruction files without a dot (lower case): the next agent session — Coyote's own
 * (core/config/instructions.ts `INSTRUCTION_FILES`, at any depth) or another agent's, possibly
 * without a sandbox — reads them as instructions (eleventh attacker pass: prompt injection). Like
 * their dot-file siblings (`.cursorrules`, `.windsurfrules`, `.clinerules`, the dot-entry rule of
 * ./cleanup.ts), a created one is moved to the quarantine and a changed one flagged.
 */
export const AGENT_INSTRUCTIONS: ReadonlySet<string> = new Set([
  "coyote.md",
  "agents.md",
  "agent.md",
  "claude.md",
  "claude.local.md",
  "gemini.md",
  "qwen.md",
  "crush.md",
  "warp.md",
  "copilot-instructions.md",
]);
const YARN_EXEC = new Set(["releases", "plugins", "sdks"]);

/**
 * Build output a tool runs later as it is (issue 16, tenth attacker pass): in a folder tagged
 * `CACHEDIR.TAG` (cargo's `target/`, whose entries the dot-entry rule does not review), the
 * executables cargo runs without rebuilding when their fingerprints look fresh — each
 * `PROFILE/NAME` (`target/debug/app`, `cargo run`), `TRIPLE/PROFILE/NAME`, and the build scripts
 * `PROFILE/build/PKG/build-script-build*` (run at the next build). Not a list of names: every
 * executable regular file at those depths. Added to `out` as `r|fingerprint` (path → value), at
 * most {@link HOST_RUN_LIMIT} in all; the review flags created or changed ones, kept. Cost: one
 * listing per profile folder and one `lstat` per file in it.
 */
export function cacheOutputs(tagDir: string, out: Map<string, string>): void {
  const list = (d: string) => {
    try {
      return [...Deno.readDirSync(d)];
    } catch {
      return [];
    }
  };
  const exe = (p: string) => {
    if (out.size >= HOST_RUN_LIMIT) return;
    try {
      const st = Deno.lstatSync(p);
      if (st.isFile && (st.mode ?? 0) & 0o111) {
        out.set(p, `r|${st.ino}:${st.size}:${st.mtime?.getTime()}`);
      }
    } catch { /* gone */ }
  };
  const profile = (d: string, depth: number) => {
    for (const e of list(d)) {
      const p = `${d}/${e.name}`;
      if (e.isFile) exe(p);
      else if (e.isDirectory && e.name === "build") {
        for (const pkg of list(p)) {
          if (!pkg.isDirectory) continue;
          for (const f of list(`${p}/${pkg.name}`)) {
            if (f.isFile && f.name.startsWith("build-script-")) exe(`${p}/${pkg.name}/${f.name}`);
          }
        }
      } else if (e.isDirectory && depth === 0 && !e.name.startsWith(".")) profile(p, 1);
    }
  };
  for (const e of list(tagDir)) {
    if (e.isDirectory && !e.name.startsWith(".")) profile(`${tagDir}/${e.name}`, 0);
  }
}

/**
 * Whether the child folder `name` of folder `dirName` (last segment, any case) is an execution
 * folder: inside one (`exec`), a venv's `bin`/`Scripts` (`venv`: the folder holds `pyvenv.cfg`),
 * `.terraform/providers`, `.yarn/{releases,plugins,sdks}`.
 */
export function execFolder(dirName: string, name: string, venv: boolean, exec: boolean): boolean {
  if (exec) return true;
  const d = dirName.toLowerCase(), n = name.toLowerCase();
  if (venv && (name === "bin" || n === "scripts")) return true;
  return (d === ".terraform" && n === "providers") || (d === ".yarn" && YARN_EXEC.has(n));
}

/**
 * The host-run kind of a file `name` in a folder (see {@link execFolder}), or undefined; the
 * configs of ./code_configs.ts only when `configs` (the project's own folders: not inert, cache
 * or venv folders, whose files are installed or built output).
 */
export function hostRunFile(
  name: string,
  venv: boolean,
  exec: boolean,
  configs = true,
): HostRunKind | undefined {
  const n = name.toLowerCase();
  if (n.endsWith(".pth")) return "p";
  if (
    exec || LOADER_FILES.has(n) || OPENED_BY_EDITORS.has(n) || (venv && n === "pyvenv.cfg") ||
    OPENED_BY_EDITORS_SUFFIXES.some((x) => n.endsWith(x) && n.length > x.length)
  ) {
    return "r";
  }
  if (!configs) return undefined;
  return AGENT_INSTRUCTIONS.has(n) ? "a" : configKind(n);
}

/**
 * True for Python bytecode (`*.pyc`, `*.pyo`, any case; `name` lower case): Python loads a
 * `__pycache__/<mod>.cpython-3XX.pyc` instead of its source when the pyc's header matches the
 * source's mtime and size (or it is an unchecked-hash pyc), and a lone `<mod>.pyc` with no source.
 */
export const isBytecode = (lower: string) => lower.endsWith(".pyc") || lower.endsWith(".pyo");

/**
 * True when a `.pth` file's text has a line Python's `site` executes (`import ` or `import\t`;
 * Python 3.13 reads the file as `utf-8-sig`, so a byte-order mark before the first line counts).
 */
export function pthRunsCode(text: string): boolean {
  return /^\uFEFF?import[ \t]/m.test(text);
}

/** `.pth` files larger than this (bytes) are taken to run code unread. */
const PTH_READ_LIMIT = 1 << 20;

/**
 * Compares the host-run entries of two scans (path → `kind|fingerprint`): each one in `after`
 * that is new or changed, not under a path already handled (`gone`) and not named by a `Write`
 * allow rule (`allowed`). `quarantine`: `.pth` files with a code line ({@link pthRunsCode});
 * `flagged`: the rest (kept); `configs`: ./code_configs.ts's (`path\0note`); `agents`: agent
 * instruction files, `created` ones (quarantined) and `changed` ones (flagged).
 */
export function reviewHostRun(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  gone: readonly string[],
  allowed: (p: string) => boolean,
): {
  quarantine: string[];
  flagged: string[];
  configs: string[];
  agents: { created: string[]; changed: string[] };
} {
  const agents = { created: [] as string[], changed: [] as string[] };
  const quarantine: string[] = [];
  const flagged: string[] = [];
  const configs: string[] = [];
  const under = (p: string) => gone.some((r) => p === r || p.startsWith(r + "/"));
  for (const [p, f] of [...after].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if (before.get(p) === f || under(p) || allowed(p)) continue;
    const kind = f[0];
    if (kind === "y") continue; // ./cleanup.ts removes bytecode first ({@link bytecodeCleanup})
    if (kind === "a") {
      (before.has(p) ? agents.changed : agents.created).push(p);
      continue;
    }
    if (kind === "j" || kind === "k") {
      // Only when a key that runs code changed (./code_configs.ts), a created file's from none.
      const was = before.get(p);
      const keys = changedKeys(was?.slice(was.indexOf("|", 2) + 1), f.slice(f.indexOf("|", 2) + 1));
      if (keys === "unknown") configs.push(`${p}\0not compared`);
      else if (keys.length) configs.push(`${p}\0${keys.join(", ")}`);
      continue;
    }
    if (kind === "c" || kind === "b") {
      configs.push(kind === "b" ? `${p}\0the build script or proc-macro a Cargo.toml names` : p);
      continue;
    }
    let code = false;
    if (kind === "p") {
      try {
        const st = Deno.statSync(p);
        code = st.isFile && (st.size > PTH_READ_LIMIT || pthRunsCode(Deno.readTextFileSync(p)));
      } catch { /* gone, or unreadable: flagged */ }
    }
    (code ? quarantine : flagged).push(p);
  }
  return { quarantine, flagged, configs, agents };
}

/**
 * The after-command step for Python bytecode (before the dot-entry rule, ./cleanup.ts): every
 * `y` entry of `after` that is new or changed since `before` and that no `Write` allow rule names
 * is removed (a cache Python regenerates from the source). Returns the result's lines and the
 * paths removed.
 */
export function bytecodeCleanup(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  allowed: (p: string) => boolean,
  rel: (p: string) => string,
): { lines: string[]; removed: string[] } {
  const removed: string[] = [];
  const left: string[] = [];
  for (const [p, f] of after) {
    if (f[0] !== "y" || before.get(p) === f || allowed(p)) continue;
    try {
      Deno.removeSync(p);
      removed.push(p);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) left.push(p);
    }
  }
  removed.sort();
  const lines: string[] = [];
  const list = (l: string[]) =>
    `${l.slice(0, 20).map(rel).join(", ")}${l.length > 20 ? `, … (+${l.length - 20} more)` : ""}`;
  if (removed.length) {
    lines.push(
      `the OS sandbox removed ${removed.length} Python bytecode file${
        removed.length > 1 ? "s" : ""
      } the command created or changed (Python on the host would load one instead of the source beside it; it regenerates them from the source): ${
        list(removed)
      }`,
    );
  }
  if (left.length) {
    lines.push(
      `Python bytecode the command created or changed that could not be removed (the user should delete it): ${
        list(left)
      }`,
    );
  }
  return { lines, removed };
}

/**
 * The after-command step for host-run entries (./cleanup.ts `removeCreated`): quarantines what
 * {@link reviewHostRun} says with `move` (./cleanup.ts `quarantine`) and returns the result's lines
 * (`rel` names a path for them) and the paths moved.
 */
export function hostRunCleanup(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  gone: readonly string[],
  allowed: (p: string) => boolean,
  move: (p: string) => string | undefined,
  rel: (p: string) => string,
  truncated: boolean,
): { lines: string[]; moved: string[] } {
  const r = reviewHostRun(before, after, gone, allowed);
  const lines: string[] = [];
  const moved: [string, string][] = [];
  for (const p of r.quarantine) {
    const to = move(p);
    if (to) moved.push([p, to]);
    else r.flagged.push(p);
  }
  if (moved.length) {
    lines.push(
      `the OS sandbox moved ${moved.length} Python start-up hook${
        moved.length > 1 ? "s" : ""
      } the command created or changed to quarantine (a .pth line that begins with \`import\` runs at every Python start, outside the sandbox too):\n${
        moved.map(([p, to]) => `  ${rel(p)} → ${to}`).join("\n")
      }\nallow it with --allow 'Write(${rel(moved[0][0])})', or install on the host`,
    );
  }
  if (r.configs.length) {
    const c = r.configs.map((e) => {
      const [p, note] = e.split("\0");
      return note ? `${rel(p)} (${note})` : rel(p);
    });
    lines.push(
      `configs that are code or name code, which editors, dev servers and build tools run on open or at the next build, that the command created or changed (kept; the user should review them before opening the folder in an editor or building on the host): ${
        c.slice(0, 20).join(", ")
      }${c.length > 20 ? `, … (+${c.length - 20} more)` : ""}`,
    );
  }
  const agentsMoved: [string, string][] = [];
  for (const p of r.agents.created) {
    const to = move(p);
    if (to) agentsMoved.push([p, to]);
    else r.agents.changed.push(p);
  }
  if (agentsMoved.length) {
    lines.push(
      `the OS sandbox moved ${agentsMoved.length} new agent instruction file${
        agentsMoved.length > 1 ? "s" : ""
      } the command created to quarantine (the next agent session reads them as instructions, as it does .cursorrules):\n${
        agentsMoved.map(([p, to]) => `  ${rel(p)} → ${to}`).join("\n")
      }\nwrite it with the file tools instead, or allow it with --allow 'Write(${
        rel(agentsMoved[0][0])
      })'`,
    );
  }
  if (r.agents.changed.length) {
    const a = r.agents.changed;
    lines.push(
      `agent instruction files the command changed (kept; the user should review them — the next agent session reads them as instructions): ${
        a.slice(0, 20).map(rel).join(", ")
      }${a.length > 20 ? `, … (+${a.length - 20} more)` : ""}`,
    );
  }
  const f = r.flagged;
  if (f.length) {
    lines.push(
      `files a tool runs later that the command created or changed in kept folders (kept; the user should review them before running the venv, yarn, terraform or the build output on the host or opening the folder in an editor): ${
        f.slice(0, 20).map(rel).join(", ")
      }${f.length > 20 ? `, … (+${f.length - 20} more)` : ""}`,
    );
  }
  if (truncated) {
    lines.push(
      `the OS sandbox reviewed the first ${HOST_RUN_LIMIT} host-run files (.pth, venv bin/, configs that are code, …) and ${HOST_RUN_LIMIT} Python bytecode files only; the rest was not checked`,
    );
  }
  return { lines, moved: [...moved, ...agentsMoved].map(([p]) => p) };
}
