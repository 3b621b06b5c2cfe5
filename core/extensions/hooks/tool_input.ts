/**
 * A tool call as a Claude Code hook sees it: `tool_name` is Claude Code's name when the tool has
 * one (core/tools/claude_names.ts: `execute_command` → `Bash`, `fs_write` → `Write`, `fs_patch` →
 * `Edit`, …), else Coyote's (`mcp__<server>__<tool>` is the same in both); `tool_input` is
 * Coyote's arguments plus the fields Claude Code's scripts read: `file_path` (absolute) for the
 * file tools, `timeout` (ms) for `execute_command`. An `updatedInput` goes the other way:
 * `file_path` → `path`, `timeout` → `timeout_ms`, merged over the call's arguments (a field the
 * hook leaves out keeps its value) and validated against the tool's schema again.
 * @module
 */
import { isAbsolute, resolve } from "../../util/path.ts";
import { claudeNamesOf } from "../../tools/claude_names.ts";

const FILE_TOOLS = new Set(["fs_read", "fs_write", "fs_patch"]);

/** The names a matcher is tried against: Claude Code's names of the tool, then Coyote's. */
export function matcherNames(tool: string): string[] {
  return [...claudeNamesOf(tool), tool];
}

/** `tool_name` for the hook: Claude Code's first name of the tool, else Coyote's. */
export function hookToolName(tool: string): string {
  return claudeNamesOf(tool)[0] ?? tool;
}

/** `tool_input` for the hook (see the module doc). */
export function hookToolInput(tool: string, input: unknown, cwd: string): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const o = { ...(input as Record<string, unknown>) };
  if (FILE_TOOLS.has(tool) && typeof o.path === "string") {
    o.file_path = isAbsolute(o.path) ? o.path : resolve(cwd, o.path);
  }
  if (tool === "execute_command" && typeof o.timeout_ms === "number") o.timeout = o.timeout_ms;
  return o;
}

/** The call's new arguments from a hook's `updatedInput` (see the module doc). */
export function fromUpdatedInput(
  tool: string,
  original: unknown,
  updated: Record<string, unknown>,
  cwd: string,
): Record<string, unknown> {
  const base = original && typeof original === "object" && !Array.isArray(original)
    ? { ...(original as Record<string, unknown>) }
    : {};
  const u = { ...updated };
  if (FILE_TOOLS.has(tool) && "file_path" in u) {
    const sent = hookToolInput(tool, original, cwd) as { file_path?: unknown };
    // Only a changed file_path moves the call (the one sent back unchanged keeps `path`).
    if (typeof u.file_path === "string" && u.file_path !== sent.file_path) u.path = u.file_path;
    delete u.file_path;
  }
  if (tool === "execute_command" && "timeout" in u) {
    if (typeof u.timeout === "number") u.timeout_ms = u.timeout;
    delete u.timeout;
  }
  return { ...base, ...u };
}
