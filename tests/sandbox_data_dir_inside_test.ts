/**
 * Final trial of the round: a workspace that contains a Coyote data dir with checkpoint stores
 * (`coyote` started in `~`, which holds `~/.local/share/coyote`, or in `/tmp`, which holds other
 * sessions' `coyote-data-*`) failed every command: the data dir is hidden as a read-only tmpfs and
 * the checkpoint store inside it (a bare repository, so protected) was bound read-only below it,
 * where bwrap could not make the mount point ("bwrap: Can't mkdir … Read-only file system"). A
 * read-only path inside a sealed hidden folder is now hidden with it (core/policy/sandbox/
 * bwrap.ts); and the after-command cleanup no longer quarantines what Coyote itself wrote into
 * its data dir meanwhile (`etc-scan.json`, ./cleanup.ts). Headless on real bwrap, as a user runs it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { headlessTurns } from "./support/headless_attack.ts";
import { git } from "./support/journeys.ts";

async function run(ws: string, extra: Record<string, string>): Promise<string> {
  const r = await headlessTurns(ws, [[{ id: "c1", command: "echo made > f.txt; pwd; ls" }]], [], {
    extra,
  });
  return r.result("c1");
}

Deno.test("sandbox: commands run in a workspace holding Coyote's data dir with checkpoint stores", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "ws-datadir-" }));
  try {
    await git(ws, "init", "-q");
    const data = join(ws, ".local", "share", "coyote");
    // The first run makes the checkpoint store inside the workspace; the second meets it.
    for (const i of [1, 2]) {
      const out = await run(ws, { COYOTE_DATA_DIR: data });
      assert.match(out, /exit code 0/, `run ${i}: ${out}`);
      assert.doesNotMatch(out, /bwrap: Can't/, `run ${i}: ${out}`);
      assert.match(out, /f\.txt/, `run ${i}: ${out}`);
      assert.doesNotMatch(out, /quarantine/, `Coyote's own files are not the command's: ${out}`);
    }
    assert.ok((await Deno.stat(join(data, "checkpoints"))).isDirectory, "the store is there");
    // The temp dir inside the workspace, holding another session's data dir with a store.
    const other = join(ws, "tmp", "coyote-data-other", "checkpoints", "abc");
    await Deno.mkdir(other, { recursive: true });
    await git(other, "init", "-q", "--bare");
    const out = await run(ws, { TMPDIR: join(ws, "tmp") });
    assert.match(out, /exit code 0/, out);
    assert.doesNotMatch(out, /bwrap: Can't/, out);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
