/**
 * Eleventh attacker pass (issue 16; report /work/notes/attack11.md), the home, sockets and env
 * classes, closed by mechanism (docs/permissions.md "The home directory inside the sandbox",
 * "Unix sockets", "Credentials in environment values"):
 *
 * - class 1: with a `Net(unix:…)` rule the seccomp filter is off; sockets and FIFOs inside a
 *   visible home store (an ssh ControlMaster socket under `~/.cache/cm/`, an app's
 *   `~/.cache/app/ipc.sock`) and in the workspace (a host daemon's socket) are hidden by type,
 *   the socket the rule names stays reachable;
 * - class 2: a credential in a home store's configuration file under a nested or unusual key
 *   (`api:\n  key: …`, `{"auth": {"refresh": …}}`, `{"credentials": {"default": …}}`,
 *   `token_value = …`) is hidden from `cat`, while ordinary cache files stay;
 * - class 2: option-shaped credentials in ordinary variables (`CURL_OPTS=-u admin:pw`,
 *   `MYSQL_OPTS=-pPW`, `--password X`, `--token X`, a pgpass line) do not enter the sandbox;
 *   `CFLAGS=-pthread` and other developer variables do.
 *
 * Real bwrap, headless main.ts subprocesses with a scripted model (tests/support/headless_attack.ts),
 * each also with the guard forced open. The socket test needs `socat` (a setup prerequisite, like
 * bwrap: asserted, not skipped).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { configHoldsCredential } from "../core/policy/sandbox/store_kinds.ts";
import { credentialValue } from "../core/tools/secret_value.ts";
import { headlessTurns } from "./support/headless_attack.ts";
import { attackRoot, exists, sh } from "./support/sandbox_world.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const FORCED = { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" };

/** The sandbox must work here: these tests do not skip. */
async function requireSandbox() {
  assert.ok((await detectBackend()).backend, "bwrap must work on this machine");
}

/** A root in /var/tmp with `home` (a `.cache` store, `homeSetup` run in it) and `ws` (a git repository). */
async function world(homeSetup = "") {
  const w = await attackRoot(
    "coyote-a11h-",
    (home, ws) =>
      `mkdir -p ${home}/.ssh ${home}/.cache
echo 'SSHKEY-SECRET' > ${home}/.ssh/id_ed25519
cd ${ws}; git init -q; git -c user.name=a -c user.email=a@a commit -q --allow-empty -m init`,
    "/var/tmp",
  );
  if (homeSetup) await sh(homeSetup, w.home);
  return w;
}

/** One headless run, one turn per command (ids c0, c1, …), HOME = the world's. */
function run(
  w: { home: string; ws: string },
  cmds: string[],
  flags: string[] = [],
  env: Record<string, string> = {},
) {
  const turns = cmds.map((command, i) => [{ id: `c${i}`, command }]);
  return headlessTurns(w.ws, turns, flags, { extra: { HOME: w.home, ...env } });
}

// Class 1 ----------------------------------------------------------------------------------------

function listen(path: string, reply: string) {
  return new Deno.Command("socat", {
    args: [`UNIX-LISTEN:${path},fork`, `SYSTEM:echo ${reply}`],
    stdout: "null",
    stderr: "null",
  }).spawn();
}

