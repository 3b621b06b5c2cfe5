/**
 * Eighth attacker pass: a path a `Read` deny rule names literally is hidden inside the OS sandbox
 * by a mount over it, and a mount moves with its folder. `mv config c2` (a write in the workspace,
 * auto-allowed) used to succeed, and the next command read `c2/secret.txt`, which the rule
 * `Read(config/deep/secret.txt)` no longer names. The folders between a hidden or masked path and
 * its writable root are now mount points themselves (core/policy/sandbox/bwrap.ts `parentChain`),
 * so the rename fails (`EBUSY`). Unit rows on the profile's chain, then headless `coyote` on real
 * bwrap with the guard as it is and forced open: the secret never reaches the model and the host
 * tree keeps its names.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parentChain } from "../core/policy/sandbox/bwrap.ts";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { headlessAttack } from "./support/headless_attack.ts";
import { exists } from "./support/sandbox_world.ts";

/** A workspace with config/deep/secret.txt and a/sdir/x (both to be hidden). */
async function workspace(): Promise<string> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-hidemv-" }));
  await Deno.mkdir(join(ws, "config", "deep"), { recursive: true });
  await Deno.mkdir(join(ws, "a", "sdir"), { recursive: true });
  await Deno.writeTextFile(join(ws, "config", "deep", "secret.txt"), "S3CRET-FILE\n");
  await Deno.writeTextFile(join(ws, "a", "sdir", "x"), "S3CRET-DIR\n");
  await Deno.writeTextFile(join(ws, "README.md"), "readme\n");
  return ws;
}

Deno.test("hidden paths: the folders above a hidden or masked path in the workspace are in the chain", async () => {
  const ws = await workspace();
  try {
    const chain = parentChain(
      {
        writable: [{ path: ws, why: "" }],
        readOnly: [],
        readable: [],
        hidden: [
          { path: join(ws, "config", "deep", "secret.txt"), why: "" },
          { path: join(ws, "a", "sdir"), why: "" },
          { path: join(ws, "gone", "secret.txt"), why: "" }, // absent: no mount, no chain
          { path: "/etc/shadow", why: "" }, // outside every writable root
        ],
        masked: [{ path: join(ws, "a", "cfg"), source: "/dev/null", why: "" }],
        notes: [],
      } as unknown as Parameters<typeof parentChain>[0],
    );
    assert.deepEqual(chain.sort(), [join(ws, "a"), join(ws, "config"), join(ws, "config", "deep")]);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

for (const forced of [false, true]) {
  Deno.test(`hidden paths: renaming a folder above one does not move the secret to a new name (headless, real bwrap${forced ? ", guard forced open" : ""})`, async () => {
    const { backend } = await detectBackend();
    assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
    const ws = await workspace();
    try {
      const run = await headlessAttack(ws, [], [
        { id: "m1", command: "mv config c2; mv config/deep config/d2; mv a a2; true" },
        { id: "r1", command: "cat c2/deep/secret.txt config/d2/secret.txt a2/sdir/x; true" },
        { id: "w1", command: "echo fine > config/new.txt && cat config/new.txt" },
      ], [
        "--deny",
        "Read(config/deep/secret.txt)",
        "--deny",
        "Read(a/sdir)",
      ], { extra: forced ? { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" } : undefined });
      assert.deepEqual(run.denied, []);
      assert.doesNotMatch(run.sent, /S3CRET/, "the hidden contents never reach the model");
      assert.match(run.sent, /Device or resource busy/, "the rename was refused");
      assert.match(run.sent, /fine/, "the folder above the hidden file stays writable");
      for (const p of ["config/deep/secret.txt", "a/sdir/x"]) {
        assert.ok(await exists(join(ws, p)), `${p} kept its name on the host`);
      }
      for (const p of ["c2", "config/d2", "a2"]) assert.ok(!(await exists(join(ws, p))), p);
    } finally {
      await Deno.remove(ws, { recursive: true }).catch(() => {});
    }
  });
}
