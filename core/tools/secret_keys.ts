/**
 * The key rule of configuration text (issue 16 class 2, gap C; docs/permissions.md "The host
 * root inside the sandbox"): an assignment whose KEY names a secret, whatever the spelling —
 * `aws_secret_access_key = …`, WireGuard `PrivateKey = …`, `db_pass=…`, `psk="…"`,
 * `wpa_passphrase=…`, `client_secret: …`, `"apiKey": "…"`, `export SMTP_PASSWD=…` — judged by the
 * key's words, not by a list of keys.
 *
 * A key is split into words ({@link keyWords}: snake, kebab, dotted and camel case, and a glued
 * lower-case suffix such as `apikey`, `privatekey`, `authtoken`). It names a secret when its LAST
 * word is a secret word ({@link SECRET_WORDS}: password, passwd, pass, passphrase, passcode,
 * secret, token, psk, credential(s), auth, mnemonic, otp/totp/hotp, pin (not alone: apt's
 * `Pin:`), bearer; not `pwd`, a shell's working dir), is `key` right after a qualifier ({@link KEY_QUALIFIERS}: private,
 * secret, api, access, preshared, signing, …), or `seed` / `phrase` right after one of theirs
 * ({@link SEED_QUALIFIERS}: `TOTP_SEED`, `WALLET_SEED`; `SEED_PHRASE`; not `SEED` or
 * `RANDOM_SEED`). A glued `pass` splits off only after a service word (`sshpass`, `dbpass`,
 * `smtppass`; not `compass`, `bypass`). A later word makes it a setting about the
 * secret, not the secret (`password_file`, `token_url`, `PasswordAuthentication`, `max_tokens`,
 * `PublicKey`, `aws_access_key_id`). The value must look like a value: not empty, not a boolean
 * or `none`, not an expansion (`$X`, `${X}`, `%(x)s`, `{{x}}`, `<placeholder>`), not a path, one
 * word unless quoted (a path: `/` or `~/` then no `+` or `=`, which a base64 key has); for
 * `auth` 8 characters or more and not a lower-case method name (`auth = plain`, `scram-sha-256`).
 * @module
 */

/** Words that name a secret when a key ends in them. */
export const SECRET_WORDS: ReadonlySet<string> = new Set([
  "password",
  "passwd",
  "pass",
  "passphrase",
  "secret",
  "token",
  "psk",
  "credential",
  "credentials",
  "auth",
  // Tenth attacker pass: `SMTP_PASSCODE`, `WALLET_MNEMONIC`, `AWS_OTP`, `SIM_PIN`, `API_BEARER`.
  "passcode",
  "mnemonic",
  "otp",
  "totp",
  "hotp",
  "pin",
  "bearer",
]);

/**
 * Words that make a following `seed` a secret (`TOTP_SEED`, `WALLET_SEED`, `MFA_SEED`: the key a
 * one-time-password app or a wallet derives everything from); a plain `SEED=42` or `RANDOM_SEED`
 * (a test's random seed) is not one.
 */
export const SEED_QUALIFIERS: ReadonlySet<string> = new Set([
  "totp",
  "hotp",
  "otp",
  "mfa",
  "2fa",
  "wallet",
  "mnemonic",
  "recovery",
  "bip39",
  "hd",
  "master",
  "private",
  "secret",
  "crypto",
]);

/** Words that make a following `phrase` a secret (`SEED_PHRASE`, `RECOVERY_PHRASE`). */
const PHRASE_QUALIFIERS: ReadonlySet<string> = new Set([
  "seed",
  "recovery",
  "mnemonic",
  "secret",
  "backup",
  "wallet",
]);

/** Words that make a following `key` a secret key (`PrivateKey`, `api_key`, `PresharedKey`). */
export const KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  "private",
  "secret",
  "api",
  "access",
  "preshared",
  "shared",
  "signing",
  "encryption",
  "master",
  "client",
  "auth",
  "license",
  "account",
  "session",
]);

/** Glued lower-case endings split off a longer word (`apikey` → `api key`, `authtoken`). */
const GLUED =
  /^(.+?)(password|passwd|passphrase|passcode|secret|token|credentials?|mnemonic|(?<=private|secret|api|access|preshared|shared|signing|encryption|master|client|auth|license|account|session)key|(?<=^(?:ssh|sudo|db|smtp|mail|root|admin|user|vnc|redis|ftp|ldap|wifi|bind|rpc|login|pg|sql|mysql|vault|ansible|become|proxy|http|imap|pop))pass)$/;

/** The lower-case words of a key: `aws_secret_access_key`, `PrivateKey`, `HTTPPassword`, `apikey`. */
export function keyWords(key: string): string[] {
  const out: string[] = [];
  const spaced = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2");
  for (const w of spaced.split(/[^A-Za-z0-9]+/)) {
    if (!w) continue;
    let word = w.toLowerCase();
    const tail: string[] = [];
    for (let m = GLUED.exec(word); m && m[1].length >= 2; m = GLUED.exec(word)) {
      tail.unshift(m[2]);
      word = m[1];
    }
    out.push(word, ...tail);
  }
  return out;
}

