/**
 * Which files a search may not show (issue 16: "what `fs_read` would ask about, a command cannot
 * read silently" — nor a search tool). `fs_grep` and `ast_grep` read every file under their
 * paths in one call, and the guard judged only those paths; before printing a match they ask the
 * session's guard (`ToolContext.guard`) about each file that has one and leave out the files it
 * would not let `fs_read` read without a question:
 *
 * - a `deny` verdict (a `Read` deny rule, e.g. `Read(secret*)`);
 * - an `ask` verdict from a rule (`Read(.env)` ask);
 * - an `ask` by a default (a credential store, a config holding a credential line) for a file
 *   whose searched path was allowed — when the path itself asked by default (a folder outside
 *   the workspace) and the user allowed the search, that answer covers the default asks of the
 *   files under it.
 *
 * The tool says how many files it left out and why: when one was held by an ask, that the model
 * can `fs_read` one (which asks); when every one was denied, that `fs_read` is denied too.
 * Without a guard (a context built by hand, a plugin worker) nothing is left out.
 * @module
 */
import type { ToolContext } from "../../sdk/mod.ts";

/** Whether absolute `p` is `dir` or below it. */
function isInside(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** What {@link heldFiles} found: the files left out, and the first reason for the note. */
export interface Held {
  files: Set<string>;
  reason?: string;
  /** Whether a file was held by an `ask` verdict (an `fs_read` of it would ask, not fail). */
  asked?: boolean;
}

/**
 * The files of `files` (absolute) the guard holds back, searched under `roots` (absolute).
 * Each distinct file is judged once.
 */
export async function heldFiles(
  ctx: ToolContext,
  roots: string[],
  files: Iterable<string>,
): Promise<Held> {
  const held: Held = { files: new Set() };
  if (!ctx.guard) return held;
  const rootVerdicts = await Promise.all(roots.map((r) => ctx.guard!({ type: "read", path: r })));
  const rootAskedByDefault = (f: string) =>
    roots.some((r, i) =>
      isInside(f, r) && rootVerdicts[i].decision === "ask" &&
      (rootVerdicts[i].rule ?? "default") === "default"
    );
  for (const f of new Set(files)) {
    const v = await ctx.guard({ type: "read", path: f });
    if (v.decision === "allow") continue;
    const byDefault = (v.rule ?? "default") === "default";
    if (v.decision === "deny" || !byDefault || !rootAskedByDefault(f)) {
      held.files.add(f);
      held.reason ??= v.reason;
      if (v.decision === "ask") held.asked = true;
    }
  }
  return held;
}

/**
 * The line a search adds when it left files out (empty when none). Every file denied: says
 * `fs_read` is denied too (no "to ask", which would send the model to a denied call).
 */
export function heldNote(held: Held): string {
  const n = held.files.size;
  if (!n) return "";
  const them = n > 1 ? "them" : "it";
  const what = `[${n} file${n > 1 ? "s" : ""} with matches left out: `;
  if (!held.asked) return `${what}fs_read may not read ${them} either (${held.reason})]`;
  return `${what}the guard would not let fs_read read ${them} without a question (${held.reason}); fs_read a file to ask]`;
}
