/**
 * Claude Code's tool names and the Coyote tools they stand for, so agent files written for
 * Claude Code (`.claude/agents/*.md` `tools:`) and Agent Skills' `allowed-tools` keep working
 * (core/agents/definition.ts, core/extensions/skills/load.ts).
 * @module
 */

/** Claude Code tool names → Coyote's (for `.claude/agents/*.md` `tools:`). */
export const CLAUDE_TOOL_NAMES: Record<string, string[]> = {
  Read: ["fs_read"],
  Write: ["fs_write"],
  Edit: ["fs_patch"],
  MultiEdit: ["fs_patch"],
  Grep: ["fs_grep"],
  Glob: ["fs_glob"],
  LS: ["fs_ls"],
  Bash: ["execute_command"],
  WebFetch: ["web_fetch"],
  TodoWrite: ["todo__write"],
  Task: ["agent__*"],
};

/**
 * The Claude Code names a Coyote tool answers to in hook matchers and hook input (`tool_name`),
 * first the one Claude Code itself would send: `execute_command` → `["Bash"]`, `fs_patch` →
 * `["Edit", "MultiEdit"]`, `agent__spawn` → `["Task", "Agent"]` (Claude Code renamed its Task
 * tool Agent). Empty for a tool Claude Code has no name for (MCP tools share its
 * `mcp__<server>__<tool>` names already).
 */
export function claudeNamesOf(tool: string): string[] {
  if (tool === "agent__spawn") return ["Task", "Agent"];
  return Object.entries(CLAUDE_TOOL_NAMES).filter(([, v]) => v.includes(tool)).map(([k]) => k);
}
