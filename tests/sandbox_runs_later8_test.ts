/**
 * Code that runs later, eighth attacker pass: configs that are code, loaded by editors' lint
 * plugins when a file opens, were kept when a command changed them (an existing `.eslintrc.js`
 * only flagged) or created them without a dot (`stylelint.config.js`, `pylintrc` with an
 * `init-hook`), and `.tool-versions` (`nodejs path:/dir`: asdf's and mise's shims run that folder's
 * binaries), and `pnpm-workspace.yaml` (pnpm ≥ 10 reads `nodeOptions`, `scriptShell` and `pnpmfile`
 * there, as it read them from `.npmrc`). They are protected names now (core/policy/sandbox/protected.ts `RUNS_LATER`):
 * read-only inside the OS sandbox when they exist, removed when a command creates them, and asked
 * about by the file tools. On real bwrap, the launcher called directly (no guard in between).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { commandWorld, exists } from "./support/sandbox_world.ts";

const EXISTING = [
  ".eslintrc.js",
  ".eslintrc.cjs",
  ".pylintrc",
  ".rubocop.yml",
  ".luarc.json",
  ".tool-versions",
  "pnpm-workspace.yaml",
];
const CREATED = ["stylelint.config.js", "pylintrc", ".stylelintrc.cjs", "sub/.ycm_extra_conf.py"];

Deno.test("runs later 8: editors' code configs are read-only when they exist and removed when created", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests");
  const w = await commandWorld(
    "coyote-later8-",
    `git init -q . && mkdir sub && for f in ${EXISTING.join(" ")}; do echo orig > $f; done`,
  );
  try {
    const out = await w.run(
      `for f in ${EXISTING.join(" ")}; do echo EVIL > $f; done; ` +
        `for f in ${CREATED.join(" ")}; do echo EVIL > $f; done; echo done`,
    );
    assert.match(out, /done/);
    for (const f of EXISTING) {
      assert.equal(await Deno.readTextFile(join(w.ws, f)), "orig\n", `${f}: ${out}`);
    }
    for (const f of CREATED) assert.equal(await exists(join(w.ws, f)), false, `${f}: ${out}`);
    const policy = Policy.create({}, { allow: [], deny: [] }, {
      workspace: w.ws,
      configDir: join(w.root, "cfg"),
    });
    for (const f of [...EXISTING, ...CREATED]) {
      const v = policy.decide({ type: "write", path: join(w.ws, f) });
      assert.equal(v.decision, "ask", `fs_write ${f}: ${v.reason}`);
    }
  } finally {
    await w.cleanup();
  }
});
