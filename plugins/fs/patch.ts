/**
 * `fs_patch`: exact string replacement in a file, keeping its encoding and line ending; a near
 * miss is reported as such (text.ts). The model-facing description is `patch.txt`.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import { nearMiss, UnencodableError, withEol } from "./text.ts";
import { describeFsError, displayPath, resolvePath, specialFile, toolError } from "./paths.ts";
import { type ExistingFile, readExisting, writeFaithful } from "./file_io.ts";
import { recalled, rememberWritten, sameContent, stampOf } from "./stamps.ts";
import { cutLine, numbered } from "./lines.ts";
import description from "./patch.txt" with { type: "text" };

function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** A few numbered lines of `text` around `[from, to)` (char offsets), for the model to check its edit. */
function snippet(text: string, from: number, to: number): { body: string; line: number } {
  const before = text.slice(0, from);
  const line = before.split("\n").length;
  const lines = text.split("\n");
  const endLine = text.slice(0, Math.max(from, to)).split("\n").length;
  const a = Math.max(1, line - 2);
  const b = Math.min(lines.length, endLine + 2, a + 12);
  const out: string[] = [];
  for (let i = a; i <= b; i++) out.push(numbered(i, cutLine(lines[i - 1].replace(/\r$/, ""))));
  return { body: out.join("\n"), line };
}
/**
 * `fs_patch {path, old_string, new_string, replace_all?}`: exact string
 * replacement (as Claude Code's Edit). Fails when `old_string` is missing,
 * occurs more than once without `replace_all`, or equals `new_string`.
 * When the file uses CRLF and the strings use LF, they are matched as CRLF.
 */
export const fsPatchTool = defineTool({
  name: "fs_patch",
  description,
  input: fsInput("fs_patch"),
  kind: "edit",
  title: (i) => `Edit ${i.path}`,
  // A read too (eighth attacker pass): the result shows the lines around the edit, and whether
  // `old_string` occurs answers a question about the contents, so a `Read` deny rule holds here.
  access: (i) => [{ type: "write", path: i.path }, { type: "read", path: i.path }],
  async run(input, ctx): Promise<ToolResult> {
    const abs = resolvePath(ctx.cwd, input.path);
    const shown = displayPath(ctx.cwd, abs);
    let { old_string: oldStr, new_string: newStr } = input;
    if (oldStr === "") {
      return toolError("old_string is empty; use fs_write to create or overwrite a file");
    }
    if (oldStr === newStr) {
      return toolError("old_string and new_string are identical; nothing to change");
    }
    const special = ctx.host?.readTextFile ? null : await specialFile(abs, shown);
    if (special) return toolError(special);
    let file: ExistingFile | null;
    try {
      file = await readExisting(ctx, abs);
    } catch (err) {
      return toolError(describeFsError(err, shown));
    }
    if (file === null) return toolError(`File not found: ${shown} (use fs_write to create it)`);
    const oldText = file.text;
    let count = countOccurrences(oldText, oldStr);
    if (
      count === 0 && oldText.includes("\r\n") && !oldStr.includes("\r\n") && oldStr.includes("\n")
    ) {
      const crlf = oldStr.replaceAll("\n", "\r\n");
      const n = countOccurrences(oldText, crlf);
      if (n > 0) {
        oldStr = crlf;
        count = n;
      }
    }
    // New text takes the file's line ending (no mixed endings in a CRLF file, no CR in an LF one).
    if (newStr.includes("\n")) newStr = withEol(newStr, file.eol);
    if (count === 0) {
      const hint = nearMiss(oldText, input.old_string);
      return toolError(`old_string not found in ${shown}${hint ? `: ${hint}` : ""}`);
    }
    if (count > 1 && !input.replace_all) {
      return toolError(
        `old_string occurs ${count} times in ${shown}; pass replace_all or add context`,
      );
    }
    const first = oldText.indexOf(oldStr);
    // split/join and slicing, not String#replace: `$&` in new_string must stay literal.
    const newText = input.replace_all
      ? oldText.split(oldStr).join(newStr)
      : oldText.slice(0, first) + newStr + oldText.slice(first + oldStr.length);
    if (newText === oldText) {
      return toolError(
        `Nothing changed in ${shown}: old_string and new_string differ only in line endings, and the file keeps its ${
          file.eol === "\r\n" ? "CRLF" : "LF"
        } line endings`,
      );
    }
    try {
      // The patch is exact, so it needs no prior read; it renews the session's read stamp only when
      // the file was as the session last saw it, so a later fs_write still cannot drop a change
      // made on disk that the agent never read (stamps.ts).
      const seen = recalled(ctx, abs);
      const current = seen ? sameContent(seen, await stampOf(ctx, abs, file.bytes)) : false;
      await writeFaithful(ctx, abs, newText, file.encoding);
      if (current) await rememberWritten(ctx, abs, newText);
    } catch (err) {
      if (err instanceof UnencodableError) return toolError(`Not patched: ${err.message}`);
      return toolError(describeFsError(err, shown));
    }
    const snip = snippet(newText, first, first + newStr.length);
    const what = count === 1 ? "1 occurrence" : `${count} occurrences`;
    return {
      content: `Patched ${shown}: replaced ${what}. Around line ${snip.line}:\n${snip.body}`,
      diffs: [{ path: abs, oldText, newText }],
      locations: [{ path: abs, line: snip.line }],
    };
  },
});
