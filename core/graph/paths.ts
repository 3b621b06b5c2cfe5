/**
 * Where a graph's script files are: paths relative to the graph's folder, never outside it.
 * Kept apart from load.ts so the runner does not load the YAML parser.
 * @module
 */
import { isAbsolute, relative, resolve } from "../util/path.ts";

/** The absolute path of a node's script; refuses paths that leave the graph's folder. */
export function scriptPath(dir: string, script: string): string {
  const p = resolve(dir, script);
  const rel = relative(dir, p);
  if (rel.startsWith("..") || isAbsolute(rel)) {
    throw new Error(`script "${script}" is outside the graph's folder`);
  }
  return p;
}
