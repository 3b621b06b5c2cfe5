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
