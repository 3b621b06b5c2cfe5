/**
 * The built-ins parsed at build time (core/agents/builtins.gen.json, `deno task gen`; issue 22
 * item 7): the module is fresh for the embedded agent and skill files, a start uses it without
 * parsing YAML or touching the data dir, and what it gives equals a fresh parse.
 * @module
 */
import assert from "node:assert/strict";
import { generatedText } from "../scripts/gen_builtins.ts";
import { cacheKey, loadBuiltins, parseBuiltins } from "../core/agents/builtins.ts";
import generated from "../core/agents/builtins.gen.json" with { type: "json" };

Deno.test("built-ins: core/agents/builtins.gen.json is fresh (else run `deno task gen`)", async () => {
  const now = await Deno.readTextFile(new URL("../core/agents/builtins.gen.json", import.meta.url));
  assert.equal(generated.key, await cacheKey(), "stale: run `deno task gen`");
  assert.equal(now, await generatedText(), "stale: run `deno task gen`");
});

Deno.test("built-ins: a start takes the generated module: no cache file written, equal to a fresh parse", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-builtins-gen-" });
  try {
    const loaded = await loadBuiltins(dir);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing parsed, nothing cached");
    assert.deepEqual(loaded, await parseBuiltins());
    // Each call gets its own copy: a caller's change does not leak into the next start's entries.
    loaded.agents[0].name = "changed";
    assert.notEqual((await loadBuiltins(dir)).agents[0].name, "changed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
