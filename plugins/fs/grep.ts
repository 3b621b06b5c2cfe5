/**
 * `fs_grep`: regex search of file contents, `path:line:text` lines; the search itself is
 * `grep_engine.ts`. The model-facing description is `grep.txt`.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { describeFsError, displayPath, resolvePath, toolError } from "./paths.ts";
import { buildSpec, grepTree } from "./grep_engine.ts";
import { picomatch } from "./picomatch.ts";
import { heldFiles, heldNote } from "./held.ts";
import description from "./grep.txt" with { type: "text" };

/** Matches shown by `fs_grep`, and its output budget in chars. */
export const GREP_LIMIT = 500;
export const GREP_MAX_CHARS = 40_000;

/** `fs_grep {pattern, path?, glob?, ignore_case?}`: `path:line:text` lines; see `grep_engine.ts`. */
export const fsGrepTool = defineTool({
  name: "fs_grep",
  description,
  input: fsInput("fs_grep"),
  kind: "search",
  readOnly: true,
  title: (i) => `Grep ${i.pattern}${i.path ? ` in ${i.path}` : ""}`,
  access: (i) => [{ type: "read", path: i.path ?? "." }],
  async run(input, ctx): Promise<ToolResult> {
    let spec;
    try {
      spec = buildSpec({ pattern: input.pattern, ignoreCase: input.ignore_case, maxLine: 250 });
    } catch (err) {
      return toolError((err as Error).message);
    }
    const root = resolvePath(ctx.cwd, input.path ?? ".");
    const shown = displayPath(ctx.cwd, root);
    try {
      await Deno.stat(root);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    let filter: ((rel: string) => boolean) | undefined;
    if (input.glob) {
      const { pm } = await picomatch();
      // Like `rg -g`: a glob without `/` matches the file name at any depth.
      const isMatch = pm(input.glob, { dot: true, basename: !input.glob.includes("/") });
      filter = (rel) => isMatch(rel);
    }
    let outcome;
    try {
      outcome = await grepTree({
        root,
        cwd: ctx.cwd,
        spec,
        filter,
        limit: GREP_LIMIT,
        signal: ctx.signal,
      });
    } catch (err) {
      if (ctx.signal.aborted) return toolError("cancelled");
      throw err;
    }
    // What fs_read would not read without a question stays out of the result (./held.ts).
    const held = await heldFiles(ctx, [root], outcome.hits.map((h) => h.path));
    if (held.files.size) outcome.hits = outcome.hits.filter((h) => !held.files.has(h.path));
    if (outcome.hits.length === 0) {
      return {
        content: `No matches for /${input.pattern}/ in ${shown}${
          input.glob ? ` (glob ${input.glob})` : ""
        }${held.files.size ? `\n${heldNote(held)}` : ""}`,
        rawOutput: { matches: 0, files: outcome.filesSearched },
      };
    }
    const lines: string[] = [];
    let chars = 0;
    let cutByChars = false;
    let lastAbs = "";
    let lastShown = "";
    for (const h of outcome.hits) {
      if (h.path !== lastAbs) {
        lastAbs = h.path;
        lastShown = displayPath(ctx.cwd, h.path);
      }
      const line = `${lastShown}:${h.line}:${h.text}`;
      if (chars + line.length > GREP_MAX_CHARS) {
        cutByChars = true;
        break;
      }
      chars += line.length + 1;
      lines.push(line);
    }
    if (outcome.truncated || cutByChars) {
      lines.push(`[stopped after ${lines.length} matches; narrow the pattern, path or glob]`);
    }
    if (held.files.size) lines.push(heldNote(held));
    return {
      content: lines.join("\n"),
      rawOutput: {
        matches: outcome.hits.length,
        truncated: outcome.truncated || cutByChars,
        files: outcome.filesSearched,
      },
    };
  },
});
