/**
 * The zod schemas of the `fs` tools' inputs. Only scripts/gen_tools.ts (which converts them into
 * core/tools/builtin_tools.gen.json) and tests load this module; the tool modules import it with
 * `import type` for their input types and take the generated JSON Schema at run time
 * (core/tools/lazy.ts `builtinInputs`), so loading a tool never loads zod.
 * @module
 */
import { z } from "zod";

/** `fs_read {path, offset?, limit?}`. */
export const FsReadInput = z.object({
  path: z.string().describe("File path (relative to the working directory, or absolute)"),
  offset: z.number().int().min(1).optional().describe("First line to read, 1-based"),
  limit: z.number().int().min(1).optional().describe("Number of lines (default 2000)"),
});

/** `fs_ls {path?}`. */
export const FsLsInput = z.object({
  path: z.string().optional().describe("Directory path (default .)"),
});

/** `fs_glob {pattern, path?}`. */
export const FsGlobInput = z.object({
  pattern: z.string().min(1).describe("Glob pattern"),
  path: z.string().optional().describe("Directory to search (default .)"),
});

/** `fs_grep {pattern, path?, glob?, ignore_case?}`. */
export const FsGrepInput = z.object({
  pattern: z.string().min(1).describe("Regular expression"),
  path: z.string().optional().describe("File or directory to search (default .)"),
  glob: z.string().optional().describe("Only files matching this glob, e.g. *.ts or src/**/*.py"),
  ignore_case: z.boolean().optional().describe("Case-insensitive search"),
});

/** `fs_write {path, content}`. */
export const FsWriteInput = z.object({
  path: z.string().describe("File path"),
  content: z.string().describe("Full new content"),
});

/** `fs_patch {path, old_string, new_string, replace_all?}`. */
export const FsPatchInput = z.object({
  path: z.string().describe("File path"),
  old_string: z.string().describe("Exact text to replace"),
  new_string: z.string().describe("Replacement text"),
  replace_all: z.boolean().optional().describe("Replace every occurrence"),
});

/** `fs_cat {path}`. */
export const FsCatInput = z.object({
  path: z.string().describe("File path (relative to the working directory, or absolute)"),
});

/** `ast_grep {pattern, language?, paths?}`. */
export const AstGrepInput = z.object({
  pattern: z.string().min(1).describe(
    "AST pattern, valid code in the language; $NAME one node, $$$ any number",
  ),
  language: z.string().min(1).optional().describe(
    "Language of the files: typescript, tsx, javascript, python, rust, go, java, c, cpp, ruby, … (default: by file extension)",
  ),
  paths: z.array(z.string().min(1)).optional().describe(
    "Files or directories to search (default .)",
  ),
});

/** The schemas by tool name. */
export const FS_INPUTS = {
  fs_read: FsReadInput,
  fs_ls: FsLsInput,
  fs_glob: FsGlobInput,
  fs_grep: FsGrepInput,
  fs_write: FsWriteInput,
  fs_patch: FsPatchInput,
  fs_cat: FsCatInput,
  ast_grep: AstGrepInput,
};
