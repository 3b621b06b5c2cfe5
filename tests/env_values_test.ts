/**
 * The value rule (core/tools/secret_value.ts `credentialValue`, issue 16 fourth attacker pass
 * class 2; docs/permissions.md "Environment"): credentials recognised by what a value contains —
 * URLs with user info, HTTP auth headers, webhook URLs, well-known token prefixes, random-looking
 * tokens — and a table of realistic ordinary values (paths, colours, versions, hex hashes, UUIDs,
 * URLs, options) that must pass. The same rule feeds the environment scrub (`envDecision`), the
 * values redacted from tool results (`knownSecretCandidates`) and the git configs hidden in the
 * home's stores.
 */
import assert from "node:assert/strict";
import { credentialValue, highEntropyToken } from "../core/tools/secret_value.ts";
import { commandEnvironment } from "../core/policy/sandbox/env.ts";
import { knownSecretCandidates } from "../core/tools/redact.ts";

/** `name -> value` of credentials under names the name rule does not know. */
export const CREDENTIAL_VALUES: Record<string, string> = {
  GIT_VALUE: "AUTHORIZATION: basic eC1hY2Nlc3M6U0VDUkVU",
  EXTRA: "http.extraheader=Authorization: Bearer abc.def-123456789XYZ",
  HDR: "Bearer 9f8e7d6c5b4a39281706ABCDEFghij",
  BASIC: "Basic dXNlcjpodW50ZXIy",
  PIP_INDEX_URL: "https://SECRETtoken1234@pypi.example/simple",
  GOPROXY: "https://goproxy-user@proxy.example.com,direct",
  SENTRY: "https://abc@o1.ingest.sentry.io/1",
  PG: "postgres://app:s3cret@db/x",
  SSH_PW: "ssh://git:hunter2@git.example/x",
  SLACK_HOOK: "https://hooks.slack.com/services/T000/B000/SECRETxyz",
  DISCORD: "https://discord.com/api/webhooks/123/abcdef",
  TEAMS: "https://contoso.webhook.office.com/webhookb2/x/IncomingWebhook/y/z",
  SAS: "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=abcdEFGH1234%3D",
  QTOKEN: "https://api.example.com/v1/feed?access_token=abcdefgh12345",
  PATHTOKEN: "https://api.example.com/v1/u/Xk9fQ2mZ7pL4vR8sT1wY6bN3/feed",
  STRIPE: "sk_live_SECRET51Habc",
  STRIPE_T: "rk_test_51Habcdefghij",
  SLACK_USER: "xoxp-1234-SECRET",
  GOOGLE: "ya29.a0AfH6SMBx3kqLzW9y-8QeF7tR2",
  DO: "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
  SENDGRID: "SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg",
  LINEAR: "lin_api_0123456789abcdefghijABCDEFGHIJ",
  SHOPIFY: "shpat_0123456789abcdef0123456789abcdef",
  VAULT: "hvs.CAESIabcdefghij0123456789",
  RANDOM: "q7Rz2Lm9Xv4Kp1Wt8Ns3Bf6H",
  AWS_LIKE: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
  B64: "dGhpcyBpcyBhIHNlY3JldCB2YWx1ZQ0KMTIzNDU2Nzg5MA==",
  IN_OPTS: "--header=X-Api-Key: 123",
  LOWER_DIGITS: "a8k2m9x7q1w5e3r6t0y4u8i2o6p1s9d3f7",
  PROXY: "http://user:pass@proxy:3128",
  RAILS: "Token token=abcdef0123456789abcdefXYZ",
  ARGS: "--user=ci --password=hunter2",
  COOKIE_HDR: "cookie: session=abc123def456",
  TELEGRAM: "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage",
  GRAFANA: "glsa_abcdefghijklmnopqrstuvwxyz012345_abcd1234",
};

