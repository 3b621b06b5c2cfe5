/**
 * The home's toolchain stores, deep (core/policy/sandbox/home_view.ts `scanSecrets`, issue 16
 * fourth attacker pass class 2; docs/permissions.md "The home directory inside the sandbox"):
 * browser profiles, mail caches and keyrings are hidden by their structure at any depth of a
 * visible store, git configs holding a token URL or an auth header are hidden, and credential
 * values reach no command whatever their name (core/tools/secret_value.ts). On real bwrap: the
 * launcher called directly (no guard in between) and a headless session with the guard forced
 * open (test-only switch). The stores keep working: a package named `cookie` deep in the Deno
 * cache, a clone's clean git config and a bare clone whose config was hidden (git still clones it).
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { sandboxOutputs } from "./support/sandbox_world.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote, toolCallTexts } from "./support/run_coyote.ts";

const TOKEN = "SECRETq7Rz2Lm9Xv4Kp1Wt8";

/** Files (relative to the fake home) no sandboxed command may read. */
const HIDDEN: Record<string, string> = {
  // A browser profile 6 levels deep in ~/.npm and in ~/.cache; a Login Data under ~/.cargo.
  ".npm/_npx/a1/node_modules/.cache/mcp/Default/Cookies": TOKEN,
  ".npm/_npx/a1/node_modules/.cache/mcp/Default/Preferences": TOKEN,
  ".cache/tool/runs/r1/browser/user-data/Default/Login Data": TOKEN,
  ".cache/tool/runs/r1/browser/user-data/Local State": TOKEN,
  ".cargo/registry/cache/x/mcp/Profile 1/Login Data": TOKEN,
  ".cache/agent/ff/profiles/abcd.default/key4.db": TOKEN,
  ".cache/agent/ff/profiles/abcd.default/prefs.js": TOKEN,
  ".cache/electron-app/x/Local Storage/leveldb/000003.log": TOKEN,
  // Mail: Evolution's cache by name and structure, a Maildir deep in a store.
  ".cache/evolution/mail/1a2b/folders.db": TOKEN,
  ".cache/sync/a/b/Mail/INBOX/cur/1:2,S": TOKEN,
  ".cache/sync/a/b/Mail/INBOX/new/.keep": "",
  ".cache/sync/a/b/Mail/INBOX/tmp/.keep": "",
  ".cache/vault/x/y/login.keyring": TOKEN,
  // Token URLs and auth headers in git configs of clones kept in stores.
  ".cache/pre-commit/repo9z/.git/config":
    `[remote "origin"]\n\turl = https://ci:${TOKEN}@gitlab.example/x.git\n`,
  ".cache/pre-commit/repo9z/package.json": "{}",
  ".cargo/git/db/dep-77/a/b/config":
    `[http]\n\textraHeader = AUTHORIZATION: basic eC1hY2Nlc3M6${TOKEN}\n`,
};
/** Store files that must stay readable (deep names that look private are a package's files). */
const VISIBLE: Record<string, string> = {
  ".cache/deno/npm/registry.npmjs.org/cookie/0.6.0/package.json": '{"name":"cookie-ok"}',
  // Within the name rule's depth of a store (DENO_DIR=~/.deno): packages, not credentials.
  ".deno/npm/registry.npmjs.org/cookie-signature/1.0.6/package.json": '{"name":"sig-ok"}',
  ".deno/npm/registry.npmjs.org/google-auth-library/registry.json": '{"name":"gal-ok"}',
  ".cache/deno/npm/registry.npmjs.org/x/1.0.0/lib/session.js": "session-ok",
  ".npm/_npx/a1/node_modules/.cache/mcp/readme.txt": "npx-ok",
  ".cache/pre-commit/repo1/.git/config":
    `[remote "origin"]\n\turl = https://github.com/pre-commit/hooks\n# clean-config-ok\n`,
  ".cargo/registry/cache/x/crate-ok.txt": "crate-ok",
};
const ENV: Record<string, string> = {
  GIT_CONFIG_PARAMETERS: `'http.extraheader'='AUTHORIZATION: basic ${btoa(`u:${TOKEN}`)}'`,
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "http.extraheader",
  GIT_CONFIG_VALUE_0: `Authorization: Bearer ${TOKEN}`,
  GOPROXY: `https://${TOKEN}@goproxy.example,direct`,
  HOOK: `https://discord.com/api/webhooks/1/${TOKEN}`,
  LINEAR: `lin_api_${TOKEN}`,
  GOOGLE: `ya29.${TOKEN}`,
};

