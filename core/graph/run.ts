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
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import { reduce } from "./reducers.ts";
import { lookup, render } from "./template.ts";
import type {
  AgentNode,
  ApprovalNode,
  GraphNode,
  GraphSpec,
  InputNode,
  LlmNode,
  MapNode,
  ScriptNode,
} from "../protocol/graph_spec.ts";

/** Default visits per node id (R4). */
export const DEFAULT_MAX_LOOP_ITERATIONS = 100;
/** Default parallel branches (R4: 8 in code). */
export const DEFAULT_MAX_CONCURRENCY = 8;
/** Default llm tool turns (R4). */
export const DEFAULT_MAX_ITERATIONS = 10;

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

/** What one model exchange of an llm node returned. */
export interface LlmReply {
  text: string;
  /** Arguments of the model's `submit_result` call, when the node has an `output_schema`. */
  submitted?: unknown;
}

/** A fresh model conversation for one llm node (or one map branch). */
export interface LlmConversation {
  /** Sends a user message and runs the tool loop (at most `maxIterations` model requests). */
  send(prompt: string, signal: AbortSignal): Promise<LlmReply>;
}

/** What the executor needs from the rest of Coyote (a real host is in core/graph/host.ts). */
export interface GraphHost {
  /** Opens a fresh conversation. Text it streams goes to `emit`. */
  llm(
    cfg: {
      node: string;
      instructions?: string;
      tools: string[];
      model?: string;
      temperature?: number;
      top_p?: number;
      reasoning_effort?: string;
      maxIterations: number;
      outputSchema?: Record<string, unknown>;
    },
    emit: (u: acp.SessionUpdate) => void,
  ): LlmConversation;
  /** Runs a sub-agent as a child session and waits for its final answer. */
  agent(
    req: { node: string; agent: string; prompt: string },
    signal: AbortSignal,
    emit: (u: acp.SessionUpdate) => void,
  ): Promise<string>;
  /** Runs a script with the state; returns the object it printed/returned. */
  script(
    req: {
      node: string;
      script: string;
      state: Record<string, unknown>;
      timeoutMs: number;
      permissions?: ScriptNode["permissions"];
    },
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /** Asks the human; `undefined` when nobody can answer (headless). */
  ask(
    q: {
      node: string;
      action: "select" | "input";
      question: string;
      options?: string[];
      default?: string;
    },
    signal: AbortSignal,
  ): Promise<string | undefined>;
  /** Validates a structured result; returns the error text or `undefined` when valid. */
  checkSchema(schema: Record<string, unknown>, value: unknown): string | undefined;
}

export interface RunGraphOptions {
  host: GraphHost;
  /** The user's request (`{{initial_prompt}}`). */
  prompt: string;
  /** Agent variables (`{{name}}`), after defaults were applied. */
  variables?: Record<string, unknown>;
  emit: (u: acp.SessionUpdate) => void;
  signal: AbortSignal;
  /** Called with the state after each node when snapshots are on (`--verbose`). */
  snapshot?: (node: string, state: Record<string, unknown>) => void;
}

export interface GraphResult {
  /** The `end` node's rendered output. */
  output: string;
  /** The id of the `end` node reached. */
  end: string;
  state: Record<string, unknown>;
  /** Nodes run, in order (a parallel step's nodes in list order). */
  trace: string[];
}

type State = Record<string, unknown>;
type Writes = Record<string, unknown>;

interface NodeOutcome {
  writes: Writes;
  /** The node's result (`{{output}}` for its state_updates). */
  output: unknown;
  /** Script-chosen route. */
  next?: string;
  route?: string;
}

/** Runs `spec` (validate it first: core/graph/validate.ts). */
export async function runGraph(spec: GraphSpec, o: RunGraphOptions): Promise<GraphResult> {
  return await new Run(spec, o).run();
}

class Run {
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
        return { m, out: await this.#exec(m, this.spec.nodes[m], snapshot) };
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
    const out = await this.#exec(id, node, this.state);
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
  async #exec(
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
      const out = await this.#run(id, node, local);
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

  #timeout(node: { timeout?: number }, fallbackS: number): AbortSignal {
    return AbortSignal.any([this.signal, AbortSignal.timeout((node.timeout ?? fallbackS) * 1000)]);
  }

  async #run(id: string, node: GraphNode, state: State): Promise<NodeOutcome> {
    switch (node.type) {
      case "llm":
        return await this.#llm(id, node, state);
      case "agent":
        return await this.#agent(id, node, state);
      case "script":
        return await this.#script(id, node, state);
      case "map":
        return await this.#map(id, node, state);
      case "approval":
        return await this.#approval(id, node, state);
      case "input":
        return await this.#input(id, node, state);
      case "end": {
        const output = render(node.output ?? "{{output}}", state, { strict: false });
        return { writes: { output }, output };
      }
    }
  }

