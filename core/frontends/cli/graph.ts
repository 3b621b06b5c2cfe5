/**
 * `coyote graph check PATH`: validates a graph agent (a folder holding graph.yaml, the file
 * itself, or the name of a graph agent) with everything the validator can check before a run:
 * the schema (node and field named), references, reachability, static cycles, parallel writes,
 * map branches, scripts, templates, and that its tools and agents exist in this workspace (MCP
 * tools, named `mcp:<server>` or `mcp__…`, are taken on trust: servers are not started).
 * Files in the original Coyote's shapes load (core/graph/compat.ts); what of them is not
 * supported prints `coyote: warning: FILE: KEY: …` lines on stderr. Prints `PATH: ok (N nodes)`
 * and exits 0; an invalid graph is a configuration error: its
 * problems go to stderr (`coyote: FILE: problem`, one `  - problem` line each when several) and the
 * exit code is 2, as for a path that holds no graph (README "Exit codes").
 * @module
 */
import { join, resolve } from "../../util/path.ts";
import type { AppOptions } from "../../config/app_options.ts";
import type { AgentSpec } from "../../protocol/types.ts";
import { corePlugins } from "../../../plugins/mod.ts";
import { agentFunctionFiles, loadAgentRegistry } from "../../agents/registry.ts";
import { loadGraph } from "../../graph/load.ts";
import { GraphSpecError } from "../../protocol/graph_spec.ts";
import { SUBMIT_RESULT } from "../../graph/structured.ts";
import { exists } from "../../config/workspace_dirs.ts";

/** Tools every session may have beside the first-party packs (supervisor, skills, graph). */
const HOST_TOOLS = [SUBMIT_RESULT, "skill__list", "skill__load", "skill__unload"];

export async function graphCommand(
  app: AppOptions,
  sub: string,
  args: string[],
  out: (s: string) => void,
): Promise<number> {
  if (sub !== "check" || !args[0]) {
    console.error("coyote: usage: coyote graph check PATH|NAME");
    return 2;
  }
  const { loadBuiltins } = await import("../../agents/builtins.ts");
  const registry = await loadAgentRegistry({
    configDir: app.configDir,
    cwd: app.cwd,
    builtins: (await loadBuiltins(join(app.dataDir, "builtin-cache"))).agents,
  });
  let path = resolve(app.cwd, args[0]);
  const asAgent = registry.entry(args[0]);
  try {
    Deno.statSync(path);
  } catch {
    if (asAgent?.kind === "graph" && !asAgent.path.startsWith("builtin:")) path = asAgent.path;
    else if (asAgent?.kind === "graph") {
      // A built-in: already parsed and checked when the registry loaded it.
      if (asAgent.error) {
        console.error(`coyote: ${asAgent.error}`);
        return 2;
      }
      const nodes = (asAgent.definition as AgentSpec | undefined)?.graph?.spec.nodes ?? {};
      out(`${asAgent.path}: ok (${Object.keys(nodes).length} nodes)\n`);
      return 0;
    } else {
      console.error(
        asAgent
          ? `coyote: graph check: ${
            JSON.stringify(args[0])
          } is an ${asAgent.kind} agent, not a graph agent (coyote agents show ${args[0]})`
          : `coyote: graph check: no file, folder or graph agent ${JSON.stringify(args[0])}`,
      );
      return 2;
    }
  }
  // A path that exists but holds no graph: one line saying so (not "cannot read …/graph.yaml").
  const st = Deno.statSync(path);
  const noGraph = st.isDirectory
    ? !exists(join(path, "graph.yaml")) && `${args[0]} holds no graph.yaml`
    : !/\.ya?ml$/.test(path) && `${args[0]} is neither a graph.yaml nor a folder holding one`;
  if (noGraph) {
    console.error(`coyote: graph check: ${noGraph}`);
    return 2;
  }
  const tools = new Set([
    ...corePlugins.flatMap((p) => (p.tools ?? []).map((t) => t.name)),
    ...HOST_TOOLS,
  ]);
  try {
    const g = await loadGraph(path, {
      toolExists: (t) =>
        tools.has(t) || t.startsWith("agent__") || t.startsWith("mcp:") || t.startsWith("mcp__"),
      agentExists: (a) => registry.entry(a) !== undefined,
    });
    // Keys of the original Coyote that load but are not supported (core/graph/compat.ts).
    for (const w of g.spec.warnings ?? []) console.error(`coyote: warning: ${w}`);
    for (const w of await agentFunctionFiles(g.dir)) console.error(`coyote: warning: ${w}`);
    out(`${g.file}: ok (${Object.keys(g.spec.nodes).length} nodes)\n`);
    return 0;
  } catch (e) {
    if (e instanceof GraphSpecError) {
      console.error(`coyote: ${e.message.replace(/: \n/, ":\n")}`);
      return 2;
    }
    throw e;
  }
}
