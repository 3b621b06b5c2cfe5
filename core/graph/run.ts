/**
 * The graph executor (issue 8 §1): runs a validated {@link GraphSpec} from `start` to an `end`
 * node over one JSON state, and reports every step as ACP `session/update`s so every frontend shows
 * it with no graph-specific code:
 * - a node is a `tool_call` (`toolCallId` `graph:<node>:<visit>`, title `<node> (<type>)`) that
 *   goes `in_progress` → `completed` | `failed`; the update's `rawOutput` holds the state keys the
 *   node wrote, the routing decision (`next`) and why (`route`: `next`, `_next`, `route:<option>`,
 *   `fallback`, `parallel`, `end`);
 * - text an llm/agent node streams is shown as `agent_thought_chunk` (it is work, not the answer);
 *   the `end` node's output is the one `agent_message_chunk`.
 *
 * Semantics (R4 where it says, decided here where it is silent):
 * - Writes go through the graph's `reducers` (default `overwrite`); `state_updates` templates are
 *   rendered leniently after the node's own writes, with `{{output}}` = the node's result.
 * - llm/agent nodes write `output` and, with `output_schema`, the result's top-level keys. The
 *   structured result comes through the host (a `submit_result` tool), else a JSON text answer; it
 *   is validated against the schema, one repair turn quotes the validation error, then the node
 *   fails (→ `fallback`).
 * - Failure of a node (error, bad output, node timeout, loop cap) routes to its `fallback`, else
 *   the run fails. Transient provider errors are retried up to `max_attempts` (default 1).
 * - `next: [a, b]` runs a and b at once on snapshots of the state, merges their writes in list
 *   order, then continues to their common join node. A failed member with a `fallback` other than
 *   the join sends the run there after the step.
 * - `map` runs its `branch` node once per item of `over` (fresh context: no conversation is shared),
 *   at most `max_concurrency` at once (node, else settings, else 8), and collects each branch's
 *   `output_key` (default `output`) into `collect_into` in input order. A failing branch with a
 *   `fallback` takes that node's result for its item; without one the map fails.
 * - `approval` routes by the answer (`{{choice}}`); an answer that is no option goes to `on_other`.
 *   With no human (headless) it takes its `headless` option, else routes to `on_other` with
 *   `choice` "" and `needs_human` set in the state. `input` takes its `default` when nobody answers,
 *   else fails.
 * - Each node id may be visited `settings.max_loop_iterations` times (default 100); the whole run
 *   is bounded by `settings.timeout` seconds.
 *
 * Here: the run's loop, edge routing (`next`, `_next`, the parallel step, `fallback`), writes
 * through the reducers, `state_updates` and the per-node events. What each node type does is in
 * nodes.ts (`map` in map.ts); the host interface and the run's options and result in host.ts.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import { reduce } from "./reducers.ts";
import { render } from "./template.ts";
import type { GraphNode, GraphSpec } from "../protocol/graph_spec.ts";
import { GraphRunError, NodeError } from "./errors.ts";
import type { GraphResult, RunGraphOptions } from "./host.ts";
import { DEFAULT_MAX_CONCURRENCY, pool } from "./map.ts";
import { runNode } from "./nodes.ts";
import type { NodeOutcome, NodeScope, State, Writes } from "./step.ts";

/** Default visits per node id (R4). */
export const DEFAULT_MAX_LOOP_ITERATIONS = 100;

/** Runs `spec` (validate it first: core/graph/validate.ts). */
export async function runGraph(spec: GraphSpec, o: RunGraphOptions): Promise<GraphResult> {
  return await new Run(spec, o).run();
}

class Run implements NodeScope {
  readonly state: State;
  readonly visits = new Map<string, number>();
  readonly trace: string[] = [];
  readonly signal: AbortSignal;
  #seq = 0;

