/**
 * The after-command cleanup of the OS sandbox (docs/permissions.md "The OS sandbox"): protected
 * paths a command created are removed, and the tool result names each with why.
 * @module
 */
import type { Policy } from "../policy.ts";
import { compilePath, GlobEngineNotLoaded } from "../rules.ts";
import {
  findProtected,
  gitIncludedFiles,
  hooksPathDir,
  PROTECTED_SCAN_LIMIT,
  runsLaterPath,
} from "./protected.ts";
import type { NodeModulesWatch } from "./node_modules_scan.ts";

/** Why a protected path is protected, for the cleanup message (model and user read it). */
function protectedWhy(
  rel: string,
  hooks: string | undefined,
  abs: string,
  included: readonly string[] = [],
): string {
  const name = rel.slice(rel.lastIndexOf("/") + 1).toLowerCase();
  if (hooks && abs === hooks) return "the repository's core.hooksPath: git runs its hooks";
  if (included.includes(abs)) {
    return "included by the repository's git config (include.path): git reads core.fsmonitor and hooks from it";
  }
  if (name === ".git") return "git runs its hooks and core.fsmonitor";
  if (name === ".coyote") return "Coyote loads plugins and rules from it";
  if (name === ".mcp.json") return "Coyote starts its MCP servers";
  const m = runsLaterPath(abs);
  return m ? `protected as ${m}: another tool runs it later` : "protected";
}

/** A path's identity: device and inode (`lstat`), or undefined when it does not exist. */
function identity(p: string): string | undefined {
  try {
    const st = Deno.lstatSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * What the cleanup compares against: each protected path that exists before the command with its
 * identity (device and inode — not size and mtime: a file is read-only in the sandbox, and an edit
 * the user makes on the host meanwhile must not count as the command's), and the folders the scan
 * did not examine (it stopped at {@link PROTECTED_SCAN_LIMIT}).
 */
export interface ProtectedBefore {
  ids: ReadonlyMap<string, string>;
  unchecked: readonly string[];
}

/** {@link ProtectedBefore} of the paths a profile's scan found (core/policy/sandbox/profile.ts). */
export function protectedBefore(paths: readonly string[], unchecked: readonly string[] = []) {
  const ids = new Map<string, string>();
  for (const p of paths) {
    const id = identity(p);
    if (id) ids.set(p, id);
  }
  return { ids, unchecked } satisfies ProtectedBefore;
}

/**
 * Removes every protected path (`.git`, `.coyote`, `.mcp.json`, the code other tools run later
 * of ./protected.ts, any case, any depth — `node_modules/` included, ./node_modules_scan.ts) that
 * a sandboxed command created in the workspace — paths that were not in `before` (the scan the
 * command's profile was derived from), or that are there with another identity (device and
 * inode: the original was moved or removed and something new put in its place — attack trial 2
 * item 1; ./bwrap.ts makes the parents mount points so this cannot happen under bwrap, the check
 * holds wherever it could) — and that no `Write` allow rule names. Never removes what existed
 * before: a path whose identity is one of `before`'s (an original that moved) is left and
 * named with where it was. The folders a scan did not examine (it stopped at its limit) are named
 * too. They cannot be
 * mounted read-only before they exist (the mount point would have to be created on the host),
 * and git or Coyote would load them outside the sandbox later: hooks and `core.fsmonitor` in a
 * `.git`, plugins and permission rules in `.coyote/`, servers in `.mcp.json` — also in a
 * sub-folder, where Coyote or git may be started next. Names each removed path with why;
 * undefined when nothing was created.
 */
export function removeCreated(
  policy: Policy,
  ws: string,
  before: ProtectedBefore,
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
  const unchecked: string[] = [];
  const found = findProtected(ws, undefined, roots, unchecked);
  const inNodeModules = watch?.created(roots) ?? [];
  const hooks = hooksPathDir(ws);
  const included = gitIncludedFiles(ws);
  const originals = new Map([...before.ids].map(([p, id]) => [id, p]));
  const moved: string[] = [];
  const replaced = new Set<string>();
  for (const p of [...found, ...inNodeModules]) {
    const id = identity(p);
    const was = before.ids.get(p);
    if (was !== undefined && was === id) continue;
    const from = id && originals.get(id);
    if (from) {
      // Existed before the command, elsewhere: the user's own, never removed.
      moved.push(`${from} → ${p}`);
      continue;
    }
    if (was !== undefined) replaced.add(p);
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
  const rel = (p: string) => p.slice(ws.length + 1) || ".";
  const out: string[] = [];
  if (removed.length) {
    const first = rel(removed[0]);
    const rule = /(^|\/)\.mcp\.json$/i.test(first) ? first : `${first}/**`;
    const lines = removed.map((p) =>
      `  ${rel(p)} (${protectedWhy(rel(p), hooks, p, included)}${
        replaced.has(p) ? "; the original was moved or removed and this put in its place" : ""
      })`
    );
    out.push(
      `the OS sandbox removed ${removed.length} protected path${
        removed.length > 1 ? "s" : ""
      } the command created (they would run code outside the sandbox later):\n${
        lines.join("\n")
      }\nallow one with --allow 'Write(${rule})'`,
    );
  }
  for (const p of replaced) {
    if (moved.some((m) => m.startsWith(`${p} → `))) continue;
    out.push(
      `the original ${
        rel(p)
      } was moved out of the workspace, renamed to an unprotected name or deleted`,
    );
  }
  if (moved.length) {
    out.push(
      `protected paths that existed before the command moved (left in place, not removed):\n${
        moved.map((m) => `  ${m.split(" → ").map(rel).join(" → ")}`).join("\n")
      }`,
    );
  }
  const notChecked = [...new Set([...before.unchecked, ...unchecked])];
  if (notChecked.length) {
    out.push(
      `the OS sandbox's check for created protected paths stopped at ${PROTECTED_SCAN_LIMIT} folders; ${notChecked.length} folder${
        notChecked.length > 1 ? "s were" : " was"
      } not checked (a .git, .envrc, … the command made there was not removed): ${
        notChecked.slice(0, 10).map(rel).join(", ")
      }${notChecked.length > 10 ? `, … (+${notChecked.length - 10} more)` : ""}`,
    );
  }
  return out.length ? out.join("\n") : undefined;
}
