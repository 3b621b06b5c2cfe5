/**
 * Agent definition files: parsing and validation (zod) of the two forms.
 *
 * - **Folder** `<name>/config.yaml` (Coyote's own form; keys mirror the original Coyote's agent
 *   config, snake_case): `name`, `description`, `version`, `model`, `temperature`, `top_p`,
 *   `reasoning_effort`, `instructions`, `variables: [{name, description, default}]`, `tools`,
 *   `mcp_servers`, `enabled_skills`, `can_spawn_agents`, `spawnable_agents`, `spawn_custom_agents`,
 *   `max_concurrent_agents`, `max_agent_depth`, `max_spawns_per_turn`, `max_live_agents`,
 *   `summarization_threshold`, `escalation_timeout`, `worktree` (`auto|always|never`),
 *   `auto_continue`, `max_auto_continues`, `conversation_starters`, plus `max_turns`. A few keys of
 *   the original that Coyote does not implement are accepted with a warning (see
 *   {@link IGNORED_KEYS}); `global_tools` (`fs_read.sh` style) joins `tools`. Any other key is an
 *   error with a did-you-mean. A folder holding `graph.yaml` instead is a graph agent (listed; the
 *   graph engine is issue 8).
 * - **Markdown** `<name>.md` with front matter `name`, `description`, `tools`, `model` and the body
 *   as instructions, as Claude Code's `.claude/agents/*.md` are written. Claude Code tool names
 *   (`Read`, `Grep`, `Bash`, …) map to Coyote's (`fs_read`, `fs_grep`, `execute_command`, …);
 *   `model: inherit|sonnet|opus|haiku` means "the session's model".
 *
 * Errors are {@link AgentFileError}s whose message names the file and the field:
 * `agent file /w/.coyote/agents/x/config.yaml: temprature: unknown key (did you mean \`temperature\`?)`.
 * @module
 */
import { CLAUDE_TOOL_NAMES } from "../tools/claude_names.ts";
import type { AgentDefinition } from "../../sdk/mod.ts";
import { formatIssue, type IssueLike } from "../config/config.ts";
import { parseFrontMatter } from "../util/frontmatter.ts";
import { TOOL_ALIASES, UNAVAILABLE_TOOLS } from "../graph/compat.ts";

/** A broken agent file (user error: shown without a stack trace, exit code 2). */
export class AgentFileError extends Error {
  override name = "ConfigError";
  constructor(readonly file: string, detail: string) {
    super(`agent file ${file}: ${detail}`);
  }
}

/** Keys of the original Coyote's agent config that this Coyote accepts but does not use. */
export const IGNORED_KEYS = [
  "agent_session",
  "inject_todo_instructions",
  "continuation_prompt",
  "inject_spawn_instructions",
  "summarization_model",
  "skills_enabled",
  "inject_skill_instructions",
  "skill_instructions",
  "enabled_macros",
  "memory",
  "compression_threshold",
  "compression_keep_last",
  "max_tool_result_chars",
  "dynamic_instructions",
  "documents",
] as const;

/** Claude Code model aliases: the session's model is used instead. */
const CLAUDE_MODEL_ALIASES = new Set(["inherit", "sonnet", "opus", "haiku"]);

/** A parsed file: the definition (llm agents) plus notes for the user. */
export interface ParsedAgent {
  definition: AgentDefinition;
  /** Non-fatal notes (ignored keys, lenient front matter). */
  warnings: string[];
  /** The original Coyote's display `name` (e.g. "Demo" in folder `demo`), when it differs. */
  displayName?: string;
}

type Schema = { safeParse(v: unknown): { success: boolean; data?: unknown; error?: unknown } };
let schemas: Promise<{ config: Schema; markdown: Schema }> | undefined;

