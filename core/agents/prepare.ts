/**
 * What one session runs for one agent: its tool set, its system prompt and its skill state, kept
 * current as skills load and unload. The workspace half (registry and skills, built once per
 * working directory) is {@link loadAgentsAndSkills}.
 *
 * System prompt, in order: the agent's instructions (templated, core/agents/resolve.ts), the
 * environment line, the skill index (names and descriptions only), workspace instructions
 * (core/config/instructions.ts), then the bodies of loaded skills.
 * @module
 */
import type { AgentDefinition, SkillDefinition } from "../../sdk/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import { buildSystemPrompt, type WorkspaceInstructions } from "../config/instructions.ts";
import { filterTools } from "../tools/registry.ts";
import { loadBuiltins } from "./builtins.ts";
import { discoverSkills, type SkillEntry } from "../extensions/skills/load.ts";
import {
  createSkillState,
  type SkillState,
  SkillUsageError,
  visibleSkills,
} from "../extensions/skills/tools.ts";
import { type AgentRegistry, loadAgentRegistry } from "./registry.ts";
import { renderInstructions, resolveVariables, selectTools } from "./resolve.ts";

/** The per-workspace half: every agent and every skill visible from `cwd`. */
export interface AgentsAndSkills {
  agents: AgentRegistry;
  skills: SkillEntry[];
  /** Notes for the user (lenient front matter, ignored keys, skipped skills). */
  warnings: string[];
}

/** Loads the agent registry and discovers skills (in parallel). Never throws for broken files. */
export async function loadAgentsAndSkills(opts: {
  configDir: string;
  cwd: string;
  /** Where parsed built-ins are cached (core/agents/builtins.ts); none: parsed every time. */
  cacheDir?: string;
  addDirs?: string[];
  pluginAgents?: AgentDefinition[];
  pluginSkills?: SkillDefinition[];
  /** The workspace's trust: an untrusted one's agent and skill files cannot replace others. */
  trusted?: boolean;
}): Promise<AgentsAndSkills> {
  const builtins = await loadBuiltins(opts.cacheDir);
  const [agents, skills] = await Promise.all([
    loadAgentRegistry({
      configDir: opts.configDir,
      cwd: opts.cwd,
      pluginAgents: (opts.pluginAgents ?? []).map((agent) => ({ agent })),
      builtins: builtins.agents,
      trusted: opts.trusted,
    }),
    discoverSkills({
      cwd: opts.cwd,
      configDir: opts.configDir,
      addDirs: opts.addDirs,
      pluginSkills: opts.pluginSkills,
      builtinEntries: builtins.skills,
      trusted: opts.trusted,
    }),
  ]);
  return {
    agents,
    skills: skills.skills,
    warnings: [...agents.warnings(), ...builtins.warnings, ...skills.warnings],
  };
}

/**
 * `selectTools(all, def)`, remembered per tool list and per the definition's `tools` and
 * `mcp_servers` while the list holds the same tools (sub-agents open on their parent's list; it
 * changes in place when MCP servers start).
 */
const selected = new WeakMap<AnyTool[], { seen: AnyTool[]; byKey: Map<string, AnyTool[]> }>();
function baseTools(all: AnyTool[], def: AgentDefinition): AnyTool[] {
  let hit = selected.get(all);
  if (!hit || hit.seen.length !== all.length || !hit.seen.every((t, i) => t === all[i])) {
    hit = { seen: [...all], byKey: new Map() };
    selected.set(all, hit);
  }
  const key = JSON.stringify([def.tools ?? null, def.mcp_servers ?? null]);
  let out = hit.byKey.get(key);
  if (!out) hit.byKey.set(key, out = selectTools(all, def));
  return out;
}

/** One agent, ready for a session. */
export interface PreparedAgent {
  definition: AgentDefinition;
  /** Variable values used in the instructions. */
  variables: Record<string, string>;
  skills: SkillState;
  /** The tools of the next request (agent tools, tools of loaded skills, skill tools). */
  tools(): AnyTool[];
  /** The system prompt of the next request. */
  systemPrompt(): string;
}

/**
 * Prepares `def` for a session.
 * @throws UsageError-named errors for missing or unknown variables and unknown `--skill` names.
 */
export function prepareAgent(opts: {
  definition: AgentDefinition;
  /** `--agent-variable` values. */
  variables?: Record<string, string>;
  /** Every tool of the workspace (first-party, plugins, MCP), already wrapped. */
  allTools: AnyTool[];
  skills: SkillEntry[];
  /** `--skill NAME` preloads. */
  preloadSkills?: string[];
  cwd: string;
  workspace: WorkspaceInstructions | null;
  /** Called after a skill loads or unloads (the caller refreshes prompt and tools). */
  onChange?: () => void;
}): PreparedAgent {
  const def = opts.definition;
  const variables = resolveVariables(def, opts.variables);
  const base = baseTools(opts.allTools, def);
  const visible = visibleSkills(opts.skills, def.enabled_skills);
  for (const n of opts.preloadSkills ?? []) {
    if (!visible.some((s) => s.name === n) && opts.skills.some((s) => s.name === n)) {
      throw new SkillUsageError(
        `--skill: skill "${n}" is not among agent "${def.name}"'s enabled_skills (${
          def.enabled_skills?.join(", ") || "none"
        })`,
      );
    }
  }
  const skills = createSkillState(visible, {
    onChange: () => opts.onChange?.(),
    preload: opts.preloadSkills,
  });
  const instructions = renderInstructions(def.instructions, {
    cwd: opts.cwd,
    tools: [...base, ...skills.tools].map((t) => t.name),
    vars: variables,
  });
  const head = buildSystemPrompt(instructions, { cwd: opts.cwd }, opts.workspace, skills.visible);
  return {
    definition: def,
    variables,
    skills,
    tools() {
      // Re-selected when `allTools` changed: it grows when MCP servers finish starting (in place).
      const base = baseTools(opts.allTools, def);
      const granted = skills.grantedTools();
      const have = new Set(base.map((t) => t.name));
      const extra = granted.length
        ? filterTools(opts.allTools, granted).filter((t) => !have.has(t.name))
        : [];
      return [...base, ...extra, ...skills.tools];
    },
    systemPrompt() {
      const loaded = skills.promptSection();
      return loaded ? `${head}\n\n${loaded}` : head;
    },
  };
}
