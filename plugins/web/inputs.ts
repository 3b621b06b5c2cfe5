/**
 * The zod schemas of the `web` tools' inputs. Only scripts/gen_tools.ts (which converts
 * `WEB_INPUTS` into core/tools/builtin_tools.gen.json) and tests load this module; the tools
 * import it with `import type` and take a JSON Schema at run time (core/tools/lazy.ts), so
 * loading them never loads zod. `web_search` exists only when config names a backend, so its
 * JSON Schema is written in ./search.ts (tests/web_search_test.ts checks it against
 * {@link webSearchInput}).
 * @module
 */
import { z } from "zod";
import { MAX_MAX_CHARS, MAX_RESULTS } from "./limits.ts";

/** `web_fetch {url, max_chars?}`. */
export const WebFetchInput = z.object({
  url: z.string().describe("http:// or https:// URL"),
  max_chars: z.number().int().min(100).max(MAX_MAX_CHARS).optional().describe(
    "Max characters returned (default 20000)",
  ),
});

/** `web_search {query, max_results?}`, whose default count (`defaultResults`) comes from config. */
export function webSearchInput(defaultResults: number) {
  return z.object({
    query: z.string().min(1).describe("What to search for"),
    max_results: z.number().int().min(1).max(MAX_RESULTS).optional().describe(
      `Results wanted (default ${defaultResults}, at most ${MAX_RESULTS})`,
    ),
  });
}

/** The generated schemas by tool name. */
export const WEB_INPUTS = { web_fetch: WebFetchInput };
