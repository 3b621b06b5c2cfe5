/**
 * Terminal styling for the renderer: ANSI SGR colours when enabled, identity functions when not
 * (`NO_COLOR`, https://no-color.org: any non-empty value disables colour; plain output when the
 * stream is not a terminal).
 * @module
 */

/** Style functions (identity when colour is off). */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  magenta(s: string): string;
}

const sgr = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

/** The styles for `color` on/off. */
export function styles(color: boolean): Style {
  if (!color) {
    const id = (s: string) => s;
    return { bold: id, dim: id, red: id, green: id, yellow: id, cyan: id, magenta: id };
  }
  return {
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    magenta: sgr(35, 39),
  };
}

/** Colour for a terminal stream: it is a terminal and `NO_COLOR` is unset or empty. */
export function colorFor(
  isTerminal: boolean,
  env: { get(k: string): string | undefined } = Deno.env,
): boolean {
  return isTerminal && !env.get("NO_COLOR");
}

/** Terminal width in columns (80 when unknown). */
export function terminalWidth(): number {
  try {
    return Deno.consoleSize().columns || 80;
  } catch {
    return 80;
  }
}

/** Hard-wraps `text` to `width` columns (by code points; existing newlines kept; never cut). */
export function wrap(text: string, width: number, indent = ""): string {
  const w = Math.max(20, width - indent.length);
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const cps = [...line];
    if (!cps.length) out.push(indent);
    for (let i = 0; i < cps.length; i += w) out.push(indent + cps.slice(i, i + w).join(""));
  }
  return out.join("\n");
}

/**
 * Word-wraps `text` to `width` columns (each line after `indent`): lines break at spaces (runs of
 * spaces become one), so a closing `))` stays with its word; a word longer than a line is cut at the width (as
 * {@link wrap} does). Columns are code points.
 */
export function wrapWords(text: string, width: number, indent = ""): string {
  const w = Math.max(20, width - indent.length);
  const out: string[] = [];
  for (const para of text.split("\n")) {
    let line = "";
    for (const word of para.split(" ").filter(Boolean)) {
      const cps = [...word];
      if (line && [...line].length + 1 + cps.length <= w) {
        line += " " + word;
        continue;
      }
      if (line) out.push(indent + line);
      for (; cps.length > w; cps.splice(0, w)) out.push(indent + cps.slice(0, w).join(""));
      line = cps.join("");
    }
    out.push(indent + line);
  }
  return out.join("\n");
}
