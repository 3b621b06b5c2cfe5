/**
 * STUB CONTRACT (owner: plugin-host helper replaces the body, keeps the signature).
 * `coyote plugins list` / `coyote plugins check PATH`; returns the exit code.
 * @module
 */
import type { AppOptions } from "../app.ts";

export function pluginsCommand(_app: AppOptions, sub: string, _args: string[]): Promise<number> {
  Deno.stderr.writeSync(
    new TextEncoder().encode(`coyote: plugins ${sub} is not implemented yet\n`),
  );
  return Promise.resolve(1);
}
