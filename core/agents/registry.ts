/**
 * The agent registry: every agent a workspace can run, by name, from five sources. A later source
 * shadows an earlier one of the same name:
 *
 * 1. `builtin` — `agents/` of this repository, embedded in the binary (agents/mod.ts);
 * 2. `plugin` — `agents` of loaded plugins (SDK `AgentDefinition`);
 * 3. `user` — `<config dir>/agents/`;
 * 4. `workspace` — `.claude/agents/` then `.coyote/agents/` of each directory from the repository
 *    root down to the working directory (core/config/workspace_dirs.ts), so the nearest directory wins
 *    and, within one directory, Coyote's own folder wins over Claude Code's.
 *
 * In a directory source, `<name>/config.yaml` is an LLM agent, `<name>/graph.yaml` a graph agent
 * (run by core/graph/; its scripts beside it in `scripts/`), `<name>.md` a Markdown agent
 * (core/agents/definition.ts). A broken file does not stop the others: it is kept as an entry with
 * its error, reported by `coyote agents list`, and thrown when the agent is chosen.
 * @module
 */
import { basename, dirname, join } from "../util/path.ts";
import type { AgentDefinition } from "../../sdk/mod.ts";
import type { AgentSpec } from "../protocol/types.ts";
import { builtinAgentFiles } from "../../agents/mod.ts";
import { outsideWorkspace, workspaceDirs, workspaceTop } from "../config/workspace_dirs.ts";
import {
  AGENT_NAME_RE,
  AgentFileError,
  checkPluginAgent,
  parseAgentConfig,
  parseAgentMarkdown,
  type ParsedAgent,
} from "./definition.ts";
import { didYouMean } from "../util/text.ts";
import { byCodeUnit } from "../util/text.ts";

/** Where an agent comes from (later shadows earlier). */
export type AgentSource = "builtin" | "plugin" | "user" | "workspace";
/** `llm`: a tool-loop agent; `graph`: a `graph.yaml` agent (core/graph/). */
export type AgentKind = "llm" | "graph";

/** One agent of the registry. */
export interface AgentEntry {
  name: string;
  kind: AgentKind;
  source: AgentSource;
  /** The file it was read from (`builtin:agents/<name>/config.yaml` for built-ins, `plugin:<name>`). */
  path: string;
  description: string;
  /** The validated definition (llm agents without an error). */
  definition?: AgentDefinition;
  /** A graph agent's `graph.yaml` text (for the graph engine; core/graph/). */
  graphText?: string;
  /** Why the file cannot be used (it names the file and the field). */
  error?: string;
  /** Non-fatal notes about the file. */
  warnings: string[];
  /** A config agent's display `name` (the original Coyote's, e.g. "Demo" in folder `demo`). */
  displayName?: string;
  /** Files of the same name this entry shadows, earliest first. */
  shadows: string[];
}

/** A user error about agents (unknown name, not runnable): exit code 2, no stack trace. */
export class AgentUsageError extends Error {
  override name = "UsageError";
}

/** A directory that may hold agents, with its source tag. */
interface AgentDir {
  dir: string;
  source: AgentSource;
  /** Workspace folders: files whose real path leaves this root (the repository) are not read. */
  within?: string;
}

/** Where to look, in shadowing order (earliest first). */
export function agentDirs(configDir: string, cwd: string): AgentDir[] {
  const within = workspaceTop(cwd);
  const ws = workspaceDirs(cwd).reverse().flatMap((d) => [
    { dir: join(d, ".claude", "agents"), source: "workspace" as const, within },
    { dir: join(d, ".coyote", "agents"), source: "workspace" as const, within },
  ]);
  return [{ dir: join(configDir, "agents"), source: "user" }, ...ws];
}

/**
 * Warnings for the original Coyote's agent-only function files (`tools.sh`, `tools.py`: argc
 * `# @cmd` functions), which this Coyote does not run: one line naming the file and what to do.
 */
export async function agentFunctionFiles(folder: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of ["tools.sh", "tools.py"]) {
    const path = join(folder, f);
    const found = await Deno.stat(path).then((s) => s.isFile, () => false);
    if (found) {
      out.push(
        `agent file ${path}: agent-only functions are not supported by this Coyote; its functions are not tools here (port each as a plugin tool, or call it through execute_command)`,
      );
    }
  }
  return out;
}

