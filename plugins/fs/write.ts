/**
 * `fs_write`: writes a whole file, keeping an existing file's encoding and line ending; an existing
 * file must have been read by this session and be unchanged since (stamps.ts).
 * The model-facing description is `write.txt`.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { encodingName, UnencodableError, withEol } from "./text.ts";
import { describeFsError, displayPath, resolvePath, specialFile, toolError } from "./paths.ts";
import { type ExistingFile, readExisting, writeFaithful } from "./file_io.ts";
import { rememberWritten, staleWrite, stampOf } from "./stamps.ts";
import description from "./write.txt" with { type: "text" };

function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}
/** `fs_write {path, content}`: writes the whole file, creating parent folders; result carries a diff. */
export const fsWriteTool = defineTool({
  name: "fs_write",
  description,
  input: fsInput("fs_write"),
  kind: "edit",
  title: (i) => `Write ${i.path}`,
  access: (i) => [{ type: "write", path: i.path }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path);
    const shown = displayPath(ctx.cwd, abs);
    const special = ctx.host?.readTextFile ? null : await specialFile(abs, shown);
    if (special) return toolError(special);
    let old: ExistingFile | null;
    let content = input.content;
    try {
      old = await readExisting(ctx, abs);
      // No lost edits (stamps.ts): an existing file is overwritten only as this session last saw it.
      if (old !== null) {
        const stale = staleWrite(ctx, abs, shown, await stampOf(ctx, abs, old.bytes));
        if (stale) return toolError(stale);
      }
      // An existing file keeps its line ending and encoding (a CRLF file stays CRLF).
      if (old?.eol === "\r\n") content = withEol(content, "\r\n");
      await writeFaithful(ctx, abs, content, old?.encoding ?? "utf-8");
      await rememberWritten(ctx, abs, content);
    } catch (err) {
      if (err instanceof UnencodableError) return toolError(`Not written: ${err.message}`);
      return toolError(describeFsError(err, shown));
    }
    const verb = old === null ? "Created" : "Wrote";
    const kept = old && old.encoding !== "utf-8"
      ? `; kept its ${encodingName(old.encoding)} encoding`
      : "";
    return {
      content: `${verb} ${shown} (${countLines(content)} lines${kept})`,
      diffs: [{ path: abs, oldText: old?.text ?? null, newText: content }],
      locations: [{ path: abs }],
    };
  },
});
