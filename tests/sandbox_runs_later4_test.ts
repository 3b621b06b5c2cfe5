/**
 * Code that runs later, outside the sandbox — the mechanisms of the fourth attacker pass (issue 16
 * classes 3 and 6; docs/permissions.md "The OS sandbox", "New dot-entries"), on real bwrap with
 * real git, the launcher called directly (no guard in between) and a headless session with the
 * guard forced open (`COYOTE_TEST_GUARD=allow`):
 *
 * - every repository's `core.hooksPath` is protected, also a repository nested two levels deep;
 * - a folder that is a git dir by git's test (`HEAD`, `objects/`, `refs/`) made at run time does
 *   not survive the command, also under `node_modules/`;
 * - a new dot-entry the command made (`.foo/hooks.json`) is moved to the quarantine and reported;
 *   an edit of `.gitignore` is kept and flagged as an ignore list; a changed one is flagged.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, DEFAULT_SANDBOX, detectBackend } from "../core/policy/sandbox/mod.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";
import { commandWorld, exists, GIT_ID, sh } from "./support/sandbox_world.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

/** A workspace with a repository nested two levels deep (`vendor/outer/inner`, hooksPath `.hooks`). */
async function world() {
  return await commandWorld(
    "coyote-later4-",
    [
      `git init -q .`,
      `git init -q vendor/outer`,
      `git init -q vendor/outer/inner`,
      `git -C vendor/outer/inner config core.hooksPath .hooks`,
      `git -C vendor/outer/inner ${GIT_ID} commit -q --allow-empty -m i`,
      `printf 'dist/\\n' > .gitignore`,
      `printf 'module.exports = {}\\n' > .mocharc.js`,
    ].join(" && "),
  );
}

const PLANT_HOOK =
  `mkdir -p vendor/outer/inner/.hooks && printf '#!/bin/sh\\ntouch "$PWD/../../../PROOF"\\n' > vendor/outer/inner/.hooks/pre-commit && chmod +x vendor/outer/inner/.hooks/pre-commit`;
const BARE_IN_NODE_MODULES =
  `mkdir -p node_modules/pkg && git init -q --bare node_modules/pkg/cache && git -C node_modules/pkg/cache config core.bare false && git -C node_modules/pkg/cache config core.fsmonitor 'touch ../../../PROOF2; false'`;

