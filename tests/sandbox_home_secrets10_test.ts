/**
 * Issue 16 class 2 gap A (core/policy/sandbox/store_kinds.ts, home_scan.ts; docs/permissions.md
 * "The home directory inside the sandbox"): inside a toolchain store that is shown, a
 * configuration-shaped file holding a credential by content is hidden whatever its name (a
 * pyenv virtualenv's `pip.conf`, a `settings.xml`/`gradle.properties`-like file in a shown
 * subtree, an `.npmrc`-like file below `~/.npm`, a tool's `config.json`, a `*.ini`, a dot-less
 * `hosts`), so are REPL and shell histories (`deno_history.txt`, `.python_history`) and web
 * storage (Deno's `location_data`) by kind; clean configs, change logs and code stay readable. On
 * real bwrap: the launcher called directly and a headless session with the guard forced open.
 * Plus the scan's cost on a realistic `~/.cache` and its read bound (past it: hidden unread).
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import {
  openScanCache,
  saveScanCache,
  scanSecrets,
  takeScans,
} from "../core/policy/sandbox/home_scan.ts";
import { CONTENT_READ_LIMIT } from "../core/policy/sandbox/store_kinds.ts";
import { sandboxOutputs } from "./support/sandbox_world.ts";
import { commandBatch, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote, toolCallTexts } from "./support/run_coyote.ts";

const TOKEN = "Zq7Rz2Lm9Xv4Kp1Wt8SECRET";

/** Files (relative to the fake home) no sandboxed command may read: no name list knows them. */
const HIDDEN: Record<string, string> = {
  // The example: a pyenv virtualenv's pip.conf (a Python version is an install prefix).
  ".pyenv/versions/3.12.1/envs/foo/pip.conf":
    `[global]\nindex-url = https://user:${TOKEN}@pypi.example/simple\n`,
  ".pyenv/versions/3.12.1/envs/foo/pip.ini": `[global]\nextra-index-url = https://u:${TOKEN}@h/\n`,
  ".pyenv/versions/3.12.1/etc/tool.toml": `[auth]\napi_key = "${TOKEN}"\n`,
  // Maven / Gradle files inside the shown subtrees.
  ".m2/repository/org/example/mirror/settings-ci.xml":
    `<settings><servers><server><id>x</id><password>${TOKEN}</password></server></servers></settings>\n`,
  ".gradle/caches/init/gradle.properties": `systemProp.repoPassword=${TOKEN}\n`,
  ".gradle/caches/x/ci.properties": `mavenCentralPassword=${TOKEN}\n`,
  // npmrc-like files below ~/.npm, a yarnrc below ~/.cache.
  ".npm/_npx/a1/.npmrc-ci": `//registry.example/:_authToken=${TOKEN}\n`,
  ".npm/registry/auth.cfg": `always-auth=true\n_auth=${btoa(`u:${TOKEN}`)}\n`,
  ".cache/yarn/v6/.yarnrc.yml": `npmAuthToken: "${TOKEN}"\n`,
  // A tool's config files, in other spellings.
  ".cache/sometool/config.json": `{"server":"https://x","accessToken":"${TOKEN}"}`,
  ".cache/sometool/settings.yaml": `client_secret: ${TOKEN}\n`,
  ".cache/sometool/hosts": `github.com:\n    oauth_token: ${TOKEN}\n`,
  ".cache/sometool/deploy.ini": `[db]\ndb_pass = ${TOKEN}\n`,
  ".cargo/registry/config-extra.toml": `[registries.x]\ntoken = "Bearer ${TOKEN}"\n`,
  ".deno/ci.env": `export GITHUB_TOKEN=${TOKEN}\n`,
  ".nvm/alias/ci.txt": `Authorization: Bearer ${TOKEN}\n`,
  ".cache/keys/deploy.txt":
    `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${TOKEN}\n-----END OPENSSH PRIVATE KEY-----\n`,
  ".cache/sometool/ghs.txt": `ghp_${TOKEN}abcdefghijkl\n`,
  // History and web storage, by kind (whatever they hold).
  ".cache/deno/deno_history.txt": `const t = "${TOKEN}"\n`,
  ".cache/deno/location_data/0a1b2c/local_storage": TOKEN,
  ".cache/py/.python_history": `token = "${TOKEN}"\n`,
  ".nvm/.node_repl_history": `process.env.X = "${TOKEN}"\n`,
  ".cache/fish/fish_history": `- cmd: curl -H ${TOKEN}\n`,
  ".cache/app/IndexedDB/https_x_0.indexeddb.leveldb/000003.log": TOKEN,
};

