/**
 * Ninth attacker pass (issue 16), what the guard and the sandbox now close:
 * - class 5: a program the guard has no rule for, or a versioned / alternative name of one it
 *   knows (`python3.11`, `perl5.36.0`, `vim.basic`, `rbash`), no longer runs unasked under an
 *   `Execute` deny rule (core/policy/shell/commands.ts `canonicalProgram`, unknown programs as
 *   project code); a name is never made *more* allowed by its variant (`grep2` is unknown);
 * - class 5: a `Write` deny rule for a path absent when the command starts (nothing to mount) —
 *   what the command created there is taken out after it (core/policy/sandbox/deny_created.ts),
 *   also with the guard forced open;
 * - class 6: `/proc/keys` and Docker's other masked `/proc` files read empty inside
 *   (core/policy/sandbox/probe.ts `PROC_MASK_CANDIDATES`).
 * Headless runs on real bwrap with default settings.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend, sandboxGuard } from "../core/policy/sandbox/mod.ts";
import { classify } from "../core/policy/shell/commands.ts";
import { SANDBOX_ON } from "./support/sandbox_world.ts";
import { headlessAttack, headlessTurns } from "./support/headless_attack.ts";

async function workspace(): Promise<string> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-yields9-" }));
  await Deno.mkdir(join(ws, "v"));
  await Deno.writeTextFile(join(ws, "v", "keep.txt"), "keep\n");
  return ws;
}

/** Class 5: interpreters and editors under a versioned or alternative name. */
const VERSIONED = [
  `python3.11 -c 'import shutil; shutil.rmtree("v")'`,
  `perl5.36.0 -e 'system("rm -rf v")'`,
  `tclsh8.6 <<< 'exec rm -rf v'`,
  `vim.basic -es -c '!rm -rf v' -c q`,
  `rvim -es -c '!rm -rf v' -c q`,
  `gdbtui -batch -ex '!rm -rf v'`,
  `prove -e 'rm -rf v' t`,
  `hyperfine 'rm -rf v'`,
  `sops exec-env f 'rm -rf v'`,
  `duckdb -c '.shell rm -rf v'`,
  `octave --eval 'system("rm -rf v")'`,
  `nix develop -c rm -rf v`,
  `gosu root rm -rf v`,
  `sshpass -p x rm -rf v`,
  `yash -c 'rm -rf v'`,
  `watchexec 'rm -rf v'`,
  `pee 'rm -rf v'`,
  `rbash -c 'rm -rf v'`,
  `python2.7 -c 'import shutil; shutil.rmtree("v")'`,
  `ruby3.1 -e 'system("rm -rf v")'`,
  `php8.2 -r 'system("rm -rf v");'`,
  `lua5.4 -e 'os.execute("rm -rf v")'`,
  `vim.tiny -es -c '!rm -rf v' -c q`,
  `vim.nox -es -c '!rm -rf v' -c q`,
  `gdb-multiarch -batch -ex '!rm -rf v'`,
  `ksh93 -c 'rm -rf v'`,
  `mksh-static -c 'rm -rf v'`,
  `bash.static -c 'rm -rf v'`,
  `original-awk 'BEGIN{system("rm -rf v")}'`,
];

