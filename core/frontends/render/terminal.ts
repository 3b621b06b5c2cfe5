/**
 * The renderer set up for the process's terminal (or pipe): stdout carries assistant text,
 * stderr status; colour and markdown only on a terminal without `NO_COLOR`; the spinner only
 * when stderr is a terminal. Used by one-shot text mode and the REPL.
 * @module
 */
import type { ModelPrice } from "../../config/models.ts";
import { loadMarkdown } from "./markdown.ts";
import { Renderer } from "./mod.ts";
import { colorFor, terminalWidth } from "./style.ts";

export { Renderer };
export { colorFor, terminalWidth, wrap } from "./style.ts";
export {
  answerLine,
  outcomeForKey,
  outcomeLabel,
  permissionText,
  rememberAnswer,
  verbFor,
} from "./permission.ts";

/** A renderer on this process's stdout/stderr (see the module doc). */
export async function createTerminalRenderer(o: {
  out: (text: string) => void;
  err: (text: string) => void;
  cwd: string;
  price?: () => ModelPrice | undefined;
  footer?: boolean;
}): Promise<Renderer> {
  const outTty = Deno.stdout.isTerminal();
  const errTty = Deno.stderr.isTerminal();
  const color = colorFor(errTty);
  const markdown = colorFor(outTty) ? await loadMarkdown(terminalWidth()) : null;
  return new Renderer({
    out: o.out,
    err: o.err,
    color,
    markdown,
    spinner: errTty,
    sameTerminal: outTty && errTty,
    width: terminalWidth,
    height: () => {
      try {
        return Deno.consoleSize().rows;
      } catch {
        return 24;
      }
    },
    cwd: o.cwd,
    price: o.price,
    footer: o.footer,
  });
}