/** Parses one agent file into an entry (never throws for a broken file: the entry holds the error). */
export async function fileEntry(
  path: string,
  text: string,
  form: "config" | "markdown" | "graph",
  name: string,
  source: AgentSource,
  files?: Record<string, string>,
): Promise<AgentEntry> {
  const base = { name, source, path, warnings: [] as string[], shadows: [] as string[] };
  if (form === "graph") {
    // Graph files are only parsed and checked when first looked at (a session start pays for
    // none it does not run). Checked: the schema (node and field named on error) and the graph's
    // own structure; what needs the workspace (tools, agents) is checked before every run.
    const [{ parseGraphText, scriptReader }, { validateGraph }, yaml] = await Promise.all([
      import("../graph/load.ts"),
      import("../graph/validate.ts"),
      import("yaml"),
    ]);
    const dir = dirname(path);
    let read: { description: string; error?: string; definition?: AgentSpec } | undefined;
    const look = () => {
      if (read) return read;
      try {
        const spec = parseGraphText(
          text,
          path,
          files ? (rel) => files[rel] : scriptReader(dir),
        );
        base.warnings.push(...spec.warnings ?? []);
        validateGraph(spec, path, {
          scriptExists: (rel) => {
            if (files) return Object.hasOwn(files, rel);
            try {
              return Deno.statSync(join(dir, rel)).isFile;
            } catch {
              return false;
            }
          },
        });
        const definition: AgentSpec = {
          name,
          description: (spec.description ?? "").trim(),
          instructions: "",
          ...(spec.tools ? { tools: spec.tools } : {}),
          ...(spec.model ? { model: spec.model } : {}),
          ...(spec.mcp_servers ? { mcp_servers: spec.mcp_servers } : {}),
          ...(spec.variables
            ? {
              variables: spec.variables.map((v) => ({
                name: v.name,
                ...(v.description ? { description: v.description } : {}),
                ...(v.default !== undefined && v.default !== null
                  ? { default: String(v.default) }
                  : {}),
              })),
            }
            : {}),
          graph: { spec, dir, ...(files ? { files } : {}) },
        };
        read = { description: definition.description, definition };
      } catch (e) {
        // Listed with its description when the YAML is readable at all.
        let description = "";
        try {
          const d = yaml.parse(text)?.description;
          if (typeof d === "string") description = d.trim();
        } catch { /* no description */ }
        read = { description, error: (e as Error).message };
      }
      return read;
    };
    const entry = { ...base, kind: "graph" as const, graphText: text } as AgentEntry;
    Object.defineProperties(entry, {
      description: { get: () => look().description, enumerable: true },
      error: { get: () => look().error, enumerable: true },
      definition: { get: () => look().definition, enumerable: true },
    });
    return entry;
  }
  try {
    const parsed: ParsedAgent = form === "config"
      ? await parseAgentConfig(text, path, name)
      : await parseAgentMarkdown(text, path, name);
    return {
      ...base,
      name: parsed.definition.name,
      kind: "llm",
      description: parsed.definition.description,
      definition: parsed.definition,
      warnings: parsed.warnings,
      ...(parsed.displayName ? { displayName: parsed.displayName } : {}),
    };
  } catch (e) {
    if (!(e instanceof AgentFileError)) throw e;
    return { ...base, kind: "llm", description: "", error: e.message };
  }
}

