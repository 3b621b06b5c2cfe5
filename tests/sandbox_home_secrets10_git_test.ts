/**
 * Issue 16 class 2 gap B (core/policy/sandbox/repo_configs.ts; docs/permissions.md "The home
 * directory inside the sandbox"): every git config a sandboxed command can read is shown with its
 * credential lines masked, not only `.git/config` — `config.worktree` (with
 * `extensions.worktreeConfig`) of the workspace's worktree, of the main worktree in the common
 * dir and of the other linked worktrees (`worktrees/<name>/config.worktree`), submodules'
 * `modules/<name>/config`, and the files `include.path` / `includeIf.*.path` name, carrying
 * `url.<base>.insteadOf` with a token, `http.extraHeader` and a credential helper with a
 * password. Real bwrap, the launcher called directly and a headless session with the guard
 * forced open; git keeps working.
 */
import assert from "node:assert/strict";
import { commandWorld, GIT_ID, SANDBOX_ON } from "./support/sandbox_world.ts";
import { deriveProfile, describeSandbox } from "../core/policy/sandbox/mod.ts";
import { repoConfigFiles } from "../core/policy/sandbox/repo_configs.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote, toolCallTexts } from "./support/run_coyote.ts";

const TOKEN = "glpat-Q7rZ2lM9xV4kP1wT8yB3";
const INSTEAD =
  `[url "https://oauth2:${TOKEN}@gitlab.example/"]\n\tinsteadOf = https://gitlab.example/\n`;
const HEADER = `[http]\n\textraHeader = Authorization: Bearer ${TOKEN}\n`;
const HELPER = `[credential]\n\thelper = "!f() { echo username=ci; echo password=${TOKEN}; }; f"\n`;

/**
 * The workspace `ws` is a linked worktree of `../repo` (the main checkout), with a second
 * linked worktree `../other` and a submodule in the common dir; each config names the token.
 */
const SETUP = [
  "cd ..",
  `git init -q sub && git -C sub ${GIT_ID} commit -q --allow-empty -m s`,
  `git init -q repo && cd repo && git ${GIT_ID} commit -q --allow-empty -m x`,
  "git config extensions.worktreeConfig true",
  `printf '%s' '${INSTEAD}' >> .git/config.worktree`,
  `printf '%s' '${HEADER}' > .git/extra.inc`,
  "git config include.path extra.inc",
  `printf '%s' '${HELPER}' > .git/cond.inc`,
  'git config "includeIf.gitdir:/.path" cond.inc',
  "rmdir ../ws && git worktree add -q ../ws && git worktree add -q ../other",
  `printf '%s' '${HEADER}' >> .git/worktrees/other/config.worktree`,
  `printf '%s' '${INSTEAD}' >> .git/worktrees/ws/config.worktree`,
  `git -c protocol.file.allow=always ${GIT_ID} submodule add -q ../sub sub 2>/dev/null`,
  `git config -f .git/modules/sub/config remote.origin.url 'https://x:${TOKEN}@gitlab.example/sub.git'`,
].join(" && ");

function commands(): Record<string, string> {
  const common = '"$(git rev-parse --git-common-dir)"';
  return {
    files:
      `cd ${common} && cat config config.worktree extra.inc cond.inc worktrees/*/config.worktree modules/sub/config`,
    own: 'cat "$(git rev-parse --git-dir)/config.worktree"',
    list: "git config --list --show-origin",
    status: "git status --short --branch; echo rc=$?",
    grep: `grep -rs glpat ${common} | head`,
  };
}

function check(out: Record<string, string>) {
  const leaks = Object.entries(out).filter(([, t]) => t.includes(TOKEN));
  assert.deepEqual(leaks, []);
  assert.match(out.files, /insteadOf = https:\/\/gitlab\.example\//);
  assert.match(out.files, /\[url "https:\/\/gitlab\.example\/"\]/);
  assert.match(out.status, /## ws/);
  assert.match(out.status, /rc=0/);
}

Deno.test("sandbox git configs: config.worktree, other worktrees', submodules' and included files are masked (launcher, real bwrap)", async () => {
  const w = await commandWorld("coyote-s10-git-", SETUP);
  try {
    // Outside the sandbox each holds the token (the test is not vacuous).
    const files = repoConfigFiles(w.ws);
    const names = files.map((f) => f.slice(f.indexOf("/repo/.git/") + 11));
    for (
      const want of [
        "config",
        "config.worktree",
        "extra.inc",
        "cond.inc",
        "worktrees/other/config.worktree",
        "worktrees/ws/config.worktree",
        "modules/sub/config",
      ]
    ) assert.ok(names.includes(want), `${want} in ${names}`);
    for (const f of files.filter((f) => !f.endsWith("/worktrees/ws/config"))) {
      if (/(config\.worktree|\.inc|modules\/sub\/config)$/.test(f)) {
        assert.ok(Deno.readTextFileSync(f).includes(TOKEN), f);
      }
    }
    const out: Record<string, string> = {};
    for (const [id, c] of Object.entries(commands())) out[id] = await w.run(c);
    check(out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox git configs: the same with the guard forced open, in a headless session", async () => {
  const w = await commandWorld("coyote-s10-git-h-", SETUP);
  const env = await makeCoyoteEnv();
  const calls = commands();
  const server = await startModelServer({ script: commandBatch(calls) });
  try {
    const e = childEnv(env, {
      baseURL: server.baseURL,
      extra: { HOME: w.home, COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" },
    });
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    const out = toolCallTexts(r.stdout);
    assert.equal(Object.keys(out).length, Object.keys(calls).length, r.stdout);
    check(out);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("sandbox git configs: in the main worktree, .git/worktrees/*/config.worktree and .git/modules/*/config are masked", async () => {
  const w = await commandWorld(
    "coyote-s10-git-main-",
    [
      `git init -q && git ${GIT_ID} commit -q --allow-empty -m x`,
      "git config extensions.worktreeConfig true",
      "git worktree add -q ../side",
      `printf '%s' '${HEADER}' >> .git/worktrees/side/config.worktree`,
      `printf '%s' '${INSTEAD}' >> .git/config.worktree`,
      `mkdir -p .git/modules/m && printf '%s' '${HELPER}' > .git/modules/m/config`,
    ].join(" && "),
  );
  try {
    const out = await w.run(
      "cat .git/worktrees/side/config.worktree .git/config.worktree .git/modules/m/config; git status --short; echo rc=$?",
    );
    assert.ok(!out.includes(TOKEN), out);
    assert.match(out, /insteadOf = https:\/\/gitlab\.example\//);
    assert.match(out, /rc=0/);
    // `policy show` lists each under `masked:`.
    const show = describeSandbox(deriveProfile(w.policy), SANDBOX_ON);
    for (const f of [".git/worktrees/side/config.worktree", ".git/config.worktree"]) {
      assert.ok(show.includes(`${w.ws}/${f}  (git config holding a credential (masked))`), show);
    }
  } finally {
    await w.cleanup();
  }
});
