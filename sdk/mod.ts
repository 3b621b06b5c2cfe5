/**
 * Coyote plugin SDK — the public, versioned contract between Coyote and the
 * tools, agents and skills that extend it (first-party packs under `plugins/`
 * and third-party plugins alike).
 *
 * A plugin is an ES module whose default export is the value returned by
 * {@link definePlugin}. Third-party plugins run inside a Deno Worker whose
 * permissions are the intersection of what the plugin declares in
 * `permissions` and what the user's policy allows; see `docs/plugins.md`.
 *
 * Compatibility: {@link SDK_VERSION} follows semver. Fields may be added in a
 * minor version; removing or changing the meaning of a field needs a major.
 *
 * This module has no imports at run time, so a bundled plugin stays small and
 * self-contained.
 * @module
 */

/** Semver of this SDK contract. */
export const SDK_VERSION = "1.2.0";

/** A JSON Schema object (draft 2020-12 subset understood by OpenAI tool calling). */
export type JsonSchema = { [key: string]: unknown };

/**
 * The structural part of a zod (v4) schema that Coyote relies on. Any object with
 * `safeParse` is treated as a validator; zod schemas are converted to JSON
 * Schema with `z.toJSONSchema` by the host.
 */
export interface ZodLike<T = unknown> {
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { message: string } };
  /** Present on zod v4 schemas. */
  readonly _zod?: unknown;
  /** Type-level marker used for inference (zod's `_output`). */
  readonly _output?: T;
}

/** Infers the input type of a tool from its schema (zod) or falls back to a record. */
export type InferInput<S> = S extends ZodLike<infer T> ? T : { [key: string]: unknown };

/**
 * What a tool does, as ACP's `ToolKind` (agent-client-protocol, schema `ToolKind`).
 * Frontends use it to pick an icon and to decide how much to show.
 */
export type ToolKind =
  | "read"
  | "edit"
  | "delete"
  | "move"
  | "search"
  | "execute"
  | "think"
  | "fetch"
  | "switch_mode"
  | "other";

/**
 * Permissions a plugin asks for. Nothing declared means nothing granted.
 * Relative paths resolve against the session's workspace (cwd); `~` expands to
 * the home directory. `net` entries are host names with an optional `:port`.
 * `run` entries are program names or absolute paths. `env` entries are
 * variable names.
 */
export interface PluginPermissions {
  read?: string[];
  write?: string[];
  net?: string[];
  run?: string[];
  env?: string[];
}

/** A file location a tool touched, as ACP's `ToolCallLocation` (absolute path, 1-based line). */
export interface ToolLocation {
  path: string;
  line?: number;
}

/** A text diff of one file, as ACP's `Diff` content (absolute path; `oldText` null for new files). */
export interface ToolDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/**
 * What a tool returns. A plain string is shorthand for `{ content: string }`.
 * `content` is what the model sees; `isError` marks a failed call (the model
 * sees the content as an error and the `tool_call` ends `failed`).
 */
export interface ToolResult {
  content: string;
  isError?: boolean;
  /** Diffs shown to the user (ACP `diff` tool-call content). */
  diffs?: ToolDiff[];
  locations?: ToolLocation[];
  /** Structured output for frontends (ACP `rawOutput`); must be JSON-serialisable. */
  rawOutput?: unknown;
  /** The model's full plan/todo list; the engine emits it as an ACP `plan` update. */
  plan?: PlanItem[];
}

/** One plan entry, as ACP's `PlanEntry`. */
export interface PlanItem {
  content: string;
  priority: "high" | "medium" | "low";
  status: "pending" | "in_progress" | "completed";
}

/** A question for the human from the `user__*` tools (see `HostServices.askUser`). */
export interface UserQuestion {
  action: "select" | "confirm" | "input" | "checkbox";
  question: string;
  options?: string[];
  /** Default answer, if any. */
  default?: string | string[] | boolean;
}

/** Progress reported while a tool runs; surfaces as an ACP `tool_call_update`. */
export interface ToolProgress {
  /** Free-form text appended to the tool call's content. */
  message?: string;
  title?: string;
  locations?: ToolLocation[];
}

/** A question for the human, resolved by the frontend (terminal prompt, ACP permission request, or headless denial). */
export interface PermissionQuestion {
  /** Short title, e.g. "Upload build.log to example.com". */
  title: string;
  /** Optional longer explanation. */
  detail?: string;
}

/** Logger that writes to stderr / the event stream, never to stdout. */
export interface ToolLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Host services that only first-party, in-process tools receive. When the
 * frontend is an ACP client offering `fs` or `terminal` capabilities these
 * route through the client (so unsaved editor buffers are seen); otherwise they
 * use the local filesystem / processes. Third-party worker plugins never get
 * these; they use Deno APIs under their granted permissions.
 */