  /** Text from nodes is work in progress: shown as thought, never as the answer. */
  #nodeEmit = (u: acp.SessionUpdate) => {
    if (u.sessionUpdate === "agent_message_chunk") {
      this.o.emit({ ...u, sessionUpdate: "agent_thought_chunk" } as acp.SessionUpdate);
    } else this.o.emit(u);
  };

  async #llm(id: string, node: LlmNode, state: State): Promise<NodeOutcome> {
    const what = `nodes.${id}`;
    const prompt = render(node.prompt, state, { strict: true, what: `${what}.prompt` });
    const instructions = node.instructions === undefined
      ? undefined
      : render(node.instructions, state, { strict: true, what: `${what}.instructions` });
    const attempts = node.max_attempts ?? 1;
    for (let attempt = 1;; attempt++) {
      const signal = this.#timeout(node, 600);
      try {
        const conv = this.o.host.llm({
          node: id,
          instructions,
          tools: node.tools ?? [],
          model: node.model ?? this.spec.model,
          temperature: node.temperature ?? this.spec.temperature,
          top_p: node.top_p ?? this.spec.top_p,
          reasoning_effort: node.reasoning_effort ?? this.spec.reasoning_effort,
          maxIterations: node.max_iterations ?? DEFAULT_MAX_ITERATIONS,
          outputSchema: node.output_schema,
        }, this.#nodeEmit);
        const reply = await conv.send(prompt, signal);
        if (!node.output_schema) return { writes: { output: reply.text }, output: reply.text };
        const value = await this.#structured(node.output_schema, reply, conv, signal);
        return { writes: { ...value, output: value }, output: value };
      } catch (e) {
        if (e instanceof NodeError && e.transient && attempt < attempts && !this.signal.aborted) {
          continue;
        }
        throw e;
      }
    }
  }

  /** The validated structured result of a reply, with one repair turn. */
  async #structured(
    schema: Record<string, unknown>,
    reply: LlmReply,
    conv: LlmConversation,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const check = (r: LlmReply): { value?: Record<string, unknown>; error: string } => {
      let v = r.submitted;
      if (v === undefined) {
        const parsed = parseJsonAnswer(r.text);
        if (parsed === undefined) {
          return { error: "no submit_result call and no JSON object in the answer" };
        }
        v = parsed;
      }
      if (typeof v !== "object" || v === null || Array.isArray(v)) {
        return { error: "the result must be a JSON object" };
      }
      const problem = this.o.host.checkSchema(schema, v);
      return problem ? { error: problem } : { value: v as Record<string, unknown>, error: "" };
    };
    const first = check(reply);
    if (first.value) return first.value;
    const again = await conv.send(
      `Your result does not match the required schema: ${first.error}\n` +
        "Call submit_result again with a corrected result.",
      signal,
    );
    const second = check(again);
    if (second.value) return second.value;
    throw new NodeError(`structured output invalid after one repair turn: ${second.error}`);
  }

  async #agent(id: string, node: AgentNode, state: State): Promise<NodeOutcome> {
    const prompt = render(node.prompt, state, { strict: true, what: `nodes.${id}.prompt` });
    const text = await this.o.host.agent(
      { node: id, agent: node.agent, prompt },
      this.#timeout(node, 300),
      this.#nodeEmit,
    );
    if (!node.output_schema) return { writes: { output: text }, output: text };
    const v = parseJsonAnswer(text);
    const problem = v === undefined
      ? "the agent's answer holds no JSON object"
      : this.o.host.checkSchema(node.output_schema, v);
    if (problem) throw new NodeError(`agent "${node.agent}": ${problem}`);
    return { writes: { ...(v as object), output: v }, output: v };
  }

  async #script(id: string, node: ScriptNode, state: State): Promise<NodeOutcome> {
    const timeoutS = node.timeout ?? 30;
    const result = await this.o.host.script(
      {
        node: id,
        script: node.script,
        state,
        timeoutMs: timeoutS * 1000,
        permissions: node.permissions,
      },
      this.#timeout(node, 30),
    );
    if (typeof result !== "object" || result === null || Array.isArray(result)) {
      throw new NodeError(`script ${node.script} must return (print) one JSON object`);
    }
    const { _next, ...writes } = result as Record<string, unknown>;
    if (_next !== undefined && _next !== null && _next !== "") {
      if (typeof _next !== "string" || !Object.hasOwn(this.spec.nodes, _next)) {
        throw new NodeError(
          `script ${node.script} chose _next ${JSON.stringify(_next)}, which is no node`,
        );
      }
      const allowed = [
        ...node.routes ?? [],
        ...(typeof node.next === "string" ? [node.next] : node.next ?? []),
      ];
      if (node.routes && !allowed.includes(_next)) {
        throw new NodeError(
          `script ${node.script} chose _next "${_next}", not one of its routes (${
            node.routes.join(", ")
          })`,
        );
      }
      return { writes, output: writes, next: _next, route: "_next" };
    }
    return { writes, output: writes };
  }

  async #map(id: string, node: MapNode, state: State): Promise<NodeOutcome> {
    const items = lookup(state, node.over);
    if (!Array.isArray(items)) {
      throw new NodeError(
        `map "${id}": over "${node.over}" is ${items === undefined ? "absent" : "not a list"}`,
      );
    }
    const branch = this.spec.nodes[node.branch];
    const key = node.output_key ?? "output";
    const limit = node.max_concurrency ?? this.spec.settings?.max_concurrency ??
      DEFAULT_MAX_CONCURRENCY;
    const results = await pool(items, limit, async (item, i) => {
      const scope = { [node.as]: item, index: i };
      try {
        const out = await this.#exec(node.branch, branch, state, scope);
        return out.writes[key] ?? out.output;
      } catch (e) {
        if (this.signal.aborted) throw e;
        const fb = (branch as { fallback?: string }).fallback;
        if (!fb) throw new NodeError(`map "${id}": branch ${i} failed: ${(e as Error).message}`);
        const out = await this.#exec(fb, this.spec.nodes[fb], {
          ...state,
          last_error: { node: node.branch, message: (e as Error).message },
        }, scope);
        return out.writes[key] ?? out.output;
      }
    });
    return { writes: { [node.collect_into]: results }, output: results };
  }

  async #approval(id: string, node: ApprovalNode, state: State): Promise<NodeOutcome> {
    const question = render(node.question, state, { strict: true, what: `nodes.${id}.question` });
    const answer = await this.o.host.ask(
      { node: id, action: "select", question, options: [...node.options, "other"] },
      this.signal,
    );
    const headless = node.headless;
    if (answer === undefined) {
      if (headless && node.routes[headless]) {
        return {
          writes: { choice: headless },
          output: headless,
          next: node.routes[headless],
          route: `headless:${headless}`,
        };
      }
      return {
        writes: { choice: "", needs_human: { node: id, question } },
        output: "",
        next: node.on_other,
        route: "needs_human",
      };
    }
    const to = node.routes[answer];
    return to
      ? { writes: { choice: answer }, output: answer, next: to, route: `route:${answer}` }
      : { writes: { choice: answer }, output: answer, next: node.on_other, route: "on_other" };
  }

  async #input(id: string, node: InputNode, state: State): Promise<NodeOutcome> {
    const question = render(node.question, state, { strict: true, what: `nodes.${id}.question` });
    const answer = await this.o.host.ask(
      { node: id, action: "input", question, default: node.default },
      this.signal,
    ) ?? node.default;
    if (answer === undefined) throw new NodeError(`input "${id}" needs a human and has no default`);
    if (node.validation) {
      const m = node.validation.match(/len\(input\)\s*(>=|<=|==|!=|>|<)\s*(\d+)/)!;
      const n = Number(m[2]);
      const len = answer.length;
      const ok = {
        ">=": len >= n,
        "<=": len <= n,
        "==": len === n,
        "!=": len !== n,
        ">": len > n,
        "<": len < n,
      }[m[1]];
      if (!ok) throw new NodeError(`input "${id}": the answer fails ${node.validation}`);
    }
    return { writes: { input: answer }, output: answer };
  }
}

/** The JSON object in a text answer: the whole text, a fenced block, or the outermost {…}. */
export function parseJsonAnswer(text: string): unknown {
  const tries = [text.trim()];
  const fence = text.match(/```(?:json)?\s*\n([\s\S]*?)\n```/);
  if (fence) tries.push(fence[1]);
  const a = text.indexOf("{"), b = text.lastIndexOf("}");
  if (a >= 0 && b > a) tries.push(text.slice(a, b + 1));
  for (const t of tries) {
    try {
      const v = JSON.parse(t);
      if (typeof v === "object" && v !== null) return v;
    } catch { /* next */ }
  }
  return undefined;
}

/**
 * Maps `items` with at most `limit` calls at once; results in input order; the first error wins.
 * After an error no further item starts, and the error is thrown once the calls in flight have
 * settled: a failed map leaves no branch (nor the sub-agent session it opened) running behind it.
 */
async function pool<T, R>(
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