/** Realistic ordinary values: every one must pass. */
export const ORDINARY_VALUES: Record<string, string> = {
  PATH:
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/home/ada/.cargo/bin:/home/ada/.nvm/versions/node/v20.11.0/bin:/nix/store/0c0bl6ai0bx5ljp3iy24njfkzfrq0v3q-bash-5.2/bin",
  LS_COLORS:
    "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:or=40;31;01:mi=00:su=37;41:sg=30;43:ca=30;41:tw=30;42:ow=34;42:st=37;44:ex=01;32:*.tar=01;31:*.tgz=01;31:*.jpg=01;35",
  TERM: "xterm-256color",
  LANG: "en_US.UTF-8",
  NODE_VERSION: "20.11.1",
  GIT_COMMIT: "3b7adc6e2f1a4c5d6e7f8091a2b3c4d5e6f70819",
  IMAGE_DIGEST: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  INVOCATION_ID: "9f1b2c3d4e5f40718293a4b5c6d7e8f9",
  BUILD_UUID: "123e4567-e89b-12d3-a456-426614174000",
  TERM_SESSION_ID: "w0t0p0:6B1E2C3D-4F5A-6B7C-8D9E-0F1A2B3C4D5E",
  RUNNER_TRACKING_ID: "github_4f1c2a3b-5d6e-4f70-8a9b-0c1d2e3f4a5b",
  SSH_CONNECTION: "10.0.0.5 52314 10.0.0.1 22",
  HOSTNAME: "ip-10-0-1-23.ec2.internal",
  POD: "web-7d9f8b6c5d-x2k4p",
  JAVA_HOME: "/usr/lib/jvm/java-17-openjdk-amd64",
  JAVA_TOOL_OPTIONS: "-Dfile.encoding=UTF-8 -Xmx2g -XX:MaxRAMPercentage=75.0",
  NODE_OPTIONS: "--max-old-space-size=4096 --enable-source-maps",
  npm_config_registry: "https://registry.npmjs.org/",
  npm_config_user_agent: "npm/10.2.4 node/v20.11.0 linux x64 workspaces/false",
  GOPROXY_PLAIN: "https://proxy.golang.org,direct",
  PIP_PLAIN: "https://pypi.org/simple",
  GIT_SSH_URL: "ssh://git@github.com/octo-org/hello-world.git",
  DOCKER_IMAGE: "ghcr.io/octo-org/app:v1.2.3-rc.1",
  CI_COMMIT_REF_NAME: "feature/AddLoginPage-v2",
  CI_JOB_URL: "https://gitlab.com/group/project/-/jobs/1234567890",
  COMMIT_URL: "https://github.com/octo-org/app/commit/3b7adc6e2f1a4c5d6e7f8091a2b3c4d5e6f70819",
  TZ: "America/Argentina/Buenos_Aires",
  CONDA_PREFIX: "/home/ada/miniconda3/envs/DataScience2024",
  VIRTUAL_ENV: "/Users/AdaLovelace/Projects/MyApplication2024/.venv",
  WSL_DISTRO_NAME: "Ubuntu-22.04",
  CC: "x86_64-linux-gnu-gcc-12",
  RUSTFLAGS: "-C target-cpu=native -Clink-arg=-fuse-ld=lld",
  XDG_DATA_DIRS: "/usr/share/gnome:/usr/local/share/:/usr/share/:/var/lib/snapd/desktop",
  PS1: "\\[\\e[1;32m\\]\\u@\\h:\\w\\$ ",
  LESSOPEN: "| /usr/bin/lesspipe %s",
  BUILD_NAME: "MyApplication-Release-v2.3.4-x86_64",
  DESCRIPTION: "Basic authentication is configured by the Bearer of this note",
  GNOME_TERMINAL_SCREEN: "/org/gnome/Terminal/screen/6e0c2b8f_9c1a_4e1e_8c38_2e0b6f1c3a3d",
  MAVEN_OPTS: "-Xmx1024m -XX:MaxPermSize=256m -Dmaven.repo.local=/home/ada/.m2/repository",
  CLASSPATH: "/opt/app/lib/commons-lang3-3.12.0.jar:/opt/app/lib/jackson-databind-2.15.2.jar",
  DEBUGINFOD_URLS: "https://debuginfod.ubuntu.com",
  MAIL: "mailto:ada@example.com",
  VERSION_STRING: "Python 3.12.1 (main, Dec  7 2023, 20:45:44) [GCC 11.4.0]",
  KUBE_CONTEXT: "arn:aws:eks:eu-west-1:123456789012:cluster/ProdCluster01",
};

