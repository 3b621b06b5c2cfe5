/**
 * Credentials under nested or unusual keys in the configuration files of the home's toolchain
 * stores (eleventh attacker pass, class 2; docs/permissions.md "The home directory inside the
 * sandbox"): `api:\n  key: <token>` (YAML), `{"auth": {"refresh": "…"}}`,
 * `{"credentials": {"default": "…"}}` (JSON), `[registry]\ntoken_value = "…"` (TOML). The line
 * rules of ./store_kinds.ts `configHoldsCredential` judge a key by its own words, so a leaf key
 * that says nothing (`key`, `refresh`, `default`) passed. Here a structured file is read into
 * (joined key path, value) pairs ({@link configPairs}) and each pair is judged
 * ({@link nestedCredential}):
 *
 * - by its joined path with the key rule of core/tools/secret_keys.ts (`api.key` → `api key`,
 *   `registry.token_value`, `auth.refresh`, `credentials.default`: a secret word earlier in the
 *   path and a slot word last, `SLOT_WORDS`);
 * - by the value: a random-looking token (core/tools/secret_value.ts `highEntropyToken`, the test
 *   the environment scrub uses) — except under keys that name digests, signatures, public keys,
 *   ids, versions, URLs and paths ({@link PUBLIC_WORDS}: a lock file's or a registry's
 *   `integrity`, `shasum`, `keyid`, `sig`), values with a digest prefix (`sha512-…`,
 *   `sha256:…`), and lock files by name ({@link LOCK_NAME}).
 *
 * A file whose whole text is one word (a bare token file) counts as one value named by the file.
 * Free text (`.txt`, `.log`, `.md`) and XML are not read into pairs (their line rules stay).
 * @module
 */
import { keyWords, secretAssignment } from "../../tools/secret_keys.ts";
import { highEntropyToken } from "../../tools/secret_value.ts";

/** At most this many pairs are judged per file (a 64 KiB file holds far fewer keys). */
export const PAIR_LIMIT = 4000;

/** Names of files not read into pairs: free text and XML (their line rules apply). */
const UNSTRUCTURED = /\.(txt|log|md|rst|xml|html?|csv|tsv)$/i;

/** Lock files: digests by design; their values are not tested for randomness. */
export const LOCK_NAME = /(^|[.-])lock(file)?(\.(json|ya?ml|toml))?$|\.lock$|\.sum$/i;

/**
 * Key words whose values are public or structural, not credentials: digests and signatures,
 * public keys and certificates, ids, versions, URLs and paths.
 */
export const PUBLIC_WORDS: ReadonlySet<string> = new Set([
  "integrity",
  "shasum",
  "checksum",
  "checksums",
  "cksum",
  "hash",
  "hashes",
  "digest",
  "sha",
  "sha1",
  "sha256",
  "sha384",
  "sha512",
  "md5",
  "etag",
  "signature",
  "signatures",
  "sig",
  "keyid",
  "kid",
  "fingerprint",
  "public",
  "pub",
  "pubkey",
  "cert",
  "certificate",
  "ca",
  "nonce",
  "salt",
  "id",
  "ids",
  "uuid",
  "guid",
  "commit",
  "rev",
  "revision",
  "oid",
  "version",
  "resolved",
  "tarball",
  "url",
  "uri",
  "href",
  "path",
  "file",
  "dir",
]);

/** A value that is a digest by its prefix (SRI `sha512-…`, `sha256:…`, `md5-…`). */
const DIGEST_VALUE = /^(sha\d*|md5|blake2\w*|xxh\w*)[-:]/i;

