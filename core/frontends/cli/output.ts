/**
 * How the CLI writes: {@link stdout}, which ends quietly when the reader went away, and usage
 * errors ({@link UsageError}, reported by {@link usageExit} as one `coyote: <message>` line on
 * stderr, exit 2, plus a `result` object on stdout under `--output-format json|stream-json`).
 * @module
 */
import { safeText } from "../../util/terminal_safe.ts";

/**
 * Writes all of `text` to stdout. A reader that went away (`coyote --help | head`) ends the
 * output quietly instead of failing with a broken pipe.
 */
export function stdout(text: string): void {
  const bytes = new TextEncoder().encode(text);
  try {
    for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
  } catch (e) {
    if (!(e instanceof Deno.errors.BrokenPipe)) throw e;
  }
}

/** A command-line mistake: {@link usageExit} reports it, pointing at {@link UsageError.help}. */
export class UsageError extends Error {
  /** The help to point at, e.g. `coyote agents --help` for an error inside `agents`. */
  help = "coyote --help";
}

/**
 * Set by `main` (core/frontends/cli/mod.ts) through {@link setJsonErrors}: usage/config errors
 * also print a `result` object on stdout.
 */
let jsonErrors = false;

/** Turns the `result` object of {@link usageExit} on or off (`main`, from `--output-format`). */
export function setJsonErrors(on: boolean): void {
  jsonErrors = on;
}

/**
 * Reports a usage or configuration error: one `coyote: …` line on stderr (plus a `--help` hint
 * for command-line mistakes) and, with `--output-format json|stream-json`, one `result` object
 * on stdout (`is_error: true`, `exit_code: 2`, `error: {code: "usage", message}`; no `init`).
 * Returns exit code 2.
 */
export async function usageExit(message: string, hint: boolean | string = true): Promise<number> {
  const help = typeof hint === "string" ? hint : "coyote --help";
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      `coyote: ${safeText(message).split("\n").join("\n  ")}\n${hint ? `(see ${help})\n` : ""}`,
    ),
  );
  if (jsonErrors) {
    const { EXIT, errorResult, jsonLine } = await import("../headless/mod.ts");
    stdout(jsonLine(errorResult(EXIT.usage, "usage", message)));
  }
  return 2;
}
