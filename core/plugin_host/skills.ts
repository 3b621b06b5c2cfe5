/**
 * Skills from `SKILL.md` files (Agent Skills format): a folder per skill
 * holding `SKILL.md` with YAML front-matter `name` and `description`, and a
 * markdown body with the instructions.
 *
 * Looked up in `<cwd>/.coyote/skills/<name>/SKILL.md`, then
 * `<configDir>/skills/<name>/SKILL.md`; the workspace wins on a name clash.
 * Per the Agent Skills rules, `name` is 1–64 lowercase letters, digits and
 * hyphens and must equal the folder name; `description` is required (≤ 1024
 * characters). Invalid skills are skipped with a warning.
 * @module
 */
import { join } from "node:path";
import type { SkillDefinition } from "../../sdk/mod.ts";
import type { AppOptions } from "../app.ts";

const NAME_RE = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** Parses one SKILL.md text. Throws an Error with a human message when invalid. */
export async function parseSkillFile(text: string, folderName?: string): Promise<SkillDefinition> {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
  if (!m) throw new Error("missing YAML front-matter (--- name/description ---)");
  const { parse } = await import("yaml");
  let meta: unknown;
  try {
    meta = parse(m[1]);
  } catch (e) {
    throw new Error(`front-matter is not valid YAML: ${(e as Error).message}`);
  }
  const fm = (meta ?? {}) as Record<string, unknown>;
  if (typeof fm.name !== "string" || !NAME_RE.test(fm.name)) {
    throw new Error(
      `name ${JSON.stringify(fm.name)} must be 1-64 lowercase letters, digits or hyphens`,
    );
  }
  if (folderName !== undefined && fm.name !== folderName) {
    throw new Error(`name "${fm.name}" does not match its folder "${folderName}"`);
  }
  if (typeof fm.description !== "string" || !fm.description.trim()) {
    throw new Error("description is required");
  }
  if (fm.description.length > 1024) throw new Error("description is longer than 1024 characters");
  return { name: fm.name, description: fm.description.trim(), content: m[2].trim() };
}

/** Loads `SKILL.md` skills of the workspace and the user config dir. Never throws. */
export async function loadSkills(
  app: Pick<AppOptions, "configDir">,
  cwd: string,
): Promise<{ skills: SkillDefinition[]; warnings: string[] }> {
  const skills: SkillDefinition[] = [];
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const root of [join(cwd, ".coyote", "skills"), join(app.configDir, "skills")]) {
    let names: string[] = [];
    try {
      for await (const e of Deno.readDir(root)) if (!e.name.startsWith(".")) names.push(e.name);
    } catch {
      continue;
    }
    names = names.sort();
    for (const name of names) {
      const file = join(root, name, "SKILL.md");
      let text: string;
      try {
        text = await Deno.readTextFile(file);
      } catch {
        continue;
      }
      try {
        const skill = await parseSkillFile(text, name);
        if (seen.has(skill.name)) continue;
        seen.add(skill.name);
        skills.push(skill);
      } catch (e) {
        warnings.push(`skill ${file}: ${(e as Error).message}`);
      }
    }
  }
  return { skills, warnings };
}
