/**
 * `coyote agents list [--json]` and `coyote agents show NAME [--json]`.
 *
 * - `list`: one row per agent (the winning definition of each name): name, kind (`llm`|`graph`),
 *   source (`builtin`|`plugin`|`user`|`workspace`), description. Broken files are listed with
 *   kind `error` and their message goes to stderr; the exit code is then 2 (a configuration error,
 *   README "Exit codes"; so CI notices), else 0.
 *   `--json`: an array of `{name, kind, source, path, description, error?, shadows, warnings}`.
 * - `show`: the definition as Coyote will use it, in `config.yaml` shape (snake_case keys), after
 *   comment lines naming the file and the files it shadows; `--json` prints
 *   `{name, kind, source, path, shadows, definition}` (SDK field names). A graph agent prints its
 *   `graph.yaml`. Unknown or broken agent: exit 2 with the error.
 * @module
 */
import { join } from "../../util/path.ts";
import type { AppOptions } from "../../config/app_options.ts";
import type { AgentDefinition } from "../../../sdk/mod.ts";
import { type AgentEntry, type AgentRegistry, loadAgentRegistry } from "../../agents/registry.ts";
import type { AgentSpec } from "../../protocol/types.ts";
import { safeCell, safeText } from "../../util/terminal_safe.ts";

// Warnings and listings show what agent files chose (names, descriptions, errors): escaped
// (core/util/terminal_safe.ts); `--json` output is data and left as JSON escapes it.
const err = (s: string) => Deno.stderr.writeSync(new TextEncoder().encode(safeText(s) + "\n"));

/** The registry of `app.cwd`, with the agents of the plugins it would load. */
async function registryFor(app: AppOptions): Promise<AgentRegistry> {
  const { wantsPlugins } = await import("../../session/workspace.ts");
  let pluginAgents: { plugin?: string; agent: AgentDefinition }[] = [];
  if (wantsPlugins(app, app.cwd)) {
    const { Policy } = await import("../../policy/policy.ts");
    const { loadPlugins } = await import("../../extensions/plugin_host/mod.ts");
    const policy = Policy.create(
      app.config?.permissions ?? {},
      { allow: app.allow, deny: app.deny },
      {
        workspace: app.cwd,
        configDir: app.configDir,
        dataDir: app.dataDir,
        dangerouslySkipPermissions: app.dangerouslySkipPermissions,
      },
    );
    const loaded = await loadPlugins(app, policy, app.cwd);
    pluginAgents = loaded.agents.map((agent) => ({ agent }));
    await loaded.close();
  }
  const { appTrusts } = await import("../../config/trust.ts");
  const { loadBuiltins } = await import("../../agents/builtins.ts");
  return loadAgentRegistry({
    configDir: app.configDir,
    cwd: app.cwd,
    pluginAgents,
    // Parsed at build time (or cached in the data dir), as a session's start takes them.
    builtins: (await loadBuiltins(join(app.dataDir, "builtin-cache"))).agents,
    trusted: appTrusts(app, app.cwd),
  });
}

/** SDK field → `config.yaml` key. */
const SNAKE: Record<string, string> = {
  topP: "top_p",
  reasoningEffort: "reasoning_effort",
  maxTurns: "max_turns",
  mcpServers: "mcp_servers",
  enabledSkills: "enabled_skills",
  canSpawnAgents: "can_spawn_agents",
  spawnableAgents: "spawnable_agents",
  spawnCustomAgents: "spawn_custom_agents",
  maxConcurrentAgents: "max_concurrent_agents",
  maxAgentDepth: "max_agent_depth",
  maxSpawnsPerTurn: "max_spawns_per_turn",
  maxLiveAgents: "max_live_agents",
  summarizationThreshold: "summarization_threshold",
  escalationTimeout: "escalation_timeout",
  autoContinue: "auto_continue",
  maxAutoContinues: "max_auto_continues",
  conversationStarters: "conversation_starters",
};

/** A definition in `config.yaml` shape, `instructions` last. */
export function toConfigShape(d: AgentDefinition): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) {
    if (k === "instructions" || k === "source" || v === undefined) continue;
    out[SNAKE[k] ?? k] = v;
  }
  out.instructions = d.instructions;
  return out;
}

