/**
 * Loading a graph agent: `<folder>/graph.yaml` (+ `scripts/`) → a validated {@link GraphSpec}.
 * YAML syntax errors name the line; schema and validation problems name node and field
 * ({@link GraphSpecError}). Used by the agent registry and by `coyote graph check PATH`.
 * @module
 */
import { dirname, join, resolve } from "../util/path.ts";
import { scriptPath } from "./paths.ts";

export { scriptPath };
import { parseDocument } from "yaml";
import { GraphSpecError, parseGraphSpec } from "../protocol/graph_spec.ts";
import type { GraphSpec } from "../protocol/graph_spec.ts";
import { validateGraph } from "./validate.ts";
import { fromOriginal } from "./compat.ts";
import type { ValidateContext } from "./validate.ts";

/** A graph with where it came from. */
export interface LoadedGraph {
  spec: GraphSpec;
  /** The graph.yaml path. */
  file: string;
  /** Its folder: script paths resolve against it. */
  dir: string;
}

/**
 * Parses graph.yaml text, reading the original Coyote's spellings too (core/graph/compat.ts);
 * what of those is not supported is in the spec's `warnings` (or thrown, when it cannot run).
 * `readScript` gives a script's text (relative path) so `_next`-only scripts get their routes.
 * @throws GraphSpecError
 */
export function parseGraphText(
  text: string,
  file: string,
  readScript?: (rel: string) => string | undefined,
): GraphSpec {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0];
    const msg = e.message.split("\n")[0].replace(/\s*at line \d+, column \d+:?\s*$/, "");
    throw new GraphSpecError(file, [
      `${pos ? `line ${pos.line}, column ${pos.col}: ` : ""}YAML syntax error: ${msg}`,
    ]);
  }
  const compat = fromOriginal(doc.toJS(), file, readScript);
  let spec: GraphSpec;
  try {
    spec = parseGraphSpec(compat.data, file);
  } catch (e) {
    if (!(e instanceof GraphSpecError) || !compat.problems.length) throw e;
    // A node compat refused (a `rag` node) is not also an "unknown node type".
    const refused = compat.problems.map((p) => p.split(":")[0].replace(/\.[^.]+$/, ""));
    const rest = e.problems.filter((p) => !refused.some((r) => p.startsWith(`${r}.type:`)));
    throw new GraphSpecError(file, [...compat.problems, ...rest]);
  }
  if (compat.problems.length) throw new GraphSpecError(file, compat.problems);
  if (compat.warnings.length) spec.warnings = compat.warnings;
  return spec;
}

/** A script's text beside `dir`, or undefined when it cannot be read. */
export function scriptReader(dir: string): (rel: string) => string | undefined {
  return (rel) => {
    try {
      return Deno.readTextFileSync(scriptPath(dir, rel));
    } catch {
      return undefined;
    }
  };
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
  const spec = parseGraphText(text, file, scriptReader(dir));
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