Deno.test("runs later 4: a hooksPath of a repository nested two levels deep — created: removed; existing: read-only; the file tools ask", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests");
  const w = await world();
  try {
    const out = await w.run(`${PLANT_HOOK}; echo done`);
    assert.match(out, /done/);
    assert.equal(await exists(join(w.ws, "vendor/outer/inner/.hooks")), false, out);
    assert.match(
      out,
      /vendor\/outer\/inner\/\.hooks \(the core\.hooksPath of the nested repository vendor\/outer\/inner/,
    );
    await sh(`git -C vendor/outer/inner ${GIT_ID} commit -q --allow-empty -m x`, w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false, "the planted hook ran on the host");

    // An existing hooks folder of the nested repository is read-only inside the sandbox.
    await Deno.mkdir(join(w.ws, "vendor/outer/inner/.hooks"));
    const out2 = await w.run(
      `echo 'touch PROOF' > vendor/outer/inner/.hooks/pre-commit; echo rc=$?`,
    );
    assert.match(out2, /Read-only file system/, out2);
    assert.equal(await exists(join(w.ws, "vendor/outer/inner/.hooks/pre-commit")), false);

    // The file tools ask before writing into it (nested repository above the path).
    const v = await w.policy.decide({
      type: "write",
      path: join(w.ws, "vendor/outer/inner/.hooks/pre-commit"),
    });
    assert.equal(v.decision, "ask", v.reason);
    assert.match(v.reason, /core\.hooksPath of the nested repository/);
    // A bare repository written file by file through the file tools asks too.
    await Deno.mkdir(join(w.ws, "tools/x/objects"), { recursive: true });
    await Deno.mkdir(join(w.ws, "tools/x/refs"));
    const g = await w.policy.decide({ type: "write", path: join(w.ws, "tools/x/HEAD") });
    assert.equal(g.decision, "ask", g.reason);
    assert.match(g.reason, /git dir/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 4: a bare repository made under node_modules does not survive; nothing is lost (quarantine)", async () => {
  const w = await world();
  try {
    // The session's first command reads node_modules once (the watch's baseline).
    await w.run("mkdir -p node_modules/pkg && echo '{}' > node_modules/pkg/package.json");
    const sb = await CommandSandbox.create(w.policy, DEFAULT_SANDBOX);
    try {
      const tool = makeExecuteCommandTool(sb);
      await runTool(tool, { command: "true" }, toolContext({ cwd: w.ws }));
      const r = await runTool(
        tool,
        { command: `${BARE_IN_NODE_MODULES}; echo done` },
        toolContext({ cwd: w.ws }),
      );
      const out = String(r.content);
      assert.match(out, /done/);
      assert.equal(await exists(join(w.ws, "node_modules/pkg/cache")), false, out);
      assert.match(out, /node_modules\/pkg\/cache \(a git dir \(HEAD, objects\/, refs\/\)/);
      assert.match(out, new RegExp(`moved to ${w.data}/quarantine/[^/]+/node_modules/pkg/cache`));
      assert.equal(await exists(join(w.ws, "node_modules/pkg/package.json")), true);
    } finally {
      sb.close();
    }
    await sh(`cd node_modules/pkg/cache 2>/dev/null && git status`, w.ws);
    assert.equal(await exists(join(w.ws, "PROOF2")), false, "git status on the host ran fsmonitor");
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 4: a new dot-entry is quarantined and reported; a .gitignore edit is kept and flagged; a changed dot-file is flagged", async () => {
  const w = await world();
  try {
    const out = await w.run(
      [
        'mkdir -p .foo && echo \'{"hooks":{"start":"touch PROOF"}}\' > .foo/hooks.json',
        "echo 'node_modules/' >> .gitignore",
        'echo \'require("child_process").execSync("touch PROOF")\' >> .mocharc.js',
        "mkdir -p src/.cache && echo x > src/.cache/blob",
        "mkdir -p target && echo 'Signature: 8a477f597d28d172789f06886806bc55' > target/CACHEDIR.TAG && echo 1 > target/.rustc_info.json && mkdir -p target/.fingerprint/x",
        "echo done",
      ].join("; "),
    );
    assert.match(out, /done/);
    // Quarantined: moved to <data dir>/quarantine/<id>/.foo, named with the way to keep it.
    assert.equal(await exists(join(w.ws, ".foo")), false, out);
    const m = out.match(/ {2}\.foo → (\S+)/);
    assert.ok(m, out);
    assert.ok(m[1].startsWith(`${w.data}/quarantine/`), m[1]);
    assert.match(await Deno.readTextFile(join(m[1], "hooks.json")), /touch PROOF/);
    assert.match(
      out,
      /write it with the file tools instead, or allow it with --allow 'Write\(\.foo\/\*\*\)'/,
    );
    // Inert dot-entries (an ignore list, caches, build output with CACHEDIR.TAG) pass silently.
    assert.equal(await Deno.readTextFile(join(w.ws, ".gitignore")), "dist/\nnode_modules/\n");
    assert.equal(await exists(join(w.ws, "src/.cache/blob")), true);
    assert.equal(await exists(join(w.ws, "target/.fingerprint/x")), true);
    assert.doesNotMatch(out, /\.cache|\.fingerprint|\.rustc_info/);
    // The ignore list is kept but flagged: it decides what git status shows (fifth pass).
    assert.match(
      out,
      /ignore lists the command created, changed or removed \(kept[^\n]*: \.gitignore/,
    );
    // A changed existing one is kept and flagged for review.
    assert.match(
      out,
      /dot-files the command changed \(kept; the user should review them[^\n]*\.mocharc\.js/,
    );
    assert.match(await Deno.readTextFile(join(w.ws, ".mocharc.js")), /execSync/);
    // A Write allow rule naming the path keeps a new one.
    const p2 = Policy.create({}, { allow: ["Write(.bar/**)"], deny: [] }, {
      workspace: w.ws,
      configDir: join(w.root, "cfg"),
      dataDir: w.data,
      home: w.home,
    });
    await p2.globsReady();
    const sb = await CommandSandbox.create(p2, DEFAULT_SANDBOX);
    try {
      const r = await runTool(
        makeExecuteCommandTool(sb),
        { command: "mkdir .bar && echo 1 > .bar/x" },
        toolContext({ cwd: w.ws }),
      );
      assert.equal(await exists(join(w.ws, ".bar/x")), true, String(r.content));
      assert.doesNotMatch(String(r.content), /quarantine/);
    } finally {
      sb.close();
    }
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 4: a headless session with the guard forced open plants nothing that runs later", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests");
  const w = await world();
  const env = await makeCoyoteEnv();
  const server = await startModelServer({
    script: commandBatch({
      hook: PLANT_HOOK,
      bare: BARE_IN_NODE_MODULES,
      dot:
        "mkdir -p .foo && echo '{}' > .foo/hooks.json && mkdir -p .cargo && printf '[build]\\nrustc-wrapper = \"./x.sh\"\\n' > .cargo/config.toml",
      hg: "mkdir -p deep/.hg && printf '[hooks]\\nupdate = touch PROOF3\\n' > deep/.hg/hgrc",
      ignore: "echo '*.log' >> .gitignore",
    }),
  });
  try {
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: childEnv(env, {
        baseURL: server.baseURL,
        extra: { HOME: w.home, COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" },
      }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /TEST MODE/);
    for (
      const p of [
        "vendor/outer/inner/.hooks",
        "node_modules/pkg/cache",
        ".foo",
        ".cargo/config.toml",
        "deep/.hg",
      ]
    ) {
      assert.equal(await exists(join(w.ws, p)), false, `${p} survived:\n${r.stdout}`);
    }
    assert.match(await Deno.readTextFile(join(w.ws, ".gitignore")), /\*\.log/);
    await sh(`git -C vendor/outer/inner ${GIT_ID} commit -q --allow-empty -m x`, w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("runs later 4: an existing folder turned into a git dir loses only its HEAD; so does a workspace without .git", async () => {
  const w = await world();
  try {
    await Deno.mkdir(join(w.ws, "src"));
    await Deno.writeTextFile(join(w.ws, "src/main.c"), "int main;\n");
    const out = await w.run(
      `git init -q --bare /tmp/b && cp -r /tmp/b/HEAD /tmp/b/objects /tmp/b/refs /tmp/b/config src/ && git -C src config core.fsmonitor 'touch ../PROOF; false'; echo done`,
    );
    assert.match(out, /src \(a git dir [^\n]*only its HEAD was moved/, out);
    assert.equal(await exists(join(w.ws, "src/HEAD")), false);
    assert.equal(await Deno.readTextFile(join(w.ws, "src/main.c")), "int main;\n");
    await sh("cd src && git status", w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false, "git status on the host ran fsmonitor");

    // A workspace that is no repository, made a bare one.
    await Deno.remove(join(w.ws, ".git"), { recursive: true });
    const out2 = await w.run(
      `git init -q --bare . && git config core.bare false && git config core.fsmonitor 'touch PROOF; false'; echo done`,
    );
    assert.match(out2, /HEAD \(makes the workspace a git dir/, out2);
    assert.equal(await exists(join(w.ws, "HEAD")), false);
    await sh("git status", w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false, "git status on the host ran fsmonitor");
  } finally {
    await w.cleanup();
  }
});

Deno.test("runs later 4: a repository installed under node_modules — a hooks folder a command makes there is removed", async () => {
  const w = await world();
  try {
    await sh(
      `git init -q node_modules/pkg && git -C node_modules/pkg config core.hooksPath .githooks && git -C node_modules/pkg ${GIT_ID} commit -q --allow-empty -m i`,
      w.ws,
    );
    const sb = await CommandSandbox.create(w.policy, DEFAULT_SANDBOX);
    try {
      const tool = makeExecuteCommandTool(sb);
      const r = await runTool(
        tool,
        {
          command:
            `mkdir -p node_modules/pkg/.githooks && printf '#!/bin/sh\\ntouch "$PWD/../../PROOF"\\n' > node_modules/pkg/.githooks/pre-commit && chmod +x node_modules/pkg/.githooks/pre-commit; echo done`,
        },
        toolContext({ cwd: w.ws }),
      );
      const out = String(r.content);
      assert.match(out, /done/);
      assert.match(
        out,
        /node_modules\/pkg\/\.githooks \(the core\.hooksPath of the nested repository node_modules\/pkg/,
      );
      assert.equal(await exists(join(w.ws, "node_modules/pkg/.githooks")), false, out);
    } finally {
      sb.close();
    }
    await sh(`git -C node_modules/pkg ${GIT_ID} commit -q --allow-empty -m x`, w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false, "the planted hook ran on the host");
  } finally {
    await w.cleanup();
  }
});
