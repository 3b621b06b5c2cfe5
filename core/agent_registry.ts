/**
 * The agent registry of a workspace; it lives in core/agents/registry.ts (sources, shadowing,
 * broken files). Re-exported here for modules that import it by this path.
 * @module
 */
export { AgentRegistry } from "./agents/registry.ts";
