/**
 * The home scan's cache across processes (core/policy/sandbox/home_scan.ts `ScanCache`,
 * `<dataDir>/home-scan.json`): a later process reuses a store's scan by stat'ing the folders and
 * config files it read (no directory read), and reads again what changed — a folder that gained
 * an entry, a config file whose content changed; a corrupt cache file is a cold scan, not an
 * error. Each scan runs in its own process (the in-process 60 s reuse does not apply).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";

const MODULE = new URL("../core/policy/sandbox/home_scan.ts", import.meta.url).href;

/** One scan of `store` in a fresh process with the cache in `dataDir`: what it hides, how many folders came from the cache. */
async function scanInProcess(
  store: string,
  dataDir: string,
): Promise<{ found: string[]; reused: number; folders: number }> {
  const code = `
    const count = (r) => r ? 1 + (r.sub ?? []).reduce((n, [, k]) => n + count(k), 0) : 0;
    const m = await import(${JSON.stringify(MODULE)});
    const c = m.openScanCache(${JSON.stringify(dataDir)});
    const found = m.scanSecrets(${JSON.stringify(store)}, c);
    m.saveScanCache(c);
    console.log(JSON.stringify({ found: found.sort(), reused: c.reused,
      folders: count(c.stores[${JSON.stringify(store)}]) }));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Past the scan's 2 s racy window, so what was just made is trusted from the cache. */
const settle = () => new Promise((r) => setTimeout(r, 2100));

Deno.test("home scan cache: reused by stat, invalidated by a new entry, a config change, a corrupt file", async () => {
  const root = await Deno.makeTempDir({ prefix: "coyote-scan-cache-" });
  try {
    const store = join(root, "store");
    const dataDir = join(root, "data");
    const deep = join(store, "tool", "versions", "1.2", "profiles", "work");
    await Deno.mkdir(deep, { recursive: true });
    await Deno.mkdir(join(store, "clones", "repo.git"), { recursive: true });
    const config = join(store, "clones", "repo.git", "config");
    await Deno.writeTextFile(config, "[core]\n\tbare = true\n");
    await Deno.writeTextFile(join(deep, "notes.txt"), "x");
    await settle();

    const cold = await scanInProcess(store, dataDir);
    assert.deepEqual(cold.found, []);
    assert.equal(cold.reused, 0);
    assert.ok(cold.folders >= 7, `folders cached: ${cold.folders}`);
    assert.ok((await Deno.stat(join(dataDir, "home-scan.json"))).isFile);

    const warm = await scanInProcess(store, dataDir);
    assert.deepEqual(warm.found, []);
    assert.equal(warm.reused, cold.folders, "every folder from the cache, none read again");

    // A browser profile appears deep in the store: its folder's mtime moved, so it is read again.
    await Deno.writeTextFile(join(deep, "Login Data"), "sqlite");
    const profile = await scanInProcess(store, dataDir);
    assert.deepEqual(profile.found, ["tool/versions/1.2/profiles/work"]);
    assert.equal(profile.reused, cold.folders - 1, "only the changed folder read again");

    // A clone's config gains a credential helper: the file's own stamp moved, it is read again.
    await Deno.writeTextFile(config, "[core]\n\tbare = true\n[credential]\n\thelper = store\n");
    const cred = await scanInProcess(store, dataDir);
    assert.deepEqual(cred.found, ["clones/repo.git/config", "tool/versions/1.2/profiles/work"]);

    // A corrupt cache file: a cold scan, the same answer, no error; the file is written anew.
    await Deno.writeTextFile(join(dataDir, "home-scan.json"), '{"key": "x", "stores": [1');
    const corrupt = await scanInProcess(store, dataDir);
    assert.equal(corrupt.reused, 0);
    assert.deepEqual(corrupt.found, cred.found);
    JSON.parse(await Deno.readTextFile(join(dataDir, "home-scan.json")));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
