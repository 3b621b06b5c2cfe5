/**
 * Files a protected start-up file loads (docs/permissions.md "The OS sandbox"; issue 16, eleventh
 * attacker pass): `.Rprofile` runs `source("renv/activate.R")` at every R start, an `.envrc` runs
 * `source_env`, `source ./x.sh`, `dotenv`, `use flake` — and direnv does not ask again when only
 * the loaded file changed. Not a list of names but the start-up files' own loading statements:
 * the workspace files they name (and the files those name, shell and R ones, a few levels deep)
 * are protected like the start-up file itself, the way git's `include.path` files are
 * (./git_dirs.ts): read-only in the sandbox when they exist, removed when a command creates one,
 * and the file tools ask before writing one (core/policy/paths.ts).
 *
 * Read: the start-up files ./protected.ts `findProtected` found (`.envrc`, `.autoenv.zsh`,
 * `.Rprofile`, `.irbrc`, `.pryrc`, `.exrc`, `.nvimrc`, `.nvim.lua`, `.lazy.lua`), up to 256 KiB
 * each, and at most {@link SOURCE_LIMIT} files in all. Only literal paths count: a name built from
 * variables, globs or the home folder is not followed (not covered; docs say so).
 * @module
 */

import { resolvePath } from "../rules.ts";

/** Files read and named per workspace at most. */
export const SOURCE_LIMIT = 64;
const READ_LIMIT = 256 << 10;
const DEPTH = 3;

export type Lang = "sh" | "r" | "rb" | "vim" | "lua";

/** The language a start-up file (lower-case name) is read as, or undefined when it is not one. */
function startupLang(lower: string): Lang | undefined {
  if (lower === ".envrc" || lower === ".autoenv.zsh" || lower === ".autoenv_leave.zsh") return "sh";
  if (lower === ".rprofile") return "r";
  if (lower === ".irbrc" || lower === ".pryrc") return "rb";
  if (lower === ".exrc" || lower === ".nvimrc") return "vim";
  if (lower === ".nvim.lua" || lower === ".lazy.lua") return "lua";
  return undefined;
}

/** The language of a file a start-up file loads: by its name's ending, else its loader's. */
function loadedLang(lower: string, from: Lang): Lang {
  if (lower.endsWith(".r")) return "r";
  if (lower.endsWith(".rb")) return "rb";
  if (lower.endsWith(".vim")) return "vim";
  if (lower.endsWith(".lua")) return "lua";
  return /\.(sh|bash|zsh)$/.test(lower) ? "sh" : from;
}

const SH_WORD = String.raw`(?:^|[;&|({]|\b(?:then|do|else)\b)\s*`;
const SH_LOAD = new RegExp(
  `${SH_WORD}(source_env_if_exists|source_env|source|\\.|dotenv_if_exists|dotenv|use)(?=\\s|$)([^;&|\\n#]*)`,
  "g",
);

