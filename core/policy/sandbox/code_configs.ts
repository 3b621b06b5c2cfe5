/**
 * Configs that are code, or that name code, which editors, dev servers and build tools load when
 * the folder opens or at the next build, on the host, without the user naming them
 * (docs/permissions.md "Host-run files in kept folders"; issue 16 class 3, tenth attacker pass).
 * They are ordinary project files an honest command edits, so they are not protected: the
 * after-command review (./host_run.ts) keeps a created or changed one and flags it by name.
 *
 * - **By name** ({@link configKind} `c`): `*.config.{js,cjs,mjs,ts,cts,mts}` (webpack, vite,
 *   rollup, tailwind, postcss, babel, next, nuxt, astro, svelte, playwright, cypress, … — editor
 *   plugins and dev servers import them), `karma.conf.*`, `wdio.conf.*`, `gulpfile.*`,
 *   `gruntfile.*` (VS Code's task detection runs them), `simple-git-hooks.*` and `nano-staged.*`
 *   (hook installers' configs without a dot: also the packages' own file names in node_modules, so
 *   not protected names), Python tool configs whose settings import code (`mypy.ini`, `setup.cfg`,
 *   `tox.ini`, `pytest.ini`, `pyproject.toml`: mypy's `plugins`, pylint's `init-hook` and
 *   `load-plugins`, pytest's `-p`), `Gemfile` (ruby-lsp runs bundler on it when the folder opens).
 * - **By the keys that run code** (only when they changed, compared parsed, before and after):
 *   `package.json` (`j`: the install and prepare lifecycle scripts, git-hook installers and their
 *   configs — `husky`, `simple-git-hooks`, `pre-commit`, `lint-staged`, `commitlint`, `gitHooks`,
 *   `ghooks` … — `packageManager`, which corepack downloads and runs, and the configs of tools
 *   editors run on open: `jest`, `prettier`, `eslintConfig`, `stylelint`, `babel`), `deno.json(c)`
 *   (`j` too: `lint.plugins`, which the Deno language server runs when a file opens) and `Cargo.toml`
 *   (`k`: `[package] build` and `links`, `[lib] proc-macro` and `path`). The file Cargo.toml's
 *   `build` names, and a proc-macro crate's library root (Cargo builds and runs both at build time;
 *   rust-analyzer does when the folder opens), is fingerprinted too (`b`) and flagged when created
 *   or changed. (`build.rs` by its default name is ./host_run.ts `OPENED_BY_EDITORS`.)
 *
 * The keys are read once per file version: a cache by fingerprint (inode, size, mtime) holds each
 * file's projection (the code-running keys as JSON), so a scan reads only files that changed, and
 * at most {@link CONTENT_READ_LIMIT} per scan (the rest, and files over 1 MiB or that do not parse,
 * count as "not compared": flagged whenever they change).
 * @module
 */

/** A kind in the scan's host-run map (./host_run.ts): `c` by name, `j` package.json, `k` Cargo.toml, `b` what a Cargo.toml names. */
export type ConfigKind = "c" | "j" | "k";

const CODE_CONFIG =
  /\.config\.[cm]?[jt]s$|^(karma|wdio|protractor)\.conf\.[cm]?[jt]s$|^(gulpfile|gruntfile|simple-git-hooks|nano-staged)\./;
const CODE_CONFIG_NAMES = new Set([
  "mypy.ini",
  "setup.cfg",
  "tox.ini",
  "pytest.ini",
  "pyproject.toml",
  "gemfile",
  // Eleventh attacker pass: hie-bios runs `hie.yaml`'s `bios: program:`; an IDE's Maven import
  // runs `pom.xml`'s build extensions and m2e executions; Nx Console's daemon loads `nx.json`'s
  // and `project.json`'s plugins and executors; babel-jest and ESLint's babel parser load the
  // plugins `babel.config.json` names; the editors' PHPStan and Psalm run `bootstrapFiles` and
  // plugins, PHPUnit's extensions its `bootstrap`.
  "hie.yaml",
  "pom.xml",
  "nx.json",
  "project.json",
  "babel.config.json",
  "phpstan.neon",
  "phpstan.neon.dist",
  "phpstan.dist.neon",
  "psalm.xml",
  "psalm.xml.dist",
  "phpunit.xml",
  "phpunit.xml.dist",
]);