const unquote = (v: string) =>
  v.length >= 2 && /^(["']).*\1$/.test(v) ? v.slice(1, -1) : v.replace(/\s+[#;].*$/, "");

/**
 * The (joined key path, string value) pairs of `text`, a configuration file named `name`: JSON
 * (by name or a leading `{`/`[`) walked whole (array items keep their parent's path); else line
 * by line — `[section]`/`[[table]]` headers prefix the keys below them (TOML, INI), YAML
 * indentation nests `key:` lines opened without a value, `- item` lines count under their
 * parent. Keys are joined with `.`. At most {@link PAIR_LIMIT} pairs.
 */
export function configPairs(text: string, name: string): [string, string][] {
  const out: [string, string][] = [];
  if (UNSTRUCTURED.test(name)) return out;
  const t = text.trimStart();
  if (/\.json[c5]?$/i.test(name) || t.startsWith("{") || t.startsWith("[{")) {
    try {
      walk(JSON.parse(text), "", out);
      return out;
    } catch { /* not JSON: read as lines */ }
  }
  const stack: [indent: number, key: string][] = [];
  let section = "";
  for (const raw of text.split("\n")) {
    if (out.length >= PAIR_LIMIT) break;
    const line = raw.replace(/\r$/, "");
    if (!line.trim() || /^\s*[#;]/.test(line)) continue;
    const sec = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$/.exec(line);
    if (sec) {
      section = sec[1].replace(/["']/g, "").replace(/\s+/g, ".");
      stack.length = 0;
      continue;
    }
    let indent = line.length - line.trimStart().length;
    let body = line.trim();
    const item = body.startsWith("- ");
    if (item) {
      body = body.slice(2).trimStart();
      indent += 2;
    }
    while (stack.length && stack.at(-1)![0] >= indent) stack.pop();
    const prefix = [section, ...stack.map(([, k]) => k)].filter(Boolean).join(".");
    const m = /^["']?([A-Za-z_@$][^"'=:\s]*(?:\s[^"'=:\s]+)*)["']?\s*(?:=|:(?=\s|$))\s*(.*)$/
      .exec(body);
    if (!m) {
      if (item && prefix) out.push([prefix, unquote(body)]);
      continue;
    }
    const key = m[1].replace(/\s+/g, "_");
    const v = m[2].trim();
    const path = prefix ? `${prefix}.${key}` : key;
    if (v === "" || v === "|" || v === ">" || v === "|-" || v === ">-") stack.push([indent, key]);
    else out.push([path, unquote(v)]);
  }
  return out;
}

function walk(v: unknown, path: string, out: [string, string][], depth = 0): void {
  if (out.length >= PAIR_LIMIT || depth > 32) return;
  if (typeof v === "string") out.push([path, v]);
  else if (Array.isArray(v)) { for (const x of v) walk(x, path, out, depth + 1); }
  else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k, out, depth + 1);
  }
}

/** A path that may hold a secret word of core/tools/secret_keys.ts (a pre-test, not the rule). */
const SECRETISH = /pass|secret|token|psk|credential|auth|mnemonic|otp|pin|bearer|key|seed|phrase/i;

/** A key path as {@link secretAssignment} reads one: `[\w.-]` only, starting with a letter. */
const keyText = (path: string) => {
  const k = path.replace(/[^\w.-]+/g, "_");
  return /^[A-Za-z_]/.test(k) ? k : `k_${k}`;
};

/** Whether one of `value`'s words is a random-looking token (not a path, not a digest). */
function randomWord(value: string): boolean {
  if (value.length < 20 || DIGEST_VALUE.test(value)) return false;
  for (const word of value.split(/[\s,;:'"|&()<>[\]{}*?!#$%^`\\@]+/)) {
    if (!word || /^(\/|~|\.\.?\/)/.test(word)) continue;
    for (const part of word.split(/=(?=[^=])/)) {
      if (!/^(\/|~)/.test(part) && highEntropyToken(part)) return true;
    }
  }
  return false;
}

/**
 * Why `text` (a configuration-shaped store file named `name`) holds a credential under a nested
 * or unusual key, or by a random-looking value (see the module doc), or undefined.
 */
export function nestedCredential(text: string, name: string): string | undefined {
  const t = text.trim();
  if (!LOCK_NAME.test(name) && !DIGEST_VALUE.test(t) && highEntropyToken(t)) {
    return "the file is one random-looking token";
  }
  const lock = LOCK_NAME.test(name);
  for (const [path, value] of configPairs(text, name)) {
    if (!value || value.length < 4) continue;
    // Cheap tests first: most pairs of a registry's metadata have no secret word in their path
    // and a short or word-like value (the key rule costs a few µs a pair, the pre-test less).
    if (
      path.includes(".") && SECRETISH.test(path) &&
      secretAssignment(`"${keyText(path)}": ${JSON.stringify(value)}`)
    ) return `${path} is a key naming a secret`;
    if (lock || value.length < 20 || !randomWord(value)) continue;
    if (keyWords(path).some((w) => PUBLIC_WORDS.has(w))) continue;
    return `${path} holds a random-looking token`;
  }
  return undefined;
}
