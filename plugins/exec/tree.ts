/**
 * The whole process tree of one command (issue 10 "Commands that never hang and leave nothing
 * behind"): the command's shell leads a new session and process group (setsid(2)); a child may
 * leave both (`setsid cmd &`), so each command also gets a random marker variable
 * ({@link TREE_MARKER}) that its descendants inherit. Ending the tree sends the signal to the
 * group and, on Linux, to every process whose environment carries the marker.
 *
 * Trees are registered while they live: {@link endAllTrees} ends them when Coyote exits
 * (`unload`) and {@link TreeSet.endAll} when a session closes. A sandboxed command's PID
 * namespace dies with its shell, so a normal exit needs only the group signal; a kill (timeout,
 * cancel) still looks for the marker, because bwrap's `--die-with-parent` can miss a parent that
 * dies while the sandbox is being set up.
 *
 * Limits: a descendant that both leaves the session and clears its environment (`env -i setsid
 * …`) outside the sandbox is not found; on macOS only the group and session are reachable
 * (no `/proc`), and the marker search needs `sh` and `grep`.
 * @module
 */

/** Name of the marker variable set in every command's environment. */
export const TREE_MARKER = "COYOTE_COMMAND_ID";

/** One command's process tree. */
export interface ProcessTree {
  /** Pid of the shell (leader of its session and process group). */
  pid: number;
  /** Value of {@link TREE_MARKER} in the command's environment. */
  marker: string;
}

const live = new Set<ProcessTree>();
let unloadHooked = false;

/** A new marker value (128 random bits, hex). */
export function newMarker(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** Registers a live tree (until {@link forget}); hooks process exit once. */
export function track(tree: ProcessTree): void {
  live.add(tree);
  if (!unloadHooked) {
    unloadHooked = true;
    globalThis.addEventListener("unload", () => endAllTrees());
  }
}

/** Unregisters a tree (after it was ended). */
export function forget(tree: ProcessTree): void {
  live.delete(tree);
}

function send(pid: number, sig: Deno.Signal): boolean {
  try {
    Deno.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Pids (other than Coyote's own) whose environment carries the tree's marker; [] without /proc.
 */
export function treeMembers(tree: ProcessTree): number[] {
  return pidsWithEnv(`${TREE_MARKER}=${tree.marker}`);
}

/**
 * Pids (other than Coyote's own) whose environment holds exactly `assignment` (`NAME=value`);
 * [] without /proc. Deno refuses to read other processes' `/proc/<pid>/…` files without
 * `--allow-all` (the binary's flags do not include it), so one `grep -lzx` over every
 * `/proc/<pid>/environ` does it (a few ms; only when a tree is ended). Also used for MCP server
 * trees (core/extensions/mcp/process_tree.ts).
 */
export function pidsWithEnv(assignment: string): number[] {
  if (Deno.build.os !== "linux") return [];
  try {
    const o = new Deno.Command("sh", {
      args: [
        "-c",
        'exec grep -lszx -- "$1" /proc/[0-9]*/environ',
        "sh",
        assignment,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    const out: number[] = [];
    for (const line of new TextDecoder().decode(o.stdout).split("\n")) {
      const m = /^\/proc\/(\d+)\/environ$/.exec(line);
      if (m && Number(m[1]) !== Deno.pid) out.push(Number(m[1]));
    }
    return out;
  } catch {
    return [];
  }
}

/**
 * Sends `sig` to every process of `tree`: the process group, then (`deep`, Linux) each process
 * carrying the marker, repeated while new ones appear (a dying shell may still fork). Returns
 * how many processes were signalled by pid.
 */
export function signalTree(tree: ProcessTree, sig: Deno.Signal, deep = true): number {
  send(-tree.pid, sig);
  if (!deep) return 0;
  let n = 0;
  for (let pass = 0; pass < 3; pass++) {
    const members = treeMembers(tree);
    if (!members.length) break;
    for (const pid of members) if (send(pid, sig)) n++;
    if (sig !== "SIGKILL") break;
  }
  return n;
}

/** Ends every live tree at once (SIGKILL): Coyote is exiting. */
export function endAllTrees(): void {
  for (const t of live) signalTree(t, "SIGKILL");
  live.clear();
}

/** The trees one owner (a session) started; {@link endAll} when it closes. */
export class TreeSet {
  #trees = new Set<ProcessTree>();
  add(t: ProcessTree): void {
    this.#trees.add(t);
  }
  delete(t: ProcessTree): void {
    this.#trees.delete(t);
  }
  endAll(): void {
    for (const t of this.#trees) signalTree(t, "SIGKILL");
    this.#trees.clear();
  }
}
