/**
 * The home directory inside the OS sandbox (core/policy/sandbox/home_view.ts, issue 16): an allow
 * list. A fake HOME holds credentials in the usual places, in an unknown vendor's dir and inside
 * toolchain stores; a real headless session with the guard forced open (test-only switch) runs
 * `cat` on each under real bwrap and `git config --global --list` — no secret comes back, while
 * the stores' ordinary files do and git keeps the user's identity. Plus: linked worktrees and
 * submodules (their git dirs outside the workspace) work inside the sandbox, `Read` allow rules
 * open more of the home, `policy show` lists what is visible.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import {
  deriveProfile,
  describeSandbox,
  detectBackend,
  sandboxedCommand,
} from "../core/policy/sandbox/mod.ts";
import { gitconfigText, homeView, SECRET_NAME_RE } from "../core/policy/sandbox/home_view.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const TOKEN = "ghp_0123456789abcdefSECRET";

/** Credential files (relative to the fake home): none may be read by a sandboxed command. */
const SECRETS: Record<string, string> = {
  ".gitconfig":
    `[user]\n\tname = Ada Tester\n\temail = ada@example.com\n[url "https://x:${TOKEN}@github.com/"]\n\tinsteadOf = https://github.com/\n[credential]\n\thelper = store\n[include]\n\tpath = ~/.gitinc\n`,
  ".gitinc": `[http]\n\textraHeader = Authorization: ${TOKEN}\n`,
  ".config/git/config": `[http]\n\textraHeader = ${TOKEN}\n`,
  ".ssh/id_ed25519": `PRIVATE KEY ${TOKEN}`,
  ".aws/credentials": `aws_secret_access_key=${TOKEN}`,
  ".config/gh/hosts.yml": `oauth_token: ${TOKEN}`,
  ".netrc": `machine github.com password ${TOKEN}`,
  ".docker/config.json": `{"auths":{"x":{"auth":"${TOKEN}"}}}`,
  ".somevendor/secret": TOKEN,
  ".cache/huggingface/token": TOKEN,
  ".cache/pip/credentials.json": TOKEN,
  ".cargo/credentials.toml": TOKEN,
  ".gem/credentials": TOKEN,
  ".npm/_cacache/auth.json": TOKEN,
  ".m2/settings.xml": TOKEN,
  ".npmrc": `//registry.npmjs.org/:_authToken=${TOKEN}`,
  ".nvm/versions/node/v20.1.0/etc/npmrc": `//registry.npmjs.org/:_authToken=${TOKEN}`,
  ".pyenv/versions/3.12.1/pip.conf": `[global]\nindex-url = https://u:${TOKEN}@pypi.example/simple`,
  // Third attacker pass (issue 16 item 10).
  ".cache/tool/.env": `API=${TOKEN}`,
  ".cache/tool/prod.env": `API=${TOKEN}`,
  ".cache/k8s/kubeconfig": `token: ${TOKEN}`,
  ".cache/api/bearer": TOKEN,
  ".cache/gcp/ci-service-account.json": `{"private_key":"${TOKEN}"}`,
  ".cache/gcp/sa.json": `{"private_key":"${TOKEN}"}`,
  ".npm/_logs/2026-12-02T00_00_00_000Z-debug-0.log": `GET https://r/ authorization ${TOKEN}`,
};
/** Toolchain store files: readable. */
const STORES: Record<string, string> = {
  ".cache/x": "cache-ok",
  ".npm/x": "npm-ok",
  ".cargo/registry/x": "cargo-ok",
  ".cache/huggingface/hub/tokenizer.json": "tokenizer-ok",
  ".cache/tool/environment.json": "environment-ok",
  ".cache/pyenv-virtualenv/.venv-ok": "venv-ok",
};

async function fakeHome() {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "coyote-home-test-" }),
  );
  const home = join(root, "home");
  const ws = join(root, "ws");
  for (const [rel, text] of Object.entries({ ...SECRETS, ...STORES })) {
    await Deno.mkdir(dirname(join(home, rel)), { recursive: true });
    await Deno.writeTextFile(join(home, rel), text);
  }
  await Deno.mkdir(ws, { recursive: true });
  return { root, home, ws, cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}) };
}

