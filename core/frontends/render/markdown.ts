/**
 * Markdown for the terminal: npm `marked` with the `marked-terminal` renderer (code blocks
 * highlighted by its bundled `cli-highlight`); links as `text (url)`, never OSC 8 hyperlinks. The
 * caller (core/frontends/render/mod.ts) escapes control characters in the input and lets only SGR styling
 * through in the output (core/util/terminal_safe.ts). Loaded lazily (only an interactive, coloured
 * terminal renders markdown), so plain and piped runs never pay for it.
 * @module
 */

/** Renders one completed markdown block to ANSI text. */
export type MarkdownRenderer = (block: string) => string;

/**
 * Loads the renderer for `width` columns; null when the modules cannot load (the caller prints
 * the markdown source instead — never fails a run).
 */
export async function loadMarkdown(width: number): Promise<MarkdownRenderer | null> {
  try {
    const [{ Marked }, mt] = await Promise.all([import("marked"), import("marked-terminal")]);
    const markedTerminal = (mt as unknown as {
      markedTerminal: (o: Record<string, unknown>) => unknown;
    }).markedTerminal;
    const m = new Marked();
    // Headings are shown bold without their `##` (as Claude Code and Codex render them).
    const options = {
      width: Math.max(40, width),
      reflowText: false,
      tab: 2,
      showSectionPrefix: false,
    };
    // deno-lint-ignore no-explicit-any
    m.use(markedTerminal(options) as any);
    // Links are shown as `text (url)` on every terminal: marked-terminal would otherwise emit an
    // OSC 8 hyperlink where the terminal supports them, whose target the text can disguise.
    m.use({
      renderer: {
        // A list item's text is a `text` token with inline tokens, which marked-terminal prints
        // raw (`code` keeps its backticks, `**bold**` its stars): render those inline tokens;
        // `false` hands every other text token back to marked-terminal.
        text(token) {
          const inline = (token as { tokens?: unknown[] }).tokens;
          // deno-lint-ignore no-explicit-any
          return inline?.length ? this.parser.parseInline(inline as any) : false;
        },
        link(token) {
          const text = this.parser.parseInline(token.tokens);
          return text && text !== token.href ? `${text} (${token.href})` : token.href;
        },
      },
    });
    return (block: string) => {
      const r = m.parse(block, { async: false }) as string;
      return r.replace(/\n+$/, "") + "\n";
    };
  } catch {
    return null;
  }
}
