/**
 * Our modules' static module graphs as `deno info --json` resolves them (literal dynamic imports
 * and type-only imports not followed): what a module loads at run time before any `import()`.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "./run_coyote.ts";

/** `deno info --json ROOT` with the project's deno.json (asserts it succeeds), parsed. */
export async function denoInfo(root: string): Promise<unknown> {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--config", join(REPO_ROOT, "deno.json"), root],
    cwd: REPO_ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
  return JSON.parse(new TextDecoder().decode(o.stdout));
}

/**
 * zod in `root`'s static module graph (literal dynamic imports not followed): an import of zod, or
 * of an npm package that depends on zod (the ACP SDK, openai), as "<importer> imports <specifier>".
 */
export async function staticZod(root: string): Promise<string[]> {
  return await staticImports(root, (s, zodUsers) => {
    if (!s.startsWith("npm:")) return false;
    const name = npmName(s);
    return name === "zod" || zodUsers.has(name);
  });
}

// `npm:openai@^7` → "openai"; a package "openai@7.59.0_zod@4.6.7" depending on "zod@4.6.7".
const npmName = (s: string) => s.replace(/^npm:\/?/, "").replace(/(.)@.*$/, "$1");

/**
 * The imports of `root`'s static module graph (literal dynamic imports not followed) that `hit`
 * matches (npm and node: specifiers are leaves), as "<importer> imports <specifier>".
 */
export async function staticImports(
  root: string,
  hit: (specifier: string, zodUsers: Set<string>) => boolean,
): Promise<string[]> {
  const info = await denoInfo(root) as {
    roots: string[];
    npmPackages?: Record<string, { dependencies?: string[] }>;
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
    }[];
  };
  const bySpec = new Map(info.modules.map((m) => [m.specifier, m]));
  const zodUsers = new Set(
    Object.entries(info.npmPackages ?? {}).filter(([, p]) =>
      (p.dependencies ?? []).some((d) => d.startsWith("zod@"))
    ).map(([k]) => npmName(k)),
  );
  const seen = new Set<string>(info.roots);
  const queue = [...info.roots];
  const found: string[] = [];
  while (queue.length) {
    const m = bySpec.get(queue.shift()!);
    for (const d of m?.dependencies ?? []) {
      const s = d.code?.specifier;
      if (!s || d.isDynamic || seen.has(s)) continue;
      seen.add(s);
      if (hit(s, zodUsers)) found.push(`${m!.specifier} imports ${s}`);
      if (!s.startsWith("npm:") && !s.startsWith("node:")) queue.push(s);
    }
  }
  return found;
}
