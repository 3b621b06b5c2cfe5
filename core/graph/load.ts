/**
 * Loading a graph agent: `<folder>/graph.yaml` (+ `scripts/`) → a validated {@link GraphSpec}.
 * YAML syntax errors name the line; schema and validation problems name node and field
 * ({@link GraphSpecError}). Used by the agent registry and by `coyote graph check PATH`.
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { scriptPath } from "./paths.ts";

export { scriptPath };
import { parseDocument } from "yaml";
import { GraphSpecError, parseGraphSpec } from "../protocol/graph_spec.ts";
import type { GraphSpec } from "../protocol/graph_spec.ts";
import { validateGraph } from "./validate.ts";
import type { ValidateContext } from "./validate.ts";

/** A graph with where it came from. */
export interface LoadedGraph {
  spec: GraphSpec;
  /** The graph.yaml path. */
  file: string;
  /** Its folder: script paths resolve against it. */
  dir: string;
}

/** Parses graph.yaml text. @throws GraphSpecError */
export function parseGraphText(text: string, file: string): GraphSpec {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0];
    const msg = e.message.split("\n")[0].replace(/\s*at line \d+, column \d+:?\s*$/, "");
    throw new GraphSpecError(file, [
      `${pos ? `line ${pos.line}, column ${pos.col}: ` : ""}YAML syntax error: ${msg}`,
    ]);
  }
  return parseGraphSpec(doc.toJS(), file);
}

/**
 * Reads, parses and validates `<dir>/graph.yaml` (or the file itself when `path` ends in .yaml).
 * `ctx` adds the checks that need the host (tools, agents); scripts are checked against the folder.
 * @throws GraphSpecError
 */
export async function loadGraph(path: string, ctx: ValidateContext = {}): Promise<LoadedGraph> {
  const file = /\.ya?ml$/.test(path) ? resolve(path) : join(resolve(path), "graph.yaml");
  const dir = dirname(file);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new GraphSpecError(file, [`cannot read: ${(e as Error).message}`]);
  }
  const spec = parseGraphText(text, file);
  validateGraph(spec, file, {
    scriptExists: (s) => {
      try {
        return Deno.statSync(scriptPath(dir, s)).isFile;
      } catch {
        return false;
      }
    },
    ...ctx,
  });
  return { spec, file, dir };
}
