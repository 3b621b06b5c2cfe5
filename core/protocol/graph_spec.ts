/**
 * The `graph.yaml` format of a graph agent (issue 8 §1; mirrors the original Coyote's graph schema,
 * shared/reference R4): a declarative workflow of typed nodes over a JSON state.
 *
 * Top level: `name`, `description`, `version: "1.0"`, model defaults for llm nodes (`model`,
 * `temperature`, `top_p`, `reasoning_effort`), `tools` (the universe llm nodes draw from: names,
 * globs, `mcp:<server>`), `variables` (`[{name, description, default}]`, no default = required),
 * `settings`, `initial_state`, `reducers` (state key → reducer), `start`, `nodes` (id → node, order
 * kept).
 *
 * Node kinds (`type`): `llm`, `script`, `agent`, `map`, `approval`, `input`, `end`; see each schema.
 * Edges: `next` (a node id, or a list of ids = a parallel step whose nodes all continue to one
 * join node), a script's `_next` (limited to its `routes` when it declares them), approval
 * `routes`/`on_other`, and `fallback` on any failure of the node.
 *
 * Errors name the node and the field, with a did-you-mean for unknown keys: {@link GraphSpecError}.
 * @module
 */
import { z } from "zod";
import { closest } from "../util/text.ts";

/** Reducers for state keys (R4): how a node's write combines with the key's current value. */
export const REDUCERS = [
  "overwrite",
  "append",
  "extend",
  "concat",
  "merge",
  "sum",
  "max",
  "min",
] as const;
export type ReducerName = (typeof REDUCERS)[number];

const id = z.string().min(1);
const next = z.union([id, z.array(id).min(2)]);
const stateUpdates = z.record(z.string(), z.string());
/** Seconds. */
const seconds = z.number().positive();
const jsonSchema = z.record(z.string(), z.unknown());

const common = {
  description: z.string().optional(),
  state_updates: stateUpdates.optional(),
};

const llmNode = z.strictObject({
  type: z.literal("llm"),
  ...common,
  prompt: z.string(),
  instructions: z.string().optional(),
  /** Absent or `[]` = no tools; else a subset of the graph's `tools`. */
  tools: z.array(z.string()).optional(),
  model: z.string().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  reasoning_effort: z.string().optional(),
  output_schema: jsonSchema.optional(),
  /** Model requests (tool turns) allowed; exceeding it is a failure of the node. Default 10. */
  max_iterations: z.number().int().positive().optional(),
  /** Attempts on transient errors (provider faults), not on bad answers. Default 1. */
  max_attempts: z.number().int().positive().optional(),
  timeout: seconds.optional(),
  next: next.optional(),
  fallback: id.optional(),
});

const scriptNode = z.strictObject({
  type: z.literal("script"),
  ...common,
  /** Path relative to the graph's folder: `.ts`/`.js` (a permission-scoped Worker) or `.sh`. */
  script: z.string(),
  /** Seconds; default 30. */
  timeout: seconds.optional(),
  /** The node ids the script's `_next` may name (checked at run time; used for reachability). */
  routes: z.array(id).optional(),
  /** The state keys the script may return (used by the validator's template and write checks). */
  outputs: z.array(z.string()).optional(),
  /** Deno-style permissions a `.ts`/`.js` script asks for; granted ∩ policy, like plugins. */
  permissions: z.strictObject({
    read: z.array(z.string()).optional(),
    write: z.array(z.string()).optional(),
    net: z.array(z.string()).optional(),
    run: z.array(z.string()).optional(),
    env: z.array(z.string()).optional(),
  }).optional(),
  next: next.optional(),
  fallback: id.optional(),
});

const agentNode = z.strictObject({
  type: z.literal("agent"),
  ...common,
  agent: z.string(),
  prompt: z.string(),
  output_schema: jsonSchema.optional(),
  /** Seconds; default 300. */
  timeout: seconds.optional(),
  next: next.optional(),
  fallback: id.optional(),
});

