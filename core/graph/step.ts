/**
 * What one step of a graph run is made of, shared by the executor (run.ts) and the node kinds
 * (nodes.ts, map.ts): the run's JSON state, a node's writes and outcome, and the part of the run
 * a node kind uses ({@link NodeScope}). What each node type writes: docs/graphs.md "Nodes".
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { GraphNode, GraphSpec } from "../protocol/graph_spec.ts";
import type { RunGraphOptions } from "./host.ts";

export type State = Record<string, unknown>;
export type Writes = Record<string, unknown>;

export interface NodeOutcome {
  writes: Writes;
  /** The node's result (`{{output}}` for its state_updates). */
  output: unknown;
  /** Script-chosen route. */
  next?: string;
  route?: string;
}

/** The part of a run (run.ts) a node kind sees. */
export interface NodeScope {
  readonly spec: GraphSpec;
  readonly o: RunGraphOptions;
  /** The caller's signal, bounded by `settings.timeout`. */
  readonly signal: AbortSignal;
  /** The run's signal, also bounded by the node's `timeout` (else `fallbackS` seconds). */
  timeout(node: { timeout?: number }, fallbackS: number): AbortSignal;
  /** Text from nodes is work in progress: shown as thought, never as the answer. */
  readonly nodeEmit: (u: acp.SessionUpdate) => void;
  /** Runs a node against `state` (not mutated) and returns its writes; emits its tool_call. */
  exec(
    id: string,
    node: GraphNode,
    state: State,
    as?: Record<string, unknown>,
  ): Promise<NodeOutcome>;
}
