/**
 * Bundles a folder plugin (a folder holding `mod.ts`, `plugin.ts`, …) into one
 * self-contained module at load time, with npm `esbuild-wasm` (esbuild's
 * WebAssembly build, loaded from its npm package: from Deno's npm cache under
 * `deno run`, from the binary's embedded copy when compiled; never from the
 * network).
 *
 * esbuild's browser API has no file system: every import goes through the
 * resolver below, which is the security boundary of bundling (the host reads
 * these files with ITS rights, before any plugin permission applies):
 *
 * - relative imports of the plugin's own files (real path inside the plugin's
 *   folder; a symbolic link leading out is refused), with `with { type:
 *   "text" | "json" }` for data files;
 * - `npm:name@range/sub` (and bare names mapped to `npm:` in the folder's
 *   `deno.json` / `package.json`, or installed in its `node_modules/`): from
 *   the folder's `node_modules/` or Deno's npm cache (`$DENO_DIR/npm`); a
 *   package's own imports resolve among the packages beside it. Nothing is
 *   downloaded: a package not installed is an error naming it;
 * - `@coyote/sdk` stays an import (source.ts links the host's SDK), and
 *   `node:` built-ins stay imports (they are part of the runtime; the plugin's
 *   permissions apply when used);
 * - everything else is refused BY NAME: imports leaving the folder (`../x`,
 *   absolute paths, `file:`), remote ones (`https:`, `jsr:`), and files the
 *   package manager did not install.
 *
 * Errors come back as `file:line:column: message` (paths relative to the
 * plugin folder). The result then goes through source.ts like a one-file
 * plugin, so its import rules (no `import()`, no `require`) hold for bundles.
 * @module
 */
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from "../../util/path.ts";
import { SDK_SPECIFIER } from "./source.ts";
import { byCodeUnit } from "../../util/text.ts";

/** A file that went into a bundle and the SHA-256 of its text (for the cache). */
export interface BundleInput {
  path: string;
  /** Hex SHA-256 of the file; `""` for a path inside the folder that resolution found missing. */
  sha256: string;
}

/** What {@link bundlePlugin} returns. */
export interface Bundle {
  /** One ES module; its only imports are the SDK and `node:` built-ins. */
  code: string;
  /** Every file read (the plugin's files, its deno.json / package.json, npm packages' files). */
  inputs: BundleInput[];
}

/** A plugin folder that cannot be bundled; `message` lists `file:line:col: …` problems. */
export class BundleError extends Error {
  override name = "BundleError";
}

// deno-lint-ignore no-explicit-any
type Esbuild = any;
let esbuildReady: Promise<Esbuild> | undefined;

/** Loads and initialises esbuild-wasm once per process (~0.1–0.3 s; only when a bundle is not cached). */
function loadEsbuild(): Promise<Esbuild> {
  esbuildReady ??= (async () => {
    const esbuild = await import("esbuild-wasm/esm/browser.js");
    const wasm = await Deno.readFile(new URL(import.meta.resolve("esbuild-wasm/esbuild.wasm")));
    await esbuild.initialize({ wasmModule: await WebAssembly.compile(wasm), worker: false });
    return esbuild;
  })();
  esbuildReady.catch(() => esbuildReady = undefined);
  return esbuildReady;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Deno's npm cache folder for the public registry (`$DENO_DIR/npm/registry.npmjs.org`). */
export function denoNpmCache(): string {
  const denoDir = Deno.env.get("DENO_DIR") ??
    (Deno.build.os === "darwin"
      ? join(Deno.env.get("HOME") ?? "", "Library", "Caches", "deno")
      : Deno.build.os === "windows"
      ? join(Deno.env.get("LOCALAPPDATA") ?? "", "deno")
      : join(Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "", ".cache"), "deno"));
  return join(denoDir, "npm", "registry.npmjs.org");
}

/**
 * Prepended to every bundle: CommonJS packages `require()` node built-ins (`require("fs")`),
 * which esbuild leaves as calls in an ES module; this `require` hands out built-ins only
 * (`process.getBuiltinModule`), and their use is checked against the plugin's permissions.
 */
