/**
 * Workspace instructions: the first non-empty of `COYOTE.md`, `AGENTS.md`,
 * `CLAUDE.md`, `GEMINI.md` found from the working directory upwards (each
 * directory is checked for the four names in that order; the search stops at
 * the filesystem root). The AGENTS.md convention (agents.md) plus the peer
 * tools' own file names.
 * @module
 */

/** File names checked in each directory, in priority order. */
export const INSTRUCTION_FILES = ["COYOTE.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md"] as const;

/** Longest instructions text kept (characters); the rest is cut with a marker. */
export const MAX_INSTRUCTIONS = 32_000;

export interface WorkspaceInstructions {
  /** Absolute path of the file used. */
  path: string;
  text: string;
}

/** Finds the workspace instructions for `cwd` (absolute), or null. Unreadable files are skipped. */
export function findInstructions(cwd: string): WorkspaceInstructions | null {
  let dir = cwd.replace(/\/+$/, "") || "/";
  while (true) {
    for (const name of INSTRUCTION_FILES) {
      const path = dir === "/" ? `/${name}` : `${dir}/${name}`;
      let text: string;
      try {
        text = Deno.readTextFileSync(path);
      } catch {
        continue;
      }
      if (!text.trim()) continue;
      if (text.length > MAX_INSTRUCTIONS) {
        text = text.slice(0, MAX_INSTRUCTIONS) + "\n[instructions truncated]";
      }
      return { path, text: text.trim() };
    }
    if (dir === "/") return null;
    const up = dir.slice(0, dir.lastIndexOf("/")) || "/";
    if (up === dir) return null;
    dir = up;
  }
}

/** The system prompt: agent instructions, environment facts, skill index, then workspace instructions. */
export function buildSystemPrompt(
  agentInstructions: string,
  env: { cwd: string; date?: string; platform?: string },
  workspace: WorkspaceInstructions | null,
  skills: { name: string; description: string }[] = [],
): string {
  const parts = [
    agentInstructions.trim(),
    `Environment: working directory ${env.cwd}; platform ${env.platform ?? Deno.build.os}; date ${
      env.date ?? new Date().toISOString().slice(0, 10)
    }.`,
  ];
  if (skills.length) {
    parts.push(
      "Skills (call skill__load with the name to read one before following it):\n" +
        skills.map((s) => `- ${s.name}: ${s.description}`).join("\n"),
    );
  }
  if (workspace) {
    parts.push(`Workspace instructions from ${workspace.path} (follow them):\n\n${workspace.text}`);
  }
  return parts.join("\n\n");
}
