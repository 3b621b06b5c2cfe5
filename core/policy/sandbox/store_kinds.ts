/**
 * Kinds of files inside the home's toolchain stores that the credential scan (./home_scan.ts
 * `scanSecrets`) judges by what they are, not by a list of names (issue 16 class 2, gap A;
 * docs/permissions.md "The home directory inside the sandbox"):
 *
 * - configuration-shaped text ({@link configShaped}): read (at most {@link CONFIG_MAX_BYTES}) and
 *   hidden when a line holds a credential ({@link configHoldsCredential}) — a virtualenv's
 *   `pip.conf` with `index-url = https://user:token@host/simple`, a `settings.xml` or
 *   `gradle.properties` kept below a shown subtree, an `.npmrc`-like file below `~/.npm`, a
 *   `*.env`, a tool's `config.json` with `"token": "…"`;
 * - shell and REPL history ({@link HISTORY_RE}: `deno_history.txt`, `.python_history`,
 *   `.node_repl_history`, `fish_history`, `.lesshst`, `.viminfo`): hidden whatever it holds;
 * - web storage ({@link WEB_STORAGE_RE}: Deno's `location_data` — `localStorage` —, `IndexedDB`,
 *   `Local Storage`, `webappsstore.sqlite`): hidden whatever it holds;
 * - sockets, FIFOs and device nodes ({@link specialFile}): a daemon's endpoint, hidden by type
 *   (eleventh attacker pass, class 1);
 * - an install prefix's code folders ({@link PREFIX_CODE_DIRS}): not entered, while the rest of
 *   a prefix is (`~/.pyenv/versions/3.12.1/envs/foo`, a prefix's `etc/`).
 * @module
 */
import { credentialValue } from "../../tools/secret_value.ts";
import { nestedCredential } from "./store_values.ts";

/**
 * Files named so are read at any depth with the full value rule (random-looking tokens too): git
 * configs of clones kept in stores, and the config files package tools read a registry token from
 * (`.npmrc`, `.yarnrc.yml`, `.pypirc`, `pip.conf`, Maven's `settings.xml`, `gradle.properties`,
 * Cargo's `credentials.toml`, `.netrc`). Also at the top of a package folder (not entered).
 */
export const CONFIG_FILE_RE =
  /^(config|\.?gitconfig|\.git-credentials|FETCH_HEAD|\.?npmrc|\.yarnrc(\.yml)?|\.pypirc|pip\.(conf|ini)|settings\.xml|gradle\.properties|credentials(\.toml)?|\.?netrc|config\.worktree)$/;

/** Larger files are not read: configuration is small (a larger file counts as data, shown). */
export const CONFIG_MAX_BYTES = 64 * 1024;

/**
 * At most this many files are read per store scan (one `lstat` and one read each; unchanged
 * files are judged from the scan cache without a read). Past it the scan fails closed: each
 * further configuration-shaped file is hidden unread, and read by a later scan.
 */
export const CONTENT_READ_LIMIT = 5000;

/**
 * At most this many bytes are read per store scan (the rules cost about 100 µs per KiB, so a
 * scan's reading stays within about 2 s, well inside the helper's timeout); past it the scan
 * fails closed as past {@link CONTENT_READ_LIMIT}.
 */
export const CONTENT_READ_BYTES = 16 * 1024 * 1024;

/** Extensions of configuration and text files whose content the scan reads. */
const CONFIG_EXT =
  /\.(conf|cfg|cnf|ini|toml|ya?ml|json5?|jsonc|properties|props|xml|env|txt|log|rc|netrc|credentials?|creds|secrets?|tokens?|auth|pass|pwd|config|settings|boto|s3cfg)$/i;

/** A content-addressed name (a digest: 16 or more hex digits, maybe dashed) is data, not configuration. */
const DIGEST_NAME = /^[0-9a-f-]{16,}$/i;

/**
 * Whether a file named `name` is configuration-shaped: a config or text extension
 * ({@link CONFIG_EXT}), a dot-file without another dot (`.boto`, `.yarnrc`), or a name without a
 * dot that is not a digest (`config`, `credentials`, `hosts`, `token`). Source code, archives,
 * binaries and content-addressed blobs are not.
 */
