/**
 * Eighth attacker pass: descriptors Coyote inherits without close-on-exec (a socket an editor,
 * ACP client or wrapper left open, a directory descriptor) passed through Deno.Command and bwrap
 * into every sandboxed command. An inherited connected unix socket went around the socket filter
 * to a daemon on the host; a directory descriptor leads out of the mount namespace
 * (`/proc/self/fd/N/…`). The command's bash now closes every descriptor above 2 before anything
 * else runs (core/policy/sandbox/mod.ts `CLOSE_INHERITED_FDS`). Headless `coyote` on real bwrap,
 * started by bash holding fd 9 (a file outside the workspace, for writing) and fd 8 (a folder
 * outside everything the sandbox shows), with the guard as it is and forced open. (A socket is a
 * descriptor like these; bash cannot connect one, so it is not among them.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { headlessAttack } from "./support/headless_attack.ts";

for (const forced of [false, true]) {
  Deno.test(`inherited descriptors do not reach the sandboxed command (headless, real bwrap${forced ? ", guard forced open" : ""})`, async () => {
    const { backend } = await detectBackend();
    assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fds-" }));
    const ws = join(root, "ws"), outside = join(root, "outside");
    await Deno.mkdir(ws);
    await Deno.mkdir(outside);
    await Deno.writeTextFile(join(outside, "host.txt"), "HOST-ONLY-CONTENT\n");
    await Deno.writeTextFile(join(outside, "listed-name.txt"), "");
    const log = join(root, "written.txt");
    await Deno.writeTextFile(log, "");
    try {
      const run = await headlessAttack(
        ws,
        [],
        [
          { id: "w", command: "echo PLANTED >&9; true" },
          { id: "r", command: "cat /proc/self/fd/8/host.txt; ls /proc/self/fd/8/; true" },
          { id: "l", command: "ls /proc/self/fd" },
        ],
        [],
        {
          extra: forced ? { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" } : undefined,
          inherit: `9>>'${log}' 8<'${outside}'`,
        },
      );
      assert.deepEqual(run.denied, []);
      assert.equal(await Deno.readTextFile(log), "", "nothing written through the inherited fd 9");
      assert.doesNotMatch(run.sent, /HOST-ONLY-CONTENT|listed-name/, "no read through fd 8");
      assert.match(run.sent, /Bad file descriptor|No such file/, "the descriptors are closed");
    } finally {
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  });
}
