/**
 * The slash commands, one list for every frontend: ACP `available_commands_update` sends it
 * and the REPL shows it (same names, descriptions and input hints). Per session follow the
 * custom commands (Markdown prompt files, core/extensions/commands/load.ts; a built-in name wins)
 * and the MCP prompts as `/<server>:<prompt>` (Claude Code's `/mcp__server__prompt` and Codex's
 * `/prompts:` name them differently; the colon form is the ACP adapters' convention).
 * @module
 */
import { closest } from "../util/text.ts";

/** One slash command. */
export interface SlashCommand {
  /** Name without the slash, e.g. `help` or `github:review`. */
  name: string;
  /** One line for menus. */
  description: string;
  /** What to type after the name (ACP `input.hint`); absent when it takes no argument. */
  hint?: string;
  /** Where it comes from: built in, a custom command file, or an MCP server's prompt. */
  source: "builtin" | { file: string } | { mcpServer: string; prompt: string };
}

/** Built-in commands, in menu order. */
export const BUILTIN_COMMANDS: readonly SlashCommand[] = [
  { name: "help", description: "List the slash commands", source: "builtin" },
  {
    name: "init",
    description: "Write or update AGENTS.md from the repository (an agent turn)",
    hint: "what to stress",
    source: "builtin",
  },
  {
    name: "review",
    description: "Review the current git diff (code-reviewer; adversary when a plan exists)",
    hint: "focus or plan file",
    source: "builtin",
  },
  {
    name: "status",
    description: "Model, agent, workspace, trust, sandbox, tokens, MCP servers",
    source: "builtin",
  },
  {
    name: "agent",
    description: "Show or switch the agent (instructions and tools)",
    hint: "agent name",
    source: "builtin",
  },
  { name: "agents", description: "List the agents of this workspace", source: "builtin" },
  { name: "model", description: "Show or switch the model", hint: "model id", source: "builtin" },
  {
    name: "session",
    description: "Show this session's id, workspace and title",
    source: "builtin",
  },
  {
    name: "resume",
    description: "Pick a stored session of this workspace to continue",
    hint: "session id",
    source: "builtin",
  },
  { name: "skill", description: "List skills, or load one", hint: "skill name", source: "builtin" },
  { name: "skills", description: "List the skills of this workspace", source: "builtin" },
  { name: "mcp", description: "MCP servers: status, tools, prompts", source: "builtin" },
  { name: "tools", description: "List the tools the agent can call", source: "builtin" },
  {
    name: "compact",
    description: "Summarise the conversation to free context",
    hint: "what to keep",
    source: "builtin",
  },
  { name: "clear", description: "Start over with an empty conversation", source: "builtin" },
  {
    name: "rewind",
    description:
      "Back to before a turn: files, conversation or both (no argument: a picker of turns)",
    hint: "turn [files|conversation]",
    source: "builtin",
  },
  { name: "todo", description: "Show the current plan", source: "builtin" },
  {
    name: "mode",
    description: "Show or switch the permission mode (plan, default, accept-edits, auto)",
    hint: "mode",
    source: "builtin",
  },
  { name: "policy", description: "Show the permission rules in force", source: "builtin" },
  {
    name: "permissions",
    description: "Show rules; add or remove an allow/deny rule (session or project)",
    hint: "allow|deny|remove RULE [--project]",
    source: "builtin",
  },
  {
    name: "memory",
    description: "List the instruction files loaded; open one in $EDITOR",
    hint: "number",
    source: "builtin",
  },
  { name: "cost", description: "Token usage of this session", source: "builtin" },
  {
    name: "trust",
    description: "Trust this workspace (project config and tools)",
    source: "builtin",
  },
  { name: "exit", description: "End the session", source: "builtin" },
];

/** Built-ins followed by `extra` (custom commands, MCP prompts); a later duplicate is dropped. */
export function slashCommands(extra: SlashCommand[] = []): SlashCommand[] {
  const seen = new Set<string>();
  const out: SlashCommand[] = [];
  for (const c of [...BUILTIN_COMMANDS, ...extra]) {
    if (seen.has(c.name)) continue;
    seen.add(c.name);
    out.push(c);
  }
  return out;
}

/** A command's hint for `/help`: as written when it brackets itself (`[issue]`), else `<hint>`. */
export function hintText(hint?: string): string {
  return hint ? (/^[[<]/.test(hint) ? ` ${hint}` : ` <${hint}>`) : "";
}

/** `"/name rest of line"` → `{name, args}`; anything else (or `//…`, `/ x`) → null. */
export function parseSlashCommand(text: string): { name: string; args: string } | null {
  const m = /^\/([A-Za-z0-9][\w.:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: m[1], args: (m[2] ?? "").trim() } : null;
}

/**
 * The note for `/name` that names no command: ` (did you mean "/x"?)` with the nearest known
 * name (core/util/text.ts `closest`), and where the list is.
 */
export function unknownCommandNote(name: string, known: string[]): string {
  const near = closest(name, known) ??
    known.find((k) => k.endsWith(`:${name}`) || k.startsWith(`${name}:`));
  return `unknown command /${name}${
    near ? ` (did you mean /${near}?)` : ""
  }; /help lists the commands`;
}