/** `s` with control characters as `\uXXXX` (file names from a repository reach terminals). */
function printable(s: string): string {
  return s.replace(
    // deno-lint-ignore no-control-regex
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * The entry of a file or folder whose name cannot be an agent name (control characters, `..`,
 * spaces): listed with an error, never runnable, its name and path printable — an agent name
 * becomes agent ids, event fields and status lines, so a repository must not choose its bytes.
 */
function badNameEntry(path: string, name: string, source: AgentSource): AgentEntry {
  return {
    name: printable(name),
    kind: "llm",
    source,
    path: printable(path),
    description: "",
    warnings: [],
    shadows: [],
    error: `agent file ${printable(path)}: ${
      JSON.stringify(name)
    } is not an agent name (1-64 letters, digits, '.', '_' or '-')`,
  };
}

/** Reads the agents of one directory (missing directory: none). Sorted by name. */
async function readAgentDir({ dir, source, within }: AgentDir): Promise<AgentEntry[]> {
  const readText = (p: string): Promise<string> => {
    const outside = within === undefined ? undefined : outsideWorkspace(p, within);
    return outside ? Promise.reject(new Error(outside)) : Deno.readTextFile(p);
  };
  let names: { name: string; isDir: boolean }[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.startsWith(".")) continue;
      names.push({ name: e.name, isDir: e.isDirectory || e.isSymlink });
    }
  } catch {
    return [];
  }
  names = names.sort((a, b) => byCodeUnit(a.name, b.name));
  const out: Promise<AgentEntry | null>[] = [];
  for (const { name, isDir } of names) {
    if (!isDir && name.endsWith(".md")) {
      const path = join(dir, name);
      out.push(
        readText(path).then(
          async (t) => {
            // A front-matter name wins over the file's (Claude Code's rule); an entry still
            // named after an odd file name (no valid `name:`) is listed printably.
            const e = await fileEntry(path, t, "markdown", basename(name, ".md"), source);
            if (!AGENT_NAME_RE.test(e.name)) return badNameEntry(path, e.name, source);
            e.path = printable(e.path); // read already; only shown from here on
            return e;
          },
          () => null,
        ),
      );
      continue;
    }
    if (!isDir) continue;
    out.push((async () => {
      const read = (f: string) => readText(join(dir, name, f)).catch(() => null);
      const [config, graph] = await Promise.all([read("config.yaml"), read("graph.yaml")]);
      if (config === null && graph === null) return null; // not an agent folder
      // A folder agent is named after its folder.
      if (!AGENT_NAME_RE.test(name)) return badNameEntry(join(dir, name), name, source);
      if (config !== null && graph !== null) {
        const path = join(dir, name);
        return {
          name,
          kind: "llm",
          source,
          path,
          description: "",
          warnings: [],
          shadows: [],
          error: new AgentFileError(
            path,
            "holds both config.yaml and graph.yaml; keep one (config.yaml: LLM agent, graph.yaml: graph agent)",
          ).message,
        } satisfies AgentEntry;
      }
      const entry = config !== null
        ? await fileEntry(join(dir, name, "config.yaml"), config, "config", name, source)
        : await fileEntry(join(dir, name, "graph.yaml"), graph!, "graph", name, source);
      entry.warnings.push(...await agentFunctionFiles(join(dir, name)));
      return entry;
    })());
  }
  return (await Promise.all(out)).filter((e): e is AgentEntry => e !== null);
}

/**
 * The agents of one workspace, by name. Two views: the entries (every file, including graph
 * agents and broken files, for `coyote agents` and error messages) and the runnable LLM agents
 * as `AgentSpec`s (`get`/`has`/`list`/`names`, what sessions and the supervisor use).
 */
export class AgentRegistry {
  readonly #byName = new Map<string, AgentEntry>();

  /** Adds entries in shadowing order: a later entry of a name replaces the earlier one. */
  constructor(entries: AgentEntry[] = []) {
    for (const e of entries) this.#add(e);
  }

