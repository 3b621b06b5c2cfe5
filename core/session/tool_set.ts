/**
 * A session's tools and how they bound its policy: the tools an agent selects from the
 * workspace's ({@link toolsForAgent}, core/agents/resolve.ts) and a policy narrowed to a tool
 * set ({@link narrowPolicy}: what a sub-agent's policy is, its parent's narrowed to its tools —
 * never widened).
 * @module
 */
import type { PolicyLike } from "../engine/mod.ts";
import type { AgentSpec, AnyTool } from "../protocol/types.ts";
import { selectTools } from "../agents/resolve.ts";

/**
 * The engine's protocol tools: tools the engine adds for itself rather than tools that act on the
 * world — a graph llm node's `submit_result` (core/graph/structured.ts `SUBMIT_RESULT`, the way
 * its structured output comes back). A sub-agent's tool ceiling caps capabilities, not these:
 * {@link narrowPolicy} leaves them to the parent policy, exactly as at top level, so a graph agent
 * started by another agent can submit its results (issue 17).
 */
export const PROTOCOL_TOOLS: ReadonlySet<string> = new Set(["submit_result"]);

/**
 * A policy narrowed to a tool set: tool accesses of tools outside the set are denied, except the
 * engine's {@link PROTOCOL_TOOLS} (which only the engine can put in a registry); everything else
 * is decided by the parent policy (its rules, including session rules).
 */
export function narrowPolicy(parent: PolicyLike, allowed: ReadonlySet<string>): PolicyLike {
  return {
    evaluate(access) {
      if (access.type === "tool" && !allowed.has(access.name) && !PROTOCOL_TOOLS.has(access.name)) {
        return Promise.resolve({
          decision: "deny",
          reason: `tool ${access.name} is not among this agent's tools`,
          access,
        });
      }
      return parent.evaluate(access);
    },
    addRule: (decision, rule, source) => parent.addRule(decision, rule, source),
  };
}

/**
 * The tools an agent may use: its `tools` (names, globs, `mcp:<server>`) and `mcp_servers` over
 * the workspace's tools (core/agents/resolve.ts `selectTools`).
 */
export function toolsForAgent(all: AnyTool[], agent: AgentSpec): AnyTool[] {
  return selectTools(all, agent);
}
