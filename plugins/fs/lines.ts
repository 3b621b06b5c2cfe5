/**
 * Lines as the fs tools show file text to the model: numbered `cat -n` style and cut past
 * {@link READ_MAX_LINE} chars (`fs_read`'s window, `fs_patch`'s snippet around an edit).
 * @module
 */

/** Lines longer than this (chars) are cut in `fs_read` output. */
export const READ_MAX_LINE = 2000;

/** `n` right-aligned in six columns, a tab, then `text` (`cat -n`). */
export function numbered(n: number, text: string): string {
  return `${String(n).padStart(6)}\t${text}`;
}

/** `line` cut at {@link READ_MAX_LINE} chars, saying how long it was (`fullLength`). */
export function cutLine(line: string, fullLength = line.length): string {
  if (fullLength <= READ_MAX_LINE) return line;
  return `${line.slice(0, READ_MAX_LINE)} … [line truncated: ${fullLength} chars]`;
}
