/**
 * `deno task gen`: writes core/agents/builtins.gen.json, the built-in agents and skills parsed at
 * build time (core/agents/builtins.ts), so no build parses YAML for them at start. Run it after
 * changing a file under agents/ or skills/; tests/builtins_generated_test.ts fails while the file
 * is stale. `--check` writes nothing and exits 1 when the file is stale.
 * @module
 */
import { cacheKey, parseBuiltins, storedForm } from "../core/agents/builtins.ts";

const OUT = new URL("../core/agents/builtins.gen.json", import.meta.url);

/** The generated module's text for the embedded files as they are now. */
export async function generatedText(): Promise<string> {
  const parsed = await parseBuiltins();
  if (parsed.warnings.length) {
    throw new Error(`built-in skills have problems:\n${parsed.warnings.join("\n")}`);
  }
  return JSON.stringify({ key: await cacheKey(), ...storedForm(parsed) }, null, 1) + "\n";
}

if (import.meta.main) {
  const text = await generatedText();
  const now = await Deno.readTextFile(OUT).catch(() => "");
  if (Deno.args.includes("--check")) {
    if (now !== text) {
      console.error("core/agents/builtins.gen.json is stale: run `deno task gen`");
      Deno.exit(1);
    }
  } else if (now !== text) {
    await Deno.writeTextFile(OUT, text);
    console.error("wrote core/agents/builtins.gen.json");
  } else console.error("core/agents/builtins.gen.json is up to date");
}
