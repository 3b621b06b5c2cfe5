/**
 * The graph validator (issue 8 §1): run before every graph run and by `coyote graph check PATH`.
 * It proves, without running anything:
 * - every reference resolves (`start`, `next`, `fallback`, approval `routes`/`on_other`, map
 *   `branch`, script `routes`, per-node loop caps);
 * - every node is reachable from `start` and can reach an `end`;
 * - the declared edges have no cycle — loops go through a script's `_next`, bounded by
 *   `settings.max_loop_iterations`;
 * - a parallel step (`next: [a, b]`) joins in one node, and holds no `approval`, `input` or `end`;
 *   a map branch is one atomic node (no `next`) and asks no human;
 * - two nodes of one parallel step never write one state key unless it has a reducer;
 * - tools (⊆ the graph's `tools` and `mcp:<server>` of its `mcp_servers`, and known to the
 *   host), agents and scripts exist;
 * - templates name keys the state can have (skipped when a script without `outputs` exists, since
 *   its writes are unknown).
 * @module
 */
import picomatch from "picomatch";
import { rootKey, templatePaths } from "./template.ts";
import type { GraphNode, GraphSpec } from "../protocol/graph_spec.ts";
import { GraphSpecError } from "../protocol/graph_spec.ts";
import { closest } from "../util/text.ts";

/** What the host knows; each check is skipped when its callback is absent. */
export interface ValidateContext {
  /** Whether a tool name (or `mcp:<server>`) exists for this workspace. */
  toolExists?: (name: string) => boolean;
  /** Whether an agent of that name exists. */
  agentExists?: (name: string) => boolean;
  /** Whether a script path (relative to the graph's folder) exists. */
  scriptExists?: (path: string) => boolean;
}

/**
 * Keys every run may have: the request, the last result, answers, the error a `fallback` node
 * was reached with (`{node, message}`), an approval nobody could answer (`{node, question}`), and a
 * map branch's item position; a follow-up's earlier runs (`followup` text, `previous` run:
 * core/graph/followup.ts).
 */
export const BUILTIN_KEYS = [
  "initial_prompt",
  "followup",
  "previous",
  "output",
  "choice",
  "input",
  "last_error",
  "needs_human",
  "index",
];

/** Outgoing edges of a node (static ones; a script's `routes` count, its undeclared `_next` cannot). */
export function edges(node: GraphNode): string[] {
  const out: string[] = [];
  if ("next" in node && node.next) {
    out.push(...(Array.isArray(node.next) ? node.next : [node.next]));
  }
  if ("fallback" in node && node.fallback) out.push(node.fallback);
  if (node.type === "approval") out.push(...Object.values(node.routes), node.on_other);
  if (node.type === "script" && node.routes) out.push(...node.routes);
  return out;
}

/** The state keys a node writes, or `undefined` when unknown (a script without `outputs`). */
export function writes(node: GraphNode): string[] | undefined {
  const keys = new Set<string>(Object.keys(node.state_updates ?? {}));
  switch (node.type) {
    case "llm":
    case "agent":
      keys.add("output");
      for (const k of Object.keys(schemaProps(node.output_schema))) keys.add(k);
      break;
    case "script":
      if (!node.outputs) return undefined;
      for (const k of node.outputs) keys.add(k);
      break;
    case "map":
      keys.add(node.collect_into);
      break;
    case "approval":
      keys.add("choice");
      break;
    case "input":
      keys.add("input");
      break;
    case "end":
      keys.add("output");
      break;
  }
  return [...keys];
}

function schemaProps(s: Record<string, unknown> | undefined): Record<string, unknown> {
  const p = s?.properties;
  return p && typeof p === "object" ? p as Record<string, unknown> : {};
}

/** Static-edge successors for cycle detection: next, fallback, approval routes (not a script's `_next`). */
function staticEdges(node: GraphNode): string[] {
  const out = [...nextOf(node)];
  if ("fallback" in node && node.fallback) out.push(node.fallback);
  if (node.type === "approval") out.push(...Object.values(node.routes), node.on_other);
  return out;
}

function nextOf(node: GraphNode): string[] {
  if (!("next" in node) || !node.next) return [];
  return Array.isArray(node.next) ? node.next : [node.next];
}

/**
 * Validates `spec`.
 * @throws GraphSpecError listing every problem (node and field named).
 */
