/**
 * Whether a value holds a credential, judged by what it contains, not by the name it is stored
 * under (issue 16, fourth attacker pass class 2; docs/permissions.md "Environment"). One rule for
 * the environment scrub of commands (core/policy/sandbox/profile.ts `envDecision`), the secret
 * values redacted from tool results (./redact.ts `knownSecretCandidates`: the values of Coyote's
 * own environment this flags become known secrets) and the git configs hidden inside the home's
 * toolchain stores (core/policy/sandbox/home_view.ts).
 *
 * What counts, in order ({@link credentialValue} returns the first reason):
 * - a URL with user info (`https://TOKEN@host/…`; a user name alone counts) — except an `ssh://`
 *   (`git+ssh://`, `sftp://`) user without a password, an account name (ssh authenticates by key);
 *   a scheme-less `user:password@host` (scp, rsync; not `npm:pkg@1.2.3`);
 * - from the config-file pass: mysql `-pSECRET`, Java `-D…password=…`, npm `_authToken=`/`_auth=`,
 *   a netrc `machine … password …`, an XML `<password>…</password>` (Maven's `settings.xml`), a key ending in `token`/`secret`/`password` set with `=`/`:`
 *   (not to an expansion, a path or a boolean); any key whose words name a secret
 *   (./secret_keys.ts: `aws_secret_access_key`, `PrivateKey`, `db_pass`, `psk`); Tailscale `tskey-…` and age `AGE-SECRET-KEY-1…`;
 * - from the eleventh attacker pass: credentials passed as command-line options
 *   (./secret_keys.ts `optionCredential`: `--password X`, `--token X`, `-u user:pw`, mysql's
 *   `-pPW`) and pgpass lines (`host:5432:db:user:pw`);
 * - a connection-string password (`Password=…`, `Pwd=…`, `AccountKey=…`, `--password=…`), a
 *   `token=`/`secret=`/`api_key=`/`client_secret=` assignment of 8 characters or more, a PEM
 *   private key, a JSON Web Token;
 * - an HTTP authentication header (`Authorization:`, `Proxy-Authorization:`, `X-Api-Key:`,
 *   `Private-Token:`, `Cookie:`, …), `Bearer <token>`, `Basic <base64 of user:password>`;
 * - a webhook URL (Slack, Discord, Microsoft Teams, Zapier, …), a URL query parameter named like
 *   a secret (`token=`, `sig=`, `X-Amz-Signature=`, …), a URL path segment that is a
 *   {@link highEntropyToken};
 * - a token with a well-known prefix (GitHub, GitLab, Slack, Stripe, Google OAuth `ya29.`,
 *   DigitalOcean, SendGrid, Linear, Shopify, Vault, AWS key ids, …);
 * - any {@link highEntropyToken} outside a file path (not with `{entropy: false}`, the mode for
 *   configuration files: certificates and signing keys there look random and are public).
 *
 * Also used for the lines of configuration files the sandbox shows (core/policy/sandbox/
 * secret_lines.ts: `/etc`, a repository's git config).
 * @module
 */
import { optionCredential, secretAssignment } from "./secret_keys.ts";

/** Schemes whose user name alone is an account, not a credential. */
const SSH_SCHEMES = /^(ssh|git\+ssh|ssh\+git|sftp|scp)$/i;

