/**
 * `fs_cat {path}`: a whole text file exactly as it is — no line numbers, no line cut — for the
 * original Coyote's `fs_cat` tool (its `functions/tools/fs_cat.sh`: one required `--path`, the
 * untruncated contents, a note instead of nothing for an empty file). Unlike `cat`, the text is
 * bounded ({@link CAT_MAX_BYTES}; past it the call fails and points to `fs_read`), a binary file
 * or a folder is refused, and a non-UTF-8 file is decoded and its encoding named, as `fs_read`
 * does. The read is stamped like `fs_read`'s (stamps.ts), so `fs_patch` may edit the file next.
 * The model-facing description is `cat.txt`.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { decodeBytes, encodingName } from "./text.ts";
import { describeFsError, displayPath, resolvePath, specialFile, toolError } from "./paths.ts";
import { remember, stampOf } from "./stamps.ts";
import description from "./cat.txt" with { type: "text" };

/** Largest file `fs_cat` returns (bytes on disk, or UTF-8 bytes of a client buffer). */
export const CAT_MAX_BYTES = 256 * 1024;

/** `fs_cat {path}`; see the module doc. */
export const fsCatTool = defineTool({
  name: "fs_cat",
  description,
  input: fsInput("fs_cat"),
  kind: "read",
  readOnly: true,
  title: (i) => `Read ${i.path}`,
  access: (i) => [{ type: "read", path: i.path }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path);
    const shown = displayPath(ctx.cwd, abs);
    const tooBig = (bytes: number) =>
      toolError(
        `${shown} is ${bytes} bytes, over fs_cat's ${CAT_MAX_BYTES}; read it in parts with fs_read (offset/limit)`,
      );
    const binary = () =>
      toolError(`${shown} is a binary file (NUL byte in its first 8 KiB); not shown`);
    let text: string;
    let note = "";
    try {
      if (ctx.host?.readTextFile) {
        text = await ctx.host.readTextFile(abs);
        const bytes = new TextEncoder().encode(text);
        if (bytes.length > CAT_MAX_BYTES) return tooBig(bytes.length);
        remember(ctx, abs, await stampOf(ctx, abs, bytes));
      } else {
        const st = await Deno.stat(abs);
        if (st.isDirectory) return toolError(`${shown} is a directory; use fs_ls to list it`);
        const special = await specialFile(abs, shown);
        if (special) return toolError(special);
        if (st.size > CAT_MAX_BYTES) return tooBig(st.size);
        // Stamped before the read, as fs_read does: a change racing the read shows as stale.
        const stamp = await stampOf(ctx, abs, null);
        const bytes = await Deno.readFile(abs);
        if (bytes.length > CAT_MAX_BYTES) return tooBig(bytes.length);
        const f = decodeBytes(bytes);
        if (!f.encoding.startsWith("utf-16") && bytes.subarray(0, 8192).indexOf(0) !== -1) {
          return binary();
        }
        text = f.text;
        if (f.encoding !== "utf-8") {
          note = `\n[${shown} is ${
            encodingName(f.encoding)
          }, not UTF-8: shown decoded; fs_patch and fs_write keep its encoding]`;
        }
        remember(ctx, abs, stamp);
      }
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    if (!note && text.slice(0, 8192).includes("\0")) return binary();
    const locations = [{ path: abs, line: 1 }];
    if (text === "") return { content: `(empty file: ${shown})`, locations };
    return {
      content: text + note,
      locations,
      rawOutput: { path: abs, chars: text.length },
    };
  },
});