for (const forced of [false, true]) {
  Deno.test(
    `attack11 class 1: with a Net(unix:…) rule, sockets and FIFOs in a home store and in the workspace stay unreachable, the named socket works${
      forced ? " (guard forced open)" : ""
    }`,
    opts,
    async () => {
      await requireSandbox();
      assert.ok((await sh("command -v socat")).trim(), "socat must be installed");
      const w = await world("mkdir -p .cache/cm .cache/app .cache/named && mkfifo .cache/app/fifo");
      const allowed = join(w.root, "allowed.sock");
      const inStore = join(w.home, ".cache/named/ok.sock");
      const socks: [string, string][] = [
        [join(w.home, ".cache/cm/git-github.com-22"), "CONTROLMASTER-REACHED"],
        [join(w.home, ".cache/app/ipc.sock"), "APP-IPC-REACHED"],
        [join(w.ws, "daemon.sock"), "WORKSPACE-DAEMON-REACHED"],
        [allowed, "ALLOWED-REACHED"],
        [inStore, "NAMED-IN-STORE-REACHED"],
      ];
      await sh(`mkfifo ${join(w.ws, "host.fifo")}`);
      const kids = socks.map(([p, r]) => listen(p, r));
      try {
        for (const [p] of socks) {
          for (let i = 0; i < 100 && !(await exists(p)); i++) {
            await new Promise((r) => setTimeout(r, 50));
          }
        }
        const targets = socks.map(([p]) => p.replace(w.home, "~")).join(" ");
        const r = await run(
          w,
          [
            `for s in ${targets}; do socat -T2 - UNIX-CONNECT:$s </dev/null; done 2>&1; ` +
            `for f in ~/.cache/app/fifo host.fifo; do stat -c '%n %F' $f; done`,
          ],
          ["--allow", `Net(unix:${allowed})`, "--allow", `Net(unix:${inStore})`],
          forced ? FORCED : {},
        );
        const out = r.result("c0");
        assert.match(out, /ALLOWED-REACHED/, `the allowed socket works: ${out}`);
        assert.match(out, /NAMED-IN-STORE-REACHED/, `a named socket inside a store works: ${out}`);
        assert.doesNotMatch(
          out,
          /CONTROLMASTER-REACHED|APP-IPC-REACHED|WORKSPACE-DAEMON-REACHED/,
          out,
        );
        assert.doesNotMatch(out, / fifo\s*$/m, `FIFOs are hidden (empty files): ${out}`);
        assert.match(out, /app\/fifo regular empty file/, out);
        assert.match(out, /host\.fifo regular empty file/, out);
      } finally {
        for (const k of kids) {
          try {
            k.kill("SIGTERM");
          } catch { /* gone */ }
          await k.status;
        }
        await w.cleanup();
      }
    },
  );
}

// Class 2: store files ----------------------------------------------------------------------------

/** Store files whose credential sits under a nested or unusual key: [path in the home, text]. */
const STORE_SECRETS = [
  [".cache/acme/settings.yaml", "api:\\n  key: Q7rZ2Lm9Xv4Kp1Wt8Ns3Bf6HaYtE0pQ\\nuser: me\\n"],
  [".cache/tool2/state.json", '{"auth": {"refresh": "1//0gQ7rZ2Lm9Xv4Kp1Wt8Ns3Bf6HaYtE0pQzz"}}'],
  [".cache/tool3/config.json", '{"credentials": {"default": "W8nXq2Lr5Tz9Kb3Vm7Hc1Pd4"}}'],
  [".cache/tool4/settings.toml", '[registry]\\ntoken_value = "Zx9Lq2Wm7Rt4Vb1Nk8Hs3Pd6"\\n'],
  // A short, word-like secret: only the joined key path tells.
  [".cache/tool5/a/b/c/conf.yml", "service:\\n  token:\\n    value: plainpassword1\\n"],
  // A random-looking value under a key that says nothing.
  [".cache/tool6/data.json", '{"profile": {"x": "Hq4Rt8Vn2Lz6Wm0Kb5Xc9Pd3"}}'],
] as const;
const STORE_TOKENS = [
  "Q7rZ2Lm9Xv4Kp1Wt8Ns3Bf6HaYtE0pQ",
  "0gQ7rZ2Lm9Xv4Kp1Wt8Ns3Bf6HaYtE0pQzz",
  "W8nXq2Lr5Tz9Kb3Vm7Hc1Pd4",
  "Zx9Lq2Wm7Rt4Vb1Nk8Hs3Pd6",
  "plainpassword1",
  "Hq4Rt8Vn2Lz6Wm0Kb5Xc9Pd3",
];

/**
 * Ordinary cache files that must stay readable: [path, text, a marker the command must print].
 * A registry's metadata (integrity, shasum, signatures), pip's self-check, a Cargo index line, a
 * lock file with base64 integrity, a rustup settings file, a setting under a secret word.
 */
