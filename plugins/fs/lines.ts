/**
 * Lines as the fs tools show file text to the model: numbered `cat -n` style and cut past
 * {@link READ_MAX_LINE} chars (`fs_read`'s window, `fs_patch`'s snippet around an edit).
 * Cuts fall on character boundaries (core/util/text.ts `headText`: no split surrogate pair or
 * grapheme cluster).
 * @module
 */
import { headText } from "../../core/util/text.ts";

/** Lines longer than this (chars) are cut in `fs_read` output. */
export const READ_MAX_LINE = 2000;

/** `n` right-aligned in six columns, a tab, then `text` (`cat -n`). */
export function numbered(n: number, text: string): string {
  return `${String(n).padStart(6)}\t${text}`;
}

/** `line` cut at {@link READ_MAX_LINE} chars (or a few fewer, on a character boundary), saying how long it was (`fullLength`). */
export function cutLine(line: string, fullLength = line.length): string {
  if (fullLength <= READ_MAX_LINE) return line;
  return `${headText(line, READ_MAX_LINE)} … [line truncated: ${fullLength} chars]`;
}