/** A shell word without its quotes, or undefined when it is not a literal path. */
function literal(w: string | undefined): string | undefined {
  if (!w) return undefined;
  const s = w.replace(/^(["'])(.*)\1$/, "$2");
  return /[$`*?[\]{}~\\<>()]/.test(s) || !s ? undefined : s;
}

/** The paths (as written) a start-up file's text loads, in language `lang`. */
export function loadedPaths(text: string, lang: Lang): string[] {
  const out: string[] = [];
  if (lang === "sh") {
    for (const line of text.split("\n")) {
      for (const m of line.matchAll(SH_LOAD)) {
        const args = m[2].trim().split(/\s+/).filter(Boolean);
        const verb = m[1];
        if (verb === "use") {
          // direnv's `use nix [file]` (default shell.nix, then default.nix), `use flake [ref]`.
          if (args[0] === "nix") {
            const f = args.slice(1).find((a) => !a.startsWith("-"));
            out.push(...(f ? [f] : ["shell.nix", "default.nix"]));
          } else if (args[0] === "flake") {
            const ref = args[1] ?? ".";
            const dir = ref.split("#")[0] || ".";
            if (!ref.includes(":")) out.push(`${dir}/flake.nix`);
          }
          continue;
        }
        if (verb.startsWith("dotenv") && !args.length) {
          out.push(".env");
          continue;
        }
        const p = literal(args[0]);
        if (p) out.push(p);
      }
    }
  } else if (lang === "r") {
    for (
      const m of text.matchAll(/\b(?:sys\.)?source\s*\(\s*(?:file\s*=\s*)?(["'])([^"'\n]+)\1/g)
    ) {
      out.push(m[2]);
    }
  } else if (lang === "rb") {
    for (
      const m of text.matchAll(
        /\b(load|require_relative|require)\s*\(?\s*(["'])([^"'\n]+)\2/g,
      )
    ) {
      if (m[1] === "require" && !m[3].startsWith(".")) continue;
      out.push(
        m[1] === "require_relative" || m[1] === "require"
          ? (m[3].endsWith(".rb") ? m[3] : `${m[3]}.rb`)
          : m[3],
      );
    }
  } else if (lang === "vim") {
    for (const m of text.matchAll(/^\s*(?:so|sou|sour|sourc|source|luafile)!?\s+(\S+)/gm)) {
      const p = literal(m[1]);
      if (p) out.push(p);
    }
  } else {
    for (
      const m of text.matchAll(
        /\b(?:dofile|loadfile|vim\.cmd\.source|vim\.cmd\.luafile)\s*\(?\s*(["'])([^"'\n]+)\1/g,
      )
    ) out.push(m[2]);
    for (const m of text.matchAll(/\bvim\.cmd\s*\(?\s*(["'])\s*so(?:urce)?!?\s+([^"'\n]+)\1/g)) {
      const p = literal(m[2].trim());
      if (p) out.push(p);
    }
  }
  return out;
}

const read = (p: string) => {
  try {
    const st = Deno.statSync(p);
    if (!st.isFile || st.size > READ_LIMIT) return undefined;
    return Deno.readTextFileSync(p);
  } catch {
    return undefined;
  }
};

/**
 * The workspace files (absolute paths inside `ws`, existing or not) that the start-up files among
 * `protectedPaths` load, directly or through files they load (up to 3 levels), each with why
 * (`loaded by .envrc (source): …`). Paths outside `ws` and the start-up files themselves are left
 * out (they are protected anyway).
 */
export function startupSources(
  ws: string,
  protectedPaths: Iterable<string>,
): Map<string, string> {
  const out = new Map<string, string>();
  // [file, its language, depth, the start-up file's path relative to ws, the folder it starts in]
  const queue: [string, Lang, number, string, string][] = [];
  for (const p of protectedPaths) {
    const lang = startupLang(p.slice(p.lastIndexOf("/") + 1).toLowerCase());
    if (lang && p.startsWith(ws + "/")) {
      queue.push([p, lang, 0, p.slice(ws.length + 1), p.slice(0, p.lastIndexOf("/"))]);
    }
  }
  let reads = 0;
  while (queue.length && reads < SOURCE_LIMIT) {
    const [file, lang, depth, top, base] = queue.shift()!;
    const text = read(file);
    reads++;
    if (text === undefined) continue;
    // direnv runs `.envrc` in its folder, and R and vim start in the folder their start-up file is
    // in: relative paths, also in the files it loads, are relative to that folder.
    for (const raw of loadedPaths(text, lang)) {
      const p = resolvePath(raw, base, "/");
      if (!p.startsWith(ws + "/") || out.has(p) || out.size >= SOURCE_LIMIT) continue;
      const lower = p.slice(p.lastIndexOf("/") + 1).toLowerCase();
      if (startupLang(lower)) continue;
      out.set(
        p,
        `loaded by ${top}${
          depth ? " (through a file it loads)" : ""
        }, a start-up file that runs on the host: the file it loads runs too`,
      );
      if (depth + 1 < DEPTH) queue.push([p, loadedLang(lower, lang), depth + 1, top, base]);
    }
  }
  return out;
}

/** Per workspace, the files the last ./protected.ts `findProtected` found start-up files load. */
const last = new Map<string, Map<string, string>>();

/** Records what {@link startupSources} found for `ws` (for {@link startupSourcesFor}). */
export function rememberSources(ws: string, sources: Map<string, string>): void {
  last.set(ws, sources);
}

/**
 * The start-up file (absolute path) that loads `p` by the last scan of `ws`, if `p` is one
 * ({@link startupSources}): the cleanup leaves a loaded file alone when its start-up file is new
 * (removed itself, it loads nothing any more).
 */
export function loaderOf(ws: string, p: string): string | undefined {
  const why = last.get(ws)?.get(p);
  const m = why && /^loaded by (.+?)(?: \(through a file it loads\))?, a start-up file/.exec(why);
  return m ? `${ws}/${m[1]}` : undefined;
}

/**
 * For the file tools (core/policy/paths.ts), which do not walk the workspace: what the last scan
 * of `ws` found, and what the start-up files at the workspace's top load now.
 */
export function startupSourcesFor(ws: string): Map<string, string> {
  const top: string[] = [];
  try {
    for (const e of Deno.readDirSync(ws)) {
      if (e.isFile && startupLang(e.name.toLowerCase())) top.push(`${ws}/${e.name}`);
    }
  } catch { /* no workspace listing */ }
  return new Map([...(last.get(ws) ?? []), ...startupSources(ws, top)]);
}