  #add(e: AgentEntry) {
    const prev = this.#byName.get(e.name);
    if (prev) e.shadows = [...prev.shadows, prev.path];
    this.#byName.set(e.name, e);
  }

  /** Adds (or shadows) an LLM agent given as a definition; `source` names where it came from. */
  register(def: AgentDefinition, source: AgentSource = "plugin"): void {
    this.#add({
      name: def.name,
      kind: "llm",
      source,
      path: `${source}:${def.name}`,
      description: def.description,
      definition: def,
      warnings: [],
      shadows: [],
    });
  }

  /** Every entry (the winning one of each name), sorted by name. */
  entries(): AgentEntry[] {
    return [...this.#byName.values()].sort((a, b) => byCodeUnit(a.name, b.name));
  }

  /** The entry of `name`, or undefined. */
  entry(name: string): AgentEntry | undefined {
    return this.#byName.get(name);
  }

  /** The runnable agent `name` (with `source`; a graph agent has `graph`), or undefined (unknown or broken). */
  get(name: string): AgentSpec | undefined {
    const e = this.#byName.get(name);
    return e?.definition && !e.error ? { ...e.definition, source: e.source } : undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Every runnable LLM agent, sorted by name. */
  list(): AgentSpec[] {
    return this.entries().map((e) => this.get(e.name)).filter((d): d is AgentSpec => !!d);
  }

  names(): string[] {
    return this.list().map((d) => d.name);
  }

  /**
   * Warnings of every entry (lenient front matter, ignored keys), plus one line for each built-in
   * a workspace file replaces: a cloned repository can redefine even the default agent, and the
   * user should see that it did.
   */
  warnings(): string[] {
    return this.entries().flatMap((e) => [
      ...e.warnings,
      ...(e.source === "workspace" && e.shadows.some((p) => p.startsWith("builtin:"))
        ? [`agent "${e.name}" is defined by ${e.path}, replacing the built-in one`]
        : []),
    ]);
  }

  /**
   * Why `name` cannot run: the file's error (naming file and field) for a broken file, "is a
   * graph agent" for a graph, else `unknown agent "x" (did you mean "y"?); available: …`.
   */
  unknown(name: string): string {
    const e = this.#byName.get(name);
    if (e?.error) return e.error;
    const names = this.entries().map((x) => x.name);
    return `unknown agent "${name}"${didYouMean(name, names)}; available: ${names.join(", ")}`;
  }

  /**
   * The definition of `name`.
   * @throws AgentUsageError (unknown name, graph agent) or a ConfigError-named Error (broken
   *   file, the message naming file and field).
   */
  resolve(name: string): AgentSpec {
    const d = this.get(name);
    if (d) return d;
    const err = new Error(this.unknown(name));
    err.name = this.#byName.get(name)?.error ? "ConfigError" : "UsageError";
    throw err;
  }
}

/** The built-in agents (agents/mod.ts), parsed. */
export function parseBuiltinAgents(): Promise<AgentEntry[]> {
  return Promise.all(
    builtinAgentFiles.map((f) => fileEntry(f.path, f.text, f.form, f.name, "builtin", f.files)),
  );
}

/** What {@link loadAgentRegistry} reads. */
export interface AgentSources {
  configDir: string;
  cwd: string;
  /** Already-parsed built-ins (core/agents/builtins.ts cache); parsed here when absent. */
  builtins?: AgentEntry[];
  /** Agents contributed by loaded plugins, with the plugin's name for messages. */
  pluginAgents?: { plugin?: string; agent: AgentDefinition }[];
  /**
   * Whether the workspace is trusted (core/config/trust.ts). An untrusted repository's agent files may
   * add agents but never replace one of the same name from Coyote, a plugin or the user's config
   * dir (a cloned repository must not take over `sisyphus`); each refusal is a warning.
   * Default: trusted.
   */
  trusted?: boolean;
}

/** Builds the registry of a workspace from every source. Never throws for broken files. */
export async function loadAgentRegistry(src: AgentSources): Promise<AgentRegistry> {
  const builtins = src.builtins ? Promise.resolve(src.builtins) : parseBuiltinAgents();
  // A plugin's graph agent (SDK `graph_yaml` + `graph_files`) is read like a graph.yaml folder.
  const pluginGraphs = await Promise.all(
    (src.pluginAgents ?? []).filter(({ agent }) => typeof agent?.graph_yaml === "string").map((
      { plugin, agent },
    ) =>
      fileEntry(
        `plugin:${plugin ?? agent.name}/${agent.name}/graph.yaml`,
        agent.graph_yaml!,
        "graph",
        agent.name,
        "plugin",
        agent.graph_files ?? {},
      )
    ),
  );
  const plugins: AgentEntry[] = (src.pluginAgents ?? []).filter(({ agent }) =>
    typeof agent?.graph_yaml !== "string"
  ).map(({ plugin, agent }) => {
    const origin = `plugin:${plugin ?? agent?.name ?? "?"}`;
    try {
      const d = checkPluginAgent(agent, origin);
      return {
        name: d.name,
        kind: "llm",
        source: "plugin",
        path: origin,
        description: d.description,
        definition: d,
        warnings: [],
        shadows: [],
      };
    } catch (e) {
      return {
        name: String(agent?.name ?? "?"),
        kind: "llm",
        source: "plugin",
        path: origin,
        description: "",
        error: (e as Error).message,
        warnings: [],
        shadows: [],
      };
    }
  });
  const dirs = (await Promise.all(agentDirs(src.configDir, src.cwd).map(readAgentDir))).flat();
  const earlier = [...await builtins, ...plugins, ...pluginGraphs];
  let local = dirs;
  if (src.trusted === false) {
    const fixed = new Map<string, AgentEntry>();
    for (const e of [...earlier, ...dirs.filter((d) => d.source === "user")]) fixed.set(e.name, e);
    local = dirs.filter((e) => {
      const kept = fixed.get(e.name);
      if (e.source !== "workspace" || !kept) return true;
      // Noted on the entry that stays (a copy: built-in entries are shared with the cache).
      const note =
        `${e.path} would replace the ${kept.source} agent "${e.name}"; ignored in an untrusted workspace (coyote trust)`;
      const copy = Object.create(
        Object.getPrototypeOf(kept),
        Object.getOwnPropertyDescriptors(kept),
      );
      copy.warnings = [...kept.warnings, note];
      fixed.set(e.name, copy);
      const list = kept.source === "user" ? dirs : earlier;
      list[list.indexOf(kept)] = copy;
      return false;
    });
  }
  return new AgentRegistry([...earlier, ...local]);
}