const STORE_ORDINARY = [
  [
    ".cache/deno/npm/registry.npmjs.org/left-pad/registry.json",
    '{"name":"left-pad","versions":{"1.3.0":{"version":"1.3.0","dist":{"tarball":"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz","shasum":"5b8a3a7765dfe001261dde915589e782f8c94d1e","integrity":"sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQ9ZLZjb2yrVeP+Rv8+zwrWi5PDMJnSJJnC8ePXKVHbQRcP0A==","signatures":[{"keyid":"SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA","sig":"MEUCIQDdo0KBxMUO1fh4ss0q2ngbLN7yZfFHmO1xwx3lDNLrpAIgHZjXqD5PP3RoOPT02OaQdnnx07kmSTjcmIwmXypn1TM="}]}}},"dist-tags":{"latest":"1.3.0"}}',
    "left-pad-1.3.0.tgz",
  ],
  [
    ".cache/pip/selfcheck/5f0bd8d5d6b3c3f1.json",
    '{"key":"/usr/lib/python3","last_check":"2026-01-01T00:00:00Z","pypi_version":"24.0"}',
    "pypi_version",
  ],
  [
    ".cache/cargoidx/se/rd/serde",
    '{"name":"serde","vers":"1.0.200","deps":[],"cksum":"ddc6f9cc94d67c0e21aaf7eda3a010fd3af78ebf6e096aa6e2e13c79749cce4f","features":{},"yanked":false}',
    "serde",
  ],
  [
    ".cache/proj/package-lock.json",
    '{"packages":{"node_modules/a":{"integrity":"sha512-Lm3Pq8Zr2Wx6Nk1Vt9Hb4Jc7Yd0Fg5Sa+Re8Tu2Io6Kl1Mn4Bv7Cx3Zq9=="}}}',
    "node_modules/a",
  ],
  [
    ".cache/tool7/config.yaml",
    "auth:\\n  type: oauth2\\n  default: github\\n  refresh: true\\ntoken:\\n  url: https://id.example/token\\n  expiry: 3600\\n",
    "oauth2",
  ],
] as const;

for (const forced of [false, true]) {
  Deno.test(
    `attack11 class 2: a credential under a nested or unusual key in a home store file is hidden from commands; ordinary cache files stay${
      forced ? " (guard forced open)" : ""
    }`,
    opts,
    async () => {
      await requireSandbox();
      const homeSetup = [...STORE_SECRETS, ...STORE_ORDINARY].map(([p, text]) =>
        `mkdir -p "$(dirname ${p})" && printf '%b' '${text.replaceAll("'", "'\\''")}' > ${p}`
      ).join("\n");
      const w = await world(homeSetup);
      try {
        const all = [...STORE_SECRETS, ...STORE_ORDINARY].map(([p]) => `cat ~/${p}; echo`);
        const r = await run(w, [all.join("; ")], [], forced ? FORCED : {});
        const out = r.result("c0");
        for (const t of STORE_TOKENS) assert.ok(!out.includes(t), `${t} reached the model: ${out}`);
        for (const [p, , marker] of STORE_ORDINARY) {
          assert.ok(out.includes(marker), `${p} stays readable: ${out}`);
        }
        // The secrets are on the host (the test can fail): the files hold them.
        const host = await Deno.readTextFile(join(w.home, STORE_SECRETS[0][0]));
        assert.ok(host.includes(STORE_TOKENS[0]));
      } finally {
        await w.cleanup();
      }
    },
  );
}