export function validateGraph(spec: GraphSpec, file: string, ctx: ValidateContext = {}): void {
  const problems: string[] = [];
  const nodes = spec.nodes;
  const ids = Object.keys(nodes);
  const has = (id: string) => Object.hasOwn(nodes, id);
  // A missing node is most often a typo: name the nearest existing one.
  const noNode = (id: string, field: string) => {
    const near = closest(id, ids);
    return `${field}: no node "${id}"${near ? ` (did you mean \`${near}\`?)` : ""}`;
  };
  const ref = (id: string, field: string) => {
    if (!has(id)) problems.push(noNode(id, field));
  };

  if (!has(spec.start)) problems.push(noNode(spec.start, "start"));
  if (!ids.some((i) => nodes[i].type === "end")) problems.push("nodes: no `end` node");
  const caps = spec.settings?.max_loop_iterations;
  if (caps && typeof caps === "object") {
    for (const k of Object.keys(caps)) ref(k, `settings.max_loop_iterations.${k}`);
  }

  // Map branches and the fallbacks they take (a fallback replaces the branch's result for its item)
  // are atomic: they end where their map collects them.
  const branchOf = new Map<string, string>();
  for (const [mid, m] of Object.entries(nodes)) {
    if (m.type !== "map") continue;
    let b: string | undefined = m.branch;
    while (b && has(b) && !branchOf.has(b)) {
      branchOf.set(b, mid);
      const bn: GraphNode = nodes[b];
      b = "fallback" in bn ? bn.fallback : undefined;
    }
  }
  for (const [nid, node] of Object.entries(nodes)) {
    const at = `nodes.${nid}`;
    for (const n of nextOf(node)) ref(n, `${at}.next`);
    if ("fallback" in node && node.fallback) ref(node.fallback, `${at}.fallback`);
    if (node.type === "approval") {
      for (const [opt, t] of Object.entries(node.routes)) {
        ref(t, `${at}.routes.${opt}`);
        if (!node.options.includes(opt)) problems.push(`${at}.routes.${opt}: not one of options`);
      }
      ref(node.on_other, `${at}.on_other`);
      if (node.headless !== undefined && !node.routes[node.headless]) {
        problems.push(`${at}.headless: "${node.headless}" is not one of routes`);
      }
    }
    if (node.type === "script") {
      for (const r of node.routes ?? []) ref(r, `${at}.routes`);
      if (!node.next && !node.routes?.length && !branchOf.has(nid)) {
        problems.push(
          `${at}: a script needs \`next\` or \`routes\` (the ids its _next may name; none is named in its file)`,
        );
      }
      if (ctx.scriptExists && !ctx.scriptExists(node.script)) {
        problems.push(`${at}.script: no file "${node.script}" beside graph.yaml`);
      }
      if (!/\.(ts|js|mjs|sh)$/.test(node.script)) {
        problems.push(`${at}.script: expected a .ts, .js, .mjs or .sh file`);
      }
    }
    if (node.type === "map") {
      ref(node.branch, `${at}.branch`);
      for (const [b, m] of branchOf) {
        if (m !== nid) continue;
        const bn = nodes[b];
        const what = b === node.branch ? `${at}.branch` : `nodes.${b}`;
        if (bn.type === "approval" || bn.type === "input") {
          problems.push(`${what}: "${b}" is an ${bn.type} node; a map branch asks no human`);
        }
        if (bn.type === "end" || bn.type === "map") {
          problems.push(
            `${what}: "${b}" is a ${bn.type} node; a branch is one llm, agent or script node`,
          );
        }
        if ("next" in bn && bn.next) {
          problems.push(
            `nodes.${b}.next: a map branch is atomic (its result goes to ${nid}.collect_into)`,
          );
        }
      }
    }
    if (
      node.type !== "end" && node.type !== "approval" && !("next" in node && node.next) &&
      !(node.type === "script" && node.routes?.length) && !branchOf.has(nid)
    ) {
      problems.push(`${at}: no \`next\` (only \`end\` nodes finish a run)`);
    }
    if (node.type === "llm" && node.tools?.length) {
      // The universe: the graph's tools plus `mcp:<server>` for each of its mcp_servers (R4).
      const universe = [...spec.tools ?? [], ...(spec.mcp_servers ?? []).map((m) => `mcp:${m}`)];
      for (const t of node.tools) {
        if (!universe.some((u) => u === t || picomatch.isMatch(t, u))) {
          problems.push(
            t.startsWith("mcp:")
              ? `${at}.tools: "${t}" is not in the graph's tools or mcp_servers (add "${
                t.slice(4)
              }" to mcp_servers)`
              : `${at}.tools: "${t}" is not in the graph's tools`,
          );
        }
      }
    }
    if (node.type === "agent" && ctx.agentExists && !ctx.agentExists(node.agent)) {
      problems.push(`${at}.agent: no agent "${node.agent}"`);
    }
    // Parallel steps.
    const par = Array.isArray(("next" in node) ? node.next : undefined) ? nextOf(node) : [];
    if (par.length) {
      const joins = new Set<string>();
      const seenWrites = new Map<string, string>();
      for (const m of par) {
        const mn = nodes[m];
        if (!mn) continue;
        if (mn.type === "approval" || mn.type === "input" || mn.type === "end") {
          problems.push(
            `${at}.next: "${m}" is an ${mn.type} node; a parallel step holds llm, agent, script or map nodes`,
          );
          continue;
        }
        const mNext = nextOf(mn);
        if (mNext.length !== 1) {
          problems.push(`nodes.${m}.next: a node of a parallel step continues to one join node`);
        } else joins.add(mNext[0]);
        for (const k of writes(mn) ?? []) {
          const other = seenWrites.get(k);
          if (other && !spec.reducers?.[k]) {
            problems.push(
              `${at}.next: "${other}" and "${m}" both write state key "${k}" in parallel; give it a reducer`,
            );
          }
          seenWrites.set(k, m);
        }
      }
      if (joins.size > 1) {
        problems.push(
          `${at}.next: the parallel nodes continue to different nodes (${
            [...joins].join(", ")
          }); they must join in one`,
        );
      }
    }
  }

  // Reachability from start (branches count as reached through their map).
  const reach = new Set<string>();
  const stack = has(spec.start) ? [spec.start] : [];
  while (stack.length) {
    const n = stack.pop()!;
    if (reach.has(n) || !has(n)) continue;
    reach.add(n);
    const node = nodes[n];
    stack.push(...edges(node));
    if (node.type === "map") stack.push(node.branch);
  }
  for (const nid of ids) {
    if (!reach.has(nid)) problems.push(`nodes.${nid}: not reachable from start`);
  }

  // Every node can reach an end (reverse search from the ends; a branch reaches through its map).
  const canEnd = new Set(ids.filter((i) => nodes[i].type === "end"));
  let grew = true;
  while (grew) {
    grew = false;
    for (const nid of ids) {
      if (canEnd.has(nid)) continue;
      const node = nodes[nid];
      const viaMap = branchOf.has(nid) && canEnd.has(branchOf.get(nid)!);
      if (viaMap || edges(node).some((t) => canEnd.has(t))) {
        canEnd.add(nid);
        grew = true;
      }
    }
  }
  for (const nid of ids) {
    if (reach.has(nid) && !canEnd.has(nid)) {
      problems.push(`nodes.${nid}: cannot reach an \`end\` node`);
    }
  }

  // Static cycles (declared next/fallback/routes edges; a script's routes are its dynamic _next).
  const color = new Map<string, number>();
  const path: string[] = [];
  const visit = (n: string): void => {
    color.set(n, 1);
    path.push(n);
    for (const t of staticEdges(nodes[n])) {
      if (!has(t)) continue;
      if (color.get(t) === 1) {
        const cycle = [...path.slice(path.indexOf(t)), t].join(" → ");
        problems.push(
          `nodes: static cycle ${cycle}; loop through a script's _next (capped by settings.max_loop_iterations)`,
        );
      } else if (!color.get(t)) visit(t);
    }
    path.pop();
    color.set(n, 2);
  };
  for (const nid of ids) if (!color.get(nid)) visit(nid);

  // Tools of the universe exist.
  if (ctx.toolExists) {
    for (const t of spec.tools ?? []) {
      if (!/[*?[]/.test(t) && !ctx.toolExists(t)) {
        problems.push(
          `tools: no tool "${t}" in this workspace (a function script of the original Coyote is not a tool here: port it as a plugin tool, or call it through execute_command)`,
        );
      }
    }
  }

  // Templates name known keys.
  const allWrites = ids.map((i) => writes(nodes[i]));
  if (allWrites.every((w) => w !== undefined)) {
    const known = new Set<string>([
      ...BUILTIN_KEYS,
      ...Object.keys(spec.initial_state ?? {}),
      ...(spec.variables ?? []).map((v) => v.name),
      ...allWrites.flat() as string[],
    ]);
    for (const [nid, node] of Object.entries(nodes)) {
      const local = new Set(known);
      const map = branchOf.get(nid);
      if (map) local.add((nodes[map] as { as: string }).as);
      for (const [field, text] of templatedFields(node)) {
        for (const p of templatePaths(text)) {
          if (!local.has(rootKey(p))) {
            problems.push(
              `nodes.${nid}.${field}: template names {{${p}}}, which no node, variable or initial_state key provides`,
            );
          }
        }
      }
    }
  }

  if (problems.length) throw new GraphSpecError(file, [...new Set(problems)]);
}

function templatedFields(node: GraphNode): [string, string][] {
  const out: [string, string][] = [];
  const add = (f: string, v: unknown) => {
    if (typeof v === "string") out.push([f, v]);
  };
  if (node.type === "llm") {
    add("prompt", node.prompt);
    add("instructions", node.instructions);
  }
  if (node.type === "agent") add("prompt", node.prompt);
  if (node.type === "approval" || node.type === "input") add("question", node.question);
  if (node.type === "end") add("output", node.output);
  for (const [k, v] of Object.entries(node.state_updates ?? {})) add(`state_updates.${k}`, v);
  return out;
}
