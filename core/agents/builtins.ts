/**
 * The built-in agents and skills, parsed once and cached.
 *
 * Parsing them (npm `yaml`, the zod schemas, ~20 files) costs tens of milliseconds at every start,
 * for a result that only changes with Coyote itself. So the parsed form is kept in
 * `<data dir>/builtin-cache/<sha256>.json`, keyed by the SHA-256 of {@link CACHE_FORMAT}, the
 * Coyote version and every embedded file's text: any change to a built-in (or a new Coyote) is a
 * new key. A missing, unreadable or malformed cache file is parsed again and rewritten (written to
 * a temporary file and renamed, so a concurrent reader never sees half of one); a data dir that
 * cannot be written only costs the parse. Writing a new entry removes the other builds' entries. Graph agents are cached with their description; their
 * text stays the embedded one.
 * @module
 */
import { join } from "node:path";
import pkg from "../../deno.json" with { type: "json" };
import { builtinAgentFiles } from "../../agents/mod.ts";
import { builtinSkillFiles } from "../../skills/mod.ts";
import { type AgentEntry, parseBuiltinAgents } from "./registry.ts";
import { parseSkill, type SkillEntry } from "../extensions/skills/load.ts";

/** Bump when the parsers' output for the same text changes. */
export const CACHE_FORMAT = 2;

/** The parsed built-ins. */
export interface Builtins {
  agents: AgentEntry[];
  skills: SkillEntry[];
  /** Problems parsing the skills (an agent's ride on its entry; a test keeps both empty). */
  warnings: string[];
}

async function cacheKey(): Promise<string> {
  const parts = [
    `format ${CACHE_FORMAT}`,
    `coyote ${pkg.version}`,
    ...builtinAgentFiles.map((f) => `${f.path}\0${f.text}`),
    ...builtinSkillFiles.map((f) => `${f.path}\0${f.text}`),
  ];
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\0\0")));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Parses every built-in (no cache). */
export async function parseBuiltins(): Promise<Builtins> {
  const warnings: string[] = [];
  const [agents, parsedSkills] = await Promise.all([
    parseBuiltinAgents(),
    Promise.all(builtinSkillFiles.map(async (f): Promise<SkillEntry | null> => {
      try {
        const r = await parseSkill(f.text, f.name);
        if (r.warning) warnings.push(`skill ${f.path}: ${r.warning}`);
        return { ...r.skill, source: "builtin", path: f.path };
      } catch (e) {
        warnings.push(`skill ${f.path}: ${(e as Error).message}; skipped`);
        return null;
      }
    })),
  ]);
  const skills = parsedSkills.filter((s): s is SkillEntry => s !== null);
  // Plain data: a graph entry's lazily read description and error become fields.
  const plain = agents.map((e) => ({ ...e, description: e.description, error: e.error }));
  for (const e of plain) if (e.error === undefined) delete e.error;
  return { agents: plain, skills, warnings };
}

function isBuiltins(v: unknown): v is Builtins {
  const b = v as Builtins;
  return !!b && Array.isArray(b.agents) && Array.isArray(b.skills) && Array.isArray(b.warnings) &&
    b.agents.length === builtinAgentFiles.length &&
    b.agents.every((e) => typeof e?.name === "string" && Array.isArray(e.shadows));
}

/**
 * The built-ins, from the cache in `cacheDir` when it holds this build's, else parsed (and
 * cached). Without `cacheDir`, parsed. Never throws.
 */
export async function loadBuiltins(cacheDir?: string): Promise<Builtins> {
  if (!cacheDir) return parseBuiltins();
  const file = join(cacheDir, `${await cacheKey()}.json`);
  try {
    const cached = JSON.parse(await Deno.readTextFile(file));
    if (isBuiltins(cached)) {
      // The embedded text is not duplicated in the cache.
      for (const e of cached.agents) {
        if (e.kind === "graph") {
          e.graphText = builtinAgentFiles.find((f) => f.name === e.name)?.text;
        }
      }
      return cached;
    }
  } catch { /* missing or malformed: parse again */ }
  const parsed = await parseBuiltins();
  try {
    await Deno.mkdir(cacheDir, { recursive: true });
    const tmp = `${file}.${crypto.randomUUID()}.tmp`;
    const data = {
      ...parsed,
      agents: parsed.agents.map(({ graphText: _g, ...e }) => e),
    };
    await Deno.writeTextFile(tmp, JSON.stringify(data));
    await Deno.rename(tmp, file);
    // Entries of other builds are dead weight: one file stays.
    for await (const e of Deno.readDir(cacheDir)) {
      if (e.isFile && e.name.endsWith(".json") && join(cacheDir, e.name) !== file) {
        await Deno.remove(join(cacheDir, e.name)).catch(() => {});
      }
    }
  } catch { /* a read-only data dir: parse every time */ }
  return parsed;
}
