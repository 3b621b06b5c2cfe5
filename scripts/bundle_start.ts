/**
 * `deno task bundle` (also run by `deno task gen` and `deno task install`): writes the start
 * bundle, `<checkout>/.bundle/` (git-ignored), which main.ts loads instead of the sources when
 * its stamp matches them (core/frontends/cli/start_bundle.ts). Why: ≈ 65% of the path to the
 * first model request is Deno loading and compiling ~180 local modules one by one; the bundle
 * is the same program in ~140 files (≈ 65 of them on the headless path), built by npm
 * `esbuild-wasm` with code splitting, so every `import()` of the sources stays an `import()` of
 * a chunk and loads when it runs.
 *
 * - Entries: `core/frontends/cli/mod.ts` (`cli.js`) and `core/frontends/acp/stdio.ts`
 *   (`acp_stdio.js`); shared modules are shared chunks, so each module has one instance.
 * - npm packages, `node:` built-ins and every bare specifier stay imports, resolved at run time
 *   through deno.json, as from the sources.
 * - `import.meta.url` of a bundled file is replaced by its source file's URL, so paths computed
 *   from it (the plugin host entry, Coyote's own root) are the sources' paths.
 * - The modules whose functions are sent as source text to another isolate
 *   (`Function.prototype.toString`: the plugin worker bootstrap, the plugin SDK prelude, the
 *   graph script bootstrap) are not bundled: they are imported from the sources by absolute
 *   URL, since bundling may rename the names their text refers to.
 * - `stamp.json`: the checkout's root, the Deno version, every bundled input's path, size, mtime
 *   and SHA-256, and `build`, the folder of this build's files. Each build gets its own folder
 *   (`.bundle/<build>/`); the stamp is written last and renamed over the old one, so a reader
 *   never sees chunks without their stamp, and earlier builds stay (a week) for the processes
 *   started on them — a REPL open during a rebuild lazily loads its chunks from its own build.
 *
 * Usage: deno task bundle [--out DIR] (default `<checkout>/.bundle`). Takes 3–15 s.
 * @module
 */
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import {
  BUNDLE_DIR,
  type BundleStamp,
  ENTRIES,
  sha256Hex,
} from "../core/frontends/cli/start_bundle.ts";

const ROOT = decodeURIComponent(new URL("../", import.meta.url).pathname).replace(/\/$/, "");

/** Modules kept out of the bundle (see the module doc), relative to the checkout. */
const FROM_SOURCES = new Set([
  "core/extensions/plugin_host/worker_main.ts",
  "core/extensions/plugin_host/source.ts",
  "core/graph/script_main.ts",
]);

/**
 * npm specifiers our start paths import, bundled too (by `deno bundle`, which resolves npm
 * packages as `deno run` does, into `npm/`, one entry each, code-split so a package they share —
 * zod under the ACP SDK — has one instance): zod's ~95 files and the ACP SDK load as a few
 * chunks; `@cfworker/json-schema` validates the built-in tools' calls (core/tools/registry.ts),
 * so the first tool call costs no npm resolution. Pure ES modules only; every other npm package
 * stays an import of Deno's npm cache.
 */
export const NPM_BUNDLED = [
  "zod",
  "@cfworker/json-schema",
  "openai/core/streaming",
  "openai/core/error",
  "@agentclientprotocol/sdk",
] as const;

/** The file name `deno bundle` gives the entry of `spec` (its shim's name). */
const npmEntryName = (spec: string) => spec.replace(/^@/, "").replace(/[/]/g, "__");

/** Bundles {@link NPM_BUNDLED} into `<out>/npm/` with `deno bundle` (a subprocess). */
async function bundleNpm(root: string, out: string): Promise<void> {
  const shims = join(out, "npm-src");
  await Deno.mkdir(shims, { recursive: true });
  const files: string[] = [];
  for (const spec of NPM_BUNDLED) {
    const f = join(shims, `${npmEntryName(spec)}.ts`);
    await Deno.writeTextFile(f, `export * from ${JSON.stringify(spec)};\n`);
    files.push(f);
  }
  const o = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--config",
      join(root, "deno.json"),
      "--platform",
      "deno",
      "--code-splitting",
      "--outdir",
      join(out, "npm"),
      ...files,
    ],
    env: { DENO_NO_UPDATE_CHECK: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!o.success) {
    throw new Error(`deno bundle of npm packages failed: ${new TextDecoder().decode(o.stderr)}`);
  }
  await Deno.remove(shims, { recursive: true });
}

const LOADERS: Record<string, string> = {
  ".ts": "ts",
  ".js": "js",
  ".mjs": "js",
  ".json": "json",
};

// deno-lint-ignore no-explicit-any
type Esbuild = any;

let esbuildReady: Promise<Esbuild> | undefined;

/** esbuild-wasm, initialised once per process (a second `initialize` throws). */
function loadEsbuild(): Promise<Esbuild> {
  return esbuildReady ??= (async () => {
    const esbuild = await import("esbuild-wasm/esm/browser.js");
    const wasm = await Deno.readFile(new URL(import.meta.resolve("esbuild-wasm/esbuild.wasm")));
    await esbuild.initialize({ wasmModule: await WebAssembly.compile(wasm), worker: false });
    return esbuild;
  })();
}

/**
 * Builds the start bundle of the checkout at `root` into `out` (replaced as a whole) and returns
 * its stamp. Throws on a bundling error (nothing is replaced then).
 */
