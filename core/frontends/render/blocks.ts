/**
 * Splits streaming markdown into completed blocks, so a terminal renderer can print each block
 * once it is whole (CommonMark: a blank line ends a paragraph/list item; a fenced code block ends
 * at its closing fence). Pure; no I/O.
 * @module
 */

/**
 * Buffers chunks and hands out completed blocks.
 * `push(chunk)` returns the text of every block completed by the chunk (possibly ""), `flush()`
 * returns the rest. Fences (```` ``` ```` or `~~~`, 3+ characters) are tracked so a blank line
 * inside a code block does not split it.
 */
export class BlockSplitter {
  #buf = "";

  /** Adds a chunk; returns completed blocks' text (ends with a newline) or "". */
  push(chunk: string): string {
    this.#buf += chunk;
    const cut = completedPrefix(this.#buf);
    if (!cut) return "";
    const done = this.#buf.slice(0, cut);
    this.#buf = this.#buf.slice(cut);
    return done;
  }

  /** Returns and clears whatever is buffered (the last, possibly unfinished, block). */
  flush(): string {
    const rest = this.#buf;
    this.#buf = "";
    return rest;
  }

  /** True when text is buffered. */
  get pending(): boolean {
    return this.#buf.length > 0;
  }
}

/** Length of the longest prefix of `text` that ends after a completed block (0 if none). */
export function completedPrefix(text: string): number {
  let fence: string | null = null;
  let pos = 0;
  let cut = 0;
  while (true) {
    const nl = text.indexOf("\n", pos);
    if (nl < 0) break;
    const line = text.slice(pos, nl);
    pos = nl + 1;
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (
        m && m[1][0] === fence[0] && m[1].length >= fence.length && !line.slice(m[0].length).trim()
      ) {
        fence = null;
        cut = pos;
      }
    } else if (m) {
      fence = m[1];
    } else if (!line.trim()) {
      cut = pos;
    }
  }
  return cut;
}
