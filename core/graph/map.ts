/**
 * Fan-out (docs/graphs.md "Nodes"; the semantics list of run.ts): the `map` node, which runs its
 * `branch` once per item of `over` (fresh context), at most `max_concurrency` at once, and
 * collects each branch's `output_key` into `collect_into` in input order (a failing branch with a
 * `fallback` takes that node's result for its item); and {@link pool}, the bounded concurrency
 * both the map and the parallel step of a `next` list (run.ts) run on.
 * @module
 */
import type { MapNode } from "../protocol/graph_spec.ts";
import { NodeError } from "./errors.ts";
import type { NodeOutcome, NodeScope, State } from "./step.ts";
import { lookup } from "./template.ts";

/** Default parallel branches (R4: 8 in code). */
export const DEFAULT_MAX_CONCURRENCY = 8;

export async function mapNode(
  run: NodeScope,
  id: string,
  node: MapNode,
  state: State,
): Promise<NodeOutcome> {
  const items = lookup(state, node.over);
  if (!Array.isArray(items)) {
    throw new NodeError(
      `map "${id}": over "${node.over}" is ${items === undefined ? "absent" : "not a list"}`,
    );
  }
  const branch = run.spec.nodes[node.branch];
  const key = node.output_key ?? "output";
  const limit = node.max_concurrency ?? run.spec.settings?.max_concurrency ??
    DEFAULT_MAX_CONCURRENCY;
  const results = await pool(items, limit, async (item, i) => {
    const scope = { [node.as]: item, index: i };
    try {
      const out = await run.exec(node.branch, branch, state, scope);
      return out.writes[key] ?? out.output;
    } catch (e) {
      if (run.signal.aborted) throw e;
      const fb = (branch as { fallback?: string }).fallback;
      if (!fb) throw new NodeError(`map "${id}": branch ${i} failed: ${(e as Error).message}`);
      const out = await run.exec(fb, run.spec.nodes[fb], {
        ...state,
        last_error: { node: node.branch, message: (e as Error).message },
      }, scope);
      return out.writes[key] ?? out.output;
    }
  });
  return { writes: { [node.collect_into]: results }, output: results };
}

/**
 * Maps `items` with at most `limit` calls at once; results in input order; the first error wins.
 * After an error no further item starts, and the error is thrown once the calls in flight have
 * settled: a failed map leaves no branch (nor the sub-agent session it opened) running behind it.
 */
export async function pool<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let nextIndex = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && nextIndex < items.length) {
      const i = nextIndex++;
      try {
        out[i] = await fn(items[i], i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return out;
}
