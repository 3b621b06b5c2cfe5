/**
 * Finds plugin modules. Sources, in precedence order (the first plugin with a
 * given real path or name wins):
 *
 * 1. `--plugin PATH` (repeatable; relative to the process cwd),
 * 2. the config file's `plugins:` list (relative to the config file's folder),
 * 3. `<workspace>/.coyote/plugins/` (only in a trusted workspace, core/config/trust.ts),
 * 4. `<configDir>/plugins/`.
 *
 * A plugin is a file (`*.ts`, `*.mts`, `*.js`, `*.mjs`; not `*.d.ts`) or a folder
 * holding `mod.ts`, `plugin.ts`, `mod.js` or `plugin.js` (first found). Entries
 * of the two folders are taken in name order; names starting with `.` or `_`
 * are skipped. Duplicates are removed by real path.
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "../../util/path.ts";

/** Where a plugin was found. */
export type PluginOrigin = "flag" | "config" | "workspace" | "user";

/** A plugin module to load. */
export interface PluginLocation {
  /** The path as the user gave it or as found. */
  path: string;
  /** Real path of the entry file (symlinks resolved). */
  entry: string;
  /**
   * Real path of the plugin's folder when the plugin is a folder: its files and
   * npm packages are bundled at load (bundle.ts). Absent for a one-file plugin,
   * which must be self-contained.
   */
  root?: string;
  origin: PluginOrigin;
}

const FILE_RE = /\.(ts|mts|js|mjs)$/;
const FOLDER_ENTRIES = ["mod.ts", "plugin.ts", "mod.js", "plugin.js"];

async function stat(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.stat(path);
  } catch {
    return undefined;
  }
}

/** Resolves a file or plugin folder to its entry file, or explains why not. */
export async function resolveEntry(
  path: string,
): Promise<{ entry: string; root?: string } | { error: string }> {
  const info = await stat(path);
  if (!info) return { error: `${path}: not found` };
  if (info.isDirectory) {
    for (const name of FOLDER_ENTRIES) {
      const f = join(path, name);
      if ((await stat(f))?.isFile) {
        return { entry: await Deno.realPath(f), root: await Deno.realPath(path) };
      }
    }
    return { error: `${path}: folder has no ${FOLDER_ENTRIES.join(" / ")}` };
  }
  if (!FILE_RE.test(path) || path.endsWith(".d.ts")) {
    return { error: `${path}: not a plugin module (expected .ts, .mts, .js or .mjs)` };
  }
  return { entry: await Deno.realPath(path) };
}

function expandHome(p: string): string {
  if (p === "~" || p.startsWith("~/")) {
    const home = Deno.env.get("HOME") ?? "";
    return join(home, p.slice(1));
  }
  return p;
}

async function listFolder(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.startsWith(".") || e.name.startsWith("_")) continue;
      const p = join(dir, e.name);
      if (e.isDirectory || (await stat(p))?.isDirectory) {
        if (
          (await Promise.all(FOLDER_ENTRIES.map((n) => stat(join(p, n))))).some((s) => s?.isFile)
        ) {
          out.push(p);
        }
      } else if (FILE_RE.test(e.name) && !e.name.endsWith(".d.ts")) out.push(p);
    }
  } catch {
    return [];
  }
  return out.sort();
}

/** Inputs of discovery (a subset of AppOptions). */
export interface DiscoverInput {
  cwd: string;
  configDir: string;
  configPath?: string;
  configPlugins?: unknown;
  flagPlugins: string[];
  /** Process cwd, for `--plugin` relative paths (defaults to `cwd`). */
  processCwd?: string;
  /** The workspace is trusted (core/config/trust.ts): only then is `<cwd>/.coyote/plugins/` read. */
  trusted?: boolean;
}

/**
 * Lists plugin locations in precedence order, de-duplicated by real path.
 * Problems (missing paths, URLs) come back as warnings; discovery never throws.
 */
export async function discoverPlugins(
  input: DiscoverInput,
): Promise<{ plugins: PluginLocation[]; warnings: string[] }> {
  const warnings: string[] = [];
  const candidates: { path: string; origin: PluginOrigin }[] = [];
  const base = input.processCwd ?? input.cwd;
  for (const p of input.flagPlugins) {
    candidates.push({ path: resolve(base, expandHome(p)), origin: "flag" });
  }
  if (input.configPlugins !== undefined) {
    const list = Array.isArray(input.configPlugins) ? input.configPlugins : [];
    const cfgBase = input.configPath ? dirname(input.configPath) : input.cwd;
    for (const p of list) {
      if (typeof p !== "string") continue;
      if (/^[a-z][a-z0-9+.-]*:/i.test(p) && !p.startsWith("file:")) {
        warnings.push(
          `plugin ${p}: only local paths are supported (download the plugin and list its path)`,
        );
        continue;
      }
      const local = p.startsWith("file:") ? new URL(p).pathname : expandHome(p);
      candidates.push({
        path: isAbsolute(local) ? local : resolve(cfgBase, local),
        origin: "config",
      });
    }
  }
  const wsFolder = input.trusted ? join(input.cwd, ".coyote", "plugins") : "";
  for (const p of wsFolder ? await listFolder(wsFolder) : []) {
    candidates.push({ path: p, origin: "workspace" });
  }
  for (const p of await listFolder(join(input.configDir, "plugins"))) {
    candidates.push({ path: p, origin: "user" });
  }
  const seen = new Set<string>();
  const plugins: PluginLocation[] = [];
  for (const c of candidates) {
    const r = await resolveEntry(c.path);
    if ("error" in r) {
      warnings.push(`plugin ${r.error}`);
      continue;
    }
    if (seen.has(r.entry)) continue;
    seen.add(r.entry);
    plugins.push({ path: c.path, entry: r.entry, root: r.root, origin: c.origin });
  }
  return { plugins, warnings };
}