const dec = new TextDecoder();
async function sh(cmd: string, cwd?: string) {
  const o = await new Deno.Command("bash", { args: ["-c", cmd], cwd }).output();
  assert.ok(o.success, dec.decode(o.stderr));
}

async function fakeHome() {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "coyote-home-deep-" }),
  );
  const home = join(root, "home");
  const ws = join(root, "ws");
  for (const [rel, text] of Object.entries({ ...HIDDEN, ...VISIBLE })) {
    await Deno.mkdir(dirname(join(home, rel)), { recursive: true });
    await Deno.writeTextFile(join(home, rel), text);
  }
  // A bare clone in Cargo's git db whose config carries a token: hidden, and git still clones it.
  await sh(
    `git init -q src && git -C src -c user.name=a -c user.email=a@e commit -q --allow-empty -m first && git clone -q --bare src '${home}/.cargo/git/db/dep-88' && git -C '${home}/.cargo/git/db/dep-88' config remote.origin.url 'https://${TOKEN}@github.com/x/dep'`,
    root,
  );
  await Deno.mkdir(ws, { recursive: true });
  await sh("git init -q", ws);
  return { root, home, ws, cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}) };
}

/** The commands of both runs: each hidden file, the stores' files, env and git's view of config. */
function commands(home: string): Record<string, string> {
  const c: Record<string, string> = {};
  Object.keys(HIDDEN).forEach((rel, i) =>
    c[`h${i}`] = `cat '${home}/${rel}'; ls -A "$(dirname '${home}/${rel}')"`
  );
  Object.keys(VISIBLE).forEach((rel, i) => c[`v${i}`] = `cat '${home}/${rel}'`);
  c.cfg88 = `cat ${home}/.cargo/git/db/dep-88/config`;
  c.clone =
    `git clone -q ${home}/.cargo/git/db/dep-88 /tmp/dep && git -C /tmp/dep log --format=clone-%s`;
  c.env = "env";
  c.git = "git config --list --show-origin";
  c.grep = `grep -rs SECRET ${home} | head`;
  return c;
}

function check(out: Record<string, string>) {
  const leaks = Object.entries(out).filter(([, t]) => t.includes(TOKEN));
  assert.deepEqual(leaks, []);
  Object.values(VISIBLE).forEach((v, i) => {
    const want = /"name":"(.*)"/.exec(v)?.[1] ??
      (/clean-config-ok/.test(v) ? "clean-config-ok" : v);
    assert.ok(out[`v${i}`].includes(want), `v${i}: ${out[`v${i}`]}`);
  });
  assert.match(out.clone, /clone-first/);
}

Deno.test("sandbox home deep: profiles, mail, keyrings and token git configs deep in the stores stay hidden (launcher, real bwrap)", async () => {
  const w = await fakeHome();
  for (const [k, v] of Object.entries(ENV)) Deno.env.set(k, v);
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: w.ws,
    configDir: join(w.root, "cfg"),
    home: w.home,
  });
  try {
    const out = await sandboxOutputs(policy, commands(w.home), w.ws);
    check(out);
  } finally {
    for (const k of Object.keys(ENV)) Deno.env.delete(k);
    await w.cleanup();
  }
});

Deno.test("sandbox home deep: the same with the guard forced open, in a headless session", async () => {
  const w = await fakeHome();
  const env = await makeCoyoteEnv();
  const calls = commands(w.home);
  const server = await startModelServer({ script: commandBatch(calls) });
  try {
    const e = childEnv(env, {
      baseURL: server.baseURL,
      extra: { HOME: w.home, COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow", ...ENV },
    });
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /TEST MODE/);
    const out = toolCallTexts(r.stdout);
    assert.equal(Object.keys(out).length, Object.keys(calls).length, r.stdout);
    check(out);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});
