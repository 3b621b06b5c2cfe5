/**
 * Skills (the Agent Skills `SKILL.md` format, read as Claude Code and the original Coyote read it):
 * parsing and discovery.
 *
 * A skill is a folder holding `SKILL.md`: front matter, then the markdown body (instructions).
 * - The folder name is the skill's name. A front-matter `name`, if present, must equal it.
 * - `description` is required (≤ 1024 characters).
 * - Optional: `allowed-tools` (Claude Code, Agent Skills) or `enabled_tools` (original Coyote) — a
 *   list or a comma-separated string; Claude Code names map to Coyote's (`Read` → `fs_read`,
 *   `Bash(git:*)` → `execute_command`); `enabled_mcp_servers` (list or comma string); `auto_unload`
 *   (boolean). Other keys (`license`, `metadata`, …) are ignored.
 * - Front matter strict YAML rejects is read line by line (core/util/frontmatter.ts) with a warning.
 *
 * Discovery, first of a name wins:
 * 1. the workspace: `.coyote/skills/`, `.claude/skills/`, `.agents/skills/` of the working directory,
 *    then of each ancestor up to the repository root (core/config/workspace_dirs.ts);
 * 2. each `--add-dir DIR`: the same three folders under DIR (Claude Code's rule);
 * 3. the user config dir's `skills/`;
 * 4. plugins' `skills`;
 * 5. built-ins (skills/ of this repository, embedded; skills/mod.ts).
 * In an untrusted workspace, 1. may add skills but not replace one of 2.–5. (see `trusted`).
 * Invalid skills are skipped with a warning naming the file.
 * @module
 */
import { join } from "../../util/path.ts";
import type { SkillDefinition } from "../../../sdk/mod.ts";
import { parseFrontMatter } from "../../util/frontmatter.ts";
import { CLAUDE_TOOL_NAMES } from "../../tools/claude_names.ts";
import { outsideWorkspace, workspaceDirs, workspaceTop } from "../../config/workspace_dirs.ts";

/** Where a skill comes from. */
export type SkillSource = "workspace" | "add-dir" | "user" | "plugin" | "builtin";

/** A discovered skill: the definition plus where it was found. */
export interface SkillEntry extends SkillDefinition {
  source: SkillSource;
  /** `SKILL.md` path (`builtin:skills/<name>/SKILL.md`, `plugin:<name>`). */
  path: string;
}

/** Skill names (Agent Skills): 1–64 lowercase letters, digits and hyphens. */
export const SKILL_NAME_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** `"Read, Bash(git:*)"` or a list → Coyote tool names. */
function toolList(v: unknown, field: string): string[] {
  const raw = typeof v === "string" ? v.split(",") : Array.isArray(v) ? v : null;
  if (!raw || !raw.every((x) => typeof x === "string" || typeof x === "number")) {
    throw new Error(`${field}: expected a list or a comma-separated string of names`);
  }
  return [
    ...new Set(
      raw.map((x) => String(x).trim()).filter(Boolean).flatMap((t) => {
        const bare = t.replace(/\(.*\)$/, "");
        return CLAUDE_TOOL_NAMES[bare] ?? [bare];
      }),
    ),
  ];
}

/**
 * Parses one `SKILL.md`. `folder` is the folder's name (the skill's name).
 * @returns the skill and an optional warning (lenient front matter).
 * @throws Error with a message naming the field.
 */
export async function parseSkill(
  text: string,
  folder: string,
): Promise<{ skill: SkillDefinition; warning?: string }> {
  const fm = await parseFrontMatter(text);
  const d = fm.data;
  if (!SKILL_NAME_RE.test(folder)) {
    throw new Error(
      `folder name "${folder}" is not a skill name (1-64 lowercase letters, digits, hyphens)`,
    );
  }
  if (d.name !== undefined && d.name !== folder) {
    throw new Error(`name: "${String(d.name)}" does not match its folder "${folder}"`);
  }
  const desc = d.description;
  if (typeof desc !== "string" || !desc.trim()) {
    throw new Error("description: required (one line saying when to use the skill)");
  }
  if (desc.length > 1024) throw new Error("description: longer than 1024 characters");
  const skill: SkillDefinition = { name: folder, description: desc.trim(), content: fm.body };
  const tools = d["allowed-tools"] ?? d.enabled_tools;
  if (tools !== undefined && tools !== null) {
    skill.enabled_tools = toolList(tools, d["allowed-tools"] ? "allowed-tools" : "enabled_tools");
  }
  if (d.enabled_mcp_servers !== undefined && d.enabled_mcp_servers !== null) {
    skill.enabled_mcp_servers = toolList(d.enabled_mcp_servers, "enabled_mcp_servers");
  }
  if (d.auto_unload !== undefined) {
    if (typeof d.auto_unload !== "boolean") throw new Error("auto_unload: expected true or false");
    skill.auto_unload = d.auto_unload;
  }
  return fm.warning ? { skill, warning: fm.warning } : { skill };
}

