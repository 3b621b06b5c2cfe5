/**
 * `fs_glob`: files matching a glob, newest first, and what the pattern reads
 * ({@link globAccesses}, judged by the guard). The model-facing description is `glob.txt`.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolAccess, ToolResult } from "../../sdk/mod.ts";
import { describeFsError, displayPath, resolvePath, toolError } from "./paths.ts";
import { walkFiles } from "./walk.ts";
import { picomatch } from "./picomatch.ts";
import description from "./glob.txt" with { type: "text" };

/** Paths shown by `fs_glob`. */
export const GLOB_LIMIT = 500;

/**
 * What `fs_glob` reads: its `path`, and — when the pattern is absolute, starts with `~` or
 * climbs with `..` — the folder the pattern's literal head names (`/etc/*` reads `/etc`,
 * `../x/**` reads `../x`); a `..` after a glob segment may lead anywhere (judged as `/`).
 * The pattern is judged, not only `path` (issue 11 §2).
 */
export function globAccesses(pattern: string, path?: string): ToolAccess[] {
  const base = path ?? ".";
  const out: ToolAccess[] = [{ type: "read", path: base }];
  const segs = pattern.split("/");
  if (!pattern.startsWith("/") && !pattern.startsWith("~") && !segs.includes("..")) return out;
  const lit: string[] = [];
  for (const seg of segs) {
    if (/[*?[\]{}()!+@]/.test(seg)) break;
    lit.push(seg);
  }
  const head = lit.join("/") || (pattern.startsWith("/") ? "/" : ".");
  const abs = pattern.startsWith("/") || pattern.startsWith("~");
  const target = segs.slice(lit.length).includes("..")
    ? "/"
    : abs
    ? head
    : `${base.replace(/\/+$/, "")}/${head}`;
  out.push({ type: "read", path: target });
  return out;
}
/**
 * `fs_glob {pattern, path?}`: files matching a glob (npm picomatch, `dot`
 * files included) under `path`, most recently modified first (as Claude
 * Code's Glob: the files being worked on come first), ties by path. At most
 * {@link GLOB_LIMIT} shown. Matching is against the path relative to `path`.
 */
export const fsGlobTool = defineTool({
  name: "fs_glob",
  description,
  input: fsInput("fs_glob"),
  kind: "search",
  readOnly: true,
  title: (i) => `Glob ${i.pattern}${i.path ? ` in ${i.path}` : ""}`,
  access: (i) => globAccesses(i.pattern, i.path),
  async run(input, ctx): Promise<ToolResult> {
    let pattern = input.pattern;
    let root = resolvePath(ctx.cwd, input.path ?? ".");
    const { pm, scan } = await picomatch();
    if (pattern.startsWith("/")) {
      const s = scan(pattern);
      root = s.base || "/";
      pattern = s.glob || "**";
    }
    const shown = displayPath(ctx.cwd, root);
    try {
      const st = await Deno.stat(root);
      if (!st.isDirectory) return toolError(`${shown} is not a directory`);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    const isMatch = pm(pattern, { dot: true });
    const base = scan(pattern).base; // folder prefix every match lies under
    // Prune folders no match can lie in: outside the pattern's literal base,
    // or deeper than a pattern without `**` (or braces) can reach.
    const maxDepth = /\*\*|[{}]/.test(pattern) ? Infinity : pattern.split("/").length - 1;
    const enterDir = (rel: string) =>
      rel.split("/").length <= maxDepth &&
      (base === "" || rel === base || base.startsWith(rel + "/") || rel.startsWith(base + "/"));
    const cut = root.endsWith("/") ? root.length : root.length + 1;
    const found: { abs: string; mtime: number }[] = [];
    const COLLECT = 20_000;
    let total = 0;
    for await (const batch of walkFiles(root, { cwd: ctx.cwd, signal: ctx.signal, enterDir })) {
      for (const abs of batch) {
        if (!isMatch(abs.slice(cut))) continue;
        total++;
        if (found.length < COLLECT) found.push({ abs, mtime: 0 });
      }
    }
    if (ctx.signal.aborted) return toolError("cancelled");
    for (const f of found) {
      try {
        f.mtime = Deno.lstatSync(f.abs).mtime?.getTime() ?? 0;
      } catch { /* vanished */ }
    }
    found.sort((a, b) => b.mtime - a.mtime || (a.abs < b.abs ? -1 : a.abs > b.abs ? 1 : 0));
    if (total === 0) return { content: `No files match ${input.pattern} in ${shown}` };
    const lines = found.slice(0, GLOB_LIMIT).map((f) => displayPath(ctx.cwd, f.abs));
    if (total > GLOB_LIMIT) {
      lines.push(
        `[showing ${GLOB_LIMIT} of ${total} matches, newest first; narrow the pattern or path]`,
      );
    }
    return { content: lines.join("\n"), rawOutput: { matches: total } };
  },
});