const mapNode = z.strictObject({
  type: z.literal("map"),
  ...common,
  /** A state path (`criteria`, `parse.items`) whose value is the list to map over. */
  over: z.string(),
  /** The name each item has inside its branch. */
  as: z.string(),
  /** The node that runs once per item, in a fresh context (atomic: no `next`). */
  branch: id,
  /** The state key that receives the branches' results, in input order. */
  collect_into: z.string(),
  /** Which key of a branch's writes is its result (default `output`). */
  output_key: z.string().optional(),
  max_concurrency: z.number().int().positive().optional(),
  next: next.optional(),
  fallback: id.optional(),
});

const approvalNode = z.strictObject({
  type: z.literal("approval"),
  ...common,
  question: z.string(),
  options: z.array(z.string()).min(1),
  /** option → node id. */
  routes: z.record(z.string(), id),
  /** Where a free "other" answer goes (it is in `{{choice}}`). */
  on_other: id,
  /** The option taken when no human can answer (headless); absent = `on_other` with `needs_human`. */
  headless: z.string().optional(),
});

const inputNode = z.strictObject({
  type: z.literal("input"),
  ...common,
  question: z.string(),
  default: z.string().optional(),
  /** `len(input) <op> N`, e.g. `len(input) > 0`. */
  validation: z.string().regex(/^\s*len\(input\)\s*(>=|<=|==|!=|>|<)\s*\d+\s*$/, {
    message: "expected `len(input) <op> N`",
  }).optional(),
  next: id,
});

const endNode = z.strictObject({
  type: z.literal("end"),
  ...common,
  /** The graph's answer (a template); default `{{output}}`. */
  output: z.string().optional(),
});

/** Node schemas by `type`. */
export const NODE_SCHEMAS = {
  llm: llmNode,
  script: scriptNode,
  agent: agentNode,
  map: mapNode,
  approval: approvalNode,
  input: inputNode,
  end: endNode,
} as const;
export type NodeType = keyof typeof NODE_SCHEMAS;

export type LlmNode = z.infer<typeof llmNode>;
export type ScriptNode = z.infer<typeof scriptNode>;
export type AgentNode = z.infer<typeof agentNode>;
export type MapNode = z.infer<typeof mapNode>;
export type ApprovalNode = z.infer<typeof approvalNode>;
export type InputNode = z.infer<typeof inputNode>;
export type EndNode = z.infer<typeof endNode>;
export type GraphNode =
  | LlmNode
  | ScriptNode
  | AgentNode
  | MapNode
  | ApprovalNode
  | InputNode
  | EndNode;

const variable = z.strictObject({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
  description: z.string().optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).nullable().optional(),
});

const settings = z.strictObject({
  /** Visits allowed per node id (a number for every node, or per id); default 100. */
  max_loop_iterations: z.union([
    z.number().int().positive(),
    z.record(z.string(), z.number().int().positive()),
  ]).optional(),
  /** Parallel branches (map, parallel steps) at once; default 8. */
  max_concurrency: z.number().int().positive().max(64).optional(),
  /** Whole run, seconds. */
  timeout: seconds.optional(),
  /** Write a state snapshot to the transcript after each node (`--verbose` turns it on). */
  log_state_snapshots: z.boolean().optional(),
});

const top = z.strictObject({
  /** Shown to users; the agent's id is its folder's name (a display name such as "Demo" is fine). */
  name: z.string().min(1),
  description: z.string().optional(),
  version: z.literal("1.0").optional(),
  model: z.string().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  reasoning_effort: z.string().optional(),
  tools: z.array(z.string()).optional(),
  mcp_servers: z.array(z.string()).optional(),
  conversation_starters: z.array(z.string()).optional(),
  variables: z.array(variable).optional(),
  settings: settings.optional(),
  initial_state: z.record(z.string(), z.unknown()).optional(),
  reducers: z.record(z.string(), z.enum(REDUCERS)).optional(),
  start: id,
  nodes: z.record(z.string(), z.unknown()),
});

