/**
 * Credential lines of the configuration files a command sees are masked (core/policy/sandbox/
 * secret_lines.ts; issue 16 config-file pass): the workspace repository's `.git/config` and a
 * linked worktree's common `config` with `url = https://user:TOKEN@host/…` are bound over by a
 * copy without the user info, on real bwrap, while the file tools' guard asks before reading
 * them (the views agree); `/etc` content judged through the injectable scan root with the
 * verdicts cached by stamp.
 */
import assert from "node:assert/strict";
import { commandWorld, GIT_ID } from "./support/sandbox_world.ts";
import { scanEtc } from "../core/policy/sandbox/root_view.ts";
import { deriveProfile, describeSandbox } from "../core/policy/sandbox/mod.ts";
import { SANDBOX_ON } from "./support/sandbox_world.ts";
import {
  etcCredentialFiles,
  type FileStamp,
  maskCredentialLines,
} from "../core/policy/sandbox/secret_lines.ts";

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
const URL = `https://ci-bot:${TOKEN}@github.com/org/repo.git`;

Deno.test("sandbox: a linked worktree's common git config and the repository's own are shown without the token", async () => {
  const w = await commandWorld(
    "coyote-masked-",
    `cd .. && git init -q repo && cd repo && git ${GIT_ID} commit -q --allow-empty -m x && ` +
      `git remote add origin '${URL}' && git config http.extraheader 'Authorization: Bearer ${TOKEN}' && ` +
      `rmdir ../ws && git worktree add -q ../ws`,
  );
  try {
    const out = await w.run('cat "$(git rev-parse --git-common-dir)/config"; git remote -v');
    assert.ok(!out.includes(TOKEN), out);
    assert.match(out, /url = https:\/\/github\.com\/org\/repo\.git/);
    assert.match(out, /origin\s+https:\/\/github\.com\/org\/repo\.git/);
    // The guard agrees: reading the common config asks (it is outside the workspace anyway).
    const common = `${w.root}/repo/.git/config`;
    assert.equal(w.policy.decide({ type: "read", path: common }).decision, "ask");
  } finally {
    await w.cleanup();
  }
  const m = await commandWorld(
    "coyote-masked-main-",
    `git init -q && git remote add origin '${URL}'`,
  );
  try {
    const out = await m.run("cat .git/config; git status --short; echo rc=$?");
    assert.ok(!out.includes(TOKEN), out);
    assert.match(out, /url = https:\/\/github\.com\/org\/repo\.git/);
    assert.match(out, /rc=0/);
    // Inside the workspace reads are allowed, but not of this credential line.
    // `policy show` lists it as masked (not hidden, not plainly visible).
    const show = describeSandbox(deriveProfile(m.policy), SANDBOX_ON);
    const sect = show.slice(show.indexOf("  masked:"), show.indexOf("  network:"));
    assert.ok(
      sect.includes(`${m.ws}/.git/config  (git config holding a credential (masked))`),
      show,
    );
    const hiddenSect = show.slice(show.indexOf("  hidden:"), show.indexOf("  masked:"));
    assert.ok(!hiddenSect.includes(`${m.ws}/.git/config`), show);
    const r = m.policy.decide({ type: "read", path: `${m.ws}/.git/config` });
    assert.equal(r.decision, "ask", r.reason);
    assert.equal(m.policy.decide({ type: "read", path: `${m.ws}/.git/HEAD` }).decision, "allow");
  } finally {
    await m.cleanup();
  }
});

Deno.test("scanEtc() + etcCredentialFiles(): files holding credentials by content, cached by stamp", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-etc-" }));
  try {
    const etc = `${root}/etc`;
    await Deno.mkdir(`${etc}/docker`, { recursive: true });
    const files: Record<string, string> = {
      "pip.conf": "[global]\nindex-url = https://user:hunter22@pypi.example.com/simple\n",
      "npmrc": "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz012345\n",
      "gitconfig": "[http]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M6U0VDUkVU\n",
      "docker/daemon.json": '{ "registry-mirrors": ["https://mirror.example.com"] }\n',
      "hosts": "127.0.0.1 localhost\n",
      "ca.pem":
        "-----BEGIN CERTIFICATE-----\nMIIDMjCCAhqgAwIBAgIUZSW8dB1CV2BwiYpOFLDGrYrEXIowDQYJKoZIhvcNAQEL\n",
      "pam.d-common": "password requisite pam_pwquality.so retry=3\n",
    };
    for (const [n, t] of Object.entries(files)) await Deno.writeTextFile(`${etc}/${n}`, t);
    await Deno.writeFile(`${etc}/bin.db`, new Uint8Array([0, 1, 2, 0x3d, 0x70]));
    const past = new Date(Date.now() - 60_000);
    for (const n of [...Object.keys(files), "bin.db"]) await Deno.utime(`${etc}/${n}`, past, past);
    const texts: FileStamp[] = [];
    scanEtc(etc, texts);
    const cache = `${root}/data`;
    const found = etcCredentialFiles(texts, cache).map((p) => p.slice(etc.length + 1)).sort();
    assert.deepEqual(found, ["gitconfig", "npmrc", "pip.conf"]);
    // The masked text keeps the file's shape and loses only the credential.
    const pip = maskCredentialLines(files["pip.conf"])!;
    assert.equal(pip.text, "[global]\nindex-url = https://pypi.example.com/simple\n");
    assert.equal(maskCredentialLines(files["npmrc"])!.text, "\n");
    // Cached by stamp: a verdict per file, reused while its mtime, ctime and size stay; a stamp
    // within 2 s of now (every file here: writing set its ctime) is not stored.
    assert.deepEqual(JSON.parse(await Deno.readTextFile(`${cache}/etc-scan.json`)).files, {});
    const old: FileStamp = { path: `${etc}/hosts`, mtime: 1000, ctime: 1000, size: 20 };
    assert.deepEqual(etcCredentialFiles([old], cache), []);
    const c = JSON.parse(await Deno.readTextFile(`${cache}/etc-scan.json`));
    assert.deepEqual(c.files[old.path], [1000, 1000, 20, 0]);
    c.files[old.path][3] = 1; // a verdict for an unchanged stamp is taken, the file not read
    await Deno.writeTextFile(`${cache}/etc-scan.json`, JSON.stringify(c));
    assert.deepEqual(etcCredentialFiles([old], cache), [old.path]);
    assert.deepEqual(etcCredentialFiles([{ ...old, size: 21 }], cache), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("scanSecrets(): token files past the name depth and at a package folder's top are found by content", async () => {
  const { scanSecrets } = await import("../core/policy/sandbox/home_scan.ts");
  const store = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-store-" }));
  try {
    const deep = `${store}/a/b/c/d`;
    const pkg = `${store}/pkgs/foo`;
    await Deno.mkdir(deep, { recursive: true });
    await Deno.mkdir(pkg, { recursive: true });
    await Deno.writeTextFile(`${deep}/.npmrc`, "//r.example.com/:_authToken=abcdEFGH12345678\n");
    await Deno.writeTextFile(`${deep}/gradle.properties`, "org.gradle.jvmargs=-Xmx2g\n");
    await Deno.writeTextFile(`${pkg}/package.json`, "{}");
    await Deno.writeTextFile(
      `${pkg}/settings.xml`,
      "<server><id>x</id><password>hunter2hunter2</password></server>\n",
    );
    const found = scanSecrets(store).sort();
    assert.deepEqual(found, ["a/b/c/d/.npmrc", "pkgs/foo/settings.xml"]);
  } finally {
    await Deno.remove(store, { recursive: true });
  }
});