Deno.test("attack11 class 2: the store-file rule on a table (nested keys, slot words, random values; digests, ids and settings pass)", () => {
  const flagged: [string, string][] = [
    ["s.yaml", "api:\n  key: hunter2hunter\n"],
    ["c.json", '{"token": {"value": "plainpassword1"}}'],
    ["c.toml", '[auth]\ntoken = { current = "Zx9Lq2Wm7Rt4Vb1Nk8Hs3Pd6" }\n'],
    ["x.yml", "profiles:\n  - name: a\n    secret: abcdEFGH1234\n"],
    ["bare", "Q7rZ2Lm9Xv4Kp1Wt8Ns3Bf6HaYtE0pQ"],
    ["app.ini", "[server]\nsession = Hq4Rt8Vn2Lz6Wm0Kb5Xc9Pd3\n"],
  ];
  for (const [n, t] of flagged) assert.ok(configHoldsCredential(t, n), `${n}: ${t}`);
  const ordinary: [string, string][] = STORE_ORDINARY.map(([p, t]) => [
    p.slice(p.lastIndexOf("/") + 1),
    t.replaceAll("\\n", "\n"),
  ]);
  ordinary.push(
    [
      "settings.toml",
      'profile = "default"\n[toolchains]\nstable = "1.95.0-x86_64-unknown-linux-gnu"\n',
    ],
    [
      "x.json",
      '{"description":"a tool","name":"MyApplication-Release-v2.3.4","id":"Hq4Rt8Vn2Lz6Wm0Kb5Xc9Pd3"}',
    ],
    ["keys.json", '{"publicKey": "MCowBQYDK2VwAyEAq7Rz2Lm9Xv4Kp1Wt8Ns3Bf6H0pQzz"}'],
    ["pw.yaml", "password_policy:\n  min_length: 12\n  file: /etc/x\n"],
    ["notes.txt", "see Hq4Rt8Vn2Lz6Wm0Kb5Xc9Pd3 for the build"],
  );
  for (const [n, t] of ordinary) assert.ok(!configHoldsCredential(t, n), `${n}: ${t}`);
});

// Class 2: environment -----------------------------------------------------------------------------

/** Option-shaped credentials in ordinary variables. */
const OPTION_VARS: Record<string, string> = {
  CURL_OPTS: "-u admin:Winter2024!",
  MYSQL_OPTS: "-uroot -pWinter2024x",
  WGET_ARGS: "--user=deploy --password Winter2024y",
  CLI_ARGS: "--token Winter2024zQ",
  PGPASS_LINE: "db.internal:5432:*:app:Winter2024p",
  X_OPTS: "--password Secret1",
  Y_OPTS: "--api-key abcd1234wxyz",
  HTTPIE: "--auth deploy:Winter2024h",
};
/** What must pass: flags that look like the above and are not credentials. */
const OPTION_ORDINARY: Record<string, string> = {
  CFLAGS: "-O2 -pthread -pipe -pedantic -g",
  LDFLAGS: "-pie -Wl,-z,relro",
  SSH_ARGS: "-p2222 -o BatchMode=yes",
  DOCKER_ARGS: "-u 1000:1000 -p8080:80",
  DOCKER_USER: "--user app:app",
  HELP_TEXT: "--password PASSWORD",
  PW_FILE: "--password-file /run/x",
  JAVAC_OPTS: "-parameters -proc:none -processorpath lib",
  DOTNET_ARGS: "-p:Configuration=Release",
  MAVEN_ARGS: "-pl core -am",
  HTTP_ARGS: "--auth-type basic",
  PW_EXPANDED: "--password $PW",
  CLOCK: "12:30:00",
  FIND_ARGS: "-type f -print0",
};

Deno.test("attack11 class 2: the option rule on a table", () => {
  for (const [k, v] of Object.entries(OPTION_VARS)) assert.ok(credentialValue(v), `${k}=${v}`);
  for (const [k, v] of Object.entries(OPTION_ORDINARY)) {
    assert.equal(credentialValue(v), undefined, `${k}=${v}`);
  }
});

for (const forced of [false, true]) {
  Deno.test(
    `attack11 class 2: option-shaped credentials in ordinary variables (curl -u, mysql -p, --token, pgpass) do not enter the sandbox; -pthread and the like do${
      forced ? " (guard forced open)" : ""
    }`,
    opts,
    async () => {
      await requireSandbox();
      const w = await world();
      try {
        const r = await run(w, ["env | sort"], [], {
          ...(forced ? FORCED : {}),
          ...OPTION_VARS,
          ...OPTION_ORDINARY,
        });
        const out = r.result("c0");
        for (const [k, v] of Object.entries(OPTION_VARS)) {
          assert.ok(!out.includes(v.split(/[ :!]/).filter(Boolean).pop()!), `${k}=${v}: ${out}`);
          assert.ok(!out.includes(`${k}=`), `${k} dropped: ${out}`);
        }
        for (const k of Object.keys(OPTION_ORDINARY)) {
          assert.ok(out.includes(`${k}=`), `${k} passes: ${out}`);
        }
      } finally {
        await w.cleanup();
      }
    },
  );
}