const REQUIRE_BUILTIN = `const require = (id) => { const name = String(id); ` +
  `const m = globalThis.process.getBuiltinModule(name.startsWith("node:") ? name : "node:" + name); ` +
  `if (m === undefined) throw new Error("cannot require " + JSON.stringify(name) + ": only node built-ins can be required at run time"); ` +
  `return m; };`;

/** Node built-in module names without `node:` (filled on first bundle: node:module is not free). */
const NODE_BUILTINS = new Set<string>();
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json"];
const LOADERS: Record<string, string> = {
  ".ts": "ts",
  ".mts": "ts",
  ".cts": "ts",
  ".tsx": "tsx",
  ".jsx": "jsx",
  ".js": "js",
  ".mjs": "js",
  ".cjs": "js",
  ".json": "json",
  ".txt": "text",
  ".md": "text",
};

const inside = (root: string, p: string) => p === root || p.startsWith(root + sep);

/**
 * Memoised file-system queries of one bundle. Resolution makes hundreds of them for a package
 * like zod: synchronous calls (microseconds each) are far cheaper than as many async ops. The
 * paths found missing are kept: inside the plugin folder they become cache inputs too (a file
 * appearing there may change what an import resolves to).
 */
function fsMemo() {
  const realCache = new Map<string, string | undefined>();
  const fileCache = new Map<string, boolean>();
  return {
    realOrUndefined(p: string): string | undefined {
      if (realCache.has(p)) return realCache.get(p);
      let r: string | undefined;
      try {
        r = Deno.realPathSync(p);
      } catch {
        r = undefined;
      }
      realCache.set(p, r);
      return r;
    },
    isFile(p: string): boolean {
      let r = fileCache.get(p);
      if (r === undefined) {
        try {
          r = Deno.statSync(p).isFile;
        } catch {
          r = false;
        }
        fileCache.set(p, r);
      }
      return r;
    },
    missing(): string[] {
      return [...fileCache].filter(([, v]) => !v).map(([p]) => p);
    },
  };
}

