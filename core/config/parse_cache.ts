/**
 * Parsed config files, cached in the data dir (issue 22: a run with a `config.yaml` loaded npm
 * `yaml` — its CommonJS build, through Node's compatibility layer — and `zod` before the first
 * request, ≈ 60 ms here).
 *
 * A config file that parsed and validated is stored as JSON in `<data dir>/config-cache/<key>.json`,
 * where `key` is the SHA-256 of {@link FORMAT}, the Coyote version, the schema stamp
 * (`./schema_stamp.gen.json`: a hash of the schema's source, written by `deno task gen`; a test
 * fails while it is stale), the file's path and its exact text. Any change to the text, the schema
 * or Coyote is a new key, so a stale entry is never used. Files that fail to parse or validate are
 * never cached (their error is computed, and shown, every time), and neither is a file that holds a
 * secret ({@link holdsSecret}: a provider key, MCP headers or env, a credential-looking value) —
 * no secret is copied into the data dir, whose transcripts and caches must stay free of them
 * (tests/secrets_test.ts). At most {@link KEEP} entries stay
 * (newest first). The data dir is hidden from sandboxed commands and protected from the file tools,
 * so an entry cannot be planted. Unreadable or malformed entries only cost the parse; a data dir
 * that cannot be written is fine.
 * @module
 */
import { join } from "../util/path.ts";
import { keepNewest, writeTextAtomic } from "../util/files.ts";
import pkg from "../../deno.json" with { type: "json" };
import stamp from "./schema_stamp.gen.json" with { type: "json" };
import { knownSecretCandidates } from "../tools/redact.ts";
import { secretValue } from "../policy/sandbox/profile.ts";

/** Bump when the cached form of a parse changes. */
export const FORMAT = 1;
/** Entries kept. */
export const KEEP = 16;

async function keyOf(path: string, text: string): Promise<string> {
  const data = new TextEncoder().encode(
    JSON.stringify([FORMAT, pkg.version, stamp.stamp, path, text]),
  );
  const d = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether a parsed config holds a secret: such a parse is never written to the cache. */
export function holdsSecret(value: unknown): boolean {
  if (knownSecretCandidates(value, {}).some((s) => s.length > 0)) return true;
  let found = false;
  JSON.stringify(value, (_k, v) => {
    if (typeof v === "string" && secretValue(v)) found = true;
    return v;
  });
  return found;
}

/**
 * `parse()`'s result for `text` at `path`, from the cache in `cacheDir` when it holds it, else
 * parsed and (on success only) cached. Errors from `parse` propagate unchanged.
 */
export async function cachedParse<T>(
  cacheDir: string,
  path: string,
  text: string,
  parse: () => Promise<T>,
): Promise<T> {
  const file = join(cacheDir, `${await keyOf(path, text)}.json`);
  try {
    const hit = JSON.parse(await Deno.readTextFile(file));
    if (hit && typeof hit === "object" && "value" in hit) return hit.value as T;
  } catch { /* a miss */ }
  const value = await parse();
  if (holdsSecret(value)) return value;
  try {
    await Deno.mkdir(cacheDir, { recursive: true });
    await writeTextAtomic(file, JSON.stringify({ value }));
    await keepNewest(cacheDir, /^[0-9a-f]{64}\.json$/, KEEP, file);
  } catch { /* a read-only data dir: parse every time */ }
  return value;
}