/** The config kind of a file named `lower` (lower case), or undefined. */
export function configKind(lower: string): ConfigKind | undefined {
  if (lower === "package.json" || lower === "deno.json" || lower === "deno.jsonc") return "j";
  if (lower === "cargo.toml") return "k";
  if (CODE_CONFIG_NAMES.has(lower) || CODE_CONFIG.test(lower)) return "c";
  return undefined;
}

/** package.json `scripts` that npm, pnpm, yarn and bun run on install, pack or publish. */
const LIFECYCLE = new Set([
  "preinstall",
  "install",
  "postinstall",
  "preuninstall",
  "uninstall",
  "postuninstall",
  "prepublish",
  "preprepare",
  "prepare",
  "postprepare",
  "prepack",
  "postpack",
  "dependencies",
]);
/** Top-level package.json keys that install or run hooks, or configure code tools run later. */
const PACKAGE_KEYS = [
  "husky",
  "simple-git-hooks",
  "pre-commit",
  "precommit",
  "pre-push",
  "prepush",
  "lint-staged",
  "nano-staged",
  "commitlint",
  "gitHooks",
  "ghooks",
  "git-hooks",
  "packageManager",
  "jest",
  "prettier",
  "eslintConfig",
  "stylelint",
  "babel",
];

/** Files read for their keys per scan at most. */
export const CONTENT_READ_LIMIT = 200;
const SIZE_LIMIT = 1 << 20;
/** Not compared: unread (over the limits) or not parsed. */
export const UNKNOWN = "?";

/** JSON of `o` with its top-level keys sorted. */
const sorted = (o: Record<string, unknown>) =>
  JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => a < b ? -1 : 1)));

/** The code-running keys of a package.json's text, as sorted JSON, or {@link UNKNOWN}. */
export function packageProjection(text: string): string {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    return UNKNOWN;
  }
  if (!j || typeof j !== "object" || Array.isArray(j)) return UNKNOWN;
  const o = j as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of PACKAGE_KEYS) if (o[k] !== undefined) out[k] = o[k];
  const scripts = o.scripts;
  if (scripts && typeof scripts === "object") {
    for (const [k, v] of Object.entries(scripts)) if (LIFECYCLE.has(k)) out[`scripts.${k}`] = v;
  }
  const config = o.config as Record<string, unknown> | undefined;
  if (config && typeof config === "object" && config.ghooks !== undefined) {
    out["config.ghooks"] = config.ghooks;
  }
  return sorted(out);
}

/** JSONC text as JSON: comments outside strings removed, then trailing commas. */
function stripJsonc(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(i));
      const str = end ? end[0] : text.slice(i);
      out += str;
      i += str.length - 1;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
}

/**
 * The code-running keys of a deno.json(c): `lint.plugins` (the Deno language server loads and runs
 * them when a file opens), as JSON, or {@link UNKNOWN}.
 */
export function denoProjection(text: string): string {
  try {
    const o = JSON.parse(stripJsonc(text)) as { lint?: { plugins?: unknown } };
    const plugins = o?.lint?.plugins;
    return sorted(plugins === undefined ? {} : { "lint.plugins": plugins });
  } catch {
    return UNKNOWN;
  }
}

/**
 * The build-time keys of a Cargo.toml's text (`package.build`, `package.links`,
 * `lib.proc-macro`, `lib.path`), as sorted JSON. A line scan, not a TOML parser: `[package]` and
 * `[lib]` tables and dotted keys (`package.build = …`); inline tables are not read.
 */