function agentSchemas() {
  schemas ??= import("zod").then(({ z }) => {
    // A required key that is absent says so (not "expected a string").
    const str = (what = "a string") =>
      z.string({ error: (i) => i.input === undefined ? "required" : `expected ${what}` });
    const strList = () => z.array(str(), { error: "expected a list of strings" });
    const text = () =>
      z.union([z.string(), z.number(), z.boolean()], { error: "expected a string" })
        .transform(String);
    const posInt = () =>
      z.number({ error: "expected a positive integer" }).int({
        error: "expected a positive integer",
      }).positive({ error: "expected a positive integer" });
    const bool = () => z.boolean({ error: "expected true or false" });
    const nonNegInt = () =>
      z.number({ error: "expected an integer ≥ 0" }).int({ error: "expected an integer ≥ 0" })
        .min(0, { error: "expected an integer ≥ 0" });
    const range = (lo: number, hi: number) =>
      z.number({ error: `expected a number from ${lo} to ${hi}` }).min(lo, {
        error: `expected a number from ${lo} to ${hi}`,
      }).max(hi, { error: `expected a number from ${lo} to ${hi}` });
    const variable = z.strictObject({
      name: str().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
        error: "expected a variable name (letters, digits, _)",
      }),
      description: str().optional(),
      default: text().nullable().optional(),
    }, { error: "expected a mapping {name, description, default}" });
    const ignored = Object.fromEntries(IGNORED_KEYS.map((k) => [k, z.unknown().optional()]));
    const config = z.strictObject({
      name: str().optional(),
      description: str().min(1, { error: "must not be empty" }),
      version: text().optional(),
      model: str().optional(),
      temperature: range(0, 2).optional(),
      top_p: range(0, 1).optional(),
      reasoning_effort: str().optional(),
      instructions: str().min(1, { error: "must not be empty" }),
      variables: z.array(variable, { error: "expected a list of {name, description, default}" })
        .optional(),
      tools: strList().optional(),
      global_tools: strList().optional(),
      mcp_servers: strList().optional(),
      enabled_skills: strList().optional(),
      can_spawn_agents: bool().optional(),
      spawnable_agents: strList().optional(),
      spawn_custom_agents: bool().optional(),
      max_concurrent_agents: posInt().optional(),
      max_agent_depth: posInt().optional(),
      max_spawns_per_turn: posInt().optional(),
      max_live_agents: posInt().optional(),
      summarization_threshold: posInt().optional(),
      escalation_timeout: posInt().optional(),
      worktree: z.enum(["auto", "always", "never"], {
        error: "expected auto, always or never",
      }).optional(),
      auto_continue: bool().optional(),
      max_auto_continues: nonNegInt().optional(),
      max_auto_continue_tokens: posInt().optional(),
      conversation_starters: strList().optional(),
      max_turns: posInt().optional(),
      ...ignored,
    }, { error: "expected a mapping of keys" });
    const toolField = z.union([str(), strList()], {
      error: "expected a list of tool names or a comma-separated string",
    });
    const markdown = z.strictObject({
      name: str().optional(),
      description: str().min(1, { error: "must not be empty" }),
      tools: toolField.optional(),
      model: str().optional(),
      // Claude Code keys that change nothing here (display colour) or map one-to-one.
      color: str().optional(),
      skills: toolField.optional(),
      maxTurns: posInt().optional(),
    }, { error: "expected a mapping of keys" });
    return { config, markdown } as unknown as { config: Schema; markdown: Schema };
  });
  return schemas;
}

function issues(error: unknown): IssueLike[] {
  return ((error as { issues?: IssueLike[] })?.issues ?? []) as IssueLike[];
}

/** Agent names: letters, digits, `-`, `_`, `.`; starting with a letter or digit. */
export const AGENT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function checkName(name: string, file: string, field: string) {
  if (!AGENT_NAME_RE.test(name)) {
    throw new AgentFileError(
      file,
      `${field}: ${
        JSON.stringify(name)
      } is not an agent name (1-64 letters, digits, '.', '_' or '-')`,
    );
  }
}

function validate(schema: Schema, data: unknown, file: string): Record<string, unknown> {
  const r = schema.safeParse(data);
  if (!r.success) {
    throw new AgentFileError(file, issues(r.error).map((i) => formatIssue(i, schema)).join("; "));
  }
  return r.data as Record<string, unknown>;
}

/** `fs_read.sh` → `fs_read` (the original's `global_tools` name files; core/graph/compat.ts aliases). */
function toolFileName(t: string): string {
  const bare = t.replace(/\.(sh|py|js|ts)$/, "");
  return TOOL_ALIASES[bare] ?? bare;
}

/**
 * Parses a folder agent's `config.yaml`. `folder` is the folder's name: a `name` key, when given,
 * must equal it.
 * @throws AgentFileError naming `file` and the field.
 */
