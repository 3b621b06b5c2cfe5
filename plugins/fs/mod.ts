/**
 * The `fs` tool pack: `fs_read`, `fs_ls`, `fs_glob`, `fs_grep`, `fs_write`,
 * `fs_patch` (issue 2, "Core tools"; names and arguments are a contract), and the original
 * Coyote's `fs_cat` (whole file, `cat.ts`) and `ast_grep` (structural search through the ast-grep
 * program, `ast_grep.ts`), which an agent gets only when its `tools` name them
 * (core/agents/resolve.ts `NAMED_ONLY_TOOLS`; issue 17).
 *
 * Paths are relative to the session cwd unless absolute. Reads and writes go
 * through the ACP client (`ctx.host.readTextFile` / `writeTextFile`) when it
 * offers them, else through Deno's fs. `fs_ls`, `fs_glob` and `fs_grep`
 * respect `.gitignore` (see `walk.ts`) and always skip `.git/`; they read
 * the disk directly (a client's unsaved buffers are seen by `fs_read` and
 * `fs_patch` only).
 * User-level failures (missing file, ambiguous patch, bad regex) come back as
 * `{content, isError: true}`; nothing is thrown for them.
 *
 * Edits change only what was asked (issue 10; text.ts): a file keeps its encoding (UTF-8 with or
 * without a BOM, UTF-16, or Latin-1 byte for byte — `fs_read` names a non-UTF-8 encoding) and its
 * line ending (new text in a CRLF file gets CRLF); an edit that would change no byte is an error,
 * not "Patched"; a missing `old_string` that matches after normalising line endings, trailing
 * whitespace, tabs/spaces or the Unicode form is reported as such.
 *
 * Each tool is one module with its model-facing description beside it (`read.ts` + `read.txt`,
 * `ls`, `glob`, `grep`, `write`, `patch`); this module is the pack's face.
 * @module
 */
import { definePlugin } from "../../sdk/mod.ts";
import { fsReadTool } from "./read.ts";
import { fsLsTool } from "./ls.ts";
import { fsGlobTool } from "./glob.ts";
import { fsGrepTool } from "./grep.ts";
import { fsWriteTool } from "./write.ts";
import { fsPatchTool } from "./patch.ts";
import { fsCatTool } from "./cat.ts";
import { astGrepTool } from "./ast_grep.ts";

export { READ_MAX_LINE } from "./lines.ts";
export { fsReadTool, NON_UTF8_MAX, READ_DEFAULT_LIMIT, READ_MAX_CHARS } from "./read.ts";
export { fsLsTool, LS_LIMIT } from "./ls.ts";
export { fsGlobTool, GLOB_LIMIT, globAccesses } from "./glob.ts";
export { fsGrepTool, GREP_LIMIT, GREP_MAX_CHARS } from "./grep.ts";
export { fsWriteTool } from "./write.ts";
export { fsPatchTool } from "./patch.ts";
export { CAT_MAX_BYTES, fsCatTool } from "./cat.ts";
export { AST_GREP_LIMIT, astGrepTool, makeAstGrepTool } from "./ast_grep.ts";

/** The `fs` plugin: every tool above. */
export const fsPlugin = definePlugin({
  name: "fs",
  version: "1.0.0",
  description: "Read, list, find, search and edit files in the workspace.",
  tools: [
    fsReadTool,
    fsLsTool,
    fsGlobTool,
    fsGrepTool,
    fsWriteTool,
    fsPatchTool,
    fsCatTool,
    astGrepTool,
  ],
});

export default fsPlugin;
