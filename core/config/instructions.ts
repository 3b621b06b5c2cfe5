/**
 * Workspace instructions, loaded as a chain (as Codex loads `AGENTS.md`): in every directory
 * from the repository root (the nearest ancestor holding `.git`, core/config/workspace_dirs.ts) down to
 * the working directory, the first non-empty of `COYOTE.md`, `AGENTS.md`, `CLAUDE.md`,
 * `GEMINI.md` (the AGENTS.md convention plus the peer tools' own names, in that priority).
 * Outermost first, so the file nearest the working directory comes last and wins where they
 * disagree. Outside a git repository only the nearest file (the working directory, else the
 * closest ancestor) is used. The chain is capped at {@link MAX_INSTRUCTIONS} characters; the
 * outermost files are cut first.
 * @module
 */
import { outsideWorkspace, workspaceDirs } from "./workspace_dirs.ts";

/** File names checked in each directory, in priority order. */
export const INSTRUCTION_FILES = ["COYOTE.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md"] as const;

/** Longest instructions text kept (characters, whole chain); the rest is cut with a marker. */
export const MAX_INSTRUCTIONS = 32_000;

export interface WorkspaceInstructions {
  /** Absolute paths of the files used, outermost first, joined by `, `. */
  path: string;
  /** Their text; with more than one file each starts with a `From <path>:` line. */
  text: string;
  /** The files one by one, outermost first. */
  files?: { path: string; text: string }[];
}

/**
 * The instruction file of one directory (first non-empty of the four names), or null. A file
 * whose real path is not a regular file inside `root` (a symlink out of the repository) is
 * skipped (core/config/workspace_dirs.ts `outsideWorkspace`).
 */
function fileIn(dir: string, root: string): { path: string; text: string } | null {
  for (const name of INSTRUCTION_FILES) {
    const path = dir === "/" ? `/${name}` : `${dir}/${name}`;
    if (outsideWorkspace(path, root)) continue;
    try {
      const text = Deno.readTextFileSync(path).trim();
      if (text) return { path, text };
    } catch { /* missing or unreadable: next name */ }
  }
  return null;
}

function isRepoRoot(dir: string): boolean {
  try {
    Deno.statSync(dir === "/" ? "/.git" : `${dir}/.git`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the workspace instructions for `cwd` (absolute), or null. Unreadable files are
 * skipped. See the module doc for the chain and the cap.
 */
export function findInstructions(cwd: string): WorkspaceInstructions | null {
  const start = cwd.replace(/\/+$/, "") || "/";
  const dirs = workspaceDirs(start);
  let files: { path: string; text: string }[];
  if (isRepoRoot(dirs[dirs.length - 1])) {
    const root = dirs[dirs.length - 1];
    files = dirs.reverse().map((d) => fileIn(d, root)).filter((
      f,
    ): f is { path: string; text: string } => !!f);
  } else {
    // Not in a repository: the nearest file upwards.
    files = [];
    for (let dir = start;;) {
      const f = fileIn(dir, dir);
      if (f) {
        files = [f];
        break;
      }
      const up = dir.slice(0, dir.lastIndexOf("/")) || "/";
      if (up === dir) break;
      dir = up;
    }
  }
  if (!files.length) return null;
  // Cap the whole chain, cutting the outermost files first (the nearest file matters most).
  let over = files.reduce((n, f) => n + f.text.length, 0) - MAX_INSTRUCTIONS;
  const kept = files.map((f) => ({ ...f }));
  for (const f of kept) {
    if (over <= 0) break;
    const cut = Math.min(over, f.text.length);
    f.text = f.text.slice(0, f.text.length - cut) + "\n[instructions truncated]";
    over -= cut;
  }
  const text = kept.length === 1
    ? kept[0].text
    : kept.map((f) => `From ${f.path}:\n\n${f.text}`).join("\n\n");
  return { path: kept.map((f) => f.path).join(", "), text, files: kept };
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

/**
 * The instruction file of `dir` (first non-empty of {@link INSTRUCTION_FILES}) when `dir` lies
 * strictly below `cwd` — one the start-up chain of {@link findInstructions} does not hold
 * (it covers the repository root down to `cwd`). Null otherwise, or when there is none. A file
 * that resolves outside `cwd` (a symlink out) is skipped. Used by core/engine/nested_instructions.ts
 * when a file tool works in a subdirectory (`pkg/AGENTS.md` from the repository root).
 */
export function nestedInstructionFile(
  dir: string,
  cwd: string,
): { path: string; text: string } | null {
  const base = cwd.replace(/\/+$/, "") || "/";
  const d = dir.replace(/\/+$/, "");
  if (d === base || !d.startsWith(base === "/" ? "/" : `${base}/`)) return null;
  return fileIn(d, base);
}
