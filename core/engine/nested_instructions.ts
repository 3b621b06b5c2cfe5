/**
 * Instruction files of subdirectories (`pkg/AGENTS.md`, `pkg/CLAUDE.md`, … — the names and
 * priority of core/config/instructions.ts), loaded when a file tool first reads, lists or searches
 * in that directory, as Claude Code does: the start-up chain only covers the repository root down
 * to the working directory. Each directory between the working directory (exclusive) and the one
 * the tool touched (inclusive) is looked at once per engine; a file found there is appended to the
 * tool's result for the model, at most {@link MAX_NESTED} characters each.
 * @module
 */
import { dirname, isAbsolute, resolve } from "../util/path.ts";
import { nestedInstructionFile } from "../config/instructions.ts";
import { headText } from "../util/text.ts";

/** Longest text kept of one nested instruction file (characters). */
export const MAX_NESTED = 8_000;

/** The file tools whose `path` argument names where they work, and whether it is a directory. */
const TOOLS: Record<string, "file" | "dir"> = {
  fs_read: "file",
  fs_write: "file",
  fs_patch: "file",
  fs_ls: "dir",
  fs_glob: "dir",
  fs_grep: "dir",
};

/** Directories already looked at, per engine options object (one per engine). */
const seen = new WeakMap<object, Set<string>>();

/**
 * The text to append to the result of tool `name` called with `input` in workspace `cwd`: the
 * nested instruction files not yet shown, each under a line naming it, or "" (other tools, no
 * path, nothing new). `owner` keys the once-per-directory memory (the engine's options).
 */
export function nestedInstructions(
  owner: object,
  cwd: string,
  name: string,
  input: unknown,
): string {
  const kind = TOOLS[name];
  const arg = (input as { path?: unknown } | null)?.path;
  if (!kind || (kind === "file" && typeof arg !== "string")) return "";
  const p = typeof arg === "string" && arg ? (isAbsolute(arg) ? arg : resolve(cwd, arg)) : cwd;
  let dir = kind === "file" ? dirname(p) : p;
  try {
    if (kind === "dir" && !Deno.statSync(p).isDirectory) dir = dirname(p);
  } catch { /* a glob pattern or missing path: its text as a directory */ }
  let done = seen.get(owner);
  if (!done) seen.set(owner, done = new Set());
  const base = cwd.replace(/\/+$/, "");
  const chain: string[] = [];
  for (let d = dir; d.startsWith(`${base}/`) && d !== base; d = dirname(d)) chain.unshift(d);
  const parts: string[] = [];
  for (const d of chain) {
    if (done.has(d)) continue;
    done.add(d);
    const f = nestedInstructionFile(d, base);
    if (!f) continue;
    const rel = f.path.slice(base.length + 1);
    const text = f.text.length > MAX_NESTED
      ? `${headText(f.text, MAX_NESTED)}\n[instructions truncated]`
      : f.text;
    parts.push(
      `[Instructions from ${rel}, for work under ${
        rel.slice(0, rel.lastIndexOf("/") + 1)
      }]\n${text}`,
    );
  }
  return parts.length ? `\n\n${parts.join("\n\n")}` : "";
}
