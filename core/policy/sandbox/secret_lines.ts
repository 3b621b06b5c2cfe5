/**
 * Configuration files the sandbox shows with their credential lines masked (issue 16, config-file
 * pass; docs/permissions.md "The OS sandbox"): world-readable files in `/etc` (`/etc/pip.conf`
 * with `index-url = https://user:pass@…`, `/etc/npmrc` with `_authToken=`, `/etc/gitconfig` with
 * an `extraheader`) and the workspace repository's git config (`.git/config`, a linked worktree's
 * common `config`, with `url = https://user:TOKEN@host/…`). Judged by content — the value rule of
 * core/tools/secret_value.ts in its `{entropy: false}` mode, line by line — not by a list of
 * names. Such a file is replaced, read-only, by a copy ({@link maskedCopy}) in which a URL's user
 * info is removed (`https://host/…`), a flagged assignment keeps its key with {@link MASK} for a
 * value, and any other flagged line is emptied (the line count stays);
 * the rest of the file works as before.
 *
 * Only plain text files of at most {@link MASK_MAX_BYTES} are read. The `/etc` verdicts are cached
 * across processes by each file's mtime, ctime and size ({@link etcCredentialFiles},
 * `<dataDir>/etc-scan.json`), so a start reads only files that changed.
 * @module
 */
import { dirname, join } from "../../util/path.ts";
import { credentialValue } from "../../tools/secret_value.ts";
import { maskSecretValues, secretAssignment } from "../../tools/secret_keys.ts";
import { writeTextAtomicSync } from "../../util/files.ts";

/**
 * What a masked value reads as: valid as a plain value in INI, YAML, shell and OpenSSL files,
 * quoted where the secret was (JSON, TOML). Emptying the line instead left a key other lines
 * refer to undefined: OpenSSL then refuses the whole config (`secret = pass:…` in Debian's
 * openssl.cnf, used by `$insta::secret`), and with it node, curl and every TLS client.
 */
export const MASK = "xxxxxxxx";

/** Larger files are not read (configuration is small). */
export const MASK_MAX_BYTES = 64 * 1024;