/** Store files that must stay readable. */
const VISIBLE: Record<string, string> = {
  ".pyenv/versions/3.12.1/envs/foo/pyvenv.cfg": "home = /usr/bin\n# pyvenv-ok\n",
  ".pyenv/versions/3.12.1/envs/foo/bin/python": "python-ok",
  ".pyenv/versions/3.12.1/lib/python3.12/tokenize.py": "tokenize-ok",
  ".pyenv/versions/3.12.1/envs/bar/pip.conf":
    "[global]\nindex-url = https://pypi.org/simple # pip-clean-ok\n",
  ".m2/repository/org/example/lib/1.0/lib-1.0.pom": "<project>pom-ok</project>",
  ".gradle/caches/x/gradle.properties": "org.gradle.jvmargs=-Xmx2g # gradle-ok\n",
  ".cache/sometool/config.json": "", // replaced below: a clean sibling of the hidden one
  ".cache/other/config.json": '{"theme":"dark","tokenizer":"bpe","max_tokens":4096} // json-ok',
  ".cache/other/package-lock.json":
    '{"integrity":"sha512-q7Rz2Lm9Xv4Kp1Wt8AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/AbCdEfGhIjKlMnO=="} // lock-ok',
  ".cache/deno/npm/registry.npmjs.org/history/4.10.1/package.json": '{"name":"history-ok"}',
  ".cache/deno/npm/registry.npmjs.org/history/registry.json": '{"name":"history-meta-ok"}',
  ".gem/ruby/3.2.0/gems/rake-13.0.6/History.rdoc": "changelog-ok",
  ".cache/lib/History.txt": "changes-ok",
  ".cache/lib/history.js": "module-ok",
  ".cache/other/settings.yaml":
    "password_file: /run/secrets/x\ntoken_url: https://x/t\n# yaml-ok\n",
};
delete VISIBLE[".cache/sometool/config.json"];

async function fakeHome() {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "coyote-home-s10-" }),
  );
  const home = join(root, "home");
  const ws = join(root, "ws");
  for (const [rel, text] of Object.entries({ ...HIDDEN, ...VISIBLE })) {
    await Deno.mkdir(dirname(join(home, rel)), { recursive: true });
    await Deno.writeTextFile(join(home, rel), text);
  }
  // Install prefixes: a pyenv version and its virtualenv (`bin` next to `lib`).
  for (const p of [".pyenv/versions/3.12.1", ".pyenv/versions/3.12.1/envs/foo"]) {
    await Deno.mkdir(join(home, p, "bin"), { recursive: true });
    await Deno.mkdir(join(home, p, "lib"), { recursive: true });
  }
  await Deno.mkdir(ws, { recursive: true });
  return { root, home, ws, cleanup: () => Deno.remove(root, { recursive: true }).catch(() => {}) };
}

function commands(home: string): Record<string, string> {
  const c: Record<string, string> = {};
  Object.keys(HIDDEN).forEach((rel, i) => c[`h${i}`] = `cat '${home}/${rel}'`);
  Object.keys(VISIBLE).forEach((rel, i) => c[`v${i}`] = `cat '${home}/${rel}'`);
  c.grep = `grep -rs SECRET ${home} | head`;
  return c;
}

function check(out: Record<string, string>) {
  const leaks = Object.entries(out).filter(([, t]) => t.includes(TOKEN));
  assert.deepEqual(leaks, []);
  Object.values(VISIBLE).forEach((v, i) => {
    const want = /"name":"([^"]*)"/.exec(v)?.[1] ?? /([\w-]+-ok)/.exec(v)![1];
    assert.ok(out[`v${i}`].includes(want), `v${i} ${Object.keys(VISIBLE)[i]}: ${out[`v${i}`]}`);
  });
}

Deno.test("sandbox home secrets10: credentials by content, histories and web storage in shown stores stay hidden (launcher, real bwrap)", async () => {
  const w = await fakeHome();
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: w.ws,
    configDir: join(w.root, "cfg"),
    home: w.home,
  });
  try {
    const out = await sandboxOutputs(policy, commands(w.home), w.ws);
    check(out);
    // The check is not vacuous: outside the sandbox the files hold the token.
    const txt = await Deno.readTextFile(join(w.home, ".pyenv/versions/3.12.1/envs/foo/pip.conf"));
    assert.ok(txt.includes(TOKEN));
  } finally {
    await w.cleanup();
  }
});

