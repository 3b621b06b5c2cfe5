/**
 * The config schema's stamp (core/config/schema_stamp.gen.json, part of `deno task gen`): a
 * SHA-256 of the source of the modules that define how a config file is parsed and validated, so
 * the parsed-config cache (core/config/parse_cache.ts) never serves a parse made by another schema.
 * tests/config_cache_test.ts fails while the stamp is stale.
 * @module
 */

/** The modules whose source decides what a config file parses to. */
export const SCHEMA_SOURCES = ["config.ts", "hooks.ts", "parse_cache.ts"];

export const STAMP_OUT = new URL("../core/config/schema_stamp.gen.json", import.meta.url);

/** The stamp file's text for the sources as they are now. */
export async function stampText(): Promise<string> {
  const parts: string[] = [];
  for (const f of SCHEMA_SOURCES) {
    parts.push(f, await Deno.readTextFile(new URL(`../core/config/${f}`, import.meta.url)));
  }
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\0")));
  const hex = Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
  return JSON.stringify({ stamp: hex }, null, 2) + "\n";
}
