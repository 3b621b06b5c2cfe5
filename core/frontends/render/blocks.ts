/**
 * Splits streaming markdown into completed blocks, so a terminal renderer can print each block
 * once it is whole (CommonMark: a blank line ends a paragraph/list item; a fenced code block ends
 * at its closing fence), and the row arithmetic that lets it show the open block's raw text
 * meanwhile and erase it in place ({@link rowsAbove}). Pure; no I/O.
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

  /** The buffered text (the open block), without clearing it. */
  get rest(): string {
    return this.#buf;
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

/**
 * Columns a character takes on a terminal: 0 for combining marks and zero-width joiners, 2 for
 * East Asian wide and emoji ranges (an approximation of wcwidth), else 1.
 */
function charWidth(cp: number): number {
  if ((cp >= 0x300 && cp <= 0x36f) || cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) return 2;
  return 1;
}

/** Display columns of one line of plain text (tabs to the next multiple of 8). */
export function lineColumns(line: string): number {
  let col = 0;
  for (const ch of line) {
    col = ch === "\t" ? col + 8 - (col % 8) : col + charWidth(ch.codePointAt(0)!);
  }
  return col;
}

/**
 * How many rows above the cursor plain `text` reaches once written from column 0 of a terminal
 * `cols` wide (long lines wrap; a line exactly `cols` wide leaves the cursor on its own row): the
 * count for a cursor-up before erasing the text in place.
 */
export function rowsAbove(text: string, cols: number): number {
  const lines = text.split("\n");
  let rows = 0;
  lines.forEach((l, i) => {
    const wrapped = Math.ceil(lineColumns(l) / Math.max(1, cols));
    rows += i < lines.length - 1 ? Math.max(1, wrapped) : Math.max(0, wrapped - 1);
  });
  return rows;
}
