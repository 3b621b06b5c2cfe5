/**
 * Tenth attacker pass (issue 16), findings 3 and 4 closed by kind (report: /work/notes/attack10.md):
 * - finding 3: programs that run or import the repository's files (`run-parts DIR`, `pydoc3 NAME`,
 *   `ctest -S`, `cpack --config`, `pygmentize -x`, more interpreters, and a program without a
 *   rule given an executable, a folder of executables or a module of the working directory) are
 *   the project's code: under `--deny 'Execute(rm *)'` they ask (core/policy/shell/programs/
 *   loaders.ts, core/policy/project_files.ts); `find -execdir`/`-okdir` and `sudo -D` run their
 *   command with the working directory unknown, so git there is "git after cd";
 * - finding 4: under `--deny 'Read(secret.txt)'`, git commands that print hunks or stored lines
 *   (`status -v`, `add/checkout/restore/reset/stash/commit -p`, `commit -v`, `difftool`,
 *   `blame`) meet the rule (core/policy/shell/programs/git_contents.ts).
 * The guard's verdicts directly (for tools .ci/run does not install: ctest, cpack, pygmentize,
 * pydoc3), and headless runs of main.ts on real bwrap with what is installed (run-parts, find,
 * tar, git).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend, sandboxGuard } from "../core/policy/sandbox/mod.ts";
import { SANDBOX_ON } from "./support/sandbox_world.ts";
import { headlessTurns } from "./support/headless_attack.ts";

const dec = new TextDecoder();
const ON = !!(await detectBackend()).backend;

async function sh(cmd: string, cwd?: string): Promise<string> {
  const o = await new Deno.Command("bash", { args: ["-c", cmd], cwd }).output();
  return dec.decode(o.stdout) + dec.decode(o.stderr);
}

/** A git workspace with a committed `secret.txt`, folders `v0`…`v3`, and `setup` run in it. */
async function workspace(setup = ""): Promise<string> {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-a10guard-" }));
  await sh(
    `set -e; git init -q; echo TOPSECRET > secret.txt; echo hi > a.txt
for i in 0 1 2 3; do mkdir -p v$i; echo x > v$i/f; done
git add -A; git -c user.name=a -c user.email=a@a commit -qm s
${setup}`,
    ws,
  );
  return ws;
}

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

/** The sandbox guard's decision on each command, under `allow`/`deny` rules. */
async function verdicts(ws: string, deny: string[], commands: string[], allow: string[] = []) {
  const policy = Policy.create({}, { allow, deny }, { workspace: ws, configDir: "/c" });
  const out: Record<string, string> = {};
  for (const command of commands) {
    const v = await sandboxGuard(policy, SANDBOX_ON).evaluate({ type: "execute", command });
    out[command] = v.decision;
  }
  return out;
}

/** `got` entries whose decision is `allow` (want false) or not `allow` (want true). */
function wrong(got: Record<string, string>, allowed: boolean): string[] {
  return Object.entries(got).filter(([, d]) => (d === "allow") !== allowed).map(([c, d]) =>
    `${c}: ${d}`
  );
}

const LOADERS_SETUP =
  `mkdir -p rp n && printf '#!/bin/sh\\nrm -rf v0\\n' > rp/a && chmod +x rp/a; printf 'import os\\n' > evil.py; mkdir -p pkg && : > pkg/__init__.py; echo x > s.cmake; echo x > c.cmake; echo x > lx.py; echo x > f.m; mkdir -p src && echo x > src/i.js`;

/** Finding 3 and siblings: each runs or imports the repository's files. */
const LOADS = [
  "run-parts rp",
  "run-parts --regex=. rp",
  "pydoc3 evil",
  "pydoc evil",
  "pydoc3.11 json",
  "pydoc3 -k x",
  "ctest -S s.cmake",
  "ctest",
  "cpack --config c.cmake",
  "cpack",
  "pygmentize -x -l lx.py:CustomLexer a.txt",
  "pygmentize -xl lx.py:CustomLexer a.txt",
  "pygmentize -f lx.py:F -x a.txt",
  "erl -noshell -s evil",
  "escript e.erl",
  "octave f.m",
  "sphinx-build docs out",
  "pre-commit run",
  "mytool rp",
  "mytool ./rp/a",
  "mytool evil",
  "mytool pkg.mod",
  "gunicorn evil:app",
  "mytool --lexer=lx.py:X",
  "find n -name mark -execdir git status \\;",
  "find n -name mark -okdir git status \\;",
  "find . -maxdepth 1 -execdir git log \\;",
  "sudo -D n git status",
  "make -C n",
  "npm --prefix n test",
  "git -C n status",
  "git --work-tree=n status",
  "GIT_DIR=n/.git git status",
  "ls | xargs -I{} git -C {} status",
  "perl -Mevil -e 1",
  "ruby -r./evil x.rb",
  "node -r ./evil x.js",
  "lua -l evil",
  "awk -f a.awk",
  "sed -f s.sed a.txt",
  "gdb -x g.gdb",
  "python3 -m evil",
  "cmake -P s.cmake",
];