export async function parseAgentConfig(
  text: string,
  file: string,
  folder: string,
): Promise<ParsedAgent> {
  const YAML = await import("yaml");
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const pos = e.linePos?.[0];
    const where = pos ? `line ${pos.line}, column ${pos.col}: ` : "";
    throw new AgentFileError(
      file,
      `${where}YAML syntax error: ${
        e.message.split("\n")[0].replace(/\s*at line \d+, column \d+:?\s*$/, "")
      }`,
    );
  }
  const data = doc.toJS() ?? {};
  const { config } = await agentSchemas();
  const c = validate(config, data, file);
  // The folder is the agent's id. A `name` that differs from it only in case, or is no agent
  // name at all ("Demo", "Code Reviewer": the original's display names), is a display name.
  const given = c.name as string | undefined;
  const displayName = given !== undefined && given !== folder &&
      (given.toLowerCase() === folder.toLowerCase() || !AGENT_NAME_RE.test(given))
    ? given
    : undefined;
  const name = displayName !== undefined ? folder : given ?? folder;
  checkName(name, file, "name");
  if (name !== folder) {
    throw new AgentFileError(file, `name: "${name}" does not match its folder "${folder}"`);
  }
  const warnings = IGNORED_KEYS.filter((k) => c[k] !== undefined).map((k) =>
    `agent file ${file}: ${k}: not supported by this Coyote; ignored`
  );
  const globals: string[] = [];
  for (const [i, t] of ((c.global_tools as string[] | undefined) ?? []).entries()) {
    const tool = toolFileName(t);
    if (UNAVAILABLE_TOOLS[tool]) {
      warnings.push(
        `agent file ${file}: global_tools[${i}]: "${t}" is ${UNAVAILABLE_TOOLS[tool]}; left out`,
      );
    } else globals.push(tool);
  }
  const tools = c.tools || c.global_tools
    ? [...((c.tools as string[] | undefined) ?? []).map((t) => TOOL_ALIASES[t] ?? t), ...globals]
    : undefined;
  const variables = (c.variables as
    | { name: string; description?: string; default?: string | null }[]
    | undefined)?.map((v) => ({
      name: v.name,
      ...(v.description !== undefined ? { description: v.description } : {}),
      ...(v.default !== undefined && v.default !== null ? { default: v.default } : {}),
    }));
  const seen = new Set<string>();
  for (const [i, v] of (variables ?? []).entries()) {
    if (seen.has(v.name)) {
      throw new AgentFileError(file, `variables[${i}].name: "${v.name}" is declared twice`);
    }
    seen.add(v.name);
  }
  const def: AgentDefinition = {
    name,
    description: (c.description as string).trim(),
    instructions: c.instructions as string,
  };
  const set = <K extends keyof AgentDefinition>(k: K, v: AgentDefinition[K] | undefined) => {
    if (v !== undefined) def[k] = v;
  };
  set("tools", tools);
  set("model", c.model as string | undefined);
  set("temperature", c.temperature as number | undefined);
  set("maxTurns", c.max_turns as number | undefined);
  set("version", c.version as string | undefined);
  set("top_p", c.top_p as number | undefined);
  set("reasoning_effort", c.reasoning_effort as string | undefined);
  set("variables", variables);
  set("mcp_servers", c.mcp_servers as string[] | undefined);
  set("enabled_skills", c.enabled_skills as string[] | undefined);
  set("can_spawn_agents", c.can_spawn_agents as boolean | undefined);
  set("spawnable_agents", c.spawnable_agents as string[] | undefined);
  set("spawn_custom_agents", c.spawn_custom_agents as boolean | undefined);
  set("max_concurrent_agents", c.max_concurrent_agents as number | undefined);
  set("max_agent_depth", c.max_agent_depth as number | undefined);
  set("max_spawns_per_turn", c.max_spawns_per_turn as number | undefined);
  set("max_live_agents", c.max_live_agents as number | undefined);
  set("summarization_threshold", c.summarization_threshold as number | undefined);
  set("escalation_timeout", c.escalation_timeout as number | undefined);
  set("worktree", c.worktree as AgentDefinition["worktree"]);
  set("auto_continue", c.auto_continue as boolean | undefined);
  set("max_auto_continues", c.max_auto_continues as number | undefined);
  set("max_auto_continue_tokens", c.max_auto_continue_tokens as number | undefined);
  set("conversation_starters", c.conversation_starters as string[] | undefined);
  return { definition: def, warnings, ...(displayName ? { displayName } : {}) };
}

