/**
 * The after-command cleanup of the OS sandbox (docs/permissions.md "The OS sandbox"): protected
 * paths a command created are removed, and the tool result names each with why.
 * @module
 */
import type { Policy } from "../policy.ts";
import { compilePath, GlobEngineNotLoaded } from "../rules.ts";
import { findProtected, hooksPathDir, runsLaterPath } from "./protected.ts";
import type { NodeModulesWatch } from "./node_modules_scan.ts";

/** Why a protected path is protected, for the cleanup message (model and user read it). */
function protectedWhy(rel: string, hooks: string | undefined, abs: string): string {
  const name = rel.slice(rel.lastIndexOf("/") + 1).toLowerCase();
  if (hooks && abs === hooks) return "the repository's core.hooksPath: git runs its hooks";
  if (name === ".git") return "git runs its hooks and core.fsmonitor";
  if (name === ".coyote") return "Coyote loads plugins and rules from it";
  if (name === ".mcp.json") return "Coyote starts its MCP servers";
  const m = runsLaterPath(abs);
  return m ? `protected as ${m}: another tool runs it later` : "protected";
}

/**
 * Removes every protected path (`.git`, `.coyote`, `.mcp.json`, the code other tools run later
 * of ./protected.ts, any case, any depth — `node_modules/` included, ./node_modules_scan.ts) that
 * a sandboxed command created in the workspace — paths that were not in `before` (the scan the
 * command's profile was derived from) and that no `Write` allow rule names. They cannot be
 * mounted read-only before they exist (the mount point would have to be created on the host),
 * and git or Coyote would load them outside the sandbox later: hooks and `core.fsmonitor` in a
 * `.git`, plugins and permission rules in `.coyote/`, servers in `.mcp.json` — also in a
 * sub-folder, where Coyote or git may be started next. Names each removed path with why;
 * undefined when nothing was created.
 */
export function removeCreated(
  policy: Policy,
  ws: string,
  before: ReadonlySet<string>,
  watch?: NodeModulesWatch,
): string | undefined {
  // A glob that cannot compile yet (npm picomatch still loading) allows nothing: fail closed.
  const compiles = (r: { pattern?: string }, p: string) => {
    try {
      return compilePath(r.pattern!, policy.workspace, policy.home).test(p);
    } catch (e) {
      if (e instanceof GlobEngineNotLoaded) return false;
      throw e;
    }
  };
  const allowed = (p: string) =>
    policy.rules().some((r) =>
      r.kind === "write" && r.decision === "allow" && r.pattern !== undefined && compiles(r, p)
    );
  const removed: string[] = [];
  const kept: string[] = [];
  const roots: string[] = [];
  const found = findProtected(ws, undefined, roots);
  const inNodeModules = watch?.created(roots) ?? [];
  const hooks = hooksPathDir(ws);
  for (const p of [...found, ...inNodeModules]) {
    if (before.has(p)) continue;
    if (allowed(p)) {
      watch?.keep(p);
      continue;
    }
    try {
      Deno.removeSync(p, { recursive: true });
      watch?.forget(p);
      removed.push(p);
    } catch {
      /* could not remove: the guard still protects it */ kept.push(p);
    }
  }
  if (!removed.length) return undefined;
  const rel = (p: string) => p.slice(ws.length + 1);
  const first = rel(removed[0]);
  const rule = /(^|\/)\.mcp\.json$/i.test(first) ? first : `${first}/**`;
  const lines = removed.map((p) => `  ${rel(p)} (${protectedWhy(rel(p), hooks, p)})`);
  return `the OS sandbox removed ${removed.length} protected path${
    removed.length > 1 ? "s" : ""
  } the command created (they would run code outside the sandbox later):\n${
    lines.join("\n")
  }\nallow one with --allow 'Write(${rule})'`;
}
