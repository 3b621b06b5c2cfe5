/**
 * Configuration: where Coyote keeps its files, the `config.yaml` schema, and how the
 * provider settings are resolved from flags, environment and config.
 *
 * - Config dir: `$COYOTE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/coyote`, else `~/.config/coyote`
 *   (XDG Base Directory spec); data dir likewise with `$COYOTE_DATA_DIR` / `$XDG_DATA_HOME`
 *   / `~/.local/share/coyote`.
 * - `config.yaml` keys are snake_case (except `mcpServers`, MCP's own name); unknown keys
 *   are errors. Validated with zod; `yaml` and `zod` are loaded only when the file exists.
 * - Provider precedence: flag > env (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `COYOTE_MODEL`)
 *   > config (`model`, then `provider.*`) > default (`https://api.openai.com/v1` when only
 *   a key is given).
 *
 * Example `config.yaml`:
 * ```yaml
 * model: qwen3-coder
 * provider:
 *   base_url: http://localhost:11434/v1
 *   timeout_ms: 120000
 * permissions:
 *   allow: ["Execute(npm test)"]
 *   deny: ["Execute(rm *)"]
 * sandbox: required        # or {mode: auto, auto_allow: false}
 * ```
 * @module
 */
import { ConfigError } from "../protocol/errors.ts";
import { closest } from "../util/text.ts";
import {
  HOOK_EVENTS,
  type HookEventName,
  type HookGroup,
  hookIssues,
  type LifecycleHooks,
} from "./hooks.ts";
import type { ProviderConfig } from "../provider/types.ts";

/**
 * The `web_search:` section of config.yaml: the backend of the `web_search` tool
 * (plugins/web/search.ts, which has the details).
 */
export interface WebSearchSettings {
  backend: "searxng" | "brave" | "tavily";
  /** SearXNG: the instance's base URL (required). Brave, Tavily: the endpoint (default their API). */
  url?: string;
  /** The environment variable holding the API key (default `BRAVE_API_KEY` / `TAVILY_API_KEY`). */
  api_key_env?: string;
  /** Results per search when the call names none (default 5, at most 20). */
  max_results?: number;
}

/** The `provider:` section of `config.yaml`. */
export interface ProviderSection {
  /** OpenAI-compatible base URL, e.g. `http://localhost:11434/v1`. */
  base_url?: string;
  api_key?: string;
  model?: string;
  /** Response/stream idle timeout in ms (positive integer). Default 600000. */
  timeout_ms?: number;
  /** Retries for 429/5xx/connection failures (0..10). Default 4. */
  max_retries?: number;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /** Send `stream_options` (usage in the stream); false for servers that reject it. Default true. */
  stream_options?: boolean;
  /** Run tool calls a model wrote as text when the server sent no `tool_calls`. Default true. */
  text_tool_calls?: boolean;
}

/** One entry of the `models:` capability table (core/config/models.ts). */
export interface ModelSpec {
  /** Context window in tokens. */
  context_window?: number;
  /** Accepts image input. Unset: unknown (not advertised over ACP). */
  images?: boolean;
  /** Tokens reserved for the answer. */
  max_output_tokens?: number;
  /** USD per million tokens. */
  price?: { input: number; output: number; cached_input?: number };
  /**
   * Parse tool calls this model writes as text into calls (wins over
   * `provider.text_tool_calls` for requests to this model; core/provider/text_tool_calls.ts).
   */
  text_tool_calls?: boolean;
}

