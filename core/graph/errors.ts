/**
 * The two ways a graph run fails (docs/graphs.md "Nodes": a node's failure routes to its
 * `fallback`, else the run fails): {@link NodeError} inside a node (thrown by the node kinds and
 * by the host, e.g. a script's process, core/graph/script.ts) and {@link GraphRunError} for the
 * whole run.
 * @module
 */

/** A failure inside a node; `transient` ones (provider faults) are retried up to `max_attempts`. */
export class NodeError extends Error {
  override name = "NodeError";
  constructor(message: string, readonly transient = false) {
    super(message);
  }
}

/** The run could not finish: a node failed without a `fallback`, or the run timed out. */
export class GraphRunError extends Error {
  override name = "GraphRunError";
  constructor(message: string, readonly node?: string) {
    super(message);
  }
}