/**
 * Last words that name the secret itself when an earlier word of the key names one (eleventh
 * attacker pass: `token_value`, `{"token": {"value": …}}`, `{"auth": {"refresh": …}}`,
 * `{"credentials": {"default": …}}` — a nested key judged by its joined path, `auth.refresh`).
 */
export const SLOT_WORDS: ReadonlySet<string> = new Set([
  "value",
  "default",
  "refresh",
  "current",
  "primary",
  "secondary",
  "raw",
  "plain",
]);

/**
 * Whether a key's words (see {@link keyWords}) name a secret; `"weak"` for an `auth` key, and for
 * a {@link SLOT_WORDS} ending after a secret word anywhere earlier (`credentials.default`,
 * `auth.refresh`: the value test of a weak key — 8 characters or more, not a lower-case word —
 * keeps `auth.default = oauth2` a setting); `value` right after a secret word is strong
 * (`token_value`, `password.value`).
 */
export function secretKey(key: string): "strong" | "weak" | undefined {
  const w = keyWords(key);
  const last = w.at(-1);
  if (!last) return undefined;
  if (SLOT_WORDS.has(last) && w.slice(0, -1).some((x) => SECRET_WORDS.has(x))) {
    // `token_value`, `password.value`: the secret itself, as strong as the word before it.
    const before = w.at(-2)!;
    return last === "value" && SECRET_WORDS.has(before) && before !== "auth" && before !== "pin"
      ? "strong"
      : "weak";
  }
  if (last === "key") return w.length >= 2 && KEY_QUALIFIERS.has(w.at(-2)!) ? "strong" : undefined;
  if (last === "seed" || last === "phrase") {
    const q = last === "seed" ? SEED_QUALIFIERS : PHRASE_QUALIFIERS;
    return w.length >= 2 && q.has(w.at(-2)!) ? "strong" : undefined;
  }
  if (!SECRET_WORDS.has(last)) return undefined;
  // A lone `pin` is apt's `Pin: release a=stable`; `SIM_PIN`, `PKCS11_PIN` are PINs.
  if (last === "pin" && w.length < 2) return undefined;
  // nsswitch.conf's `passwd: files systemd` names a database, not a password.
  if (w.length === 1 && last === "passwd") return "weak";
  return last === "auth" ? "weak" : "strong";
}

/**
 * `key = value` / `key: value` / `"key": "value"` / `export KEY=value`, anywhere in a line
 * (minified JSON holds many): group 1 a quoted key, 2 a bare one, 3 the value (quoted or one
 * word). A bare key's `:` must be followed by a blank (YAML's rule), so `pass:insta` (an
 * OpenSSL source spec) or `host:port` is no assignment.
 */