/** A parsed graph: the top level with typed nodes (ids in file order). */
export type GraphSpec = Omit<z.infer<typeof top>, "nodes"> & {
  nodes: Record<string, GraphNode>;
  /** Non-fatal notes on keys of the original Coyote this one does not support (core/graph/compat.ts). */
  warnings?: string[];
};

/** A `graph.yaml` that does not match the schema or fails validation; `problems` are one-liners. */
export class GraphSpecError extends Error {
  override name = "GraphSpecError";
  constructor(readonly file: string, readonly problems: string[]) {
    super(
      problems.length === 1
        ? `${file}: ${problems[0]}`
        : `${file}:\n  - ${problems.join("\n  - ")}`,
    );
  }
}

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

function where(path: PropertyKey[]): string {
  return path.map((s, i) => typeof s === "number" ? `[${s}]` : (i ? "." : "") + String(s)).join(
    "",
  );
}

function describe(issue: Issue, prefix: PropertyKey[], known: () => string[]): string[] {
  if (issue.code === "unrecognized_keys" && issue.keys?.length) {
    return issue.keys.map((k) => {
      const near = closest(k, known());
      return `${where([...prefix, ...issue.path, k])}: unknown key${
        near ? ` (did you mean \`${near}\`?)` : ""
      }`;
    });
  }
  const at = [...prefix, ...issue.path];
  // zod's wording for an absent required key ("Invalid input: expected string, received
  // undefined") reads as a type error; say what it is.
  const absent = /^Invalid input: expected (\w+), received undefined$/.exec(issue.message);
  const message = absent ? `required (${absent[1]})` : issue.message;
  return [`${at.length ? where(at) : "(top level)"}: ${message}`];
}

function keysOf(schema: unknown, path: PropertyKey[]): string[] {
  type S = { shape?: Record<string, unknown>; unwrap?: () => unknown } | undefined;
  const bare = (s: S): S => {
    while (s && !s.shape && typeof s.unwrap === "function") s = s.unwrap() as S;
    return s;
  };
  let s = bare(schema as S);
  for (const seg of path) s = bare(s?.shape?.[String(seg)] as S);
  return s?.shape ? Object.keys(s.shape) : [];
}

/**
 * Checks a parsed YAML value against the graph schema.
 * @throws GraphSpecError naming `file`, node ids and fields (`nodes.parse.promt: unknown key (did
 * you mean \`prompt\`?)`).
 */
export function parseGraphSpec(data: unknown, file: string): GraphSpec {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new GraphSpecError(file, ["expected a mapping at the top level"]);
  }
  const problems: string[] = [];
  const t = top.safeParse(data);
  if (!t.success) {
    for (const i of t.error.issues as Issue[]) {
      problems.push(...describe(i, [], () => keysOf(top, i.path)));
    }
  }
  const rawNodes = (data as { nodes?: unknown }).nodes;
  const nodes: Record<string, GraphNode> = {};
  if (rawNodes && typeof rawNodes === "object" && !Array.isArray(rawNodes)) {
    for (const [nid, raw] of Object.entries(rawNodes as Record<string, unknown>)) {
      const type = (raw as { type?: unknown } | null)?.type;
      const schema = NODE_SCHEMAS[type as NodeType];
      if (!schema) {
        const kinds = Object.keys(NODE_SCHEMAS);
        const near = typeof type === "string" ? closest(type, kinds) : undefined;
        problems.push(
          `nodes.${nid}.type: ${
            type === undefined ? "missing" : `unknown node type ${JSON.stringify(type)}`
          }; one of ${kinds.join(", ")}${near ? ` (did you mean \`${near}\`?)` : ""}`,
        );
        continue;
      }
      const r = schema.safeParse(raw);
      if (!r.success) {
        for (const i of r.error.issues as Issue[]) {
          problems.push(...describe(i, ["nodes", nid], () => keysOf(schema, i.path)));
        }
      } else nodes[nid] = r.data as GraphNode;
    }
  }
  if (problems.length) throw new GraphSpecError(file, problems);
  return { ...(t.data as z.infer<typeof top>), nodes };
}
