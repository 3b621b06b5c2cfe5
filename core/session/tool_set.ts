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
 * A policy narrowed to a tool set: tool accesses of tools outside the set are denied;
 * everything else is decided by the parent policy (its rules, including session rules).
 */
export function narrowPolicy(parent: PolicyLike, allowed: ReadonlySet<string>): PolicyLike {
  return {
    evaluate(access) {
      if (access.type === "tool" && !allowed.has(access.name)) {
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
