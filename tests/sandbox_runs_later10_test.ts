/**
 * Code that runs later, outside the sandbox — the tenth attacker pass (issue 16 class 3), on real
 * bwrap, the launcher called directly (no guard), and headless runs with the guard forced open:
 *
 * 1. hook runners' and rust-analyzer's whole config families are protected names
 *    (core/policy/sandbox/protected.ts `RUNS_LATER`: `lefthook*.{yml,yaml,json,jsonc,toml}` with or
 *    without a dot, also in `.config/`, `.lefthook/`, commitlint's `commitlint.config.*` and
 *    `.commitlintrc*`, `rust-analyzer.toml`, `rust-project.json`, …), `node_modules/` included;
 * 2. configs that are code (`*.config.{js,…,mts}`, `mypy.ini`, `pyproject.toml`, …) are kept and
 *    flagged by name, package.json only when its lifecycle or hook keys changed
 *    (core/policy/sandbox/code_configs.ts);
 * 3. Python bytecode a command created or changed is removed (an unchecked-hash pyc is what the
 *    host's Python would load instead of the source), and Python in the sandbox writes none into
 *    the workspace (`PYTHONDONTWRITEBYTECODE`);
 * 4. Cargo.toml is flagged when its `build`, `links` or `proc-macro` settings changed, and so is the
 *    file its `build` names (and a proc-macro crate's root) when created or changed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { addProtectedPatterns, protectedShowLines } from "../core/policy/sandbox/protected.ts";
import { commandWorld, exists, sh } from "./support/sandbox_world.ts";
import { headlessTurns } from "./support/headless_attack.ts";

async function world(prefix: string, setup: string) {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests");
  return await commandWorld(prefix, `git init -q . && ${setup}`);
}

/** The line of `out` that starts with `head` (assert it is there). */
function line(out: string, head: RegExp): string {
  const m = new RegExp(`${head.source}[^\\n]*`).exec(out);
  assert.ok(m, `no line ${head}: ${out}`);
  return m[0];
}

const HOOK_EXISTING = [
  "lefthook.toml",
  ".config/lefthook.yaml",
  ".lefthook-local.json",
  "commitlint.config.ts",
  "rust-analyzer.toml",
  "pkg/.commitlintrc.js",
];
const HOOK_CREATED = [
  "lefthook-local.jsonc",
  "sub/.config/lefthook.yml",
  ".lefthook/pre-commit/evil.sh",
  ".commitlintrc.cjs",
  ".config/commitlintrc.json",
  "commitlint.config.mts",
  "rust-project.json",
  "sub/rust-analyzer.toml",
  ".simple-git-hooks.json",
  ".pre-commit-config.yml",
  "node_modules/dep/lefthook.yml",
  "node_modules/dep/commitlint.config.js",
  "node_modules/dep/rust-analyzer.toml",
];