  constructor(readonly spec: GraphSpec, readonly o: RunGraphOptions) {
    this.state = {
      ...structuredClone(spec.initial_state ?? {}),
      ...o.variables,
      initial_prompt: o.prompt,
    };
    const t = spec.settings?.timeout;
    this.signal = t ? AbortSignal.any([o.signal, AbortSignal.timeout(t * 1000)]) : o.signal;
  }

  async run(): Promise<GraphResult> {
    let current: string | undefined = this.spec.start;
    try {
      while (current) {
        this.#checkAbort();
        const node: GraphNode = this.spec.nodes[current];
        if (node.type === "end") {
          const out = await this.#step(current, node);
          const text = typeof out.output === "string" ? out.output : JSON.stringify(out.output);
          if (text) {
            this.o.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
          }
          return { output: text, end: current, state: this.state, trace: this.trace };
        }
        const next: string | undefined =
          Array.isArray(("next" in node) ? node.next : undefined) && node.type !== "approval"
            ? await this.#parallelAfter(current, node)
            : (await this.#stepRouted(current, node));
        current = next;
      }
      throw new GraphRunError("the run stopped without reaching an end node");
    } catch (e) {
      if (this.o.signal.aborted) throw e;
      if (this.signal.aborted) {
        throw new GraphRunError(
          `the graph run timed out after ${this.spec.settings?.timeout} s (settings.timeout)`,
          current,
        );
      }
      throw e;
    }
  }

  #checkAbort(): void {
    if (this.signal.aborted) throw this.signal.reason ?? new Error("aborted");
  }

