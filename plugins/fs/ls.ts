/**
 * `fs_ls`: one folder's entries, `.gitignore`d ones and `.git/` hidden (walk.ts).
 * The model-facing description is `ls.txt`.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { describeFsError, displayPath, resolvePath, toolError } from "./paths.ts";
import { listDir } from "./walk.ts";
import description from "./ls.txt" with { type: "text" };

/** Entries shown by `fs_ls`. */
export const LS_LIMIT = 1000;

/** `fs_ls {path?}`: one folder's entries, folders with a trailing `/`. */
export const fsLsTool = defineTool({
  name: "fs_ls",
  description,
  input: fsInput("fs_ls"),
  kind: "read",
  readOnly: true,
  title: (i) => `List ${i.path ?? "."}`,
  access: (i) => [{ type: "read", path: i.path ?? "." }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path ?? ".");
    const shown = displayPath(ctx.cwd, abs);
    let listed;
    try {
      const st = await Deno.stat(abs);
      if (!st.isDirectory) return toolError(`${shown} is a file, not a directory; use fs_read`);
      listed = await listDir(abs, ctx.cwd);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    const { entries, hidden } = listed;
    const lines = entries.slice(0, LS_LIMIT).map((e) => e.isDir ? `${e.name}/` : e.name);
    if (entries.length > LS_LIMIT) {
      lines.push(`[${entries.length - LS_LIMIT} more entries not shown]`);
    }
    if (hidden > 0) lines.push(`[${hidden} entries hidden by .gitignore or .git]`);
    if (entries.length === 0) lines.unshift(`${shown} is empty`);
    return {
      content: lines.join("\n"),
      locations: [{ path: abs }],
      rawOutput: { path: abs, entries: entries.length, hidden },
    };
  },
});