/** `"Read, Grep"` or `["Read", "fs_grep"]` → Coyote tool names (Claude Code names mapped). */
function mdTools(v: string | string[]): string[] {
  const list = Array.isArray(v) ? v : v.split(",");
  return [
    ...new Set(
      list.map((t) => t.trim()).filter(Boolean).flatMap((t) => CLAUDE_TOOL_NAMES[t] ?? [t]),
    ),
  ];
}

/**
 * Parses a Markdown agent (`<name>.md`: front matter + instructions body). The front-matter `name`
 * wins over the file name (Claude Code's rule); without one the file's base name is used.
 * @throws AgentFileError naming `file` and the field.
 */
export async function parseAgentMarkdown(
  text: string,
  file: string,
  baseName: string,
): Promise<ParsedAgent> {
  let fm;
  try {
    fm = await parseFrontMatter(text);
  } catch (e) {
    throw new AgentFileError(file, (e as Error).message);
  }
  const { markdown } = await agentSchemas();
  const c = validate(markdown, fm.data, file);
  const name = (c.name as string | undefined) ?? baseName;
  checkName(name, file, "name");
  if (!fm.body) throw new AgentFileError(file, "the body (the agent's instructions) is empty");
  const def: AgentDefinition = {
    name,
    description: (c.description as string).trim(),
    instructions: fm.body,
  };
  if (c.tools !== undefined) def.tools = mdTools(c.tools as string | string[]);
  if (c.skills !== undefined) {
    const s = c.skills as string | string[];
    def.enabled_skills = (Array.isArray(s) ? s : s.split(",")).map((x) => x.trim()).filter(Boolean);
  }
  const model = c.model as string | undefined;
  if (model && !CLAUDE_MODEL_ALIASES.has(model)) def.model = model;
  if (c.maxTurns !== undefined) def.maxTurns = c.maxTurns as number;
  return {
    definition: def,
    warnings: fm.warning ? [`agent file ${file}: ${fm.warning}`] : [],
  };
}

/**
 * Validates an agent a plugin contributed (SDK shape). Only the fields Coyote relies on are
 * checked — names, lists, the supervisor's numeric limits; the message names the plugin and the
 * field (`plugin:p: max_live_agents: expected a positive integer`).
 */
export function checkPluginAgent(a: unknown, origin: string): AgentDefinition {
  const o = a as Record<string, unknown>;
  const bad = (field: string, want: string) =>
    new AgentFileError(origin, `${field}: expected ${want}`);
  if (!o || typeof o !== "object") throw bad("(agent)", "an object");
  if (typeof o.name !== "string" || !AGENT_NAME_RE.test(o.name)) throw bad("name", "an agent name");
  if (typeof o.description !== "string") throw bad("description", "a string");
  if (typeof o.instructions !== "string" || !o.instructions) {
    throw bad("instructions", "a non-empty string");
  }
  for (const k of ["tools", "mcp_servers", "enabled_skills", "spawnable_agents"] as const) {
    if (o[k] !== undefined && !(Array.isArray(o[k]) && o[k].every((x) => typeof x === "string"))) {
      throw bad(k, "a list of strings");
    }
  }
  for (const k of ["can_spawn_agents", "spawn_custom_agents"] as const) {
    if (o[k] !== undefined && typeof o[k] !== "boolean") throw bad(k, "true or false");
  }
  if (o.worktree !== undefined && !["auto", "always", "never"].includes(o.worktree as string)) {
    throw bad("worktree", "auto, always or never");
  }
  // The supervisor's numeric limits: a plugin asking for "lots" or 0 children is told so, as a
  // config.yaml would be, rather than silently getting the default.
  for (
    const k of [
      "max_concurrent_agents",
      "max_agent_depth",
      "max_spawns_per_turn",
      "max_live_agents",
      "summarization_threshold",
      "escalation_timeout",
      "max_auto_continue_tokens",
    ] as const
  ) {
    const v = o[k];
    if (v !== undefined && !(typeof v === "number" && Number.isInteger(v) && v > 0)) {
      throw bad(k, "a positive integer");
    }
  }
  const mac = o.max_auto_continues;
  if (mac !== undefined && !(typeof mac === "number" && Number.isInteger(mac) && mac >= 0)) {
    throw bad("max_auto_continues", "an integer ≥ 0");
  }
  return o as unknown as AgentDefinition;
}