/**
 * Programs without a rule of their own ask too (eleventh attacker pass: the guard cannot tell
 * what they run — `terraform plan` runs providers and `external` data sources, `prettier` the
 * project's plugins; core/policy/shell/programs/unknown.ts `RUNS_NO_CODE` is the allow list).
 */
const NO_RULE = [
  "terraform plan",
  "gh pr view 12",
  "prettier --write src",
  "mytool rmdir-x",
  "mytool a.txt",
];

/** What only reads, lists or names stays auto-allowed under the same deny rule. */
const STAYS = [
  "run-parts --test rp",
  "run-parts --list rp",
  "pydoc3 --help",
  "pygmentize a.txt",
  "pygmentize -lx a.txt",
  "pygmentize -l python3 a.txt",
  "shellcheck rp/a",
  "find . -name x -execdir ls \\;",
  "find n -name mark -exec ls {} \\;",
  "git status",
  "jq -L . -n 1",
];

Deno.test("a10 finding 3: programs that load the repository's files ask under Execute(rm *); readers and listers stay auto-allowed", async () => {
  const ws = await workspace(LOADERS_SETUP);
  try {
    const deny = await verdicts(ws, ["Execute(rm *)"], [...LOADS, ...NO_RULE]);
    assert.deepEqual(wrong(deny, false), [], "asked (or denied) under the deny rule");
    const stays = await verdicts(ws, ["Execute(rm *)"], STAYS);
    assert.deepEqual(wrong(stays, true), [], "still auto-allowed");
    // Without any Execute rule the sandbox's auto-allow runs them (it is then the boundary).
    const none = await verdicts(ws, [], LOADS.filter((c) => !c.startsWith("sudo")));
    assert.deepEqual(wrong(none, true), [], "auto-allowed without rules");
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("a10 finding 3: an allow rule naming the program covers the project's code it runs, not a find -execdir git", async () => {
  const ws = await workspace(LOADERS_SETUP);
  try {
    const v = await verdicts(
      ws,
      ["Execute(rm *)"],
      ["run-parts rp", "ctest -S s.cmake", "mytool rp", "pydoc3 evil"],
      ["Execute(run-parts *)", "Execute(ctest *)", "Execute(mytool *)", "Execute(pydoc3 *)"],
    );
    assert.deepEqual(wrong(v, true), [], "the user chose to run them");
    const find = await verdicts(ws, ["Execute(rm *)"], [
      "find n -name mark -execdir git status \\;",
    ], ["Execute(find *)"]);
    assert.deepEqual(wrong(find, false), [], "git in a found folder is checked on its own");
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("a10 finding 3: without the sandbox, find -execdir git asks while find -execdir cat {} stays allowed (its items are beneath find's folders)", async () => {
  const ws = await workspace("mkdir -p n && touch n/mark");
  try {
    const p = Policy.create({}, { allow: [], deny: [] }, { workspace: ws, configDir: "/c" });
    const d = async (command: string) => (await p.evaluate({ type: "execute", command })).decision;
    assert.equal(await d("find . -name '*.txt' -execdir cat {} \\;"), "allow");
    assert.equal(await d("find . -name x -execdir ls \\;"), "allow");
    assert.equal(await d("find n -name mark -execdir git status \\;"), "ask");
    assert.equal(
      await d("find n -name mark -execdir cat ../../x \\;"),
      "ask",
      "climbs: folder unknown",
    );
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

/** Finding 4 and siblings: each prints hunks or stored lines of files `Read(secret.txt)` covers. */
const PRINTS = [
  "git status -v -v",
  "git status -v",
  "git status -vv",
  "git status --verbose",
  "git add -p",
  "git add --patch",
  "git add -i",
  "git add -e",
  "git add -p secret.txt",
  "git checkout -p",
  "git checkout -p HEAD -- .",
  "git restore -p",
  "git restore --patch .",
  "git reset -p",
  "git stash -p",
  "git stash push -p",
  "git stash show -p",
  "git commit -p",
  "git commit -v",
  "git commit -v -m x",
  "git stash push -p -m msg",
  "git restore -p -s HEAD",
  "git commit --interactive",
  "git diff --cached",
  "git diff --staged",
  "git diff HEAD",
  "git difftool",
  "git difftool --cached",
  "git log -p",
  "git blame secret.txt",
  "git blame HEAD -- secret.txt",
  "git annotate secret.txt",
  "git blame -L 1,1 secret.txt",
  "git grep --cached TOP",
  "git archive HEAD",
  "git format-patch -1",
  "git bundle create /tmp/b HEAD",
];

/** What prints no contents of a covered file stays as it was. */
const QUIET = [
  "git status",
  "git status -s",
  "git status --porcelain",
  "git add a.txt",
  "git add -p a.txt",
  "git checkout -p -- a.txt",
  "git commit -m x",
  "git blame a.txt",
  "git blame HEAD a.txt",
  "git blame -L 1,1 a.txt",
  "git commit -p -m x a.txt",
  "git restore -p -s HEAD a.txt",
  "git log --oneline",
  "git diff --stat",
  "git difftool a.txt",
  "git stash list",
];

Deno.test("a10 finding 4: under Read(secret.txt) git commands printing hunks or stored lines ask or are denied; the quiet ones stay", async () => {
  const ws = await workspace();
  try {
    const deny = await verdicts(ws, ["Read(secret.txt)"], PRINTS);
    assert.deepEqual(wrong(deny, false), [], "meet the Read rule");
    const quiet = await verdicts(ws, ["Read(secret.txt)"], QUIET);
    assert.deepEqual(wrong(quiet, true), [], "print nothing of secret.txt");
    const none = await verdicts(ws, [], PRINTS.filter((c) => !c.includes("/tmp")));
    assert.deepEqual(wrong(none, true), [], "without a Read rule nothing changes");
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

const opts = { ignore: !ON, sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "a10 finding 3 e2e: run-parts, a program given a folder of executables, and find -execdir git in a tar-made repository do not delete under --deny 'Execute(rm *)'",
  opts,
  async () => {
    const ws = await workspace(
      `mkdir -p rp && printf '#!/bin/sh\\nrm -rf v0\\n' > rp/a && chmod +x rp/a
mkdir -p rq && printf '#!/bin/sh\\nrm -rf v2\\n' > rq/a && chmod +x rq/a
mkdir -p g && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "rm -rf ../v1; false"\\n' > g/config`,
    );
    try {
      const r = await headlessTurns(ws, [
        [{ id: "c0", command: "run-parts rp" }],
        [{
          id: "c1",
          command:
            "git init -q n && tar -cf c.tar --transform 's,^g,.git,' g/config && tar -xf c.tar -C n && touch n/mark && find n -name mark -execdir git status \\;",
        }],
        [{ id: "c2", command: "find . -maxdepth 1 -name rq -exec run-parts {} \\;" }],
        [{ id: "c3", command: "run-parts --test rp" }],
      ], ["--deny", "Execute(rm *)"]);
      const denied = new Set(r.out.denied.map((d) => d.toolCallId));
      for (const v of ["v0", "v1", "v2"]) assert.ok(await exists(join(ws, v)), `${v} deleted`);
      assert.ok(denied.has("c0") && denied.has("c1") && denied.has("c2"), [...denied].join(","));
      assert.ok(!denied.has("c3"), "run-parts --test only lists");
      assert.match(r.result("c3"), /rp\/a/);
    } finally {
      await sh(`chmod -R u+rwx '${ws}'`);
      await Deno.remove(ws, { recursive: true });
    }
  },
);

Deno.test(
  "a10 finding 4 e2e: under --deny 'Read(secret.txt)' git status -v -v and the -p modes do not print the committed secret",
  opts,
  async () => {
    const ws = await workspace("echo changed > a.txt");
    try {
      const cmds = [
        "git status -v -v",
        "git add -p",
        "git checkout -p",
        "git restore -p",
        "git reset -p",
        "git commit -v -a -m x",
        "git blame -L 1,1 secret.txt",
      ];
      const r = await headlessTurns(
        ws,
        [...cmds.map((command, i) => [{ id: `c${i}`, command }]), [{
          id: "ok",
          command: "git status -v -v -- a.txt",
        }]],
        ["--deny", "Read(secret.txt)"],
      );
      const denied = new Set(r.out.denied.map((d) => d.toolCallId));
      for (const [i, c] of cmds.entries()) {
        assert.ok(!r.result(`c${i}`).includes("TOPSECRET"), `${c}: ${r.result(`c${i}`)}`);
        assert.ok(denied.has(`c${i}`), `${c} not denied`);
      }
      assert.ok(!denied.has("ok"), "a pathspec the rule does not cover runs");
      assert.match(r.result("ok"), /changed/);
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
);