export function cargoProjection(text: string): string {
  const out: Record<string, string> = {};
  let table = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("[")) {
      // An array of tables (`[[bin]]`) holds none of the keys.
      table = line.startsWith("[[") ? "#" : line.slice(1, line.indexOf("]")).replace(/["'\s]/g, "");
      continue;
    }
    const kv = /^([A-Za-z0-9_.\-"' ]+?)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const k = `${table ? `${table}.` : ""}${kv[1].replace(/["'\s]/g, "")}`.replace(
      "proc_macro",
      "proc-macro",
    );
    if (["package.build", "package.links", "lib.proc-macro", "lib.path"].includes(k)) {
      out[k] = kv[2].replace(/\s+#.*$/, "").trim();
    }
  }
  // A library's path is build-time code only in a proc-macro crate.
  if (out["lib.proc-macro"] !== "true") delete out["lib.path"];
  return sorted(out);
}

const unquote = (v: string | undefined) => {
  const m = v && /^(["'])(.*)\1$/.exec(v);
  return m ? m[2] : undefined;
};

/**
 * The files a Cargo.toml projection names that Cargo builds and runs: the `build` script when it
 * is a path, and the library root of a proc-macro crate (`lib.path`, default `src/lib.rs`).
 * Paths relative to the Cargo.toml's folder.
 */
export function cargoCodeFiles(proj: string): string[] {
  if (proj === UNKNOWN) return [];
  const o = JSON.parse(proj) as Record<string, string>;
  const out: string[] = [];
  const build = unquote(o["package.build"]);
  if (build) out.push(build);
  if (o["lib.proc-macro"] === "true") out.push(unquote(o["lib.path"]) ?? "src/lib.rs");
  return out;
}

/** path → [fingerprint, projection]: one read per file version (see the module doc). */
const cache = new Map<string, [string, string]>();
const CACHE_LIMIT = 5_000;

function projection(path: string, kind: "j" | "k", fp: string, budget: { n: number }): string {
  const c = cache.get(path);
  if (c && c[0] === fp) return c[1];
  if (budget.n <= 0) return UNKNOWN;
  budget.n--;
  let proj = UNKNOWN;
  try {
    if (Deno.lstatSync(path).size <= SIZE_LIMIT) {
      const text = Deno.readTextFileSync(path);
      proj = kind === "k"
        ? cargoProjection(text)
        : path.toLowerCase().endsWith("/package.json")
        ? packageProjection(text)
        : denoProjection(text);
    }
  } catch { /* gone or unreadable: not compared */ }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(path, [fp, proj]);
  return proj;
}

/**
 * After a scan (./protected.ts `findProtected`): appends to each `j`/`k` entry of the host-run
 * map (path → `kind|fingerprint`) its projection (`kind|fingerprint|projection`), and adds a `b`
 * entry (`b|fingerprint`) for each file a Cargo.toml names ({@link cargoCodeFiles}) that exists
 * and is not in the map yet. `fingerprint` is the scan's (undefined when the path is gone).
 */
export function addConfigKeys(
  hostRun: Map<string, string>,
  fingerprint: (p: string) => string | undefined,
): void {
  const budget = { n: CONTENT_READ_LIMIT };
  const named: string[] = [];
  for (const [p, v] of hostRun) {
    const kind = v[0];
    if ((kind !== "j" && kind !== "k") || v[1] !== "|") continue;
    const fp = v.slice(2);
    const proj = projection(p, kind, fp, budget);
    hostRun.set(p, `${v}|${proj}`);
    if (kind === "k") {
      const dir = p.slice(0, p.lastIndexOf("/"));
      for (const f of cargoCodeFiles(proj)) {
        if (!f.startsWith("/") && !f.split("/").includes("..")) {
          named.push(`${dir}/${f.replace(/^\.\//, "")}`);
        }
      }
    }
  }
  for (const p of named) {
    if (hostRun.has(p)) continue;
    const f = fingerprint(p);
    if (f) hostRun.set(p, `b|${f}`);
  }
}

/** The keys whose values differ between two projections (`[]` when neither is known). */
export function changedKeys(before: string | undefined, after: string): string[] | "unknown" {
  let a: Record<string, unknown>, b: Record<string, unknown>;
  try {
    a = JSON.parse(after);
    b = before === undefined ? {} : JSON.parse(before);
  } catch {
    return "unknown"; // UNKNOWN, or no projection
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}