const USERINFO = /(?<![A-Za-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)[^/\s@?#'"]+@/gi;

/**
 * `text` with its credential lines masked (see the module doc), or undefined when none is found.
 * `masked`: how many lines changed.
 */
export function maskCredentialLines(text: string): { text: string; masked: number } | undefined {
  // Judged with continued lines joined (a trailing backslash), as git and shells read them.
  if (
    credentialValue(text, { entropy: false }) === undefined &&
    credentialValue(text.replace(/\\\n/g, ""), { entropy: false }) === undefined
  ) return undefined;
  const lines = text.split("\n");
  // What is left of the text without the masked lines' values (the placeholder is no value).
  const left = [...lines];
  let masked = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (credentialValue(l, { entropy: false }) === undefined) continue;
    const stripped = l.replace(USERINFO, "$1");
    if (credentialValue(stripped, { entropy: false }) === undefined) lines[i] = left[i] = stripped;
    else {
      // Its secret values replaced, when that leaves nothing flagged; else the line is emptied.
      const secret = (v: string) => credentialValue(v, { entropy: false }) !== undefined;
      const probe = maskSecretValues(stripped, "", secret);
      const ok = probe !== stripped && credentialValue(probe, { entropy: false }) === undefined;
      lines[i] = ok ? maskSecretValues(stripped, MASK, secret) : "";
      left[i] = ok ? probe : "";
    }
    masked++;
  }
  // A value continued with a trailing backslash (git config, shell, INI): the logical line is
  // judged whole, and a masked one loses its continuation lines too.
  const orig = text.split("\n");
  for (let i = 0; i < orig.length; i++) {
    if (!orig[i].endsWith("\\")) continue;
    let j = i;
    while (j + 1 < orig.length && orig[j].endsWith("\\")) j++;
    const joined = orig.slice(i, j + 1).map((l) => l.slice(0, l.endsWith("\\") ? -1 : undefined))
      .join("");
    const hit = lines[i] !== orig[i] ||
      credentialValue(joined, { entropy: false }) !== undefined;
    if (hit) {
      for (let k = i; k <= j; k++) {
        if (lines[k] !== "") masked++;
        lines[k] = left[k] = "";
      }
    }
    i = j;
  }
  // A shape spread over lines (a netrc `machine …` / `password …`): its password lines go too.
  if (credentialValue(left.join("\n"), { entropy: false }) !== undefined) {
    for (let i = 0; i < lines.length; i++) {
      if (/\bpassword\b/i.test(left[i])) {
        lines[i] = left[i] = "";
        masked++;
      }
    }
  }
  return masked ? { text: lines.join("\n"), masked } : undefined;
}

/** The text of plain file `p` when it is at most {@link MASK_MAX_BYTES} and holds no NUL byte. */
export function readSmallText(p: string): string | undefined {
  try {
    const st = Deno.statSync(p);
    if (!st.isFile || st.size > MASK_MAX_BYTES) return undefined;
    const b = Deno.readFileSync(p);
    if (b.includes(0)) return undefined;
    return new TextDecoder().decode(b);
  } catch {
    return undefined;
  }
}

const copies = new Map<string, string>();

/**
 * A read-only host temp file holding `p`'s text with its credential lines masked, or undefined
 * when `p` holds none (or is not a small text file). One file per distinct masked text per
 * process (made again when it no longer holds that text), removed when the process ends.
 */
export function maskedCopy(p: string): string | undefined {
  const text = readSmallText(p);
  if (text === undefined) return undefined;
  const m = maskCredentialLines(text);
  if (!m) return undefined;
  const hit = copies.get(m.text);
  // Reused while it still holds that text: a copy removed or changed on the host (its temp dir
  // cleaned) would make bwrap refuse the command, or show what it was changed to.
  if (hit && readSmallText(hit) === m.text) return hit;
  const f = Deno.makeTempFileSync({ prefix: "coyote-masked-" });
  Deno.writeTextFileSync(f, m.text);
  Deno.chmodSync(f, 0o444);
  if (copies.size === 0) {
    globalThis.addEventListener("unload", () => {
      for (const c of copies.values()) {
        try {
          Deno.removeSync(c);
        } catch { /* gone */ }
      }
    });
  }
  copies.set(m.text, f);
  return f;
}

/** A candidate file of the `/etc` scan: its path and stamp (ms since the epoch; bytes). */
export interface FileStamp {
  path: string;
  mtime: number;
  ctime: number;
  size: number;
}

/** Bump when the verdicts of {@link maskCredentialLines} change in a way the key does not see. */
const ETC_CACHE_VERSION = 2;
let etcKey: string | undefined;

function cacheKey(): string {
  if (etcKey) return etcKey;
  const text = [
    ETC_CACHE_VERSION,
    MASK_MAX_BYTES,
    maskCredentialLines,
    credentialValue,
    secretAssignment,
  ].map(String).join("\0");
  let h = 0x811c9dc5; // FNV-1a, 32 bits
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return etcKey = `${(h >>> 0).toString(16)}-${text.length}`;
}

/**
 * Which of `files` (from the `/etc` scan of ./root_view.ts) hold a credential line. Verdicts are
 * kept in `<cacheDir>/etc-scan.json` (`{key, files: {path: [mtime, ctime, size, holds]}}`) and
 * reused while a file's stamp stays; a stamp within 2 s of now is not stored (an edit in the same
 * moment could follow it). Without `cacheDir` every file is read.
 */
export function etcCredentialFiles(files: readonly FileStamp[], cacheDir?: string): string[] {
  const file = cacheDir ? join(cacheDir, "etc-scan.json") : undefined;
  let old: Record<string, [number, number, number, 0 | 1]> = {};
  if (file) {
    try {
      const c = JSON.parse(Deno.readTextFileSync(file));
      if (c?.key === cacheKey() && c.files && typeof c.files === "object") old = c.files;
    } catch { /* none or corrupt: read every file */ }
  }
  const now = Date.now();
  const next: typeof old = {};
  const out: string[] = [];
  let dirty = false;
  for (const f of files) {
    const o = old[f.path];
    let holds: 0 | 1;
    if (
      Array.isArray(o) && o[0] === f.mtime && o[1] === f.ctime && o[2] === f.size &&
      (o[3] === 0 || o[3] === 1)
    ) holds = o[3];
    else {
      const text = f.size <= MASK_MAX_BYTES ? readSmallText(f.path) : undefined;
      holds = text !== undefined && maskCredentialLines(text) ? 1 : 0;
      dirty = true;
    }
    if (holds) out.push(f.path);
    if (f.mtime < now - 2000 && f.ctime < now - 2000) {
      next[f.path] = [f.mtime, f.ctime, f.size, holds];
    } else dirty = true;
  }
  if (file && (dirty || Object.keys(old).length !== Object.keys(next).length)) {
    try {
      Deno.mkdirSync(dirname(file), { recursive: true });
      writeTextAtomicSync(file, JSON.stringify({ key: cacheKey(), files: next }));
    } catch { /* read-only: read again next time */ }
  }
  return out;
}
