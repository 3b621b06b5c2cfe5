/**
 * Which agents a coordinator may spawn (`agent__spawn`, `agent__list`), from its definition:
 *
 * - `spawnable_agents` omitted: any agent; a list: the agents it names (`[]`: none);
 * - `spawn_custom_agents: true`: also every **custom** agent — source `user` (`<config dir>/agents/`)
 *   or `workspace` (`.coyote/agents/`, `.claude/agents/`) — without naming it, as Claude Code's
 *   main agent delegates to the user's subagent files by description. Plugin agents stay opt-in by
 *   name (installing a plugin does not hand it the coordinator's work).
 * - In an untrusted workspace (core/config/trust.ts) the workspace's agents are not spawnable by that
 *   rule nor by an omitted list ("any"), only when a list names them: a cloned repository must not
 *   get its agent files run automatically. The refusal says why and how to trust it
 *   (`coyote trust`); the user's own agents stay spawnable.
 *
 * The child is still narrowed to its parent's tools and policy (core/session/conversation.ts); this module only
 * decides whether it may start.
 * @module
 */
import type { AgentSpec } from "../protocol/types.ts";
import type { AgentRegistry, AgentSource } from "../agents/registry.ts";

/** Sources `spawn_custom_agents` covers. */
export const CUSTOM_SOURCES: readonly AgentSource[] = ["user", "workspace"];

/** Whether an agent of this source is a custom one (the user's or the workspace's). */
export function isCustom(source: string | undefined): boolean {
  return CUSTOM_SOURCES.some((s) => s === source);
}

/** The verdict on one agent: allowed, or the reason it is not (a tool error's text). */
export type SpawnVerdict = { ok: true } | { ok: false; reason: string };

/**
 * May the agent `parent` (running in a workspace whose trust is `trusted`) spawn `name`?
 * Unknown names are refused here only when the definition's list excludes them; the caller
 * reports an unknown agent otherwise.
 */
export function spawnVerdict(
  parent: AgentSpec,
  name: string,
  agents: AgentRegistry,
  trusted: boolean,
): SpawnVerdict {
  const allowed = parent.spawnable_agents;
  if (allowed?.includes(name)) return { ok: true };
  const child = agents.get(name);
  // A broken custom agent file is still the user's agent: let the caller say what is wrong
  // with the file (AgentRegistry.unknown), not that it may not be spawned.
  const source = child?.source ?? agents.entry(name)?.source;
  const untrustedRefusal = (): SpawnVerdict => ({
    ok: false,
    reason: `agent ${parent.name} may not spawn "${name}": it is defined by this workspace (${
      agents.entry(name)?.path ?? name
    }), which is not trusted, and a repository's agent files are not run automatically; the user can trust the workspace with \`coyote trust\` (or run the agent directly with \`coyote -a ${name}\`)`,
  });
  // Without a list ("any"), the same trust rule: an untrusted workspace's agents only by name.
  if (!allowed) {
    return source === "workspace" && !trusted ? untrustedRefusal() : { ok: true };
  }
  if (parent.spawn_custom_agents && isCustom(source)) {
    return source === "user" || trusted ? { ok: true } : untrustedRefusal();
  }
  const list = allowed.join(", ") || "(none)";
  const custom = parent.spawn_custom_agents
    ? `, plus the user's and the workspace's own agents (${
      child?.source === "plugin" ? "a plugin's agent must be named" : "spawn_custom_agents"
    })`
    : "";
  return {
    ok: false,
    reason: `agent ${parent.name} may not spawn "${name}"; spawnable_agents: ${list}${custom}`,
  };
}

/**
 * The agents `parent` may spawn (for `agent__list`), sorted by name, and the custom workspace
 * agents it could spawn once the workspace is trusted.
 */
export function spawnableAgents(
  parent: AgentSpec,
  agents: AgentRegistry,
  trusted: boolean,
): { spawnable: AgentSpec[]; untrusted: AgentSpec[] } {
  const spawnable: AgentSpec[] = [];
  const untrusted: AgentSpec[] = [];
  for (const a of agents.list()) {
    if (spawnVerdict(parent, a.name, agents, trusted).ok) spawnable.push(a);
    else if ((parent.spawn_custom_agents || !parent.spawnable_agents) && a.source === "workspace") {
      untrusted.push(a);
    }
  }
  return { spawnable, untrusted };
}
