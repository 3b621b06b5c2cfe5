/**
 * Built-in agents. Each is an SDK `AgentDefinition` whose instructions are a
 * markdown file embedded at compile time (`import … with { type: "text" }`),
 * so they ship inside the `deno compile` binary.
 * @module
 */
import { type AgentDefinition, definePlugin, type PluginDefinition } from "../sdk/mod.ts";
import coyoteInstructions from "./coyote.md" with { type: "text" };

/** The default agent: a general coding agent with every tool. */
export const coyoteAgent: AgentDefinition = {
  name: "coyote",
  description: "General coding agent: reads, edits, runs commands under the guard, reports.",
  instructions: coyoteInstructions,
};

/** Agents that ship with Coyote (plugins may add more). */
export const builtinAgents: AgentDefinition[] = [coyoteAgent];

/** The built-in agents as a plugin contribution (same path as third-party agents). */
export const agentsPlugin: PluginDefinition = definePlugin({
  name: "coyote-agents",
  version: "1.0.0",
  description: "Coyote's built-in agents",
  agents: builtinAgents,
});

/** Name of the agent used when none is chosen. */
export const DEFAULT_AGENT = "coyote";