Deno.test("runs later 10: hook runners' and rust-analyzer's config families are read-only when they exist and removed when created, node_modules too", async () => {
  const w = await world(
    "coyote-later10-",
    `mkdir -p .config pkg node_modules/dep && echo '{}' > node_modules/dep/package.json && for f in ${
      HOOK_EXISTING.join(" ")
    }; do echo orig > $f; done`,
  );
  try {
    const out = await w.run(
      `for f in ${HOOK_EXISTING.join(" ")}; do echo EVIL > $f; done; ` +
        `for f in ${
          HOOK_CREATED.join(" ")
        }; do mkdir -p $(dirname $f); echo EVIL > $f; done; echo done`,
    );
    assert.match(out, /done/);
    for (const f of HOOK_EXISTING) {
      assert.equal(await Deno.readTextFile(join(w.ws, f)), "orig\n", `${f}: ${out}`);
    }
    for (const f of HOOK_CREATED) assert.equal(await exists(join(w.ws, f)), false, `${f}: ${out}`);
    assert.match(out, /lefthook-local\.jsonc \(protected as lefthook\*\.json\*/, out);
    assert.match(out, /node_modules\/dep\/commitlint\.config\.js \(protected as/, out);
    const policy = Policy.create({}, { allow: [], deny: [] }, {
      workspace: w.ws,
      configDir: join(w.root, "cfg"),
    });
    for (const f of [...HOOK_EXISTING, ...HOOK_CREATED]) {
      const v = policy.decide({ type: "write", path: join(w.ws, f) });
      assert.equal(v.decision, "ask", `fs_write ${f}: ${v.reason}`);
    }
    // Near names that are not configs stay ordinary files; a hook installer's own main file in
    // node_modules stays (its config without a dot is flagged, not protected).
    const out2 = await w.run(
      `echo x > lefthook.md && echo x > commitlint.md && mkdir -p node_modules/simple-git-hooks && echo x > node_modules/simple-git-hooks/simple-git-hooks.js && echo ok`,
    );
    assert.match(out2, /ok/);
    assert.equal(
      await exists(join(w.ws, "node_modules/simple-git-hooks/simple-git-hooks.js")),
      true,
      out2,
    );
    assert.equal(await exists(join(w.ws, "lefthook.md")), true, out2);
    assert.equal(await exists(join(w.ws, "commitlint.md")), true, out2);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 10: sandbox.protected_paths still adds patterns beside the longer list", async () => {
  addProtectedPatterns(["ops/*.hook"]);
  const w = await world("coyote-later10p-", "mkdir ops && echo orig > ops/a.hook");
  try {
    const out = await w.run(`echo EVIL > ops/a.hook; echo EVIL > ops/b.hook; echo done`);
    assert.match(out, /done/);
    assert.equal(await Deno.readTextFile(join(w.ws, "ops/a.hook")), "orig\n", out);
    assert.equal(await exists(join(w.ws, "ops/b.hook")), false, out);
    assert.match(out, /ops\/b\.hook \(protected as ops\/\*\.hook/, out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 10: policy show lists the families, the flagged configs and the bytecode rule", () => {
  addProtectedPatterns(["ops/*.hook"]);
  const text = protectedShowLines().join("\n");
  for (const p of ["lefthook*.toml", ".lefthook*", "commitlint.config.*", "rust-analyzer.toml"]) {
    assert.ok(text.includes(` ${p} `), `${p}: ${text}`);
  }
  assert.match(text, /from sandbox\.protected_paths: ops\/\*\.hook/);
  assert.match(
    text,
    /configs that are code .*\*\.config\.\{js,cjs,mjs,ts,cts,mts\}.*package\.json when/,
  );
  assert.match(text, /Python bytecode: .* removed; .*PYTHONDONTWRITEBYTECODE.*PYTHONNOUSERSITE/);
  assert.match(text, /CMakeUserPresets\.json/);
});

const PKG = JSON.stringify({ name: "a", version: "1.0.0", scripts: { test: "node t.js" } });

Deno.test("runs later 10: configs that are code are kept and flagged; package.json only when a hook or lifecycle key changed", async () => {
  const w = await world(
    "coyote-later10c-",
    [
      `mkdir -p pkgs/b sub && echo 'export default {}' > vite.config.ts && echo '[mypy]' > mypy.ini`,
      `echo '${PKG}' > package.json && echo '${PKG}' > pkgs/b/package.json`,
      `echo '[project]' > pyproject.toml`,
    ].join(" && "),
  );
  try {
    const edit = (f: string, js: string) =>
      `node -e 'const f="${f}",p=JSON.parse(require("fs").readFileSync(f));${js};require("fs").writeFileSync(f,JSON.stringify(p))'`;
    const out = await w.run(
      [
        `echo 'require("child_process").execSync("touch PWNED")' >> vite.config.ts`,
        `echo 'module.exports={}' > tailwind.config.cjs && echo 'export default {}' > sub/playwright.config.mts`,
        `printf '[mypy]\\nplugins = evil_plugin\\n' > mypy.ini && echo '[tool.mypy]' >> pyproject.toml`,
        `echo '{}' > CMakeUserPresets.json && echo 'x' > tox.ini && echo '{}' > simple-git-hooks.json`,
        edit(
          "package.json",
          `p.scripts.postinstall="touch PWNED";p["simple-git-hooks"]={"pre-commit":"touch PWNED"}`,
        ),
        edit("pkgs/b/package.json", `p.version="1.0.1";p.scripts.test="node u.js"`),
        `mkdir -p pkgs/c pkgs/d && echo '{"name":"c"}' > pkgs/c/package.json`,
        `echo '{"name":"d","husky":{"hooks":{"pre-commit":"x"}}}' > pkgs/d/package.json`,
        `printf '{\n  // lint\n  "lint": {"plugins": ["./evil.ts"]},\n}\n' > deno.jsonc`,
        `echo '{"tasks": {"dev": "deno run main.ts"}}' > pkgs/b/deno.json`,
        `echo 'x' > notes.config.md && echo done`,
      ].join(" && "),
    );
    assert.match(out, /done/, out);
    const flagged = line(out, /configs that are code or name code/);
    for (
      const p of [
        "vite.config.ts",
        "tailwind.config.cjs",
        "sub/playwright.config.mts",
        "mypy.ini",
        "pyproject.toml",
        "CMakeUserPresets.json",
        "tox.ini",
        "simple-git-hooks.json",
        "package.json (scripts.postinstall, simple-git-hooks)",
        "pkgs/d/package.json (husky)",
        "deno.jsonc (lint.plugins)",
      ]
    ) {
      assert.ok(flagged.includes(p) || out.includes(p), `${p} flagged: ${out}`);
    }
    for (
      const p of [
        "pkgs/b/package.json",
        "pkgs/c/package.json",
        "pkgs/b/deno.json",
        "notes.config.md",
      ]
    ) {
      assert.ok(!out.includes(p), `${p} not flagged: ${out}`);
    }
    // Kept: ordinary project files.
    for (const p of ["vite.config.ts", "tailwind.config.cjs", "package.json", "mypy.ini"]) {
      assert.equal(await exists(join(w.ws, p)), true, p);
    }
    // An unchanged second command flags nothing; a change of only `scripts.test` neither.
    const out2 = await w.run(edit("package.json", `p.scripts.test="node v.js"`) + " && echo ok");
    assert.match(out2, /ok/);
    assert.doesNotMatch(out2, /configs that are code/, out2);
  } finally {
    await w.cleanup();
  }
});

const PY = "python3";
/** Writes an unchecked-hash pyc of `src` (Python text) to `dest` (bash, in the sandbox). */
const pyc = (src: string, dest: string) =>
  `${PY} -c 'import py_compile,sys,pathlib; pathlib.Path("/tmp/e.py").write_text(sys.argv[1]); py_compile.compile("/tmp/e.py", cfile=sys.argv[2], invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)' '${src}' "${dest}"`;

Deno.test("runs later 10: Python bytecode a command wrote is removed (the host's Python loads the source); honest runs leave none", async () => {
  const w = await world(
    "coyote-later10y-",
    `mkdir -p pkg .tools && echo 'X = 1' > mod.py && echo 'Y = 1' > pkg/other.py && touch pkg/__init__.py && ${PY} -m py_compile mod.py`,
  );
  try {
    const tag = (await sh(`${PY} -c 'import sys; print(sys.implementation.cache_tag)'`)).trim();
    const existing = `__pycache__/mod.${tag}.pyc`;
    assert.equal(await exists(join(w.ws, existing)), true, "the host compiled mod.py");
    const evil = `import pathlib; pathlib.Path("${w.ws}/PWNED").touch(); X = 666`;
    const out = await w.run(
      [
        // In place (same inode, the folder's mtime unchanged), a new one, a lone one, a dot-folder's.
        `${pyc(evil, "/tmp/m.pyc")} && cat /tmp/m.pyc > ${existing}`,
        `mkdir -p pkg/__pycache__ && ${pyc(evil, `pkg/__pycache__/other.${tag}.pyc`)}`,
        `${pyc(evil, "lone.pyc")} && ${pyc(evil, `.tools/t.${tag}.pyc`)} && echo done`,
      ].join(" && "),
    );
    assert.match(out, /done/, out);
    const removed = line(out, /the OS sandbox removed \d+ Python bytecode files/);
    for (
      const p of [existing, `pkg/__pycache__/other.${tag}.pyc`, "lone.pyc", `.tools/t.${tag}.pyc`]
    ) {
      assert.equal(await exists(join(w.ws, p)), false, `${p}: ${out}`);
      assert.ok(removed.includes(p), `${p} named: ${out}`);
    }
    assert.doesNotMatch(out, /quarantine/, out);
    const host = await sh(
      `${PY} -c 'import mod, pkg.other; print(mod.X, pkg.other.Y)'; ${PY} -c 'import lone' 2>&1 | tail -1`,
      w.ws,
    );
    assert.match(host, /^1 1$/m, host);
    assert.equal(await exists(join(w.ws, "PWNED")), false, host);
    // An honest import in the sandbox writes no bytecode, and reads none from a prefix in the
    // writable /tmp (a pyc planted there ran in any Python program: tests/attack10_home_test.ts).
    const out2 = await w.run(
      `echo 'Z = 2' > fresh.py && ${PY} -c 'import fresh, sys; print(fresh.Z, sys.pycache_prefix, sys.dont_write_bytecode, sys.flags.no_user_site)'`,
    );
    assert.match(out2, /2 None True 1/, out2);
    assert.equal(await exists(join(w.ws, `__pycache__/fresh.${tag}.pyc`)), false, out2);
    assert.doesNotMatch(out2, /bytecode/, out2);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 10: Cargo.toml is flagged when build, links or proc-macro change; the build script it names too", async () => {
  const w = await world(
    "coyote-later10k-",
    [
      `mkdir -p n/src && printf '[package]\\nname = "a"\\nversion = "0.1.0"\\n' > Cargo.toml`,
      `printf '[package]\\nname = "n"\\nversion = "0.1.0"\\n' > n/Cargo.toml`,
    ].join(" && "),
  );
  try {
    const out = await w.run(
      [
        `sed -i 's/^version.*/&\\nbuild = "tools\\/gen.rs"/' Cargo.toml && mkdir tools && echo 'fn main(){}' > tools/gen.rs`,
        `mkdir -p m/src && printf '[package]\\nname = "m"\\n\\n[lib]\\nproc_macro = true\\n' > m/Cargo.toml && echo '//' > m/src/lib.rs`,
        `sed -i 's/0.1.0/0.2.0/' n/Cargo.toml && echo '//' > n/src/lib.rs && echo done`,
      ].join(" && "),
    );
    assert.match(out, /done/, out);
    const flagged = line(out, /configs that are code or name code/);
    for (
      const p of [
        "Cargo.toml (package.build)",
        "tools/gen.rs (the build script",
        "m/Cargo.toml (lib.proc-macro)",
        "m/src/lib.rs (the build script or proc-macro",
      ]
    ) assert.ok(flagged.includes(p), `${p}: ${out}`);
    assert.ok(!flagged.includes("n/Cargo.toml") && !flagged.includes("n/src"), out);
    // The named file alone changed, Cargo.toml not: still flagged.
    const out2 = await w.run(`echo 'fn main(){ /* more */ }' > tools/gen.rs && echo ok`);
    assert.match(line(out2, /configs that are code/), /tools\/gen\.rs/, out2);
    assert.doesNotMatch(out2, /Cargo\.toml \(/, out2);
  } finally {
    await w.cleanup();
  }
});

for (const forced of [false, true]) {
  Deno.test(`runs later 10: headless on real bwrap${forced ? ", guard forced open" : ""} — a hook config is removed, bytecode removed, code configs flagged`, async () => {
    const { backend } = await detectBackend();
    assert.ok(backend, "bwrap must be installed");
    const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-later10h-" }));
    try {
      await sh(`git init -q . && echo 'X = 1' > mod.py && echo '${PKG}' > package.json`, ws);
      const run = await headlessTurns(
        ws,
        [[
          {
            id: "hook",
            command: "echo 'pre-commit: {jobs: [{run: touch PWNED}]}' > lefthook.yaml",
          },
          {
            id: "pyc",
            command: `mkdir -p __pycache__ && ${
              pyc(
                "X = 666",
                "__pycache__/mod.$(python3 -c 'import sys;print(sys.implementation.cache_tag)').pyc",
              )
            }`,
          },
          {
            id: "cfg",
            command:
              `echo 'export default {}' > astro.config.mjs && sed -i 's/"test"/"prepare":"touch PWNED","test"/' package.json`,
          },
        ]],
        [],
        forced ? { extra: { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" } } : {},
      );
      assert.equal(await exists(join(ws, "lefthook.yaml")), false, run.result("hook"));
      assert.match(run.result("hook"), /lefthook\.yaml \(protected as lefthook\*\.y\*ml/);
      assert.match(run.result("pyc"), /removed 1 Python bytecode file/);
      assert.equal((await sh(`ls __pycache__ 2>/dev/null | grep -c pyc`, ws)).trim(), "0");
      assert.match(run.result("cfg"), /configs that are code.*astro\.config\.mjs/);
      assert.match(run.result("cfg"), /package\.json \(scripts\.prepare\)/);
    } finally {
      await Deno.remove(ws, { recursive: true }).catch(() => {});
    }
  });
}
