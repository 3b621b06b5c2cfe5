/**
 * The whole process tree of one stdio MCP server (issue 10: servers started through a wrapper
 * such as `sh -c "node server.js"` must not survive Coyote). The server leads a new session and
 * process group (`detached`, setsid(2)), and its environment carries a random marker
 * ({@link SERVER_MARKER}) that every descendant inherits. Ending the tree signals the group and,
 * on Linux, every process whose environment carries the marker (found by a `grep` child: Deno
 * does not let the binary read other processes' `/proc` files) or, where readable, whose
 * `/proc/<pid>/stat` names the same session or group — so descendants that left the group
 * (`setsid`, double fork) are found too. Live trees are ended on `unload` as a last resort.
 *
 * Limits: a descendant that leaves the session and clears its environment is not found; on macOS
 * only the group is reachable (no `/proc`).
 * @module
 */

import { pidsWithEnv } from "../../../plugins/exec/tree.ts";

/** Environment variable that marks every process of one MCP server's tree. */
export const SERVER_MARKER = "COYOTE_MCP_SERVER_ID";

/** One server's tree: its leader pid and marker value. */
export interface ServerTree {
  pid: number;
  marker: string;
}

const live = new Set<ServerTree>();
let hooked = false;

/** A fresh marker (128 random bits, hex). */
export function newMarker(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Registers a live tree, ended on process `unload` unless {@link endTree} ran first. */
export function trackTree(tree: ServerTree): void {
  live.add(tree);
  if (!hooked) {
    hooked = true;
    globalThis.addEventListener("unload", () => {
      for (const t of [...live]) signalTree(t, "SIGKILL");
    });
  }
}

/**
 * Pids of `tree` other than Coyote itself, from /proc (empty without /proc): every process whose
 * environment carries the marker (plugins/exec/tree.ts `pidsWithEnv`, a `grep` child — Deno
 * refuses to read other processes' `/proc/<pid>/environ` and `/proc/<pid>/stat` under the
 * binary's flags), plus, where `/proc/<pid>/stat` is readable (`--allow-all`), those in the
 * leader's session or group.
 */
export function treeMembers(tree: ServerTree): number[] {
  if (Deno.build.os !== "linux") return [];
  const out = new Set(pidsWithEnv(`${SERVER_MARKER}=${tree.marker}`));
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync("/proc")];
  } catch {
    return [...out];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e.name)) continue;
    const pid = Number(e.name);
    if (pid === Deno.pid || out.has(pid)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // state ppid pgrp session …
      if (f[0] === "Z") continue;
      if (Number(f[2]) === tree.pid || Number(f[3]) === tree.pid) out.add(pid);
    } catch (e) {
      // Not readable under the binary's flags: the marker search above covers the tree.
      if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) break;
    }
  }
  return [...out];
}

/** Sends `sig` to the group and to every member found; returns how many were signalled. */
export function signalTree(tree: ServerTree, sig: Deno.Signal): number {
  let n = 0;
  try {
    Deno.kill(-tree.pid, sig);
    n++;
  } catch { /* group gone */ }
  for (const pid of treeMembers(tree)) {
    try {
      Deno.kill(pid, sig);
      n++;
    } catch { /* gone */ }
  }
  return n;
}

/**
 * Ends the tree: SIGTERM, up to `graceMs` for it to go, then SIGKILL to whatever is left.
 */
export async function endTree(tree: ServerTree, graceMs = 500): Promise<void> {
  signalTree(tree, "SIGTERM");
  const end = Date.now() + graceMs;
  while (Date.now() < end) {
    if (!alive(-tree.pid) && treeMembers(tree).length === 0) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  signalTree(tree, "SIGKILL");
  live.delete(tree);
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}