/** The validated `config.yaml`. */
export interface CoyoteConfig {
  /** Model name (wins over `provider.model`). */
  model?: string;
  provider?: ProviderSection;
  /** Guard rules (see docs for the syntax), merged with `--allow`/`--deny` flags. */
  permissions?: { allow?: string[]; ask?: string[]; deny?: string[] };
  /** Plugin module paths or URLs. */
  plugins?: string[];
  /** Turn limit (positive integer). */
  max_turns?: number;
  /** The permission mode (core/policy/mode.ts, docs/modes.md); `--mode` wins. */
  mode?: "plan" | "default" | "accept-edits" | "auto";
  /**
   * Budget of one run (issue 18, docs/modes.md): `usd` (cost at the `models:` prices) and `tokens`
   * (total tokens); reaching either ends the turn with stop reason `max_budget`.
   */
  budget?: { usd?: number; tokens?: number };
  /**
   * Checkpoints of the workspace before each turn's first change (issue 18, docs/modes.md):
   * `enabled` (default true), `max_files` (default 100000), `max_mb` (new or changed content one
   * checkpoint may store, default 512); past a limit the checkpoint is skipped with a warning.
   */
  checkpoints?: { enabled?: boolean; max_files?: number; max_mb?: number };
  /** The coordinator's gates (core/supervisor/gates.ts, docs/subagents.md "Gates"). */
  gates?: GatesConfig;
  /** Default agent name. */
  agent?: string;
  /** MCP servers by name (shape validated by the MCP client, core/extensions/mcp/). */
  mcpServers?: Record<string, unknown>;
  /** Extra instruction files added to the system prompt. */
  instructions?: string[];
  /** The `web_search` tool's backend (plugins/web/search.ts; docs/web.md). */
  web_search?: WebSearchSettings;
  /**
   * The OS sandbox of shell commands (core/policy/sandbox/): a mode string or `{mode, auto_allow}`;
   * default `{mode: auto, auto_allow: true}`.
   */
  sandbox?: "auto" | "required" | "off" | {
    mode?: "auto" | "required" | "off";
    auto_allow?: boolean;
    /** Per-command limits (core/policy/sandbox/limits.ts); default 512 processes, 2048 MB. */
    limits?: { processes?: number; memory_mb?: number };
    /** More code other tools run later, protected like `.husky/` (core/policy/sandbox/protected.ts). */
    protected_paths?: string[];
  };
  /** Model capabilities by model name (core/config/models.ts). */
  models?: Record<string, ModelSpec>;
  /**
   * Hooks (docs/hooks.md): Claude Code's lifecycle events (`PreToolUse: [{matcher, hooks}]`, …,
   * core/config/hooks.ts) and Coyote's older `stop` commands (core/extensions/hooks/stop.ts).
   */
  hooks?: LifecycleHooks & {
    stop?: { command: string; timeout_ms?: number }[];
    /** Blocks honoured per turn (default 3). */
    max_stop_blocks?: number;
  };
  // Workspace trust (core/config/trust.ts). User config only; refused in project config.
  /** Folders (and everything below them) trusted without asking; `~` = home. */
  trusted_workspaces?: string[];
}

/** Default `provider.timeout_ms`. */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Default `provider.max_retries`. */
export const DEFAULT_MAX_RETRIES = 4;
/** Base URL used when only an API key is configured. */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Sent as the key to servers that need none (local servers). */
export const PLACEHOLDER_API_KEY = "coyote-no-key";

/** Anything with `get` like `Deno.env`. */
export interface EnvLike {
  get(name: string): string | undefined;
}

/** Config and data directories (absolute when HOME/XDG vars are absolute). */
export function resolveDirs(env: EnvLike = Deno.env): { configDir: string; dataDir: string } {
  const get = (k: string) => {
    const v = env.get(k);
    return v && v.trim() ? v : undefined;
  };
  const home = get("HOME") ?? get("USERPROFILE") ?? ".";
  const configDir = get("COYOTE_CONFIG_DIR") ??
    join(get("XDG_CONFIG_HOME") ?? join(home, ".config"), "coyote");
  const dataDir = get("COYOTE_DATA_DIR") ??
    join(get("XDG_DATA_HOME") ?? join(home, ".local", "share"), "coyote");
  return { configDir, dataDir };
}

function join(...parts: string[]): string {
  return parts.map((p, i) => (i === 0 ? p.replace(/\/+$/, "") : p.replace(/^\/+|\/+$/g, "")))
    .filter((p, i) => p || i === 0).join("/") || "/";
}

/** Where parsed config files are cached (./parse_cache.ts): `<data dir>/config-cache`. */
export function configCacheDir(dataDir: string): string {
  return join(dataDir, "config-cache");
}

/**
 * Reads and validates `<configDir>/config.yaml`. A missing file gives `{ config: {} }`.
 * @throws ConfigError naming the file and the key path (or the line, for YAML syntax errors).
 */
export async function loadConfig(
  configDir: string,
  opts: { cacheDir?: string } = {},
): Promise<{ config: CoyoteConfig; path?: string }> {
  const path = join(configDir, "config.yaml");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { config: {} };
    if (e instanceof Deno.errors.IsADirectory) {
      throw new ConfigError(`config error in ${path}: is a directory, expected a YAML file`);
    }
    throw new ConfigError(`config error in ${path}: cannot read: ${(e as Error).message}`);
  }
  return { config: await parseConfig(text, path, opts), path };
}

