/**
 * `deno task gen`: writes core/agents/builtins.gen.json, the built-in agents and skills parsed at
 * build time (core/agents/builtins.ts), so no build parses YAML for them at start, and
 * core/tools/builtin_tools.gen.json, the built-in tools' schemas (./gen_tools.ts), so no run
 * imports zod before its first tool call, and core/config/schema_stamp.gen.json (./gen_config_stamp.ts). Run it after changing a file under agents/ or skills/
 * or a built-in tool's name, description or schema; tests/builtins_generated_test.ts and
 * tests/tool_stubs_test.ts fail while a file is stale. `--check` writes nothing and exits 1 when
 * a file is stale.
 * @module
 */
import { cacheKey, parseBuiltins, storedForm } from "../core/agents/builtins.ts";
import { TOOLS_OUT, toolsGeneratedText } from "./gen_tools.ts";
import { STAMP_OUT, stampText } from "./gen_config_stamp.ts";

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
  let stale = false;
  for (
    const [out, text] of [
      [OUT, await generatedText()],
      [TOOLS_OUT, toolsGeneratedText()],
      [STAMP_OUT, await stampText()],
    ] as const
  ) {
    const name = out.pathname.replace(/.*\/core\//, "core/");
    const now = await Deno.readTextFile(out).catch(() => "");
    if (Deno.args.includes("--check")) {
      if (now !== text) {
        console.error(`${name} is stale: run \`deno task gen\``);
        stale = true;
      }
    } else if (now !== text) {
      await Deno.writeTextFile(out, text);
      console.error(`wrote ${name}`);
    } else console.error(`${name} is up to date`);
  }
  if (stale) Deno.exit(1);
}