/** `npm:name@range/sub` → parts (name may be scoped). */
export function parseNpmSpecifier(
  spec: string,
): { name: string; range: string; sub: string } | undefined {
  const m = /^(@[^/@]+\/[^/@]+|[^/@][^/@]*)(?:@([^/]*))?(\/.*)?$/.exec(spec.replace(/^\//, ""));
  if (!m) return undefined;
  return { name: m[1], range: m[2] || "*", sub: m[3] ? `.${m[3]}` : "." };
}

/** Bare specifier → package name and subpath (`zod/v4` → zod, ./v4). */
function splitBare(spec: string): { name: string; sub: string } {
  const parts = spec.split("/");
  const n = spec.startsWith("@") ? 2 : 1;
  const rest = parts.slice(n).join("/");
  return { name: parts.slice(0, n).join("/"), sub: rest ? `./${rest}` : "." };
}

/**
 * Bundles the folder plugin whose entry is `entry` (inside `root`).
 * @param entry real path of the entry file
 * @param root real path of the plugin's folder
 * @throws BundleError with every problem as `file:line:column: message`
 */
export async function bundlePlugin(entry: string, root: string): Promise<Bundle> {
  if (!inside(root, entry)) {
    throw new BundleError(`cannot bundle: its entry ${entry} is outside the plugin folder ${root}`);
  }
  const esbuild = await loadEsbuild();
  if (!NODE_BUILTINS.size) {
    for (const m of (await import("node:module")).builtinModules) {
      NODE_BUILTINS.add(m.replace(/^node:/, ""));
    }
  }
  const { exports: resolveExports, legacy } = await import("resolve.exports");
  const semver = (await import("semver")).default;
  const fsq = fsMemo();
  const { realOrUndefined, isFile } = fsq;
  const npmCache = realOrUndefined(denoNpmCache()) ?? denoNpmCache();
  const texts = new Map<string, Uint8Array>();
  const pkgJsonCache = new Map<string, Record<string, unknown> | undefined>();

  const readBytes = (p: string) => {
    let b = texts.get(p);
    if (!b) {
      b = Deno.readFileSync(p);
      texts.set(p, b);
    }
    return b;
  };
  const readJson = (p: string): Record<string, unknown> | undefined => {
    if (pkgJsonCache.has(p)) return pkgJsonCache.get(p);
    let v: Record<string, unknown> | undefined;
    if (!isFile(p)) {
      pkgJsonCache.set(p, undefined);
      return undefined;
    }
    try {
      v = JSON.parse(new TextDecoder().decode(readBytes(p)));
    } catch {
      v = undefined;
    }
    pkgJsonCache.set(p, v);
    return v;
  };

  // The folder's import map: deno.json(c) "imports" and package.json dependencies.
  const importMap = new Map<string, string>();
  for (const f of ["deno.json", "deno.jsonc"]) {
    const j = readJson(join(root, f));
    const imports = j?.imports;
    if (imports && typeof imports === "object") {
      for (const [k, v] of Object.entries(imports)) if (typeof v === "string") importMap.set(k, v);
    }
  }
  const rootPkg = readJson(join(root, "package.json"));
  for (const field of ["dependencies", "peerDependencies"]) {
    const deps = rootPkg?.[field];
    if (deps && typeof deps === "object") {
      for (const [k, v] of Object.entries(deps)) {
        if (typeof v === "string" && !importMap.has(k)) importMap.set(k, `npm:${k}@${v}`);
      }
    }
  }

  /** Which installed package a file belongs to: its folder and package.json. */
  const packageOf = (file: string) => {
    for (let d = dirname(file); d.length > 1; d = dirname(d)) {
      if (!inside(npmCache, d) && !inside(root, d)) return undefined;
      if (d === root) return undefined;
      const pj = readJson(join(d, "package.json"));
      if (pj && typeof pj.name === "string") return { dir: d, json: pj };
    }
    return undefined;
  };

  /** The highest cached version of `name` satisfying `range` in Deno's npm cache. */
  const fromCache = (name: string, range: string): string | undefined => {
    const dir = join(npmCache, name);
    const versions: string[] = [];
    try {
      for (const e of Deno.readDirSync(dir)) {
        if (e.isDirectory && semver.valid(e.name)) versions.push(e.name);
      }
    } catch {
      return undefined;
    }
    const best = semver.maxSatisfying(versions, range === "latest" ? "*" : range);
    return best ? join(dir, best) : undefined;
  };

  /** `node_modules/<name>` in `from` or an ancestor, not above `limit`. */
  const fromNodeModules = (name: string, from: string, limit: string) => {
    for (let d = from; inside(limit, d); d = dirname(d)) {
      const p = join(d, "node_modules", name);
      if (isFile(join(p, "package.json"))) return p;
      if (d === limit) break;
    }
    return undefined;
  };

  /** A file or folder path → the file esbuild loads (extensions, index files, package main). */
  const asFile = (p: string): string | undefined => {
    if (isFile(p)) return p;
    for (const ext of EXTENSIONS) if (isFile(p + ext)) return p + ext;
    const pj = readJson(join(p, "package.json"));
    if (pj) {
      const main = legacy(pj as never, { fields: ["module", "main"] });
      if (typeof main === "string") {
        const f = asFile(join(p, main));
        if (f) return f;
      }
    }
    for (const ext of EXTENSIONS) if (isFile(join(p, "index" + ext))) return join(p, "index" + ext);
    return undefined;
  };

  /** An installed package folder + subpath → file (package.json "exports", else legacy fields). */
  const packageEntry = (dir: string, sub: string, require: boolean) => {
    const pj = readJson(join(dir, "package.json"));
    if (pj?.exports !== undefined) {
      let targets: string[] | void;
      try {
        targets = resolveExports(pj as never, sub, { require, conditions: ["deno", "node"] });
      } catch {
        targets = undefined;
      }
      for (const t of targets ?? []) {
        const f = asFile(join(dir, t));
        if (f) return f;
      }
      return undefined;
    }
    return asFile(sub === "." ? dir : join(dir, sub));
  };

  type Resolved = { path?: string; external?: boolean; error?: string };

  const resolveNpm = (
    name: string,
    range: string,
    sub: string,
    importerDir: string,
    require: boolean,
  ): Resolved => {
    if (NODE_BUILTINS.has(name)) return { path: `node:${name}`, external: true };
    let dir = inside(root, importerDir)
      ? fromNodeModules(name, importerDir, root)
      : inside(npmCache, importerDir)
      ? undefined
      : fromNodeModules(name, importerDir, dirname(importerDir));
    if (dir) {
      const pj = readJson(join(dir, "package.json"));
      const v = typeof pj?.version === "string" ? pj.version : undefined;
      if (v && range !== "*" && semver.validRange(range) && !semver.satisfies(v, range)) {
        dir = undefined;
      }
    }
    dir ??= fromCache(name, range);
    if (!dir) {
      return {
        error: `npm package "${name}@${range}" is not installed (looked in the plugin's ` +
          `node_modules/ and Deno's npm cache ${npmCache}); run \`deno install\` or ` +
          `\`deno cache mod.ts\` in the plugin folder`,
      };
    }
    const real = realOrUndefined(dir);
    if (!real || (!inside(root, real) && !inside(npmCache, real))) {
      return {
        error: `npm package "${name}" resolves outside the plugin folder and the npm cache`,
      };
    }
    const file = packageEntry(real, sub, require);
    if (!file) return { error: `npm package "${name}" has no entry for "${sub}"` };
    const realFile = realOrUndefined(file);
    if (!realFile || !inside(real, realFile)) {
      return { error: `refused: "${sub}" of npm package "${name}" resolves outside the package` };
    }
    return { path: realFile };
  };

  /** A relative import (or a deno.json mapping to one) → a file inside the allowed folder. */
  const resolveLocal = (spec: string, target: string, importer: string): Resolved => {
    const fromRoot = inside(root, importer);
    const file = asFile(target);
    const real = file ? realOrUndefined(file) : undefined;
    const pkg = fromRoot ? undefined : packageOf(importer);
    const allowed = fromRoot ? root : pkg?.dir ?? npmCache;
    if (!inside(allowed, target) || (real && !inside(allowed, real))) {
      return {
        error: fromRoot
          ? `refused: imports "${spec}", which is outside the plugin folder ${root}`
          : `refused: imports "${spec}", which is outside its npm package`,
      };
    }
    if (!file || !real) return { error: `cannot find "${spec}"` };
    return { path: real };
  };

  const resolveImport = (
    spec: string,
    importer: string,
    require: boolean,
  ): Resolved => {
    if (SDK_SPECIFIER.test(spec)) return { path: "@coyote/sdk", external: true };
    if (spec.startsWith("node:")) return { path: spec, external: true };
    const importerDir = dirname(importer);
    const fromRoot = inside(root, importer);
    if (spec.startsWith("./") || spec.startsWith("../") || spec === "." || spec === "..") {
      return resolveLocal(spec, resolve(importerDir, spec), importer);
    }
    if (spec.startsWith("npm:")) {
      const p = parseNpmSpecifier(spec.slice(4));
      if (!p) return { error: `malformed npm specifier "${spec}"` };
      if (p.sub.split("/").includes("..")) {
        return { error: `refused: imports "${spec}": a package subpath may not leave its package` };
      }
      return resolveNpm(p.name, p.range, p.sub, importerDir, require);
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(spec) || isAbsolute(spec)) {
      return {
        error: `refused: imports "${spec}": a plugin may import its own files (relative paths ` +
          `inside its folder), npm: packages and node: built-ins, nothing else`,
      };
    }
    // A bare name: the folder's import map for its own files; installed packages otherwise.
    const { name, sub } = splitBare(spec);
    if (fromRoot) {
      const mapped = importMap.get(spec) ??
        (importMap.has(name) && sub !== "." ? `${importMap.get(name)}/${sub.slice(2)}` : undefined);
      if (mapped !== undefined) {
        if (mapped.startsWith("npm:") || mapped.startsWith("node:")) {
          return resolveImport(mapped, importer, require);
        }
        if (mapped.startsWith("./") || mapped.startsWith("../")) {
          return resolveLocal(spec, resolve(root, mapped), importer);
        }
        return {
          error: `refused: imports "${spec}", mapped to "${mapped}" by the plugin's deno.json`,
        };
      }
      if (NODE_BUILTINS.has(name)) return { path: `node:${name}`, external: true };
      const dir = fromNodeModules(name, importerDir, root);
      if (!dir) {
        return {
          error: `cannot resolve "${spec}": use an npm: specifier (npm:${name}) or map it in the ` +
            `plugin's deno.json "imports"`,
        };
      }
      return resolveNpm(name, "*", sub, importerDir, require);
    }
    // Inside an npm package: the range its package.json gives.
    const pkg = packageOf(importer);
    const deps = pkg?.json;
    let range = "*";
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
      const d = deps?.[field] as Record<string, string> | undefined;
      if (d && typeof d[name] === "string") {
        range = d[name];
        break;
      }
    }
    if (pkg?.json.name === name) {
      const file = packageEntry(pkg.dir, sub, require);
      return file ? { path: file } : { error: `cannot resolve "${spec}"` };
    }
    if (!semver.validRange(range)) range = "*";
    return resolveNpm(name, range, sub, importerDir, require);
  };

  // deno-lint-ignore no-explicit-any
  const plugin: any = {
    name: "coyote-plugin-folder",
    // deno-lint-ignore no-explicit-any
    setup(build: any) {
      // deno-lint-ignore no-explicit-any
      build.onResolve({ filter: /.*/ }, (args: any) => {
        if (args.kind === "entry-point") return { path: args.path };
        const r = resolveImport(args.path, args.importer, args.kind === "require-call");
        if (r.error) return { errors: [{ text: r.error }] };
        if (r.external) return { path: r.path, external: true };
        return { path: r.path, pluginData: { with: args.with } };
      });
      // deno-lint-ignore no-explicit-any
      build.onLoad({ filter: /.*/ }, (args: any) => {
        const type = args.with?.type ?? args.pluginData?.with?.type;
        const loader = type === "text"
          ? "text"
          : type === "json"
          ? "json"
          : LOADERS[extname(args.path)];
        if (!loader) {
          return {
            errors: [{
              text: `cannot import ${args.path}: unknown file type (use with { type: "text" })`,
            }],
          };
        }
        const bytes = readBytes(args.path);
        return { contents: bytes, loader, resolveDir: dirname(args.path) };
      });
    },
  };

  let result;
  try {
    result = await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      target: "esnext",
      logLevel: "silent",
      charset: "utf8",
      legalComments: "none",
      banner: { js: REQUIRE_BUILTIN },
      plugins: [plugin],
    });
  } catch (e) {
    // deno-lint-ignore no-explicit-any
    const errors: any[] = (e as { errors?: unknown[] }).errors ?? [];
    if (!errors.length) throw new BundleError(`cannot bundle: ${(e as Error).message}`);
    const shown = errors.slice(0, 10).map((m) => {
      const loc = m.location;
      const file = loc?.file ? displayPath(root, loc.file) : displayPath(root, entry);
      return loc ? `${file}:${loc.line}:${loc.column + 1}: ${m.text}` : `${file}: ${m.text}`;
    });
    if (errors.length > 10) shown.push(`… and ${errors.length - 10} more`);
    throw new BundleError(`cannot bundle: ${shown.join("; ")}`);
  }
  const code: string = result.outputFiles[0].text;
  const inputs: BundleInput[] = [];
  for (const [p, b] of texts) inputs.push({ path: p, sha256: await sha256(b) });
  for (const p of fsq.missing()) if (inside(root, p)) inputs.push({ path: p, sha256: "" });
  inputs.sort((a, b) => byCodeUnit(a.path, b.path));
  return { code, inputs };
}

/** esbuild's file name (relative to its working directory "/" in the wasm build) → shown path. */
function displayPath(root: string, p: string): string {
  const abs = resolve("/", p.replace(/^file:/, ""));
  return inside(root, abs) ? relative(root, abs) : abs;
}