export function configShaped(name: string): boolean {
  if (CONFIG_EXT.test(name)) return true;
  if (/^\.[^.]+$/.test(name)) return true;
  return !name.includes(".") && !DIGEST_NAME.test(name) && name.length <= 64;
}

/**
 * History files (lower-case `history`/`hist`/`histfile` as a word, `.lesshst`, `.viminfo`):
 * what a shell or REPL typed, tokens included. Capitalised `History.txt`/`HISTORY.md` are a
 * package's change log, and a source file (`history.js`) is code: neither counts.
 */
export const HISTORY_RE = /(^|[._-])(history|hist|histfile)([._-]|$)|^\.?(lesshst|viminfo)$/;

/** Extensions of code: a `history.js` module is no history file. */
const CODE_EXT =
  /\.(m?js|cjs|tsx?|jsx|py[ci]?|rb|go|rs|java|class|kt|map|html?|css|md|rst|[ch](c|pp|xx)?|hh|so|dylib|dll|wasm|lua|php|pl|pm|sh|zsh|fish|vim|el)$/;

/** Whether a file named `name` is a shell or REPL history ({@link HISTORY_RE}, not code). */
export function historyFile(name: string): boolean {
  return HISTORY_RE.test(name) && !CODE_EXT.test(name);
}

/**
 * Web storage of a runtime or an embedded browser (files or folders, any case): Deno's
 * `location_data` (its `localStorage` per origin), `IndexedDB`, `Local Storage`,
 * `Session Storage`, `local_storage`, Firefox's `webappsstore.sqlite`, `*.localstorage`.
 */
export const WEB_STORAGE_RE =
  /^(location_data|indexeddb|local[ _-]?storage|session[ _-]?storage|webappsstore\.sqlite|.+\.localstorage|service worker)$/i;

/**
 * The code folders of an install prefix (a folder with `bin` next to `lib`: a Python or Node
 * version, a virtualenv, a JDK): what a build unpacked, not entered. A prefix's other folders
 * are (`envs/<name>` — a virtualenv inside a pyenv version —, `etc/` with its `npmrc` or
 * `pip.conf`, `conf/`).
 */
export const PREFIX_CODE_DIRS =
  /^(bin|sbin|lib(32|64|exec)?|include|share|man|src|node_modules|site-packages|Lib|Scripts|Include|DLLs|libs|tcl|Tools|doc|docs|jmods|legal|lib-dynload|__pycache__)$/;

/**
 * Whether `text` (a configuration-shaped file named `name`) holds a credential: a git
 * credential section or an `extraheader`/`password`/`token`/`helper` key, or a line the value
 * rule of core/tools/secret_value.ts flags — with random-looking words for files named by
 * {@link CONFIG_FILE_RE}, without them for any other (lock files and metadata carry digests) —
 * or a credential under a nested or unusual key, or a random-looking value under a key that is
 * not a digest's, an id's or a URL's (./store_values.ts `nestedCredential`: `api:\n  key: …`,
 * `{"auth": {"refresh": …}}`, `token_value = …`; eleventh attacker pass).
 */
export function configHoldsCredential(text: string, name: string): boolean {
  if (/^\s*\[credential|^\s*(extraheader|password|token|helper)\s*=/im.test(text)) return true;
  if (!CONFIG_FILE_RE.test(name)) {
    if (credentialValue(text, { entropy: false }) !== undefined) return true;
  } else if (text.split("\n").some((l) => credentialValue(l) !== undefined)) return true;
  return nestedCredential(text, name) !== undefined;
}

/**
 * Whether `p` is a socket, a FIFO or a device node (`lstat`, links not followed): what a
 * `Deno.DirEntry` that is neither a file, a folder nor a link is. Called only for such entries,
 * so it costs one `lstat` per odd entry.
 */
export function specialFile(p: string): boolean {
  try {
    const st = Deno.lstatSync(p);
    return !!(st.isSocket || st.isFifo || st.isCharDevice || st.isBlockDevice);
  } catch {
    return false;
  }
}
