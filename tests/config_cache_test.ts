/**
 * The parsed-config cache (core/config/parse_cache.ts; issue 22): a config file that parsed before
 * is served from the data dir without `yaml` or `zod`; errors are never cached; a changed text is
 * parsed again; the schema stamp is fresh; project-config rules still apply to a cached parse; a
 * real run with a config.yaml works from the cache.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { STAMP_OUT, stampText } from "../scripts/gen_config_stamp.ts";
import { configCacheDir, loadConfig } from "../core/config/config.ts";
import { readProjectFile } from "../core/config/project.ts";
import { ConfigError } from "../core/protocol/errors.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const files = (dir: string) => {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch {
    return [];
  }
};

Deno.test("config cache: the schema stamp is fresh (else run `deno task gen`)", async () => {
  assert.equal(await Deno.readTextFile(STAMP_OUT), await stampText(), "stale: run `deno task gen`");
});

Deno.test("config cache: a parsed config.yaml is served from the cache; errors are never cached; a new text is parsed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-cfgcache-" });
  const cfgDir = join(dir, "cfg");
  const cache = configCacheDir(join(dir, "data"));
  try {
    await Deno.mkdir(cfgDir);
    await Deno.writeTextFile(join(cfgDir, "config.yaml"), "max_turns: 7\n");
    const first = await loadConfig(cfgDir, { cacheDir: cache });
    assert.equal(first.config.max_turns, 7);
    const [entry] = files(cache);
    assert.match(entry, /^[0-9a-f]{64}\.json$/);
    // Prove the second load reads the entry: it answers what the entry says.
    await Deno.writeTextFile(join(cache, entry), JSON.stringify({ value: { max_turns: 99 } }));
    assert.equal((await loadConfig(cfgDir, { cacheDir: cache })).config.max_turns, 99);
    // A malformed entry is parsed again (and rewritten).
    await Deno.writeTextFile(join(cache, entry), "{ not json");
    assert.equal((await loadConfig(cfgDir, { cacheDir: cache })).config.max_turns, 7);
    // A changed text is a new key; an invalid one is an error every time and never cached.
    await Deno.writeTextFile(join(cfgDir, "config.yaml"), "max_turnz: 7\n");
    for (let i = 0; i < 2; i++) {
      await assert.rejects(() => loadConfig(cfgDir, { cacheDir: cache }), /max_turnz/);
    }
    assert.equal(files(cache).length, 1, "the error was not cached");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("config cache: a config that holds a secret is never cached (the data dir stays free of secrets)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-cfgcache-" });
  const cfgDir = join(dir, "cfg");
  const cache = configCacheDir(join(dir, "data"));
  try {
    await Deno.mkdir(cfgDir);
    for (
      const text of [
        "provider:\n  api_key: sk-not-a-real-key-123456\n",
        "mcpServers:\n  x:\n    command: srv\n    env:\n      API_TOKEN: abc123secret\n",
        "mcpServers:\n  x:\n    url: https://mcp.example\n    headers:\n      Authorization: Bearer tok-xyz\n",
      ]
    ) {
      await Deno.writeTextFile(join(cfgDir, "config.yaml"), text);
      await loadConfig(cfgDir, { cacheDir: cache });
      assert.deepEqual(files(cache), [], text);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("config cache: a project file's rules hold on a cached parse (trusted_workspaces refused)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-cfgcache-" });
  const cache = configCacheDir(join(dir, "data"));
  try {
    const file = join(dir, "config.yaml");
    await Deno.writeTextFile(file, "trusted_workspaces: [/]\n");
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        () => readProjectFile(file, { cacheDir: cache }),
        (e) => e instanceof ConfigError && /only the user config.yaml can trust/.test(e.message),
      );
    }
    assert.equal(files(cache).length, 1, "the parse is cached, the rule still refuses it");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("config cache: a run with a config.yaml, twice; the second run is served from the cache", async () => {
  const server = await startModelServer({ script: [{ text: "one" }, { text: "two" }] });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-cfgcache-ws-" });
  try {
    await Deno.writeTextFile(join(env.configDir, "config.yaml"), "max_turns: 5\n");
    const e = childEnv(env, { baseURL: server.baseURL });
    const a = await runCoyote(["--headless", "hello"], { cwd, env: e });
    assert.equal(a.code, 0, a.stderr);
    assert.equal(files(configCacheDir(env.dataDir)).length, 1);
    const b = await runCoyote(["--headless", "again"], { cwd, env: e });
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /two/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