Deno.test("sandbox home: a headless session with the guard forced open reads no credential of the home", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const w = await fakeHome();
  const env = await makeCoyoteEnv();
  const calls: Record<string, string> = {};
  Object.keys(SECRETS).forEach((rel, i) => calls[`s${i}`] = `cat ~/${rel}; ls -A ~/${rel}`);
  Object.keys(STORES).forEach((rel, i) => calls[`ok${i}`] = `cat ~/${rel}`);
  calls.gitlist = "git config --global --list";
  calls.gitall = "git config --list --show-origin";
  calls.ls = "ls -A ~ ~/.cache ~/.config 2>&1; grep -r ghp_ ~ 2>/dev/null | head";
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
    assert.match(r.stderr, /TEST MODE/);
    const text = new Map<string, string>();
    for (const l of r.stdout.trim().split("\n").map((x) => JSON.parse(x))) {
      const u = l.update;
      if (u?.sessionUpdate === "tool_call_update" && u.content) {
        text.set(u.toolCallId, JSON.stringify(u.content));
      }
    }
    assert.equal(text.size, Object.keys(calls).length, r.stdout);
    for (const [id, t] of text) assert.ok(!t.includes(TOKEN), `${id}: ${calls[id]} shows ${t}`);
    Object.values(STORES).forEach((v, i) => assert.match(text.get(`ok${i}`)!, new RegExp(v)));
    // Git keeps the identity (from the real global config, includes dropped).
    assert.match(text.get("gitlist")!, /user\.name=Ada Tester/);
    assert.match(text.get("gitlist")!, /user\.email=ada@example\.com/);
    assert.doesNotMatch(text.get("gitlist")!, /insteadof|credential|include/i);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

async function run(policy: Policy, command: string, cwd: string, home: string) {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed");
  const c = sandboxedCommand(policy, command, {
    cwd,
    backend,
    baseEnv: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home },
  });
  const o = await new Deno.Command(c.program, {
    args: c.args,
    cwd,
    env: c.env,
    clearEnv: true,
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

const git = async (cwd: string, ...args: string[]) => {
  const o = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@e", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(o.success, new TextDecoder().decode(o.stderr));
};

Deno.test("sandbox home: git works in a linked worktree and a submodule whose git dirs lie in the hidden home", async () => {
  const w = await fakeHome();
  try {
    // The main checkout lives in the (hidden) home; the workspace is a linked worktree of it.
    const main = join(w.home, "src", "main");
    await Deno.mkdir(main, { recursive: true });
    await git(main, "init", "-q", "-b", "trunk");
    await Deno.writeTextFile(join(main, "a.txt"), "a\n");
    await git(main, "add", "a.txt");
    await git(main, "commit", "-q", "-m", "first commit");
    const wt = join(w.root, "wt");
    await git(main, "worktree", "add", "-q", wt);
    const policy = (ws: string, allow: string[] = []) =>
      Policy.create({}, { allow, deny: [] }, {
        workspace: ws,
        configDir: join(w.root, "cfg"),
        home: w.home,
      });
    const p = policy(wt);
    await p.globsReady();
    const r = await run(p, "git status && git log --oneline && cat ~/src/main/a.txt", wt, w.home);
    assert.equal(r.code, 1, r.out); // cat: the main checkout itself stays hidden, only its .git shows
    assert.match(r.out, /On branch wt/);
    assert.match(r.out, /first commit/);
    // Read-only: the common dir cannot be changed from the worktree.
    const ro = await run(p, "git branch evil && echo MADE", wt, w.home);
    assert.doesNotMatch(ro.out, /MADE/);
    // Without the common dir mounted git fails (the check is not vacuous).
    assert.ok(deriveProfile(p).readable.some((x) => x.path === join(main, ".git")));

    // A submodule checkout as the workspace: its git dir is in the superproject's .git/modules.
    const sup = join(w.root, "super");
    await Deno.mkdir(sup);
    await git(sup, "init", "-q");
    await git(sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", main, "lib");
    const sub = join(sup, "lib");
    const ps = policy(sub);
    await ps.globsReady();
    const s = await run(ps, "git status --short && git log --oneline", sub, w.home);
    assert.equal(s.code, 0, s.out);
    assert.match(s.out, /first commit/);
    assert.ok(deriveProfile(ps).readable.some((x) => x.path.endsWith(".git/modules/lib")));

    // A cloned repository's `.git` file may name any folder: only a git dir that names the
    // checkout back is mounted (here the unknown vendor's dir, made to look like a git dir).
    const evil = join(w.root, "evil");
    await Deno.mkdir(evil);
    await Deno.writeTextFile(join(evil, ".git"), `gitdir: ${w.home}/.somevendor\n`);
    await Deno.writeTextFile(join(w.home, ".somevendor", "HEAD"), "ref: refs/heads/main\n");
    await Deno.writeTextFile(join(w.home, ".somevendor", "commondir"), "..\n");
    const pe = policy(evil);
    await pe.globsReady();
    assert.equal(deriveProfile(pe).readable.length, 0);
    const e = await run(pe, "cat ~/.somevendor/secret; ls -A ~", evil, w.home);
    assert.ok(!e.out.includes(TOKEN), e.out);
    assert.doesNotMatch(e.out, /\.ssh/);

    // A Write allow rule into a store keeps it writable (the store's read-only mount yields).
    const pw = policy(wt, [`Write(${w.home}/.npm/**)`]);
    await pw.globsReady();
    const wr = await run(
      pw,
      "touch ~/.npm/y && echo WROTE; touch ~/.cache/y || echo RO",
      wt,
      w.home,
    );
    assert.match(wr.out, /WROTE/);
    assert.match(wr.out, /RO/);

    // A Read allow rule opens more of the home (read-only); policy show lists the view.
    const pr = policy(wt, [`Read(${w.home}/.somevendor/**)`]);
    await pr.globsReady();
    const v = await run(pr, "cat ~/.somevendor/secret; touch ~/.somevendor/x", wt, w.home);
    assert.match(v.out, new RegExp(TOKEN));
    assert.match(v.out, /Read-only file system/);
    const shown = describeSandbox(deriveProfile(pr), {
      mode: "auto",
      active: true,
      backend: "bwrap",
      autoAllow: true,
      reason: "bwrap",
    });
    assert.match(shown, new RegExp(`home: +${w.home} is empty inside the sandbox`));
    assert.match(shown, new RegExp(`${w.home}/\\.npm +\\(npm cache`));
    assert.match(shown, /huggingface\/token/);
    assert.match(shown, /\.somevendor/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox home: the generated git config keeps only safe keys; secret-looking names", () => {
  const text = gitconfigText("/w", [
    "user.name Ada",
    "user.email a@e",
    `url.https://x:${TOKEN}@h/.insteadof https://h/`,
    "credential.helper store",
    "include.path ~/.x",
    'core.autocrlf input"\n[evil]',
    "init.defaultbranch main",
  ]);
  assert.ok(!text.includes(TOKEN) && !/credential|include|evil/i.test(text), text);
  assert.match(text, /\[user\]\n\tname = "Ada"\n\temail = "a@e"/);
  assert.match(text, /defaultbranch = "main"/);
  assert.match(text, /\[safe\]\n\tdirectory = "\/w"/);
  for (
    const n of [
      "token",
      "hf_token",
      "credentials.toml",
      "auth.json",
      "id_ed25519",
      "a.pem",
      ".env",
      ".env.local",
      "staging.env",
      "kubeconfig",
      "dev.kubeconfig.yaml",
      "bearer",
      "bearer.txt",
      "my-service-account.json",
      "service_account_key.json",
      "sa.json",
      "sa-prod.json",
      "deploy-sa.json",
      "private_key.json",
      "vault.kdbx",
    ]
  ) {
    assert.ok(SECRET_NAME_RE.test(n), n);
  }
  for (
    const n of [
      "tokenizer.json",
      "oauthlib",
      "registry",
      "index.crates.io-6f17d22bba15001f",
      ".venv",
      "environment.json",
      "env",
      "sass.json",
      "usage.json",
      "_cacache",
    ]
  ) {
    assert.ok(!SECRET_NAME_RE.test(n), n);
  }
});

Deno.test("sandbox home: a store that links to the home (or above it) is not shown; stores named by variables are", async () => {
  const w = await fakeHome();
  try {
    await Deno.mkdir(join(w.home, ".local"), { recursive: true });
    await Deno.symlink(w.home, join(w.home, ".local", "bin"));
    await Deno.symlink("/", join(w.home, ".deno"));
    await Deno.mkdir(join(w.home, "mydeno", "npm"), { recursive: true });
    const env: Record<string, string> = { DENO_DIR: join(w.home, "mydeno"), PYENV_ROOT: w.home };
    const v = homeView(w.home, w.ws, [w.ws], (n) => env[n])!;
    const paths = v.stores.map((s) => s.path);
    assert.ok(!paths.includes(join(w.home, ".local", "bin")), paths.join());
    assert.ok(!paths.includes(join(w.home, ".deno")), paths.join());
    assert.ok(!paths.includes(w.home), paths.join());
    assert.ok(paths.includes(join(w.home, "mydeno")), paths.join());
    assert.ok(paths.includes(join(w.home, ".npm")), paths.join());
    // A root that contains the home turns the view off.
    assert.equal(homeView(w.home, w.root, [w.root]), undefined);
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox home: with the workspace at the home (view off) ~/.gitconfig is hidden and the guard asks", async () => {
  const w = await fakeHome();
  try {
    const p = Policy.create({}, { allow: [], deny: [] }, {
      workspace: w.home,
      configDir: join(w.root, "cfg"),
      home: w.home,
    });
    await p.globsReady();
    assert.equal(deriveProfile(p).home, undefined);
    const r = await run(
      p,
      "cat ~/.gitconfig ~/.config/git/config ~/.ssh/id_ed25519; cat ~/.cache/x",
      w.home,
      w.home,
    );
    assert.ok(!r.out.includes(TOKEN), r.out);
    assert.match(r.out, /cache-ok/);
    for (const rel of [".gitconfig", ".config/git/config", ".ssh/id_ed25519"]) {
      assert.equal(p.decide({ type: "read", path: join(w.home, rel) }).decision, "ask", rel);
    }
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox home: `coyote policy show` lists what is visible of the home", async () => {
  const w = await fakeHome();
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote(["policy", "show", "--allow", "Read(~/.somevendor/**)"], {
      cwd: w.ws,
      env: childEnv(env, { extra: { HOME: w.home } }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`home: +${w.home} is empty inside the sandbox except`));
    assert.match(r.stdout, new RegExp(`${w.home}/\\.cargo/registry +\\(Cargo registry`));
    assert.match(r.stdout, /\.gitconfig +\(generated: identity and safe settings only\)/);
    assert.match(r.stdout, /hidden inside those stores[^]*huggingface\/token/);
    assert.match(r.stdout, new RegExp(`visible: +\\(read-only\\)\\n +${w.home}/\\.somevendor`));
  } finally {
    await env.cleanup();
    await w.cleanup();
  }
});