function row(e: AgentEntry): string[] {
  return [e.name, e.error ? "error" : e.kind, e.source, e.error ? e.error : e.description].map(
    safeCell,
  );
}

/** Runs `agents <sub>`; returns the exit code. */
export async function agentsCommand(
  app: AppOptions,
  sub: string,
  args: string[],
  data: (s: string) => void,
): Promise<number> {
  const json = args.includes("--json");
  const out = json ? data : (s: string) => data(safeText(s));
  const reg = await registryFor(app);
  if (sub === "list") {
    const list = reg.entries();
    for (const e of list) for (const w of e.warnings) err(`coyote: warning: ${w}`);
    for (const e of list) if (e.error) err(`coyote: ${e.error}`);
    if (json) {
      out(
        JSON.stringify(
          list.map((e) => ({
            name: e.name,
            kind: e.kind,
            source: e.source,
            path: e.path,
            description: e.description,
            ...(e.error ? { error: e.error } : {}),
            shadows: e.shadows,
            warnings: e.warnings,
          })),
          null,
          2,
        ) + "\n",
      );
    } else {
      const rows = [["NAME", "KIND", "SOURCE", "DESCRIPTION"], ...list.map(row)];
      const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length)));
      out(
        rows.map((r) => r.map((c, i) => (i < 3 ? c.padEnd(w[i]) : c)).join("  ")).join("\n") +
          "\n",
      );
    }
    return list.some((e) => e.error) ? 2 : 0;
  }
  // show
  const name = args.find((a) => a !== "--json")!;
  let def: AgentDefinition | undefined;
  const entry = reg.entry(name);
  try {
    def = reg.resolve(name);
  } catch (e) {
    err(`coyote: ${(e as Error).message}`);
    return 2;
  }
  const e = entry!;
  for (const w of e.warnings) err(`coyote: warning: ${w}`);
  for (const w of await unknownTools(e, def)) err(`coyote: warning: ${w}`);
  if (json) {
    out(
      JSON.stringify(
        {
          name: e.name,
          kind: e.kind,
          source: e.source,
          path: e.path,
          shadows: e.shadows,
          ...(def ? { definition: showable(def) } : {}),
        },
        null,
        2,
      ) + "\n",
    );
    return 0;
  }
  const head = [
    `# ${e.name}${
      e.displayName ? ` (${e.displayName})` : ""
    }: ${e.kind} agent from ${e.source} (${e.path})`,
    ...e.shadows.map((s) => `# shadows ${s}`),
  ];
  const { stringify } = await import("yaml");
  const graph = (def as AgentSpec).graph;
  if (graph) {
    out(`${head.join("\n")}\n${stringify(graph.spec, { lineWidth: 0 })}`);
    return 0;
  }
  out(`${head.join("\n")}\n${stringify(toConfigShape(def), { lineWidth: 0 })}`);
  return 0;
}

/** A definition for `--json`: a graph agent shows its spec (not its embedded script texts). */
function showable(def: AgentDefinition): unknown {
  const g = (def as AgentSpec).graph;
  if (!g) return def;
  const { graph: _g, ...rest } = def as AgentSpec;
  return { ...rest, graph: g.spec };
}

/**
 * Warnings for an llm agent's `tools` entries that name no first-party tool (not globs, not
 * `mcp:` or `mcp__` names): such a tool is simply absent from its sessions unless a plugin
 * provides it, which is how the original Coyote's function scripts (`fetch_url_via_curl`) end up.
 */
async function unknownTools(e: AgentEntry, def: AgentDefinition): Promise<string[]> {
  if (e.kind !== "llm" || !def.tools?.length) return [];
  const { corePlugins } = await import("../../../plugins/mod.ts");
  const known = new Set(corePlugins.flatMap((p) => (p.tools ?? []).map((t) => t.name)));
  return def.tools.flatMap((t) =>
    /[*?[]/.test(t) || t.startsWith("mcp:") || t.startsWith("mcp__") ||
      t.startsWith("agent__") || t.startsWith("skill__") || known.has(t)
      ? []
      : [
        `agent file ${e.path}: tools/global_tools: "${t}" is no built-in tool; unless a plugin provides it, the agent goes without it (a function script of the original Coyote is not a tool here: port it as a plugin tool, or call it through execute_command)`,
      ]
  );
}
