/**
 * The built-in agents and skills, parsed at build time.
 *
 * Parsing them (npm `yaml`, the zod schemas, ~20 files) costs tens of milliseconds, for a result
 * that only changes with Coyote itself. So `deno task gen` (scripts/gen_builtins.ts) writes the
 * parsed form to `./builtins.gen.json`, imported as a JSON module (embedded in the binary like the
 * texts): no YAML parse at start in any build, and no per-build cache to miss when two builds (an
 * installed binary and a checkout) share a data dir. The module records {@link cacheKey}, the
 * SHA-256 of {@link CACHE_FORMAT}, the Coyote version and every embedded file's text;
 * tests/builtins_generated_test.ts fails when it is stale.
 *
 * A checkout whose agent or skill files were edited without `deno task gen` (the key differs)
 * falls back to the parsed form cached in `<data dir>/builtin-cache/<key>.json`, parsed and
 * written on a miss (to a temporary file, then renamed, so a concurrent reader never sees half of
 * one). The {@link KEEP} newest entries stay, so builds that share a data dir do not evict each
 * other. A missing, unreadable or malformed cache file is parsed again; a data dir that cannot be
 * written only costs the parse. Graph agents are stored with their description; their text stays
 * the embedded one.
 * @module
 */
import { join } from "../util/path.ts";
import { keepNewest, writeTextAtomic } from "../util/files.ts";
import pkg from "../../deno.json" with { type: "json" };
import { builtinAgentFiles } from "../../agents/mod.ts";
import { builtinSkillFiles } from "../../skills/mod.ts";
import { type AgentEntry, parseBuiltinAgents } from "./registry.ts";
import { parseSkill, type SkillEntry } from "../extensions/skills/load.ts";
import generated from "./builtins.gen.json" with { type: "json" };

/** Bump when the parsers' output for the same text changes. */
export const CACHE_FORMAT = 2;

/** The parsed built-ins. */
export interface Builtins {
  agents: AgentEntry[];
  skills: SkillEntry[];
  /** Problems parsing the skills (an agent's ride on its entry; a test keeps both empty). */
  warnings: string[];
}

/** Data-dir cache entries kept (newest first): one per build that shares the data dir. */
export const KEEP = 4;

/** What `deno task gen` writes to `./builtins.gen.json`. */
export interface GeneratedBuiltins extends Builtins {
  /** {@link cacheKey} of the texts it was parsed from. */
  key: string;
}

/** The key of this build's embedded built-ins (see the module doc). */
export async function cacheKey(): Promise<string> {
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

/** The stored form: graph texts are not duplicated (they stay the embedded ones). */
export function storedForm(b: Builtins): Builtins {
  return { ...b, agents: b.agents.map(({ graphText: _g, ...e }) => e) };
}

/** A stored form back to entries: each graph gets its embedded text again. */
function withGraphTexts(b: Builtins): Builtins {
  for (const e of b.agents) {
    if (e.kind === "graph") e.graphText = builtinAgentFiles.find((f) => f.name === e.name)?.text;
  }
  return b;
}

/**
 * The built-ins: the generated module when it matches this build's texts (the normal case, no
 * parse, no file read), else the data-dir cache in `cacheDir` when it holds this build's entry,
 * else parsed (and cached). Without `cacheDir`, parsed on a mismatch. Never throws. `gen` replaces
 * the generated module (tests).
 */
export async function loadBuiltins(
  cacheDir?: string,
  gen: GeneratedBuiltins = generated as unknown as GeneratedBuiltins,
): Promise<Builtins> {
  const key = await cacheKey();
  if (gen.key === key && isBuiltins(gen)) {
    const { key: _k, ...b } = structuredClone(gen);
    return withGraphTexts(b);
  }
  if (!cacheDir) return parseBuiltins();
  const file = join(cacheDir, `${key}.json`);
  try {
    const cached = JSON.parse(await Deno.readTextFile(file));
    if (isBuiltins(cached)) return withGraphTexts(cached);
  } catch { /* missing or malformed: parse again */ }
  const parsed = await parseBuiltins();
  try {
    await Deno.mkdir(cacheDir, { recursive: true });
    await writeTextAtomic(file, JSON.stringify(storedForm(parsed)));
    // Other builds' entries stay (up to KEEP, newest first): two builds sharing a data dir both hit.
    await keepNewest(cacheDir, /^[0-9a-f]{64}\.json$/, KEEP, file);
  } catch { /* a read-only data dir: parse every time */ }
  return parsed;
}