/** `scheme://userinfo@`: group 1 the scheme, 2 the user info. */
const URL_USERINFO = /(?<![A-Za-z0-9+.-])([a-z][a-z0-9+.-]*):\/\/([^/\s@?#'"]+)@/gi;

/** Hosts and paths of webhook URLs: the URL itself is the credential. */
const WEBHOOK =
  /:\/\/(hooks\.slack\.com\/(services|workflows|triggers)\/|(ptb\.|canary\.)?discord(app)?\.com\/api\/webhooks\/|[a-z0-9-]+\.webhook\.office\.com\/|outlook\.office(365)?\.com\/webhook|hooks\.zapier\.com\/hooks\/|[a-z0-9-]+\.logic\.azure\.com[^\s]*[?&]sig=|maker\.ifttt\.com\/trigger\/)/i;

/** URL query parameter names that carry a credential. */
const SECRET_PARAM =
  /^(.*(token|secret|passw(or)?d|passwd|apikey|api_key|api-key|credential|signature|auth)|key|sig|code_verifier|x-amz-security-token)$/i;

/** Tokens with a well-known prefix: `[prefix, minimum length of what follows]`. */
const PREFIXED =
  /(^|[^A-Za-z0-9_-])(tskey-[a-z]+-[A-Za-z0-9_-]{10,}|AGE-SECRET-KEY-1[0-9A-Z]{40,}|(gh[pousr]_|github_pat_|glpat-|gldt-|glrt-|xox[abposre]-|xapp-|sk_live_|rk_live_|sk_test_|rk_test_|whsec_|dop_v1_|doo_v1_|dor_v1_|lin_api_|shpat_|shpss_|shpca_|hvs\.|hvb\.|glsa_|glc_)[A-Za-z0-9_-]{8,}|(sk-|npm_|hf_|pypi-|sq0atp-|sq0csp-)[A-Za-z0-9_-]{16,}|ya29\.[A-Za-z0-9_.-]{16,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|(AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35})/;

/** Shannon entropy of `s` in bits per character. */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Single-case hex runs of 8 or more (hashes, git object ids, the parts of a UUID). */
const HEX_RUN = /[0-9a-f]{8,}|[0-9A-F]{8,}/g;

/**
 * Whether `token` (one word of a value, no separators but `-_.+/=`) looks randomly generated:
 * what is left after removing single-case hex runs ({@link HEX_RUN}: a git sha, a digest, a UUID
 * is not a secret unless its name says so) and trailing `=` is at least 20 characters of
 * `[A-Za-z0-9_\-+/=.]` holding lower case, upper case and digits, with a Shannon entropy of at
 * least 3.3 bits per character and the character class changing at 30 % or more of the steps
 * (camel-case words change rarely, random text at about 60 %); or 32 characters or more of lower
 * case (or upper case) and digits with an entropy of at least 4 and changes at 35 % or more. Not
 * when half its letters or more stand in runs of four or more lower-case letters (words).
 */
export function highEntropyToken(token: string): boolean {
  if (token.length < 20 || !/^[A-Za-z0-9_\-+/=.]+$/.test(token)) return false;
  const rest = token.replace(HEX_RUN, "").replace(/=+$/, "");
  if (rest.length < 20) return false;
  const alnum = rest.replace(/[^A-Za-z0-9]/g, "");
  const lower = /[a-z]/.test(alnum), upper = /[A-Z]/.test(alnum), digit = /[0-9]/.test(alnum);
  const cls = (c: string) => (c >= "a" && c <= "z" ? 0 : c >= "A" && c <= "Z" ? 1 : 2);
  let changes = 0;
  for (let i = 1; i < alnum.length; i++) if (cls(alnum[i]) !== cls(alnum[i - 1])) changes++;
  const rate = changes / Math.max(1, alnum.length - 1);
  // Letters in runs of 4 or more lower-case letters: words (`feature/AddLoginPage`), not noise.
  const wordy = (alnum.match(/[a-z]{4,}/g) ?? []).join("").length / alnum.length;
  if (wordy >= 0.5) return false;
  const h = shannonEntropy(rest);
  if (lower && upper && digit) return h >= 3.3 && rate >= 0.3;
  if (digit && (lower || upper) && alnum.length >= 32) return h >= 4 && rate >= 0.35;
  return false;
}

/** Whether a word is a file path (absolute, home- or dot-relative): never tested for entropy. */
function isPath(word: string): boolean {
  return /^(\/|~|\.\.?\/)/.test(word);
}

/** The URLs in `value` (`scheme://…` up to white space or a quote). */
function urls(value: string): URL[] {
  const out: URL[] = [];
  for (const m of value.matchAll(/[a-z][a-z0-9+.-]*:\/\/[^\s'"<>,;]+/gi)) {
    try {
      out.push(new URL(m[0]));
    } catch { /* not a URL */ }
  }
  return out;
}

/**
 * `user:password@host` without a scheme (scp, rsync, a DSN, `mysql://`-less tools): group 1 the
 * user, 2 the password, 3 the host — an IPv4 address, `localhost`, or a dotted name ending in
 * letters. Not a package specifier (`npm:lodash@4.17.21`, `jsr:@std/path@1`: see
 * {@link SPEC_SCHEMES}; a version is no host).
 */
const SCP_USERINFO =
  /(?<![A-Za-z0-9_.+\/:@-])([A-Za-z0-9_.+-]+):([^\s@/:'"]{3,})@(\d{1,3}(?:\.\d{1,3}){3}|localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?![A-Za-z0-9-]|\.[A-Za-z0-9])/g;
/** Words before a `:` that name a package or a file, not a user (`npm:pkg@1.2.3`). */
const SPEC_SCHEMES =
  /^(npm|jsr|node|git|github|gitlab|bitbucket|file|link|workspace|patch|portal|catalog|http|https|data|mailto|urn)$/i;

/**
 * Options and assignments that carry a password (group 2 the value where there is one): a
 * mysql/mariadb `-pSECRET` (the password glued to `-p`), a Java system property
 * `-Ddb.password=…` / `-DapiToken=…`, npm's `_authToken=` / `_auth=` / `_password=`, a `.netrc`
 * `machine H … password P` (also across lines), a key ending in `token`, `secret` or `password`
 * assigned with `=` or `:` (`npmAuthToken: …`, `db_password = …`).
 */
const PASSWORD_OPTIONS: readonly [RegExp, string][] = [
  [
    /\b(mysql\w*|mariadb\w*)\b[^\n|;&]*\s-p(?![\s=])([^\s'"]{3,}|'[^'\n]+'|"[^"\n]+")/,
    "its value is a mysql password option",
  ],
  [
    /(^|\s)-D[\w.-]*(password|passwd|pwd|secret|token|apikey|api[_.-]key)\w*\s*=\s*(?![$%{])\S/i,
    "its value is a Java property holding a password",
  ],
  [
    /(^|[^A-Za-z0-9])_(auth|authToken|password)\s*[=:]\s*["']?[^\s"'$]{4,}/,
    "its value is an npm auth setting",
  ],
  [
    /(^|\s)machine\s+\S+(\s+(login|account|port)\s+\S+)*\s+password\s+\S+/i,
    "its value is a netrc entry with a password",
  ],
  [
    /<([\w-]+:)?([\w-]*(password|passwd|passphrase|secret|token)|api-?key)>\s*(?![$%{])[^<\s]{4,}/i,
    "its value is an XML element holding a password",
  ],
  [
    /(^|[^A-Za-z0-9])[\w.-]*(token|secret|password)["']?\s*[=:]\s*["']?(?![$%{<]|\/|true\b|false\b|null\b|none\b)[^\s"',;]{8,}/i,
    "its value is a credential assignment",
  ],
];

/**
 * Why `value` holds a credential (see the module doc), or undefined when it does not.
 * `opts.entropy: false` (configuration files, ./secret_lines.ts): only the shapes, no test for
 * random-looking words (certificates, signing keys and hashes in `/etc` are not credentials).
 */
export function credentialValue(
  value: string,
  opts: { entropy?: boolean } = {},
): string | undefined {
  if (!value || value.length < 6) return undefined;
  for (const m of value.matchAll(URL_USERINFO)) {
    if (!SSH_SCHEMES.test(m[1]) || m[2].includes(":")) return "its value is a URL with user info";
  }
  for (const m of value.matchAll(SCP_USERINFO)) {
    if (!SPEC_SCHEMES.test(m[1])) return "its value is a `user:password@host`";
  }
  const plain = opts.entropy === false;
  // A value that is an expansion or a placeholder is no password (a path neither, in a config).
  const pwValue = plain ? "(?![$%{<(]|\\/)[^;\\s]" : "(?![$%{<(])[^;\\s]";
  if (
    new RegExp(
      `(^|[;\\s,&?-])(password|pwd|passwd|accountkey|sharedaccesskey)\\s*=\\s*${pwValue}`,
      "i",
    )
      .test(value)
  ) {
    return "its value is a connection string with a password";
  }
  if (
    /(^|[;\s,&?-])(token|secret|api[_-]?key|access[_-]?key|client[_-]?secret)\s*=\s*(?![$%{<])[^;\s&]{8,}/i
      .test(value) &&
    !(plain && /(^|[;\s,&?-])(token|secret)\s*=\s*(pass|env|file|fd):/i.test(value))
  ) {
    return "its value is a `token=…` assignment";
  }
  for (const [re, why] of PASSWORD_OPTIONS) if (re.test(value)) return why;
  const key = secretAssignment(value) ?? optionCredential(value);
  if (key) return key;
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(value)) return "its value is a private key";
  if (/(^|[^A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\./.test(value)) {
    return "its value is a JSON Web Token";
  }
  if (
    /(^|[^A-Za-z0-9-])(proxy-)?authorization\s*[:=]\s*\S|(^|[^A-Za-z0-9-])(x-api-key|api-key|x-auth-token|x-access-token|private-token|job-token|x-vault-token|cookie|set-cookie)\s*:\s*\S/i
      .test(value)
  ) return "its value is an HTTP authentication header";
  const bearer = /(^|[^A-Za-z0-9])bearer\s+([A-Za-z0-9._~+/-]{16,}=*)/i.exec(value)?.[2];
  if (bearer && /[0-9A-Z._~+/-]/.test(bearer)) return "its value is a bearer token";
  for (const m of value.matchAll(/(^|[^A-Za-z0-9])basic\s+([A-Za-z0-9+/]{6,}={0,2})/gi)) {
    try {
      if (atob(m[2]).includes(":")) return "its value is HTTP basic credentials";
    } catch { /* not base64 */ }
  }
  if (WEBHOOK.test(value)) return "its value is a webhook URL";
  if (PREFIXED.test(value)) return "its value looks like an access token";
  if (plain) return undefined;
  if (mnemonicShape(value)) return "its value looks like a wallet's recovery phrase (BIP-39)";
  for (const u of urls(value)) {
    for (const [k, v] of u.searchParams) {
      if (v.length >= 8 && SECRET_PARAM.test(k)) {
        return "its value is a URL with a secret parameter";
      }
    }
    const segs = u.pathname.split("/").map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
    if (segs.some(highEntropyToken)) return "its value is a URL with a secret-looking path";
  }
  for (const word of value.split(/[\s,;:'"|&()<>[\]{}*?!#$%^`\\@]+/)) {
    if (!word || isPath(word)) continue;
    // `KEY=VALUE` inside a value: each side on its own (trailing `=` is base64 padding).
    for (const part of word.split(/=(?=[^=])/)) {
      if (!isPath(part) && highEntropyToken(part)) return "its value looks like a random token";
    }
  }
  return undefined;
}

/**
 * A BIP-39 recovery phrase's shape (tenth attacker pass, `WALLET_MNEMONIC=abandon ability …`):
 * 12, 15, 18, 21 or 24 lower-case words of 3 to 8 letters (the word list's lengths), one blank
 * apart, at least 8 of them different. A sentence of that shape in a variable is dropped too.
 */
function mnemonicShape(value: string): boolean {
  const words = value.trim().split(/ +/);
  if (![12, 15, 18, 21, 24].includes(words.length)) return false;
  return words.every((w) => /^[a-z]{3,8}$/.test(w)) && new Set(words).size >= 8;
}
