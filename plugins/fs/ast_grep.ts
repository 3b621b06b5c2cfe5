/**
 * `ast_grep {pattern, language?, paths?}`: structural search of source files with the ast-grep
 * program (npm `@ast-grep/cli`, crate `ast-grep`), the original Coyote's `ast_grep` tool (its
 * `functions/tools/ast_grep.sh`: `--pattern`, `--lang`, a path; the program found on PATH, else a
 * note to fall back to fs_grep).
 *
 * - Runs `ast-grep run --pattern=P [--lang=L] --json=stream -- PATHS` (no shell words from the
 *   model: each argument is quoted) through a {@link CommandLauncher}: the session's one runs it
 *   inside the OS sandbox like any command (core/session/sandbox.ts `withSandboxExec`). Read-only:
 *   `run` without `--rewrite`/`--update-all` writes nothing; the call declares a read of each path
 *   (the policy decides them as for `fs_grep`).
 * - `paths` default to `.` (the session cwd); ast-grep walks them respecting `.gitignore`,
 *   `.ignore` and hidden files as ripgrep does (its `ignore` crate), and skips symbolic links.
 * - Output: `path:line:text` (1-based line of the match's start; a match over several lines
 *   shows its first line and `(+N lines)`), at most {@link AST_GREP_LIMIT} matches and
 *   {@link AST_GREP_MAX_CHARS} chars. Exit 1 of ast-grep (no match) is `No matches`; exit 2 (bad
 *   pattern, unknown language) is an error with its stderr.
 * - Why a program and not the `@ast-grep/napi` addon in-process: the addon needs Deno's
 *   `--allow-ffi`, which the binary's permission flags do not include (core/policy/flags.ts),
 *   and a compiled binary would carry a 7.7 MB native file per target (docs/graphs.md).
 * - Without ast-grep on PATH (exit 127) the result says how to install it and to use fs_grep.
 * @module
 */
import { fsInput } from "./schemas.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { ToolResult } from "../../sdk/mod.ts";
import {
  type CommandLauncher,
  CommandRefused,
  directLauncher,
  runCommand,
  shellQuote,
} from "../exec/mod.ts";
import { displayPath, resolvePath, toolError } from "./paths.ts";
import { heldFiles, heldNote } from "./held.ts";
import description from "./ast_grep.txt" with { type: "text" };

/** Matches shown by `ast_grep`, and its output budget in chars. */
export const AST_GREP_LIMIT = 200;
export const AST_GREP_MAX_CHARS = 40_000;
/** Time one search may take (ms). */
export const AST_GREP_TIMEOUT_MS = 120_000;

/** What to do when the ast-grep program is missing. */
export const AST_GREP_MISSING =
  "ast-grep is not installed (no `ast-grep` program on PATH). Use fs_grep for this search. To enable structural search install ast-grep: npm i -g @ast-grep/cli, cargo install ast-grep --locked, or brew install ast-grep.";

/** One match of `ast-grep run --json=stream` (the fields used). */
interface Match {
  file: string;
  text: string;
  lines?: string;
  range: { start: { line: number; column: number }; end: { line: number } };
}

/** `ast-grep run …` as one shell line, every word quoted. */
export function astGrepCommand(pattern: string, language: string | undefined, paths: string[]) {
  // `--pattern=P`: a pattern such as `-1` is a value, never an option.
  const words = ["ast-grep", "run", `--pattern=${pattern}`, "--json=stream", "--color=never"];
  if (language) words.push(`--lang=${language}`);
  words.push("--", ...paths);
  return words.map(shellQuote).join(" ");
}