/**
 * Parses and validates config text; `path` is used in messages. With `cacheDir` (the data dir's
 * `config-cache`), a text that parsed before is taken from the cache without loading `yaml` or
 * `zod` (./parse_cache.ts); errors are never cached.
 * @throws ConfigError
 */
export async function parseConfig(
  text: string,
  path: string,
  opts: { cacheDir?: string } = {},
): Promise<CoyoteConfig> {
  if (opts.cacheDir) {
    const { cachedParse } = await import("./parse_cache.ts");
    return await cachedParse(opts.cacheDir, path, text, () => parseConfigText(text, path));
  }
  return await parseConfigText(text, path);
}

async function parseConfigText(text: string, path: string): Promise<CoyoteConfig> {
  const YAML = await import("yaml");
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}: ` : "";
    const msg = e.message.split("\n")[0].replace(/\s*at line \d+, column \d+:?\s*$/, "");
    throw new ConfigError(`config error in ${path}: ${where}YAML syntax error: ${msg}`);
  }
  const data = doc.toJS();
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`config error in ${path}: expected a mapping of keys at the top level`);
  }
  const schema = await configSchema();
  const result = schema.safeParse(data);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => formatIssue(issue, schema));
    throw new ConfigError(`config error in ${path}: ${lines.join("; ")}`);
  }
  return result.data as CoyoteConfig;
}

/** A zod issue, as much of it as {@link formatIssue} reads. */
export interface IssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/**
 * One zod issue as `key.path: message`; unknown keys get a did-you-mean from the keys `schema`
 * (a zod object) allows at that path.
 */
export function formatIssue(issue: IssueLike, schema: unknown): string {
  const keyPath = (segs: PropertyKey[]) =>
    segs.map((s, i) => typeof s === "number" ? `[${s}]` : (i ? "." : "") + String(s)).join("");
  if (issue.code === "unrecognized_keys" && issue.keys?.length) {
    const known = knownKeys(schema, issue.path);
    return issue.keys.map((k) => {
      const near = closest(k, known);
      return `${keyPath([...issue.path, k])}: unknown key${
        near ? ` (did you mean \`${near}\`?)` : ""
      }`;
    }).join("; ");
  }
  return `${issue.path.length ? keyPath(issue.path) : "(top level)"}: ${issue.message}`;
}

/** The keys a (zod) object schema allows at `path` (optional wrappers unwrapped); [] if none. */
function knownKeys(schema: unknown, path: PropertyKey[]): string[] {
  type Node =
    | {
      shape?: Record<string, unknown>;
      unwrap?: () => unknown;
      element?: unknown;
      valueType?: unknown;
    }
    | undefined;
  const bare = (s: Node): Node => {
    while (s && !s.shape && typeof s.unwrap === "function") s = s.unwrap() as Node;
    return s;
  };
  let s = bare(schema as Node);
  for (const seg of path) {
    // A list's items (`variables[0].defualt`) lead to the element schema (zod's array `unwrap`
    // may already have stepped into it); records (`models:`, `mcpServers:`) to the value schema.
    s = bare(
      (typeof seg === "number" ? s?.element ?? s : s?.shape?.[String(seg)] ?? s?.valueType) as Node,
    );
  }
  return s?.shape ? Object.keys(s.shape) : [];
}

let schemaPromise: Promise<{ safeParse(v: unknown): SafeParse }> | undefined;
type SafeParse =
  | { success: true; data: unknown }
  | { success: false; error: { issues: IssueLike[] } };

function configSchema() {
  schemaPromise ??= import("zod").then(({ z }) => {
    const str = (what = "a string") => z.string({ error: `expected ${what}` });
    const strList = () => z.array(str(), { error: "expected a list of strings" });
    const posInt = () =>
      z.number({ error: "expected a positive integer" }).int({
        error: "expected a positive integer",
      }).positive({ error: "expected a positive integer" });
    // A `sandbox.limits` value: a whole number, 0 (no limit) or at least `min`.
    const limit = (unit: string, min: number) =>
      z.number({ error: `expected a whole number${unit} (0: no limit)` }).int({
        error: `expected a whole number${unit} (0: no limit)`,
      }).refine((v) => v === 0 || v >= min, {
        error: min ? `expected 0 (no limit) or at least ${min}` : "expected 0 (no limit) or more",
      }).optional();
    const provider = z.strictObject({
      base_url: z.url({
        protocol: /^https?$/,
        error: "expected an http(s) URL, e.g. http://localhost:11434/v1",
      }).optional(),
      api_key: str().optional(),
      model: str().optional(),
      timeout_ms: posInt().optional(),
      max_retries: z.number({ error: "expected an integer from 0 to 10" }).int({
        error: "expected an integer from 0 to 10",
      }).min(0, { error: "expected an integer from 0 to 10" }).max(10, {
        error: "expected an integer from 0 to 10",
      }).optional(),
      headers: z.record(str(), str("a string header value"), {
        error: "expected a mapping of header names to strings",
      }).optional(),
      stream_options: z.boolean({ error: "expected true or false" }).optional(),
      text_tool_calls: z.boolean({ error: "expected true or false" }).optional(),
    }, { error: "expected a mapping" });
    // `models:` capability table (core/config/models.ts).
    const usd = () => z.number({ error: "expected a price in USD per million tokens" }).min(0);
    const modelSpec = z.strictObject({
      context_window: posInt().optional(),
      images: z.boolean({ error: "expected true or false" }).optional(),
      max_output_tokens: posInt().optional(),
      text_tool_calls: z.boolean({ error: "expected true or false" }).optional(),
      price: z.strictObject({
        input: usd(),
        output: usd(),
        cached_input: usd().optional(),
      }, { error: "expected a mapping with input/output (USD per million tokens)" }).optional(),
    }, {
      error:
        "expected a mapping (context_window, images, max_output_tokens, price, text_tool_calls)",
    });
    const schema = z.strictObject({
      model: str().optional(),
      provider: provider.optional(),
      permissions: z.strictObject({
        allow: strList().optional(),
        ask: strList().optional(),
        deny: strList().optional(),
      }, { error: "expected a mapping with allow/ask/deny lists" }).optional(),
      plugins: strList().optional(),
      max_turns: posInt().optional(),
      mode: z.enum(["plan", "default", "accept-edits", "auto"], {
        error: "expected plan, default, accept-edits or auto",
      }).optional(),
      budget: z.strictObject({
        usd: z.number({ error: "expected a positive number (USD)" }).positive({
          error: "expected a positive number (USD)",
        }).optional(),
        tokens: posInt().optional(),
      }, { error: "expected a mapping with usd and/or tokens" }).optional(),
      checkpoints: z.strictObject({
        enabled: z.boolean({ error: "expected true or false" }).optional(),
        max_files: posInt().optional(),
        max_mb: posInt().optional(),
      }, { error: "expected a mapping with enabled, max_files and/or max_mb" }).optional(),
      gates: z.strictObject({
        coordinators: strList().optional(),
        implementation_agents: strList().optional(),
        posture: z.enum(["prototype", "standard", "hardened"], {
          error: "expected prototype, standard or hardened",
        }).optional(),
        allow_divergent_completion: z.boolean({ error: "expected true or false" }).optional(),
        allow_insecure_completion: z.boolean({ error: "expected true or false" }).optional(),
        allow_unreviewed_completion: z.boolean({ error: "expected true or false" }).optional(),
        allow_conflicted_completion: z.boolean({ error: "expected true or false" }).optional(),
        broad_scope: z.strictObject({
          coders: posInt().optional(),
          files: posInt().optional(),
          boundaries: strList().optional(),
        }, { error: "expected a mapping with coders, files and/or boundaries" }).optional(),
        attack_surface: strList().optional(),
        spec_files: strList().optional(),
      }, {
        error:
          "expected a mapping {posture, allow_divergent_completion, allow_insecure_completion, allow_unreviewed_completion, allow_conflicted_completion, broad_scope, attack_surface, spec_files, coordinators, implementation_agents}",
      }).optional(),
      agent: str().optional(),
      mcpServers: z.record(
        str(),
        z.record(str(), z.unknown(), { error: "expected a mapping (an MCP server definition)" }),
        { error: "expected a mapping of server names to definitions" },
      ).optional(),
      instructions: strList().optional(),
      web_search: z.strictObject({
        backend: z.enum(["searxng", "brave", "tavily"], {
          error: "expected searxng, brave or tavily",
        }),
        url: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }).optional(),
        api_key_env: str("the name of an environment variable").optional(),
        max_results: posInt().max(20, { error: "expected at most 20" }).optional(),
      }, { error: "expected a mapping {backend: searxng|brave|tavily, url?, api_key_env?}" })
        .refine((v) => v.backend !== "searxng" || v.url !== undefined, {
          path: ["url"],
          error: "SearXNG needs the instance URL, e.g. url: http://localhost:8888",
        }).optional(),
      sandbox: z.union([
        z.enum(["auto", "required", "off"]),
        z.strictObject({
          mode: z.enum(["auto", "required", "off"]).optional(),
          auto_allow: z.boolean().optional(),
          // core/policy/sandbox/limits.ts; settings.ts checks the same for other callers.
          limits: z.strictObject({
            processes: limit("", 16),
            memory_mb: limit(" of MB", 64),
            tmpfs_mb: limit(" of MB", 16),
            open_files: limit("", 64),
            file_mb: limit(" of MB", 0),
          }, {
            error:
              "expected a mapping {processes: N, memory_mb: N, tmpfs_mb: N, open_files: N, file_mb: N}",
          }).optional(),
          protected_paths: z.array(
            str().refine((p) => /^[^/]+(\/[^/]+)?$/.test(p.trim()) && !p.includes("**"), {
              error: "expected a name or folder/name (`*` within a name; it matches at any depth)",
            }),
            { error: "expected a list of names or folder/name" },
          ).optional(),
        }),
      ], {
        error:
          "expected auto, required or off, or a mapping {mode: auto|required|off, auto_allow: true|false, limits: {processes, memory_mb}, protected_paths: [names]}",
      }).optional(),
      models: z.record(str(), modelSpec, { error: "expected a mapping of model names" })
        .optional(),
      hooks: z.strictObject({
        stop: z.array(
          z.strictObject({ command: str("a shell command"), timeout_ms: posInt().optional() }, {
            error: "expected a mapping {command, timeout_ms?}",
          }),
          { error: "expected a list of {command} mappings" },
        ).optional(),
        max_stop_blocks: posInt().optional(),
        // Claude Code's lifecycle events (core/config/hooks.ts checks each group below).
        ...Object.fromEntries(HOOK_EVENTS.map((e) => [
          e,
          z.custom<HookGroup[]>((v) => Array.isArray(v), {
            error: "expected a list of {matcher, hooks} mappings",
          }).optional(),
        ])) as unknown as Record<
          HookEventName,
          import("zod").ZodOptional<import("zod").ZodType<HookGroup[]>>
        >,
      }, { error: "expected a mapping of hook events (PreToolUse: [{matcher, hooks}], …)" })
        .superRefine((v, ctx) => {
          for (const i of hookIssues(v as Record<string, unknown>)) {
            ctx.addIssue({ code: "custom", path: i.path, message: i.message });
          }
        }).optional(),
      // Workspace trust (core/config/trust.ts).
      trusted_workspaces: strList().optional(),
    }, { error: "expected a mapping" });
    // Compile-time check that the schema and the hand-written type agree.
    const _typed: import("zod").ZodType<CoyoteConfig> = schema;
    return schema as unknown as { safeParse(v: unknown): SafeParse };
  });
  return schemaPromise;
}

/** Provider-related flags (`-m/--model`, `--base-url`, `--api-key`). */
export interface ProviderFlags {
  model?: string;
  baseURL?: string;
  apiKey?: string;
}

/** `textToolCallModels` of the provider config: the models whose entry sets `text_tool_calls`. */
function textToolCallModels(
  models: Record<string, ModelSpec> | undefined,
): { textToolCallModels?: Record<string, boolean> } {
  const set = Object.entries(models ?? {}).filter(([, m]) =>
    typeof m.text_tool_calls === "boolean"
  );
  return set.length
    ? { textToolCallModels: Object.fromEntries(set.map(([n, m]) => [n, m.text_tool_calls!])) }
    : {};
}

/**
 * Resolves the provider connection: flag > env > config > default.
 * An API key may be absent when a base URL is set (local servers): a placeholder is sent.
 * @throws ConfigError when there is no provider or no model; never includes secrets.
 */
export function resolveProvider(opts: {
  flags: ProviderFlags;
  env: EnvLike;
  config: CoyoteConfig;
  /** For messages: where the config file is (default: `config.yaml` in the config dir from `env`). */
  configPath?: string;
}): ProviderConfig {
  const { flags, env, config } = opts;
  const e = (k: string) => {
    const v = env.get(k);
    return v && v.trim() ? v.trim() : undefined;
  };
  const p = config.provider ?? {};
  const nonEmpty = (v: string | undefined) => (v && v.trim() ? v.trim() : undefined);
  const baseURL = nonEmpty(flags.baseURL) ?? e("OPENAI_BASE_URL") ?? nonEmpty(p.base_url);
  const apiKey = nonEmpty(flags.apiKey) ?? e("OPENAI_API_KEY") ?? nonEmpty(p.api_key);
  const model = nonEmpty(flags.model) ?? e("COYOTE_MODEL") ?? nonEmpty(config.model) ??
    nonEmpty(p.model);
  const file = opts.configPath ?? join(resolveDirs(env).configDir, "config.yaml");

  if (!baseURL && !apiKey) {
    throw new ConfigError(
      "no model provider configured. Set one of:\n" +
        "  - environment: OPENAI_BASE_URL (any OpenAI-compatible server, e.g. http://localhost:11434/v1)" +
        " and/or OPENAI_API_KEY, plus COYOTE_MODEL\n" +
        `  - config file ${file}: provider: { base_url: ..., api_key: ... } and model: ...\n` +
        "  - flags: --base-url URL --api-key KEY -m MODEL",
    );
  }
  if (baseURL) {
    let ok = false;
    try {
      const u = new URL(baseURL);
      ok = u.protocol === "http:" || u.protocol === "https:";
    } catch { /* not a URL */ }
    if (!ok) {
      throw new ConfigError(
        `the provider base URL is not an http(s) URL: ${JSON.stringify(baseURL)} ` +
          "(expected e.g. http://localhost:11434/v1)",
      );
    }
  }
  if (!model) {
    throw new ConfigError(
      "no model chosen. Pass -m/--model NAME, set COYOTE_MODEL, or put `model: NAME` in " + file,
    );
  }
  return {
    baseURL: baseURL ?? DEFAULT_BASE_URL,
    apiKey: apiKey ?? PLACEHOLDER_API_KEY,
    model,
    timeoutMs: p.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    maxRetries: p.max_retries ?? DEFAULT_MAX_RETRIES,
    ...(p.headers ? { headers: { ...p.headers } } : {}),
    ...(p.stream_options === false ? { streamOptions: false } : {}),
    ...(p.text_tool_calls === false ? { textToolCalls: false } : {}),
    ...textToolCallModels(config.models),
  };
}

/** Security posture (`gates.posture`): what severity blocks a change. */
export type Posture = "prototype" | "standard" | "hardened";

/**
 * The `gates:` setting (core/supervisor/gates.ts, docs/subagents.md "Gates"); every field
 * optional.
 */
export interface GatesConfig {
  /** Agents the gates apply to (default `[sisyphus]`). */
  coordinators?: string[];
  /** Agents whose spawn a PLAN_REVIEW REJECT blocks (default `[coder, step-runner]`). */
  implementation_agents?: string[];
  /** Default `standard`. */
  posture?: Posture;
  /** true: a DIVERGES/UNMET verdict does not hold the coordinator's end of turn (recorded). */
  allow_divergent_completion?: boolean;
  /**
   * true: a security-reviewer FAIL or a Critical finding does not hold the coordinator's end of
   * turn (recorded as an override).
   */
  allow_insecure_completion?: boolean;
  /** true: required reviewers that have not run do not hold the coordinator's end of turn (recorded). */
  allow_unreviewed_completion?: boolean;
  /** true: a child's worktree patch that conflicted and is not resolved does not hold the end (recorded). */
  allow_conflicted_completion?: boolean;
  /** Broad scope: this many coders in a request (default 2) or changed files (default 5), or a boundary path. */
  broad_scope?: { coders?: number; files?: number; boundaries?: string[] };
  /** Paths (globs) whose change is an attack surface. */
  attack_surface?: string[];
  /** Files or folders (relative to the workspace) whose presence means the work has a spec. */
  spec_files?: string[];
}