export async function buildStartBundle(
  root = ROOT,
  out = join(root, BUNDLE_DIR),
): Promise<BundleStamp> {
  const esbuild = await loadEsbuild();
  // This build's own folder (BundleStamp.build): earlier builds stay for processes started on them.
  const build = `b${Date.now().toString(36)}-${Deno.pid}`;
  await Deno.mkdir(out, { recursive: true });
  const tmp = join(out, `${build}.tmp`);
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  const result = await esbuild.build({
    entryPoints: Object.fromEntries(
      Object.entries(ENTRIES).map(([name, src]) => [name, join(root, src)]),
    ),
    bundle: true,
    format: "esm",
    splitting: true,
    outdir: tmp,
    write: false,
    platform: "neutral",
    target: "esnext",
    metafile: true,
    logLevel: "silent",
    plugins: [{
      name: "coyote-sources",
      // deno-lint-ignore no-explicit-any
      setup(b: any) {
        // deno-lint-ignore no-explicit-any
        b.onResolve({ filter: /.*/ }, (a: any) => {
          if (a.kind === "entry-point") return { path: a.path, namespace: "file" };
          if (!a.path.startsWith(".") && !a.path.startsWith("/")) {
            // Every chunk sits at the top of the bundle's folder, beside npm/.
            if ((NPM_BUNDLED as readonly string[]).includes(a.path)) {
              return { path: `./npm/${npmEntryName(a.path)}.js`, external: true };
            }
            return { path: a.path, external: true };
          }
          const p = a.path.startsWith("/") ? a.path : join(dirname(a.importer), a.path);
          if (FROM_SOURCES.has(relative(root, p))) {
            return { path: pathToFileURL(p).href, external: true };
          }
          return { path: p, namespace: "file" };
        });
        // deno-lint-ignore no-explicit-any
        b.onLoad({ filter: /.*/, namespace: "file" }, async (a: any) => {
          const ext = a.path.match(/\.[^./]+$/)?.[0] ?? "";
          if (a.with?.type === "text") {
            return { contents: await Deno.readFile(a.path), loader: "text" };
          }
          const loader = LOADERS[ext];
          if (!loader) throw new Error(`no loader for ${a.path}`);
          let contents = await Deno.readTextFile(a.path);
          if (loader !== "json") {
            contents = contents.replaceAll(
              "import.meta.url",
              JSON.stringify(pathToFileURL(a.path).href),
            );
          }
          return { contents, loader };
        });
      },
    }],
  });
  await Deno.mkdir(tmp, { recursive: true });
  await bundleNpm(root, tmp);
  for (const f of result.outputFiles) {
    await Deno.mkdir(dirname(f.path), { recursive: true });
    await Deno.writeFile(f.path, f.contents);
  }
  const files: BundleStamp["files"] = [];
  // deno.lock: which npm versions the bundled packages are.
  for (
    const input of [...Object.keys(result.metafile.inputs), `${root.slice(1)}/deno.lock`].sort()
  ) {
    const abs = input.startsWith("/") ? input : `/${input}`; // esbuild-wasm names inputs relative to "/"
    const bytes = await Deno.readFile(abs);
    const st = await Deno.stat(abs);
    files.push([
      relative(root, abs),
      bytes.length,
      st.mtime?.getTime() ?? 0,
      await sha256Hex(bytes),
    ]);
  }
  const stamp: BundleStamp = { root, deno: Deno.version.deno, files, build };
  await Deno.rename(tmp, join(out, build));
  // The stamp last, renamed over the old one: a reader sees the old build or the new, whole.
  const next = join(out, `stamp.json.${build}`);
  await Deno.writeTextFile(next, JSON.stringify(stamp) + "\n");
  await Deno.rename(next, join(out, "stamp.json"));
  await pruneBuilds(out, build);
  return stamp;
}

/** How long an earlier build's folder is kept for processes started on it (ms): a week. */
const KEEP_BUILDS_MS = 7 * 24 * 3600_000;

/**
 * Removes from `out` what no fresh start can load any more and no running process is likely to:
 * earlier builds' folders (and the files of the single-folder layout before them) older than
 * {@link KEEP_BUILDS_MS}, and another build's leftovers (`*.tmp`, stamp temporaries) older than
 * an hour. Never the current build or the stamp; errors are ignored.
 */
async function pruneBuilds(out: string, current: string): Promise<void> {
  const now = Date.now();
  for await (const e of Deno.readDir(out)) {
    if (e.name === current || e.name === "stamp.json") continue;
    const p = join(out, e.name);
    try {
      const age = now - ((await Deno.lstat(p)).mtime?.getTime() ?? now);
      const leftover = e.name.endsWith(".tmp") || e.name.startsWith("stamp.json.");
      if (age > (leftover ? 3600_000 : KEEP_BUILDS_MS)) await Deno.remove(p, { recursive: true });
    } catch { /* gone, or in use elsewhere */ }
  }
}

if (import.meta.main) {
  // `--quiet` (deno task install): silent when it works; a failure is one line and exit 0, since
  // Coyote runs from the sources without a bundle.
  const quiet = Deno.args.includes("--quiet");
  const i = Deno.args.indexOf("--out");
  const t0 = performance.now();
  try {
    const stamp = await buildStartBundle(ROOT, i >= 0 ? Deno.args[i + 1] : undefined);
    if (!quiet) {
      console.error(
        `start bundle: ${stamp.files.length} inputs → ${
          i >= 0 ? Deno.args[i + 1] : join(ROOT, BUNDLE_DIR)
        } in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    }
  } catch (e) {
    console.error(`start bundle not built (Coyote runs from the sources): ${(e as Error).message}`);
    if (!quiet) Deno.exit(1);
  }
}