export interface HostServices {
  /**
   * Asks the human a question (REPL prompt, ACP client). Undefined when nobody can
   * answer (headless): the `user__*` tools then return `{"needs_human": true, ...}` at once.
   */
  askUser?(question: UserQuestion, signal: AbortSignal): Promise<string | string[] | boolean>;
  /** Reads a UTF-8 text file (absolute path). Throws `Deno.errors.NotFound` style errors. */
  readTextFile?(path: string): Promise<string>;
  /** Writes a UTF-8 text file (absolute path), creating parent folders. */
  writeTextFile?(path: string, content: string): Promise<void>;
  /**
   * Runs a shell command in a client-side terminal (ACP `terminal/*`).
   * Resolves when the command exits or the signal aborts (then the terminal is killed).
   */
  runInTerminal?(
    command: string,
    opts: {
      cwd: string;
      timeoutMs?: number;
      outputByteLimit?: number;
      signal: AbortSignal;
      /** The calling tool call (`ToolContext.toolCallId`): the ACP host embeds the terminal in it. */
      toolCallId?: string;
    },
  ): Promise<
    { exitCode: number | null; signal: string | null; output: string; truncated: boolean }
  >;
}

/** The context a tool's `run` receives. */
export interface ToolContext {
  /** Absolute path of the session's working directory (workspace root). */
  cwd: string;
  /** Aborted when the turn is cancelled or the call times out. */
  signal: AbortSignal;
  /** The id of this tool call (ACP `toolCallId`). */
  toolCallId: string;
  log: ToolLogger;
  /** Reports progress; shows up as a `tool_call_update`. */
  progress(update: ToolProgress): void;
  /**
   * Asks the user for permission through the frontend. Resolves `true` when
   * allowed; `false` when rejected, when headless, or when cancelled.
   */
  requestPermission(question: PermissionQuestion): Promise<boolean>;
  /** First-party tools only; undefined inside plugin workers. */
  host?: HostServices;
}

/** What a tool call needs from the policy; the engine checks these before `run`. */
export type ToolAccess =
  | { type: "execute"; command: string }
  | { type: "read"; path: string }
  | { type: "write"; path: string }
  | { type: "net"; host: string }
  | { type: "tool"; name: string };

/** A tool, as the model sees it (`name`, `description`, `input` schema) plus its implementation. */
export interface ToolDefinition<S = ZodLike | JsonSchema> {
  /** Model-facing name: `^[a-zA-Z0-9_-]{1,64}$` (OpenAI function-name rule). */
  name: string;
  description: string;
  /** zod schema or plain JSON Schema (`type: "object"`). */
  input: S;
  kind?: ToolKind;
  /** True when the tool never changes anything (the guard and frontends may rely on it). */
  readOnly?: boolean;
  /**
   * Scheduling: `parallel` — safe to run beside other `parallel` calls of the same model
   * response; `serial` — runs alone, in order. Omitted: `parallel` when `readOnly`, else
   * `serial` (the SDK 1.0 behaviour). Added in SDK 1.1.
   */
  concurrency?: "parallel" | "serial";
  /** Human title for a call, e.g. `Read src/main.ts`. */
  title?(input: InferInput<S>): string;
  /**
   * What the call needs from the policy (first-party tools). Paths may be relative
   * to `cwd`. Omitted: the tool is checked as `{type: "tool", name}`.
   */
  access?(input: InferInput<S>, cwd: string): ToolAccess[];
  run(input: InferInput<S>, ctx: ToolContext): Promise<ToolResult | string> | ToolResult | string;
}

/** Defines a tool; returns it unchanged with its input type inferred from the schema. */
export function defineTool<S extends ZodLike | JsonSchema>(
  def: ToolDefinition<S>,
): ToolDefinition<S> {
  return def;
}

/**
 * An agent: instructions plus the tools it may use and model settings.
 * Built-in agents (Sisyphus and its specialists) load through this same shape; an agent
 * folder's `config.yaml` (snake_case keys, docs/agents.md) maps onto it field by field.
 * Every field past `maxTurns` is optional, new in SDK 1.1 and named like its `config.yaml` key
 * (snake_case), so a plugin written for SDK 1.0 still fits.
 */