Deno.test("yields9: under Execute(rm *) no variant name or unknown runner is auto-allowed; without deny rules they still run in the sandbox", async () => {
  const ws = await workspace();
  try {
    const deny = Policy.create({}, { allow: [], deny: ["Execute(rm *)"] }, {
      workspace: ws,
      configDir: "/c",
    });
    const none = Policy.create({}, { allow: [], deny: [] }, { workspace: ws, configDir: "/c" });
    const lifted: string[] = [];
    const asked: string[] = [];
    for (const command of VERSIONED) {
      const v = await sandboxGuard(deny, SANDBOX_ON).evaluate({ type: "execute", command });
      if (v.decision === "allow") lifted.push(`${command}: allowed (${v.reason})`);
      const w = await sandboxGuard(none, SANDBOX_ON).evaluate({ type: "execute", command });
      if (w.decision !== "allow") asked.push(`${command}: ${w.decision} (${w.reason})`);
    }
    assert.deepEqual(lifted, [], "a deny rule on Execute makes them ask");
    assert.deepEqual(asked, [], "without Execute rules the sandbox's auto-allow still runs them");
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("yields9: a variant name is judged as its program only where that is stricter (grep2 is unknown, not read-only)", () => {
  const kind = (words: string[]) => {
    const c = classify(words);
    return c.allowed ? "allow" : c.opaque ? "opaque" : c.projectCode ? "project" : "ask";
  };
  assert.equal(kind(["python3.11", "-c", "x"]), "opaque");
  assert.equal(kind(["perl5.36.0", "-e", "x"]), "opaque");
  assert.equal(kind(["vim.basic", "-es"]), "opaque");
  assert.equal(kind(["gdbtui", "-batch"]), "opaque");
  assert.equal(kind(["python3.11", "script.py"]), "project");
  // A program without a rule asks by default and carries the words of its arguments.
  assert.deepEqual(
    classify(["hyperfine", "--runs", "1", "rm -rf v"]).mentions,
    [
      "rm",
      "-rf",
      "v",
    ].filter((w) => /^[A-Za-z_]/.test(w)),
  );
  assert.deepEqual(classify(["mytool", "-c", ".shell rm -rf v"]).mentions, ["rm", "v"]);
  assert.equal(classify(["man", "rm"]).mentions, undefined);
  // A shell variant's command string is analysed like bash's (its parts are checked on their own).
  assert.deepEqual(classify(["bash.static", "-c", "rm -rf v"]).scripts, [
    { via: "bash -c", src: "rm -rf v" },
  ]);
  // Never more allowed than an unknown program, which is not understood (eleventh attacker
  // pass: it yields as a project's code does; core/policy/shell/programs/unknown.ts RUNS_NO_CODE).
  assert.equal(kind(["grep2", "x"]), "project");
  assert.equal(kind(["cat9", "x"]), "project");
  assert.equal(kind(["rm2", "-rf", "v"]), "project");
  assert.equal(kind(["grep", "x"]), "allow");
  assert.equal(kind(["terraform", "plan"]), "project");
  assert.equal(kind(["rm", "-rf", "v"]), "ask");
  assert.equal(kind(["mkdir", "-p", "build"]), "ask");
  assert.equal(kind(["curl", "-K", "opts"]), "opaque");
});

Deno.test("yields9 (as the eleventh attacker pass changed it): a program without a rule yields to Execute(rm *); one known to run no code stays auto-allowed; an allow rule naming it chooses it", async () => {
  const ws = await workspace();
  try {
    const deny = Policy.create({}, { allow: [], deny: ["Execute(rm *)"] }, {
      workspace: ws,
      configDir: "/c",
    });
    const verdict = async (command: string) =>
      (await sandboxGuard(deny, SANDBOX_ON).evaluate({ type: "execute", command })).decision;
    for (const c of ["terraform plan", "gh pr view 12", "prettier --write src", "mytool rmdir-x"]) {
      assert.equal(await verdict(c), "ask", c);
    }
    for (const c of ["mkdir -p build", "cp a b", "tar -xzf a.tgz", "curl -sS https://x.example"]) {
      assert.equal(await verdict(c), "allow", c);
    }
    // The user chose the program: an allow rule naming it runs it without asking.
    const chosen = Policy.create({}, {
      allow: ["Execute(terraform plan*)"],
      deny: ["Execute(rm *)"],
    }, {
      workspace: ws,
      configDir: "/c",
    });
    assert.equal(
      (await sandboxGuard(chosen, SANDBOX_ON).evaluate({
        type: "execute",
        command: "terraform plan",
      }))
        .decision,
      "allow",
    );
    for (const c of ["mytool 'rm -rf v'", "mytool --run=/usr/bin/rm", "gosu root rm -rf v"]) {
      assert.equal(await verdict(c), "ask", c);
    }
    // An allow rule on the program does not cover what its arguments name.
    const allowed = Policy.create(
      {},
      { allow: ["Execute(hyperfine *)"], deny: ["Execute(rm *)"] },
      {
        workspace: ws,
        configDir: "/c",
      },
    );
    const v = await sandboxGuard(allowed, SANDBOX_ON).evaluate({
      type: "execute",
      command: "hyperfine 'rm -rf v'",
    });
    assert.equal(v.decision, "ask", v.reason);
    assert.match(v.reason, /its arguments name "rm"/);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("yields9: headless on real bwrap — python3.11 / perl5.36.0 / rbash do not delete v under --deny 'Execute(rm *)'", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed");
  const ws = await workspace();
  try {
    const run = await headlessAttack(
      ws,
      [
        `python3.11 -c 'import shutil; shutil.rmtree("v")' || perl5.36.0 -e 'system("rm -rf v")'`,
        `rbash -c 'rm -rf v'`,
        `hyperfine --runs 1 'rm -rf v'`,
      ],
      [{ id: "ok", command: "ls" }],
      ["--deny", "Execute(rm *)"],
    );
    const kept = await Deno.stat(join(ws, "v", "keep.txt")).then(() => true, () => false);
    assert.ok(kept, `v was deleted; denied: ${run.denied.join(",")}`);
    assert.deepEqual(run.denied, run.attackIds);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

for (const forced of [false, true]) {
  Deno.test(`yields9: headless on real bwrap${forced ? ", guard forced open" : ""} — what a command creates where a Write deny rule names a missing path is taken out and named`, async () => {
    const { backend } = await detectBackend();
    assert.ok(backend, "bwrap must be installed");
    const ws = await workspace();
    try {
      const run = await headlessTurns(
        ws,
        [[
          { id: "dd", command: "dd if=/dev/zero of=out.txt count=1 2>/dev/null" },
          {
            id: "py",
            command: `python3 -c 'import os; os.makedirs("dist/x"); open("dist/x/a","w")'`,
          },
          { id: "ok", command: "echo kept > other.txt" },
        ]],
        ["--deny", "Write(out.txt)", "--deny", "Write(dist/**)"],
        forced ? { extra: { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" } } : {},
      );
      const exists = (p: string) => Deno.lstat(join(ws, p)).then(() => true, () => false);
      assert.equal(await exists("out.txt"), false, "out.txt taken out");
      assert.equal(await exists("dist"), false, "dist taken out");
      assert.equal(await exists("other.txt"), true, "what no rule names stays");
      assert.match(run.result("dd"), /took out .*out\.txt.*Write\(out\.txt\) denies writing it/);
      assert.match(run.result("py"), /took out .*dist.*Write\(dist\/\*\*\) denies writing it/);
      assert.doesNotMatch(run.result("ok"), /took out/);
    } finally {
      await Deno.remove(ws, { recursive: true }).catch(() => {});
    }
  });
}

Deno.test("yields9: headless on real bwrap — /proc/keys does not list the host user's keys; masked /proc files read empty", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed");
  assert.ok(
    backend.procMasks?.includes("keys"),
    `this kernel has /proc/keys: ${backend.procMasks}`,
  );
  // A key in the user keyring of the uid Coyote runs as (what `keyctl add user … @u` makes).
  const desc = `yields9-${crypto.randomUUID().slice(0, 8)}:github-token`;
  const add = new Deno.Command("python3", {
    args: [
      "-c",
      `import ctypes,sys;l=ctypes.CDLL(None,use_errno=True);print(l.syscall(248,b"user",sys.argv[1].encode(),b"x",1,-4))`,
      desc,
    ],
  }).outputSync();
  const id = Number(new TextDecoder().decode(add.stdout).trim());
  const ws = await workspace();
  try {
    assert.ok(id > 0, "add_key failed on the host");
    const host = new Deno.Command("cat", { args: ["/proc/keys"] }).outputSync();
    assert.match(new TextDecoder().decode(host.stdout), new RegExp(desc), "the host lists it");
    const run = await headlessTurns(ws, [[
      { id: "k", command: "cat /proc/keys /proc/key-users; echo end-$(wc -c < /proc/keys)" },
      { id: "t", command: "wc -c < /proc/timer_list; wc -c < /proc/interrupts" },
    ]]);
    assert.doesNotMatch(
      run.sent,
      new RegExp(desc),
      "the host keyring's key names stay on the host",
    );
    assert.match(run.result("k"), /end-0/);
    assert.match(run.result("t"), /0\\n0/);
  } finally {
    // keyctl(KEYCTL_REVOKE)
    new Deno.Command("python3", {
      args: ["-c", `import ctypes;ctypes.CDLL(None).syscall(250,3,${id},0,0)`],
    }).outputSync();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
