// deno-lint-ignore-file no-control-regex
/**
 * Untrusted text bound for a terminal: the one sanitiser for every string a model, an MCP server,
 * a plugin or a cloned repository chose (assistant text, tool call titles, permission questions,
 * `user__*` questions, agent/skill/plugin/MCP listings, session titles, sub-agent lines).
 *
 * Terminal control sequences in such text could spoof what the user sees: CSI cursor moves and
 * erases that hide or rewrite earlier lines (a permission prompt whose command hides the real
 * one), CR overwrites, OSC 52 (writes the user's clipboard), OSC 8 (links), BEL, C1 controls
 * (U+0080–U+009F: `U+009B` is a one-byte CSI on some terminals) and bidi controls that reorder
 * what is shown (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C: Unicode `Bidi_Control`).
 *
 * What is kept: printable text, tabs, and newlines where the context allows them (a CR before a
 * newline is dropped there: CRLF text is shown as lines). Everything else is replaced by its
 * JSON escape (`\u001b`, `\r`, `\u202e`…), so the user sees that it was there — the form
 * gemini-cli shows (it escapes control characters with `JSON.stringify` before display,
 * google-gemini/gemini-cli#8636); Claude Code and Codex likewise never pass model or tool
 * control characters through to the terminal. Coyote's own styling is applied after this, on
 * the sanitised pieces, so it keeps working.
 *
 * JSON outputs (`--output-format json|stream-json`, ACP, `--json` listings) are data, escaped by
 * JSON, and are not passed through here.
 * @module
 */

/** Characters never written raw: C0 (kept ones are decided below), DEL, C1, bidi controls, LS/PS. */
const UNSAFE =
  /\r\n|[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

const SHORT: Record<string, string> = {
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** The visible JSON-style escape of one character (`\u001b`, `\n`). */
export function escapeChar(c: string): string {
  return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/**
 * `text` safe to write to a terminal (see the module doc). `newlines` (default true): newlines
 * are kept (and `\r\n` becomes `\n`); false: they are shown as `\n` (one-line contexts: titles,
 * table cells, status lines). Tabs are kept unless `tabs` is false (table cells: a tab would
 * shift the columns).
 */
export function safeText(
  text: string,
  o: { newlines?: boolean; tabs?: boolean } = {},
): string {
  const nl = o.newlines !== false;
  const tabs = o.tabs !== false;
  return text.replace(UNSAFE, (c) => {
    if (c === "\r\n") return nl ? "\n" : "\\r\\n";
    if (c === "\n" && nl) return c;
    if (c === "\t" && tabs) return c;
    return escapeChar(c);
  });
}

/** `text` for a one-line context: {@link safeText} with newlines shown as `\n`. */
export function safeLine(text: string): string {
  return safeText(text, { newlines: false });
}

/** True when `text` holds a character {@link safeText} would escape (newlines and tabs aside). */
export function hasControls(text: string): boolean {
  return safeText(text) !== text.replace(/\r\n/g, "\n");
}

/**
 * Numeric character references (`&#27;`, `&#x9b;`) that name a character {@link safeText}
 * escapes: markdown renderers decode them into the raw character, so the model's markdown is
 * given the escaped form instead. Other references are left for the renderer.
 */
export function escapeCharRefs(markdown: string): string {
  return markdown.replace(/&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));/g, (ref, hex, dec) => {
    const cp = hex ? parseInt(hex, 16) : parseInt(dec, 10);
    if (cp > 0x10ffff || cp === 0x0a || cp === 0x09) return ref;
    // A reference to 0 decodes to U+FFFD (CommonMark); shown as the reference itself.
    if (cp === 0) return "\\u0000";
    const c = String.fromCodePoint(cp);
    return safeLine(c) === c ? ref : safeLine(c);
  });
}

/**
 * Rendered output (a markdown renderer's ANSI text) with every control character escaped except
 * the styling the renderer adds: SGR colour sequences (`ESC [ digits ; m`). Defence in depth
 * after {@link safeText} + {@link escapeCharRefs} on the renderer's input (OSC 8 links are not
 * let through: their visible text can disguise the target).
 */
export function keepStylingOnly(rendered: string): string {
  let out = "";
  let i = 0;
  const style = /\x1b\[[0-9;]*m/y;
  while (i < rendered.length) {
    const c = rendered[i];
    if (c === "\x1b") {
      style.lastIndex = i;
      const m = style.exec(rendered);
      if (m) {
        out += m[0];
        i += m[0].length;
        continue;
      }
    }
    out += safeText(c);
    i++;
  }
  return out;
}

/** A table cell: one line, no tabs (they would shift the columns), see {@link safeText}. */
export function safeCell(text: string): string {
  return safeText(text, { newlines: false, tabs: false });
}