/** `ast_grep` starting the program through `launcher` (the session's sandbox); see the module doc. */
export function makeAstGrepTool(launcher: CommandLauncher = directLauncher) {
  return defineTool({
    name: "ast_grep",
    description,
    input: fsInput("ast_grep"),
    kind: "search",
    readOnly: true,
    title: (i) => `AST search ${i.pattern}${i.paths?.length ? ` in ${i.paths.join(", ")}` : ""}`,
    access: (i) => (i.paths?.length ? i.paths : ["."]).map((p) => ({ type: "read", path: p })),
    async run(input, ctx): Promise<ToolResult> {
      const paths = input.paths?.length ? input.paths : ["."];
      for (const p of paths) {
        try {
          await Deno.stat(resolvePath(ctx.cwd, p));
        } catch {
          return toolError(`path not found: ${p}`);
        }
      }
      let o;
      try {
        o = await runCommand(astGrepCommand(input.pattern, input.language, paths), {
          cwd: ctx.cwd,
          timeoutMs: AST_GREP_TIMEOUT_MS,
          signal: ctx.signal,
          launcher,
          limit: 4 * 1024 * 1024,
        });
      } catch (err) {
        if (err instanceof CommandRefused) return toolError(err.message);
        throw err;
      }
      if (o.cancelled) return toolError("cancelled");
      if (o.timedOut) return toolError(`ast-grep timed out after ${AST_GREP_TIMEOUT_MS} ms`);
      if (o.exitCode === 127 || /ast-grep: (command )?not found/.test(o.stderr)) {
        return toolError(AST_GREP_MISSING);
      }
      const matches: Match[] = [];
      for (const line of o.stdout.split("\n")) {
        if (!line.trim()) continue;
        try {
          matches.push(JSON.parse(line) as Match);
        } catch { /* a line cut by the capture bound */ }
      }
      if (o.exitCode !== 0 && o.exitCode !== 1) {
        return toolError(
          `ast-grep failed (exit ${o.exitCode ?? o.signal}): ${o.stderr.trim() || "(no output)"}` +
            `\nThe pattern must be valid ${
              input.language ?? "source"
            } code; $NAME matches one node, $$$ any number.`,
        );
      }
      // What fs_read would not read without a question stays out of the result (./held.ts).
      const held = await heldFiles(
        ctx,
        paths.map((p) => resolvePath(ctx.cwd, p)),
        matches.map((m) => resolvePath(ctx.cwd, m.file)),
      );
      if (held.files.size) {
        matches.splice(
          0,
          matches.length,
          ...matches.filter((m) => !held.files.has(resolvePath(ctx.cwd, m.file))),
        );
      }
      if (matches.length === 0) {
        const warn = (o.stderr.trim() ? `\n${o.stderr.trim()}` : "") +
          (held.files.size ? `\n${heldNote(held)}` : "");
        return {
          content: `No structural matches for ${input.pattern} in ${paths.join(", ")}${warn}`,
          rawOutput: { matches: 0 },
        };
      }
      const out: string[] = [];
      let chars = 0;
      let cut = false;
      for (const m of matches) {
        if (out.length >= AST_GREP_LIMIT) {
          cut = true;
          break;
        }
        const shown = displayPath(ctx.cwd, resolvePath(ctx.cwd, m.file));
        const first = (m.lines ?? m.text).split("\n")[0].slice(0, 250);
        const more = m.range.end.line - m.range.start.line;
        const line = `${shown}:${m.range.start.line + 1}:${first}${
          more > 0 ? ` (+${more} lines)` : ""
        }`;
        if (chars + line.length > AST_GREP_MAX_CHARS) {
          cut = true;
          break;
        }
        chars += line.length + 1;
        out.push(line);
      }
      if (held.files.size) out.push(heldNote(held));
      if (cut) {
        out.push(
          `[stopped after ${out.length} of ${matches.length}${
            o.truncated ? "+" : ""
          } matches; narrow the pattern, language or paths]`,
        );
      }
      return {
        content: out.join("\n"),
        rawOutput: { matches: matches.length, truncated: cut, sandboxed: o.sandboxed },
      };
    },
  });
}

/** `ast_grep` without a sandbox (the session replaces it with its own; core/session/sandbox.ts). */
export const astGrepTool = makeAstGrepTool();