const ASSIGNMENT =
  /(?:^|[\s{,;(])(?:export\s+)?(?:["']([A-Za-z_][\w.-]*)["']\s*[=:]|([A-Za-z_][\w.-]*)\s*(?:=|:(?=[ \t])))[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,;}\]"'#]+)/g;

/**
 * `text` with the value of every assignment ({@link ASSIGNMENT}) whose key names a secret
 * ({@link secretKey}) or whose value `isSecret` flags replaced by `mask`, in the value's own
 * quotes (a masked copy of a config file keeps its keys and its format: one-line JSON stays
 * JSON, OpenSSL's `$section::name` references still resolve).
 */
export function maskSecretValues(
  text: string,
  mask: string,
  isSecret: (value: string) => boolean,
): string {
  return text.replace(ASSIGNMENT, (all, quotedKey, bareKey, v: string) => {
    const q = /^["']/.test(v) ? v[0] : "";
    const value = q ? v.slice(1, -1) : v;
    if (!secretKey(quotedKey ?? bareKey) && !isSecret(value)) return all;
    return `${all.slice(0, all.length - v.length)}${q}${mask}${q}`;
  });
}

/** Values that are no secret: booleans, `none`, expansions, placeholders, paths, helpers, `a|b` choices. */
const NOT_A_VALUE =
  /^(true|false|yes|no|on|off|none|null|nil|undefined|required|optional|disabled?|enabled?|\*+|x+|-+|\.+)$|^\\?[$%{<(]|^~?\/[^\s+=]*$|^\.\.?\/|^(env|file|fd|pass|keyring|vault|op|cmd|exec):|^\$\(|^!|^\w+(\|\w+)+$/i;

/**
 * Why `text` holds an assignment to a secret-named key (see the module doc), or undefined.
 * One line or many; the first hit counts.
 */
export function secretAssignment(text: string): string | undefined {
  if (text.length < 6) return undefined;
  for (const m of text.matchAll(ASSIGNMENT)) {
    const name = m[1] ?? m[2];
    const kind = secretKey(name);
    if (!kind) continue;
    const quoted = /^["']/.test(m[3]);
    const v = quoted ? m[3].slice(1, -1) : m[3];
    if (v.length < 4 || NOT_A_VALUE.test(v)) continue;
    if (kind === "weak") {
      if (v.length < 8 || (v.length < 20 && /^[a-z][a-z0-9-]*$/.test(v))) continue;
      if (/^(files|compat|systemd|sss|ldap|nis|db|winbind|extrausers)\b/.test(v)) continue;
    }
    return `its value sets ${name}, a key naming a secret`;
  }
  return undefined;
}

/** Option values that are placeholders or flags, not a credential: `TOKEN`, `<pass>`, `-x`. */
const PLACEHOLDER = /^([A-Z][A-Z0-9_]*|<[^>]*>|\[[^\]]*\]|-.*)$/;

/**
 * The known words a `-p` is glued to that are not a mysql password: compiler and linker flags
 * (`-pthread`, `-pie`, `-pipe`, `-pedantic`, `-print-…`, `-pg`), javac's (`-parameters`,
 * `-processor…`, `-proc:`, `-profile`), `-param`, `-pass-exit-codes`, `-plugin…`.
 */
const P_FLAG =
  /^(threads?|ie|ipe|g|edantic(-errors)?|rint-.*|arameters|rocessor(path)?|roc:.*|rofile|review|aram.*|ass-exit-codes|lugin.*)$/;

/**
 * Why `text` (an environment value, a configuration line) passes a credential as a command-line
 * option (eleventh attacker pass, class 2: `CURL_OPTS=-u admin:pw`, `MYSQL_OPTS=-pPW`), or
 * undefined:
 * - `--NAME VALUE` or `--NAME=VALUE` whose NAME's words name a secret by {@link secretKey}
 *   (`--password`, `--passwd`, `--token`, `--secret`, `--api-key`, `--auth-token`,
 *   `--client-secret`; `--auth` as a weak key: 8 characters or more, not a lower-case method
 *   name) — not `--password-file`, `--token-url`, `--no-password`, nor a value that is a flag,
 *   a placeholder (`TOKEN`, `<pass>`), an expansion or a path (the key rule's value test);
 * - `-u USER:PASSWORD` / `--user USER:PASSWORD` (curl, httpie, wget): a password of 3 or more
 *   characters, not all digits and not the user again (`docker -u 1000:1000`, `-u app:app` are
 *   a uid and a group);
 * - mysql's `-pPASSWORD`, the password glued to `-p`: 4 characters or more, not a lower-case
 *   flag word, maybe with one digit (`-pthread`, `-pedantic`, find's `-print0`, {@link P_FLAG}), not a port (`-p2222`, `-p8080:80`),
 *   a path, an msbuild property (`-p:Configuration=Release`) or an expansion;
 * - a pgpass line (`host:port:database:user:password`, the port digits or `*`).
 */
export function optionCredential(text: string): string | undefined {
  if (text.length < 6) return undefined;
  const valueOk = (raw: string, weak: boolean) => {
    const v = /^["']/.test(raw) ? raw.slice(1, -1) : raw;
    if (v.length < 4 || NOT_A_VALUE.test(v) || PLACEHOLDER.test(v)) return false;
    return !weak || (v.length >= 8 && !(v.length < 20 && /^[a-z][a-z0-9-]*$/.test(v)));
  };
  for (
    const m of text.matchAll(
      /(?:^|[\s"'(\[,])--([A-Za-z][\w-]*)(?:=|[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s"'|;&)]+)/g,
    )
  ) {
    if (/^no-/i.test(m[1])) continue;
    const kind = secretKey(m[1]);
    if (kind && valueOk(m[2], kind === "weak")) return `its value passes --${m[1]} with a value`;
  }
  for (
    const m of text.matchAll(
      /(?:^|[\s"'])(?:-u[ \t]*|--user(?:=|[ \t]+))(["']?)([^\s:"']+):([^\s"']+)\1(?=\s|$)/g,
    )
  ) {
    const [user, pw] = [m[2], m[3]];
    if (pw.length >= 3 && !/^\d+$/.test(pw) && pw !== user && !NOT_A_VALUE.test(pw)) {
      return "its value passes a user:password option (-u)";
    }
  }
  for (const m of text.matchAll(/(?:^|[\s"'])-p([^\s"']+)/g)) {
    const v = m[1].replace(/[).,;:]+$/, "");
    // A flag word, maybe with one digit (`-print0`, `-prettysrc).` in a comment).
    if (v.length < 4 || P_FLAG.test(v) || /^[a-z][a-z-]*\d?$/.test(v)) continue;
    if (/^[\d.:\/]+((tcp|udp)\b.*)?$/i.test(v) || /^[:=\/~.$%{<(]/.test(v)) continue;
    return "its value passes a password glued to -p (mysql)";
  }
  for (const line of text.split("\n")) {
    const m = /^\s*([^\s:\/#][^\s:]*):(\d{1,5}|\*):([^\s:]+):([^\s:]+):((?:[^\s:\\]|\\.){3,})\s*$/
      .exec(line);
    if (m && !m.slice(1).every((p) => /^[0-9a-f]*$/i.test(p))) {
      return "its value is a pgpass line (host:port:db:user:password)";
    }
  }
  return undefined;
}