/** What {@link discoverSkills} reads. */
export interface SkillSources {
  cwd: string;
  configDir: string;
  /** `--add-dir DIR` (absolute or relative to `cwd`). */
  addDirs?: string[];
  pluginSkills?: SkillDefinition[];
  /** Built-in `SKILL.md` texts by folder name (skills/mod.ts). */
  builtins?: { name: string; path: string; text: string }[];
  /** Already-parsed built-ins (core/agents/builtins.ts cache), used instead of `builtins`. */
  builtinEntries?: SkillEntry[];
  /**
   * Whether the workspace is trusted (core/config/trust.ts). An untrusted repository's skills may add
   * skills but never replace one of the same name from `--add-dir`, the user, a plugin or
   * Coyote (a cloned repository must not rewrite the security-review checklist a built-in
   * reviewer loads); each refusal is a warning. Default: trusted.
   */
  trusted?: boolean;
}

const SKILL_DIRS = [[".coyote", "skills"], [".claude", "skills"], [".agents", "skills"]];

/**
 * The skills of one skills folder. With `within` (workspace folders: the repository root), a
 * `SKILL.md` whose real path leaves it is skipped with a warning (core/config/workspace_dirs.ts).
 */
async function readSkillRoot(
  root: string,
  source: SkillSource,
  within?: string,
): Promise<{ skills: SkillEntry[]; warnings: string[] }> {
  const skills: SkillEntry[] = [];
  const warnings: string[] = [];
  let names: string[] = [];
  try {
    for await (const e of Deno.readDir(root)) if (!e.name.startsWith(".")) names.push(e.name);
  } catch {
    return { skills, warnings };
  }
  names = names.sort();
  const parsed = await Promise.all(names.map(async (name) => {
    const file = join(root, name, "SKILL.md");
    const outside = within === undefined ? undefined : outsideWorkspace(file, within);
    if (outside) {
      try {
        await Deno.lstat(file);
      } catch {
        return null; // not a skill folder
      }
      return { warning: `skill ${outside}; skipped` };
    }
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch {
      return null; // not a skill folder
    }
    try {
      const r = await parseSkill(text, name);
      return {
        skill: { ...r.skill, source, path: file },
        warning: r.warning && `skill ${file}: ${r.warning}`,
      };
    } catch (e) {
      return { warning: `skill ${file}: ${(e as Error).message}; skipped` };
    }
  }));
  for (const p of parsed) {
    if (!p) continue;
    if (p.warning) warnings.push(p.warning);
    if ("skill" in p && p.skill) skills.push(p.skill);
  }
  return { skills, warnings };
}

/** Every skill visible from `cwd`, first of a name winning (order in the module doc). Never throws. */
export async function discoverSkills(
  src: SkillSources,
): Promise<{ skills: SkillEntry[]; warnings: string[] }> {
  const roots: { root: string; source: SkillSource; within?: string }[] = [];
  const top = workspaceTop(src.cwd);
  for (const d of workspaceDirs(src.cwd)) {
    for (const parts of SKILL_DIRS) {
      roots.push({ root: join(d, ...parts), source: "workspace", within: top });
    }
  }
  for (const a of src.addDirs ?? []) {
    const base = a.startsWith("/") ? a : join(src.cwd, a);
    for (const parts of SKILL_DIRS) roots.push({ root: join(base, ...parts), source: "add-dir" });
  }
  roots.push({ root: join(src.configDir, "skills"), source: "user" });
  const found = await Promise.all(roots.map((r) => readSkillRoot(r.root, r.source, r.within)));
  const warnings = found.flatMap((f) => f.warnings);
  const all: SkillEntry[] = found.flatMap((f) => f.skills);
  for (const s of src.pluginSkills ?? []) {
    all.push({ ...s, source: "plugin", path: `plugin:${s.name}` });
  }
  const builtins = await Promise.all((src.builtins ?? []).map(async (b) => {
    try {
      const r = await parseSkill(b.text, b.name);
      if (r.warning) warnings.push(`skill ${b.path}: ${r.warning}`);
      return { ...r.skill, source: "builtin" as const, path: b.path };
    } catch (e) {
      warnings.push(`skill ${b.path}: ${(e as Error).message}; skipped`);
      return null;
    }
  }));
  for (const b of builtins) if (b) all.push(b);
  all.push(...(src.builtinEntries ?? []));
  const fixed = new Set(
    src.trusted === false ? all.filter((s) => s.source !== "workspace").map((s) => s.name) : [],
  );
  const byName = new Map<string, SkillEntry>();
  for (const s of all) {
    if (byName.has(s.name)) continue;
    if (s.source === "workspace" && fixed.has(s.name)) {
      warnings.push(
        `skill ${s.path} would replace the skill "${s.name}" of Coyote, a plugin or your config; ignored in an untrusted workspace (coyote trust)`,
      );
      continue;
    }
    byName.set(s.name, s);
  }
  return { skills: [...byName.values()], warnings };
}
