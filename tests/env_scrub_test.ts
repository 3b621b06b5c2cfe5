/**
 * The environment scrub (core/policy/sandbox/profile.ts `SECRET_NAME`, `secretValue`,
 * `envDecision`; docs/permissions.md "Environment"), attack trial 2 item 6: secret-looking names
 * with short word parts (`MYSQL_PWD`, `GH_PAT`, `DB_PASS`, `CI_JOB_JWT`, `HF_HUB_TKN`,
 * `SENTRY_DSN`, `SLACK_WEBHOOK_URL`) and credential-looking values under any name (connection
 * strings with `Password=`, PEM private keys, JWTs, well-known token prefixes) do not reach a
 * command; ordinary variables (`PATH`, `HOME`, `PWD`, `LANG`, …) do; an `Env(NAME)` allow rule
 * passes a named one, never the provider key. Checked with `env` run under real bwrap.
 */
import assert from "node:assert/strict";
import { Policy } from "../core/policy/policy.ts";
import { detectBackend, envDecision, sandboxedCommand } from "../core/policy/sandbox/mod.ts";
import { knownSecretCandidates, secretValues } from "../core/tools/redact.ts";

const KEY = "sk-provider-key-0123456789abcdef";
const JWT =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

/** Variables that must not reach a command. */
const SECRET: Record<string, string> = {
  MYSQL_PWD: "hunter2",
  GH_PAT: "x1",
  DB_PASS: "x2",
  CI_JOB_JWT: "x3",
  HF_HUB_TKN: "x4",
  SENTRY_DSN: "https://abc@o1.ingest.sentry.io/1",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T/B/x",
  GPG_PRIVATE: "x5",
  AZURE_CREDS: "x6",
  db_pass: "x7",
  CONN: "Server=db;Database=app;User Id=sa;Password=s3cret;",
  MYSQL_CONN: "host=db user=app pwd=s3cret",
  PEM: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----",
  SESSION: JWT,
  BEARER_HEADER: `Authorization: Bearer ${JWT}`,
  GH: "ghp_0123456789abcdefABCDEF0123456789abcd",
  GH2: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
  GL: "glpat-0123456789abcdefghij",
  SLACK: "xoxb-1234567890-abcdefghijklmnop",
  OPENAI: "sk-proj-0123456789abcdefghijklmnop",
  AWS_ID: "AKIAIOSFODNN7EXAMPLE",
  DATABASE_URL: "postgres://app:s3cret@db/x",
};
/** Ordinary variables that must pass. */
const ORDINARY: Record<string, string> = {
  HOME: "/h",
  PWD: "/w",
  OLDPWD: "/w/old",
  LANG: "C.UTF-8",
  TERM: "xterm",
  CI: "true",
  USER: "dev",
  SHELL: "/bin/bash",
  GOPATH: "/h/go",
  PYTHONPATH: "/w/src",
  NODE_PATH: "/w/node_modules",
  PATCH_LEVEL: "3",
  COMPOSE_PROJECT_NAME: "app",
  HTTP_URL: "https://example.com/x?y=1",
  DESCRIPTION: "sk-short",
  NOTE: "ask-me about the eyJ thing",
};

Deno.test("env scrub: secret-looking names and credential-looking values are dropped, ordinary ones pass", () => {
  const none = Policy.create({}, { allow: [], deny: [] }, { workspace: "/w", configDir: "/c" })
    .rules();
  const failures: string[] = [];
  for (const [k, v] of Object.entries(SECRET)) {
    const d = envDecision(none, k, v, [KEY]);
    if (d.pass) failures.push(`${k}=${v} passed (${d.why})`);
  }
  for (const [k, v] of Object.entries(ORDINARY)) {
    const d = envDecision(none, k, v, [KEY]);
    if (!d.pass) failures.push(`${k}=${v} dropped (${d.why})`);
  }
  assert.deepEqual(failures, []);
  assert.match(envDecision(none, "CONN", SECRET.CONN).why, /connection string/);
  assert.match(envDecision(none, "GH", SECRET.GH).why, /access token/);
  assert.match(envDecision(none, "SESSION", JWT).why, /JSON Web Token/);
  assert.match(envDecision(none, "PEM", SECRET.PEM).why, /private key/);
  // An Env allow rule passes what it names — never the provider key.
  const named = Policy.create({}, { allow: ["Env(MYSQL_PWD)", "Env(CONN)", "Env(K)"], deny: [] }, {
    workspace: "/w",
    configDir: "/c",
  }).rules();
  assert.equal(envDecision(named, "MYSQL_PWD", "hunter2", [KEY]).pass, true);
  assert.equal(envDecision(named, "CONN", SECRET.CONN, [KEY]).pass, true);
  assert.equal(envDecision(named, "K", KEY, [KEY]).pass, false);
  assert.equal(envDecision(named, "GH_PAT", "x1", [KEY]).pass, false);
});

Deno.test("env scrub: env under real bwrap shows none of the secrets, the ordinary variables and an allowed one", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-envscrub-" }));
  try {
    const policy = Policy.create({}, { allow: ["Env(DB_PASS)"], deny: [] }, {
      workspace: ws,
      configDir: "/nonexistent-coyote-config",
    });
    const c = sandboxedCommand(policy, "env", {
      cwd: ws,
      backend,
      secrets: [KEY],
      baseEnv: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        ...SECRET,
        ...ORDINARY,
        OPENAI_API_KEY: KEY,
      },
    });
    const o = await new Deno.Command(c.program, {
      args: c.args,
      cwd: ws,
      env: c.env,
      clearEnv: true,
      stdin: "null",
    }).output();
    const out = new TextDecoder().decode(o.stdout);
    assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
    const names = new Set(out.split("\n").map((l) => l.slice(0, l.indexOf("="))));
    for (const k of Object.keys(SECRET)) {
      if (k === "DB_PASS") continue;
      assert.ok(!names.has(k), `${k} reached the command:\n${out}`);
    }
    for (const v of [KEY, "hunter2", "s3cret", "ghp_0123", "-----BEGIN", JWT]) {
      assert.ok(!out.includes(v), `${v} reached the command`);
    }
    assert.match(out, /^DB_PASS=x2$/m, "an Env allow rule passes the variable it names");
    for (const k of ["LANG", "TERM", "CI", "GOPATH", "PYTHONPATH", "NODE_PATH", "NOTE"]) {
      assert.ok(names.has(k), `${k} missing:\n${out}`);
    }
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("env scrub: the same short-word names are secret to the guard and the redaction", async () => {
  // Their values are redacted from tool results…
  const values = secretValues(knownSecretCandidates({}, {
    MYSQL_PWD: "hunter2-hunter2",
    GH_PAT: "pat-0123456789ab",
    PWD: "/work/some/long/folder",
  }));
  assert.deepEqual(values.sort(), ["hunter2-hunter2", "pat-0123456789ab"]);
  // …and expanding one asks, while $PWD stays an ordinary expansion.
  const policy = Policy.create({}, { allow: [], deny: [] }, { workspace: "/w", configDir: "/c" });
  const guard = policy;
  const asked = await guard.evaluate({ type: "execute", command: "echo $MYSQL_PWD" });
  assert.equal(asked.decision, "ask", asked.reason);
  const plain = await guard.evaluate({ type: "execute", command: "echo $PWD $OLDPWD" });
  assert.equal(plain.decision, "allow", plain.reason);
});