  /**
   * Where a failed node goes: its `fallback` (with `last_error` set), else the run fails.
   * A cancel or the run's timeout is rethrown as it is.
   */
  #fallback(id: string, node: GraphNode, e: unknown): string {
    if (this.signal.aborted) throw e;
    const fb = "fallback" in node ? node.fallback : undefined;
    if (!fb) throw new GraphRunError(`node "${id}" failed: ${(e as Error).message}`, id);
    this.state.last_error = { node: id, message: (e as Error).message };
    this.#routeEvent(id, fb, "fallback");
    return fb;
  }

  /** Runs one node (with its fallback on failure) and returns the id to go to next. */
  async #stepRouted(id: string, node: GraphNode): Promise<string | undefined> {
    let out: NodeOutcome;
    try {
      out = await this.#step(id, node);
    } catch (e) {
      return this.#fallback(id, node, e);
    }
    if (out.next) return out.next;
    const n = "next" in node ? node.next : undefined;
    return typeof n === "string" ? n : undefined;
  }

  /**
   * Runs node `id` (which has `next: [a, b, …]`), then the parallel step, and returns the join
   * (or the fallback of a failed member).
   */
  async #parallelAfter(id: string, node: GraphNode): Promise<string | undefined> {
    let out: NodeOutcome;
    try {
      out = await this.#step(id, node);
    } catch (e) {
      return this.#fallback(id, node, e);
    }
    if (out.next) return out.next;
    const members = (node as { next: string[] }).next;
    const snapshot = structuredClone(this.state);
    const limit = this.spec.settings?.max_concurrency ?? DEFAULT_MAX_CONCURRENCY;
    const results = await pool(members, limit, async (m) => {
      try {
        return { m, out: await this.exec(m, this.spec.nodes[m], snapshot) };
      } catch (e) {
        if (this.signal.aborted) throw e;
        return { m, error: e as Error };
      }
    });
    let divert: string | undefined;
    const join = typeof (this.spec.nodes[members[0]] as { next?: unknown }).next === "string"
      ? (this.spec.nodes[members[0]] as { next: string }).next
      : undefined;
    for (const r of results) {
      if ("error" in r && r.error) {
        const fb = (this.spec.nodes[r.m] as { fallback?: string }).fallback;
        if (!fb) throw new GraphRunError(`node "${r.m}" failed: ${r.error.message}`, r.m);
        this.state.last_error = { node: r.m, message: r.error.message };
        if (fb !== join && !divert) divert = fb;
        continue;
      }
      this.#apply(r.out!.writes);
    }
    const to = divert ?? join;
    this.#routeEvent(members.join(","), to, divert ? "fallback" : "parallel");
    return to;
  }

  /** Runs one node on the live state, applying its writes. */
  async #step(id: string, node: GraphNode): Promise<NodeOutcome> {
    const out = await this.exec(id, node, this.state);
    this.#apply(out.writes);
    this.o.snapshot?.(id, this.state);
    return out;
  }

  #apply(writes: Writes): void {
    for (const [k, v] of Object.entries(writes)) {
      this.state[k] = reduce(this.spec.reducers?.[k], k, this.state[k], v);
    }
  }

  /** Runs a node against `state` (not mutated) and returns its writes; emits its tool_call. */
  async exec(
    id: string,
    node: GraphNode,
    state: State,
    as?: Record<string, unknown>,
  ): Promise<NodeOutcome> {
    const visits = (this.visits.get(id) ?? 0) + 1;
    this.visits.set(id, visits);
    const caps = this.spec.settings?.max_loop_iterations;
    const cap = typeof caps === "number" ? caps : caps?.[id] ?? DEFAULT_MAX_LOOP_ITERATIONS;
    const callId = `graph:${id}:${visits}${as ? `:${++this.#seq}` : ""}`;
    this.trace.push(id);
    this.o.emit({
      sessionUpdate: "tool_call",
      toolCallId: callId,
      title: `${id} (${node.type})`,
      kind: node.type === "llm" ? "think" : node.type === "script" ? "execute" : "other",
      status: "in_progress",
      rawInput: { node: id, type: node.type, ...(as ? { item: as } : {}) },
    });
    try {
      if (visits > cap) {
        throw new NodeError(`visited ${visits} times; settings.max_loop_iterations allows ${cap}`);
      }
      const local = as ? { ...state, ...as } : state;
      const out = await runNode(this, id, node, local);
      // state_updates: rendered after the node's own writes, {{output}} = its result.
      if (node.state_updates) {
        // The templates see the state as it will be: the writes combined through the reducers.
        const view: State = { ...local };
        for (const [k, v] of Object.entries(out.writes)) {
          view[k] = reduce(this.spec.reducers?.[k], k, view[k], v);
        }
        view.output = out.output;
        for (const [k, t] of Object.entries(node.state_updates)) {
          out.writes[k] = render(t, view, { strict: false });
        }
      }
      const next = out.next ??
        (typeof (node as { next?: unknown }).next === "string"
          ? (node as { next: string }).next
          : undefined);
      this.o.emit({
        sessionUpdate: "tool_call_update",
        toolCallId: callId,
        status: "completed",
        rawOutput: {
          keys: Object.keys(out.writes),
          ...(next ? { next, route: out.route ?? (out.next ? "_next" : "next") } : {}),
          ...(node.type === "end" ? { route: "end" } : {}),
        },
      });
      return out;
    } catch (e) {
      this.o.emit({
        sessionUpdate: "tool_call_update",
        toolCallId: callId,
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: (e as Error).message } }],
        rawOutput: { error: (e as Error).message },
      });
      throw e;
    }
  }

  #routeEvent(from: string, to: string | undefined, route: string): void {
    this.o.emit({
      sessionUpdate: "agent_thought_chunk",
      content: { type: "text", text: `graph: ${from} → ${to ?? "(end)"} (${route})\n` },
    });
  }

  timeout(node: { timeout?: number }, fallbackS: number): AbortSignal {
    return AbortSignal.any([this.signal, AbortSignal.timeout((node.timeout ?? fallbackS) * 1000)]);
  }

  /** Text from nodes is work in progress: shown as thought, never as the answer. */
  nodeEmit = (u: acp.SessionUpdate) => {
    if (u.sessionUpdate === "agent_message_chunk") {
      this.o.emit({ ...u, sessionUpdate: "agent_thought_chunk" } as acp.SessionUpdate);
    } else this.o.emit(u);
  };
}
