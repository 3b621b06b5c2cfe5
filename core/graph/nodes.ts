/**
 * What each node type does when the executor (run.ts) reaches it (docs/graphs.md "Nodes",
 * "Structured output", "Scripts"; the semantics list of run.ts): `llm` (a fresh conversation
 * through the host; with `output_schema` a validated structured result with one repair turn;
 * transient errors retried up to `max_attempts`), `agent` (a sub-agent's answer), `script` (the
 * object it returns, its `_next` checked against its routes), `approval` and `input` (the human's
 * answer, or the headless choice / default), and `end`. `map` is in map.ts.
 * @module
 */
import type {
  AgentNode,
  ApprovalNode,
  GraphNode,
  InputNode,
  LlmNode,
  ScriptNode,
} from "../protocol/graph_spec.ts";
import { NodeError } from "./errors.ts";
import type { LlmConversation, LlmReply } from "./host.ts";
import { mapNode } from "./map.ts";
import type { NodeOutcome, NodeScope, State } from "./step.ts";
import { render } from "./template.ts";

/** Default llm tool turns (R4). */
export const DEFAULT_MAX_ITERATIONS = 10;

/** Runs node `id` against `state` by its type; returns its writes and route. */
export async function runNode(
  run: NodeScope,
  id: string,
  node: GraphNode,
  state: State,
): Promise<NodeOutcome> {
  switch (node.type) {
    case "llm":
      return await llmNode(run, id, node, state);
    case "agent":
      return await agentNode(run, id, node, state);
    case "script":
      return await scriptNode(run, id, node, state);
    case "map":
      return await mapNode(run, id, node, state);
    case "approval":
      return await approvalNode(run, id, node, state);
    case "input":
      return await inputNode(run, id, node, state);
    case "end": {
      const output = render(node.output ?? "{{output}}", state, { strict: false });
      return { writes: { output }, output };
    }
  }
}

async function llmNode(
  run: NodeScope,
  id: string,
  node: LlmNode,
  state: State,
): Promise<NodeOutcome> {
  const what = `nodes.${id}`;
  const prompt = render(node.prompt, state, { strict: true, what: `${what}.prompt` });
  const instructions = node.instructions === undefined
    ? undefined
    : render(node.instructions, state, { strict: true, what: `${what}.instructions` });
  const attempts = node.max_attempts ?? 1;
  for (let attempt = 1;; attempt++) {
    const signal = run.timeout(node, 600);
    try {
      const conv = run.o.host.llm({
        node: id,
        instructions,
        tools: node.tools ?? [],
        model: node.model ?? run.spec.model,
        temperature: node.temperature ?? run.spec.temperature,
        top_p: node.top_p ?? run.spec.top_p,
        reasoning_effort: node.reasoning_effort ?? run.spec.reasoning_effort,
        maxIterations: node.max_iterations ?? DEFAULT_MAX_ITERATIONS,
        outputSchema: node.output_schema,
      }, run.nodeEmit);
      const reply = await conv.send(prompt, signal);
      if (!node.output_schema) return { writes: { output: reply.text }, output: reply.text };
      const value = await structuredResult(run, node.output_schema, reply, conv, signal);
      return { writes: { ...value, output: value }, output: value };
    } catch (e) {
      if (e instanceof NodeError && e.transient && attempt < attempts && !run.signal.aborted) {
        continue;
      }
      throw e;
    }
  }
}

/** The validated structured result of a reply, with one repair turn. */
async function structuredResult(
  run: NodeScope,
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
    const problem = run.o.host.checkSchema(schema, v);
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

async function agentNode(
  run: NodeScope,
  id: string,
  node: AgentNode,
  state: State,
): Promise<NodeOutcome> {
  const prompt = render(node.prompt, state, { strict: true, what: `nodes.${id}.prompt` });
  const text = await run.o.host.agent(
    { node: id, agent: node.agent, prompt },
    run.timeout(node, 300),
    run.nodeEmit,
  );
  if (!node.output_schema) return { writes: { output: text }, output: text };
  const v = parseJsonAnswer(text);
  const problem = v === undefined
    ? "the agent's answer holds no JSON object"
    : run.o.host.checkSchema(node.output_schema, v);
  if (problem) throw new NodeError(`agent "${node.agent}": ${problem}`);
  return { writes: { ...(v as object), output: v }, output: v };
}

async function scriptNode(
  run: NodeScope,
  id: string,
  node: ScriptNode,
  state: State,
): Promise<NodeOutcome> {
  const timeoutS = node.timeout ?? 30;
  const result = await run.o.host.script(
    {
      node: id,
      script: node.script,
      state,
      timeoutMs: timeoutS * 1000,
      permissions: node.permissions,
    },
    run.timeout(node, 30),
  );
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    throw new NodeError(`script ${node.script} must return (print) one JSON object`);
  }
  const { _next, ...writes } = result as Record<string, unknown>;
  if (_next !== undefined && _next !== null && _next !== "") {
    if (typeof _next !== "string" || !Object.hasOwn(run.spec.nodes, _next)) {
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

async function approvalNode(
  run: NodeScope,
  id: string,
  node: ApprovalNode,
  state: State,
): Promise<NodeOutcome> {
  const question = render(node.question, state, { strict: true, what: `nodes.${id}.question` });
  const answer = await run.o.host.ask(
    { node: id, action: "select", question, options: [...node.options, "other"] },
    run.signal,
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

async function inputNode(
  run: NodeScope,
  id: string,
  node: InputNode,
  state: State,
): Promise<NodeOutcome> {
  const question = render(node.question, state, { strict: true, what: `nodes.${id}.question` });
  const answer = await run.o.host.ask(
    { node: id, action: "input", question, default: node.default },
    run.signal,
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