Deno.test("secret values: credentials are recognised by what the value holds", () => {
  const missed = Object.entries(CREDENTIAL_VALUES).filter(([, v]) => !credentialValue(v));
  assert.deepEqual(missed, []);
  assert.match(credentialValue(CREDENTIAL_VALUES.PIP_INDEX_URL)!, /user info/);
  assert.match(credentialValue(CREDENTIAL_VALUES.SLACK_HOOK)!, /webhook/);
  assert.match(credentialValue(CREDENTIAL_VALUES.GIT_VALUE)!, /authentication header/);
  assert.match(credentialValue(CREDENTIAL_VALUES.RANDOM)!, /random token/);
});

Deno.test("secret values: a table of ordinary values passes (paths, colours, versions, hashes, UUIDs, URLs)", () => {
  const flagged = Object.entries(ORDINARY_VALUES)
    .map(([k, v]) => [k, credentialValue(v)])
    .filter(([, why]) => why);
  assert.deepEqual(flagged, []);
  assert.ok(Object.keys(ORDINARY_VALUES).length >= 30);
  // The entropy test alone: hex and UUIDs are not tokens; camel-case words are not either.
  assert.equal(highEntropyToken("3b7adc6e2f1a4c5d6e7f8091a2b3c4d5e6f70819"), false);
  assert.equal(highEntropyToken("MyApplicationReleaseCandidate2024"), false);
  assert.equal(highEntropyToken("q7Rz2Lm9Xv4Kp1Wt8Ns3Bf6H"), true);
});

Deno.test("secret values: the scrub drops them under any name, git config in the environment stays out of the sandbox", () => {
  const base = {
    ...CREDENTIAL_VALUES,
    ...ORDINARY_VALUES,
    GIT_CONFIG_PARAMETERS: "'core.pager'='less'",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraheader",
    GIT_CONFIG_VALUE_0: "x",
  };
  const { env } = commandEnvironment({ base, sandboxed: true });
  for (const k of Object.keys(CREDENTIAL_VALUES)) assert.equal(env[k], undefined, k);
  for (const [k, v] of Object.entries(ORDINARY_VALUES)) assert.equal(env[k], v, k);
  for (const k of ["GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0"]) {
    assert.equal(env[k], undefined, k);
  }
  // Outside the sandbox git's own environment config is the user's: it passes.
  const host = commandEnvironment({ base, sandboxed: false }).env;
  assert.equal(host.GIT_CONFIG_COUNT, "1");
  assert.equal(host.STRIPE, undefined);
});

Deno.test("secret values: Coyote's own variables holding a credential value are redacted from tool results", () => {
  const c = knownSecretCandidates({}, {
    PIP_INDEX_URL: CREDENTIAL_VALUES.PIP_INDEX_URL,
    STRIPE: CREDENTIAL_VALUES.STRIPE,
    PATH: ORDINARY_VALUES.PATH,
    GIT_COMMIT: ORDINARY_VALUES.GIT_COMMIT,
  });
  assert.ok(c.includes(CREDENTIAL_VALUES.PIP_INDEX_URL));
  assert.ok(c.includes(CREDENTIAL_VALUES.STRIPE));
  assert.ok(!c.includes(ORDINARY_VALUES.PATH));
  assert.ok(!c.includes(ORDINARY_VALUES.GIT_COMMIT));
});
