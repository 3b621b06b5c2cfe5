/**
 * Keeps every known secret out of everything a tool hands back: the provider API key, the
 * values of environment variables whose names look secret (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
 * `*PASSWORD*`; {@link secretName}) and the secret-looking values of the config file (provider
 * `api_key`, header values, MCP servers' `env` and `headers`) — see {@link knownSecretCandidates}
 * (issue 11 §2: redact every known secret value, not only the provider key). A tool result becomes a model
 * message, an ACP `tool_call_update` (stdout in stream-json / ACP) and a transcript line, so a
 * command that prints a file holding the key (`cat ~/.config/coyote/config.yaml`, a workspace
 * `.env`) would otherwise copy it into all three. Every occurrence of the key in a result's
 * content, diffs, raw output, progress and log messages is replaced by `[redacted]`, the same marker
 * core/provider/provider.ts uses for provider error messages. (Issue 2 / project rule: secrets are never
 * in logs or transcripts.) `execute_command` also keeps the key and secret-looking variables out of
 * its children's environment (core/policy/sandbox/env.ts).
 * @module
 */
import type { ToolContext, ToolResult } from "../../sdk/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import { isBuiltinInput } from "./lazy.ts";
import { credentialValue } from "./secret_value.ts";
import { secretKey } from "./secret_keys.ts";

/** The replacement text. */
export const REDACTED = "[redacted]";

/**
 * Shortest value treated as a secret (characters). Placeholder keys of local servers (`ollama`,
 * `lm-studio`, `EMPTY`) are shorter and are ordinary words in tool output; real keys are longer.
 */
export const MIN_SECRET_LENGTH = 12;

/** The values worth hiding among `candidates` (trimmed, long enough, de-duplicated). */
export function secretValues(candidates: (string | undefined)[]): string[] {
  const out = new Set<string>();
  for (const c of candidates) {
    const v = c?.trim();
    if (v && v.length >= MIN_SECRET_LENGTH) out.add(v);
  }
  return [...out];
}

/**
 * Variable names that look like they hold a secret: `*TOKEN*`, `*SECRET*`, `*KEY*`,
 * `*PASSWORD*`, `*PASSWD*`, `*PASSPHRASE*`, `*CREDENTIAL*`, `*CREDS*`, `*PRIVATE*`, `*COOKIE*`,
 * `*WEBHOOK*` (any case), and `PWD`, `PASS`, `PAT`, `JWT`, `TKN`, `DSN` as a whole
 * `_`/`-`/`.`-separated part (`MYSQL_PWD`, `GH_PAT`, `SENTRY_DSN`; not `PWD`/`OLDPWD`, the
 * working directories), and any name the key rule of ./secret_keys.ts `secretKey` calls a
 * secret (`SSHPASS`, `SMTP_PASSCODE`, `WALLET_MNEMONIC`, `TOTP_SEED`). The guard asks before a
 * command expands one (`echo $GITHUB_TOKEN`); their values are redacted from tool results.
 */
export function secretName(name: string): boolean {
  return (/TOKEN|SECRET|KEY|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|CREDS|PRIVATE|COOKIE|WEBHOOK|(^|[_.-])(PWD|PASS|PAT|JWT|TKN|DSN)($|[_.-])/i
    .test(name) || secretKey(name) === "strong") && !/^(PWD|OLDPWD)$/i.test(name);
}

/**
 * Every value Coyote knows to be secret, as candidates for {@link secretValues}: the values of
 * `env` variables whose names look secret or whose values hold a credential (./secret_value.ts
 * `credentialValue`, the rule of the environment scrub; whole values only — tool output is not
 * scanned by shape, which would blank hashes and base64 a command prints), and in `config` the provider's `api_key`, every
 * `headers` value (an `Authorization: Bearer …`), and MCP servers' `env` values under a
 * secret-looking name and `headers` values.
 */
export function knownSecretCandidates(
  config: unknown,
  env: Record<string, string> = safeEnv(),
): string[] {
  const out: string[] = [];
  // The value rule of the environment scrub too (./secret_value.ts): `PIP_INDEX_URL=https://TOKEN@…`.
  for (const [k, v] of Object.entries(env)) if (secretName(k) || credentialValue(v)) out.push(v);
  const obj = (v: unknown): Record<string, unknown> | undefined =>
    v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
  const cfg = obj(config);
  const addAll = (rec: unknown, onlySecretNames: boolean) => {
    for (const [k, v] of Object.entries(obj(rec) ?? {})) {
      if (typeof v !== "string") continue;
      if (!onlySecretNames || secretName(k)) {
        out.push(v);
        // `Bearer <token>`: the token alone may be printed too.
        const m = /^\s*(?:Bearer|Basic|token)\s+(\S+)\s*$/i.exec(v);
        if (m) out.push(m[1]);
      }
    }
  };
  const provider = obj(cfg?.provider);
  if (typeof provider?.api_key === "string") out.push(provider.api_key);
  addAll(provider?.headers, false);
  for (const server of Object.values(obj(cfg?.mcpServers) ?? {})) {
    const s = obj(server);
    addAll(s?.env, true);
    addAll(s?.headers, false);
  }
  return out;
}

function safeEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}

/**
 * A redactor whose secrets are computed at its first use (`values` is called once): `active`
 * is false when there is none, so callers can skip serialising what they would redact.
 */
export interface Redactor {
  (text: string): string;
  readonly active: boolean;
}

/** {@link makeRedactor} over `values()`, called at the first redaction or `active` read. */
export function lazyRedactor(values: () => string[]): Redactor {
  let r: ((t: string) => string) | undefined;
  let n = 0;
  const make = () => {
    const v = values();
    n = v.length;
    return makeRedactor(v);
  };
  const f = ((t: string) => (r ??= make())(t)) as Redactor;
  Object.defineProperty(f, "active", {
    get: () => {
      r ??= make();
      return n > 0;
    },
  });
  return f;
}

/** A function replacing every occurrence of each secret with {@link REDACTED}. */
export function makeRedactor(secrets: string[]): (text: string) => string {
  if (!secrets.length) return (t) => t;
  // Longest first, so a secret containing another is replaced whole.
  secrets = [...secrets].sort((a, b) => b.length - a.length);
  return (t) => {
    if (typeof t !== "string") return t;
    for (const s of secrets) if (t.includes(s)) t = t.split(s).join(REDACTED);
    return t;
  };
}

function redactResult(r: ToolResult | string, redact: (t: string) => string): ToolResult | string {
  if (typeof r === "string") return redact(r);
  if (!r || typeof r !== "object") return r;
  const out: ToolResult = { ...r };
  if (typeof r.content === "string") out.content = redact(r.content);
  else if (r.content !== undefined) out.content = redactJson(r.content, redact) as string;
  if (r.diffs) {
    out.diffs = r.diffs.map((d) => ({
      ...d,
      oldText: typeof d.oldText === "string" ? redact(d.oldText) : d.oldText,
      newText: redact(d.newText),
    }));
  }
  if (r.rawOutput !== undefined) out.rawOutput = redactJson(r.rawOutput, redact);
  return out;
}

function redactJson(v: unknown, redact: (t: string) => string): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    return v; // not serialisable: the engine drops it anyway
  }
  if (text === undefined) return v;
  const clean = redact(text);
  return clean === text ? v : JSON.parse(clean);
}

function isPlainSchema(v: unknown): boolean {
  // A built-in tool's generated JSON Schema (./lazy.ts) is our fixed text: left as it is.
  return !!v && typeof v === "object" && !isBuiltinInput(v) &&
    typeof (v as { safeParse?: unknown }).safeParse !== "function";
}

/**
 * `tool` with its description (an MCP server writes it; it goes to the model), results and
 * progress messages passed through `redact`.
 */
export function redactingTool(
  tool: AnyTool,
  redact: ((t: string) => string) | Redactor,
  opts: { ownText?: boolean } = {},
): AnyTool {
  return {
    ...tool,
    // `ownText`: Coyote's own tools, whose description and schema are fixed text (left as they
    // are, so a lazy redactor computes nothing before the first result).
    ...(!opts.ownText && typeof tool.description === "string"
      ? { description: redact(tool.description) }
      : {}),
    // An MCP tool's input is the server's plain JSON Schema (its descriptions reach the model too);
    // first-party tools have generated JSON Schemas (or zod schemas), left as they are.
    ...(!opts.ownText && isPlainSchema(tool.input)
      ? { input: redactJson(tool.input, redact) as AnyTool["input"] }
      : {}),
    run: async (input: unknown, ctx: ToolContext) => {
      const wrapped: ToolContext = {
        ...ctx,
        log: {
          debug: (m) => ctx.log.debug(redact(m)),
          info: (m) => ctx.log.info(redact(m)),
          warn: (m) => ctx.log.warn(redact(m)),
          error: (m) => ctx.log.error(redact(m)),
        },
        progress: (u) =>
          ctx.progress(typeof u?.message === "string" ? { ...u, message: redact(u.message) } : u),
      };
      const result = await tool.run(input, wrapped);
      return "active" in redact && !redact.active ? result : redactResult(result, redact);
    },
  };
}