export interface AgentDefinition {
  name: string;
  description: string;
  /**
   * System-prompt text. Templated when the agent starts: `{{__os__}}`, `{{__cwd__}}`,
   * `{{__now__}}` (ISO-8601), `{{__tools__}}` (the agent's tool names) and `{{var}}` for each
   * of {@link AgentDefinition.variables}.
   */
  instructions: string;
  /**
   * Tool names (globs allowed, e.g. `fs_*`, `mcp__github__*`; `mcp:<server>` means every tool of
   * that MCP server). Omitted: all tools.
   */
  tools?: string[];
  model?: string;
  temperature?: number;
  maxTurns?: number;
  /** Semver-ish version of the definition (informational). @since 1.1 */
  version?: string;
  /** Nucleus sampling (OpenAI `top_p`, 0..1). @since 1.1 */
  top_p?: number;
  /** OpenAI `reasoning_effort` (e.g. `low`, `medium`, `high`). @since 1.1 */
  reasoning_effort?: string;
  /** Template variables; one without `default` must be given (`--agent-variable NAME VALUE`). @since 1.1 */
  variables?: AgentVariable[];
  /** MCP servers (by configured name) whose tools this agent gets. @since 1.1 */
  mcp_servers?: string[];
  /** Skills this agent sees (names); omitted: every discovered skill. @since 1.1 */
  enabled_skills?: string[];
  /** May start sub-agents (`agent__*` tools). @since 1.1 */
  can_spawn_agents?: boolean;
  /** Agents it may start; omitted: any, `[]`: none. @since 1.1 */
  spawnable_agents?: string[];
  /**
   * Also the custom agents — the user's (`<config dir>/agents/`) and the workspace's
   * (`.coyote/agents/`, `.claude/agents/`) — besides those `spawnable_agents` names; an untrusted
   * workspace's agents stay unspawnable by this rule. Plugin agents only by name. @since 1.2
   */
  spawn_custom_agents?: boolean;
  /** Children running at once (more are queued). @since 1.1 */
  max_concurrent_agents?: number;
  /** Depth of the sub-agent tree below the root (root = 0). @since 1.1 */
  max_agent_depth?: number;
  /** Sub-agents it may spawn in one turn (more are refused with a tool error). Default 50. @since 1.1 */
  max_spawns_per_turn?: number;
  /**
   * Live (queued + running) sub-agent sessions in the whole tree when this agent is the root
   * session's; more are refused (graph agent/map nodes too). Default 64. @since 1.1
   */
  max_live_agents?: number;
  /** A child's final answer longer than this many characters is summarised for its parent. @since 1.1 */
  summarization_threshold?: number;
  /** Seconds a child's question to the human waits before the child decides alone. @since 1.1 */
  escalation_timeout?: number;
  /** Re-prompt while the todo list has open items at the end of a turn. @since 1.1 */
  auto_continue?: boolean;
  /** Re-prompts allowed per user turn under {@link AgentDefinition.auto_continue}. @since 1.1 */
  max_auto_continues?: number;
  /** Example first prompts a frontend may offer. @since 1.1 */
  conversation_starters?: string[];
  /**
   * A graph agent: the text of its `graph.yaml` (docs/graphs.md). With it, `instructions` is
   * ignored and the agent runs with the graph engine. @since 1.2
   */
  graph_yaml?: string;
  /**
   * A graph agent's scripts by path relative to its folder (`scripts/verdict.ts` → source text),
   * as its `script` nodes name them. `.ts` scripts run in a Worker with no permissions unless the
   * node declares some. @since 1.2
   */
  graph_files?: Record<string, string>;
}

/** A template variable of an agent: `{{name}}` in its instructions. */
export interface AgentVariable {
  name: string;
  description?: string;
  /** Value used when none is given; absent means the variable is required. */
  default?: string;
}

/**
 * A skill, as Agent Skills' `SKILL.md`: a folder named after the skill holding front matter
 * (`description`, optional `allowed-tools`/`enabled_tools`, `enabled_mcp_servers`, `auto_unload`)
 * and a markdown body. The optional fields use the original Coyote's front-matter names.
 */
export interface SkillDefinition {
  name: string;
  description: string;
  /** The markdown body (instructions), loaded when the skill is used. */
  content: string;
  /** Tool names or globs the skill needs; loading it adds them to the agent's tools. @since 1.1 */
  enabled_tools?: string[];
  /** MCP servers whose tools loading the skill adds. @since 1.1 */
  enabled_mcp_servers?: string[];
  /** Unload the skill again when the turn that loaded it ends. @since 1.1 */
  auto_unload?: boolean;
}

/** A plugin: a named, versioned bundle of tools, agents and skills plus the permissions it needs. */
export interface PluginDefinition {
  name: string;
  version: string;
  description?: string;
  /** SDK major the plugin was written for; defaults to the SDK it was built with. */
  sdkVersion?: string;
  permissions?: PluginPermissions;
  // deno-lint-ignore no-explicit-any
  tools?: ToolDefinition<any>[];
  agents?: AgentDefinition[];
  skills?: SkillDefinition[];
  /**
   * Hooks the plugin contributes (docs/graphs.md "Stop hooks"). `stop` commands run when an agent
   * is about to end its turn, exactly as `hooks.stop` of config.yaml, except that a plugin's
   * command always runs inside the OS sandbox derived from the user's policy (never with the
   * plugin's grant or Coyote's own rights). @since 1.2
   */
  hooks?: { stop?: { command: string; timeout_ms?: number }[] };
}

/** Defines a plugin; the module's default export. Returns it with `sdkVersion` filled in. */
export function definePlugin(def: PluginDefinition): PluginDefinition {
  return { sdkVersion: SDK_VERSION, ...def };
}
