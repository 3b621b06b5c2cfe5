/**
 * Unified diffs of file edits for the terminal: ACP `diff` tool-call content (`path`,
 * `oldText`, `newText`) → `diff -u` style text (npm `diff`), coloured when asked (additions
 * green, removals red, hunk headers cyan). Control characters in the files are shown escaped
 * (core/util/terminal_safe.ts).
 * @module
 */
import { createTwoFilesPatch } from "diff";
import { type Style, styles } from "./style.ts";
import { safeLine } from "../../util/terminal_safe.ts";

/**
 * The unified diff of one edit, without the `Index:`/`===` preamble; `oldText` null or
 * undefined means a new file. Long diffs are cut after `maxLines` lines with a note.
 */
export function unifiedDiff(
  d: { path: string; oldText?: string | null; newText: string },
  opts: { color: boolean; maxLines?: number; cwd?: string },
): string {
  const s: Style = styles(opts.color);
  const name = opts.cwd && d.path.startsWith(opts.cwd + "/")
    ? d.path.slice(opts.cwd.length + 1)
    : d.path;
  // git's `a/` `b/` prefixes go before a workspace-relative name; a path outside the workspace
  // stays absolute as is (`--- /etc/hosts`, not `a//etc/hosts`).
  const [a, b] = name.startsWith("/") ? [name, name] : [`a/${name}`, `b/${name}`];
  const patch = createTwoFilesPatch(
    d.oldText == null ? "/dev/null" : a,
    b,
    d.oldText ?? "",
    d.newText,
    undefined,
    undefined,
    { context: 3 },
  );
  let lines = patch.split("\n").filter((l) => !/^(Index: |={5,}$)/.test(l));
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  const max = opts.maxLines ?? 200;
  let more = 0;
  if (lines.length > max) {
    more = lines.length - max;
    lines = lines.slice(0, max);
  }
  // File contents and paths are untrusted: each line sanitised before it is coloured.
  const out = lines.map(safeLine).map((l) =>
    l.startsWith("+++") || l.startsWith("---")
      ? s.bold(l)
      : l.startsWith("+")
      ? s.green(l)
      : l.startsWith("-")
      ? s.red(l)
      : l.startsWith("@@")
      ? s.cyan(l)
      : l
  );
  if (more) out.push(s.dim(`… ${more} more diff line(s)`));
  return out.join("\n") + "\n";
}