Deno.test("sandbox home secrets10: the same with the guard forced open, in a headless session", async () => {
  const w = await fakeHome();
  const env = await makeCoyoteEnv();
  const calls = commands(w.home);
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
    const out = toolCallTexts(r.stdout);
    assert.equal(Object.keys(out).length, Object.keys(calls).length, r.stdout);
    check(out);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

/** A realistic ~/.cache: Deno's npm cache, pip's http cache, go-build buckets, clones, a tool's configs. */
async function realisticCache(dir: string, files: number): Promise<number> {
  let n = 0;
  const put = async (rel: string, text: string) => {
    await Deno.mkdir(dirname(join(dir, rel)), { recursive: true });
    await Deno.writeTextFile(join(dir, rel), text);
    n++;
  };
  for (let p = 0; n < files; p++) {
    const pkg = `deno/npm/registry.npmjs.org/pkg${p}`;
    await put(
      `${pkg}/registry.json`,
      JSON.stringify({ name: `pkg${p}`, versions: { "1.0.0": {} } }),
    );
    await put(`${pkg}/1.0.0/package.json`, `{"name":"pkg${p}"}`);
    for (let f = 0; f < 4; f++) await put(`${pkg}/1.0.0/lib/f${f}.js`, "module.exports = 1;\n");
    await put(`${pkg}/1.0.0/tsconfig.json`, "{}");
    const h = (p * 2654435761 >>> 0).toString(16).padStart(8, "0");
    await put(`pip/http-v2/${h.slice(0, 2)}/${h.slice(2, 4)}/${h}${h}${h}`, "cached response");
    await put(`go-build/${h.slice(0, 2)}/${h}${h}-d`, "object");
    if (p % 10 === 0) {
      await put(`tool${p}/config.json`, `{"theme":"dark","n":${p}}`);
      await put(`tool${p}/state.yaml`, `last: ${p}\n`);
      await put(`tool${p}/log/run.log`, `started ${p}\n`.repeat(20));
    }
  }
  return n;
}

Deno.test("scanSecrets(): cost on a realistic ~/.cache (cold and cached), bounded reads fail closed", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-s10-cost-" }));
  try {
    const cache = join(root, ".cache");
    const n = await realisticCache(cache, 3000);
    const data = join(root, "data");
    const t0 = performance.now();
    let disk = openScanCache(data);
    assert.deepEqual(scanSecrets(cache, disk), []);
    saveScanCache(disk);
    const cold = performance.now() - t0;
    takeScans({ [cache]: [] }, 0); // forget this process's result: the next scan uses the file
    const t1 = performance.now();
    disk = openScanCache(data);
    assert.deepEqual(scanSecrets(cache, disk), []);
    const warm = performance.now() - t1;
    console.log(`scan of ${n} files: cold ${cold.toFixed(0)} ms, cached ${warm.toFixed(0)} ms`);
    assert.ok(cold < 5000, `cold scan ${cold} ms`);
    assert.ok(warm < 1500, `cached scan ${warm} ms`);

    // Past the read bound: further config-shaped files are hidden unread, then read later.
    const many = join(root, "many");
    const extra = 50;
    for (let i = 0; i < CONTENT_READ_LIMIT + extra; i++) {
      await Deno.mkdir(join(many, `t${i % 100}`), { recursive: true });
      await Deno.writeTextFile(join(many, `t${i % 100}`, `c${i}.json`), `{"n":${i}}`);
    }
    await Deno.writeTextFile(join(many, "t0", "plain-last.json"), '{"ok":1}');
    // A stamp within 2 s of a scan is not trusted from the cache (it could hide an edit).
    await new Promise((r) => setTimeout(r, 2100));
    const d2 = openScanCache(join(root, "data2"));
    const first = scanSecrets(many, d2);
    assert.equal(first.length, extra + 1, "past the bound each unread file is hidden");
    saveScanCache(d2);
    takeScans({ [many]: [] }, 0);
    // The next scan trusts the files read before from the cache and reads the rest.
    const second = scanSecrets(many, openScanCache(join(root, "data2")));
    assert.deepEqual(
      second.length,
      0,
      `the cached scan reads the rest: ${second.slice(0, 3)} (${first.slice(0, 3)})`,
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
