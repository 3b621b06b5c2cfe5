/**
 * The OS sandbox probe (core/policy/sandbox/mod.ts `detectBackend`): a successful bwrap probe is
 * cached in the data dir per bwrap binary, kernel and user, so a later start spawns no probe
 * before its first request (issue 22); a failed probe is never cached. Each case is a fresh
 * process (the probe is memoised per process), with a `bwrap` wrapper on PATH that logs each
 * call and then runs the real bwrap (or fails).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT } from "./support/run_coyote.ts";

const REAL_BWRAP = ["/usr/bin/bwrap", "/bin/bwrap"].find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

async function probeOnce(binDir: string, dataDir: string): Promise<{ backend?: string }> {
  const code = `import { detectBackend } from "${REPO_ROOT}/core/policy/sandbox/mod.ts";
const d = await detectBackend({ cacheDir: ${JSON.stringify(dataDir)} });
console.log(JSON.stringify({ backend: d.backend?.name }));`;
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", join(REPO_ROOT, "deno.json"), code],
    env: { PATH: `${binDir}:/usr/bin:/bin`, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
  return JSON.parse(new TextDecoder().decode(o.stdout).trim().split("\n").pop()!);
}

async function calls(log: string): Promise<number> {
  const t = await Deno.readTextFile(log).catch(() => "");
  return t.split("\n").filter(Boolean).length;
}

Deno.test({
  name:
    "sandbox probe: a success is cached per bwrap binary; a failure is probed again every start",
  ignore: !REAL_BWRAP,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "coyote-probe-" });
    try {
      const bin = join(dir, "bin");
      const data = join(dir, "data");
      const log = join(dir, "calls.log");
      await Deno.mkdir(bin);
      const wrapper = join(bin, "bwrap");
      const write = async (body: string) => {
        await Deno.writeTextFile(wrapper, `#!/bin/sh\necho "$@" >> ${log}\n${body}\n`);
        await Deno.chmod(wrapper, 0o755);
      };
      await write(`exec ${REAL_BWRAP} "$@"`);

      assert.deepEqual(await probeOnce(bin, data), { backend: "bwrap" });
      assert.equal(await calls(log), 1, "the first start probes");
      const cache = JSON.parse(await Deno.readTextFile(join(data, "sandbox-probe.json")));
      assert.equal(cache.ok, true);
      assert.deepEqual(await probeOnce(bin, data), { backend: "bwrap" });
      assert.equal(await calls(log), 1, "a second start uses the cached success: no probe");

      // Another bwrap binary (different size and mtime): a new key, probed; it fails.
      await write(`echo "bwrap: No permissions to create new namespace" >&2\nexit 1`);
      assert.deepEqual(await probeOnce(bin, data), {});
      assert.equal(await calls(log), 2, "a changed bwrap is probed");
      assert.deepEqual(await probeOnce(bin, data), {});
      assert.equal(await calls(log), 3, "a failure is never cached: probed again");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
