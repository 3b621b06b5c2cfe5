/**
 * Tenth attacker pass (issue 16), finding 7 closed by words (report: /work/notes/attack10.md):
 * credential variables with ordinary-looking names (`SSHPASS`, `WALLET_MNEMONIC`,
 * `SMTP_PASSCODE`, `TOTP_SEED`) no longer pass the environment scrub. The key rule
 * (core/tools/secret_keys.ts `secretKey`) knows passcode, mnemonic, otp/totp/hotp, pin (not
 * alone), bearer, a qualified seed or phrase, a glued `pass` after a service word; the value rule
 * (core/tools/secret_value.ts) a BIP-39-shaped phrase. Ordinary names stay: `SEED=42`,
 * `RANDOM_SEED`, `PIN_MEMORY`, `TERM_SESSION_ID`, `GPG_TTY`, `DESKTOP_SESSION=gnome`.
 * Headless runs of main.ts on real bwrap, also with the guard forced open (the scrub is the
 * sandbox's environment, not a guard decision).
 * @module
 */
import assert from "node:assert/strict";
import { envDecision } from "../core/policy/sandbox/profile.ts";
import { detectBackend } from "../core/policy/sandbox/mod.ts";
import { secretName } from "../core/tools/redact.ts";
import { maskSecretValues, secretAssignment, secretKey } from "../core/tools/secret_keys.ts";
import { headlessTurns } from "./support/headless_attack.ts";

const ON = !!(await detectBackend()).backend;
const MNEMONIC =
  "abandon ability able about above absent absorb abstract absurd abuse access accident";

/** Credential variables the scrub drops: finding 7 and its siblings. */
const SECRETS: Record<string, string> = {
  SSHPASS: "Winter2024!",
  WALLET_MNEMONIC: MNEMONIC,
  SMTP_PASSCODE: "hunter33x",
  TOTP_SEED: "JBSWY3DPEHPK3PXP",
  MFA_SEED: "KRSXG5CTMVRXEZLU",
  SEED_PHRASE: "legal winner thank year wave sausage worth useful legal winner thank yellow",
  RECOVERY_PHRASE: "zoo zoo zoo",
  AWS_OTP: "492039",
  GITHUB_TOTP: "492039x",
  SIM_PIN: "4711",
  PKCS11_PIN: "123456",
  API_BEARER: "abcdefgh12",
  DBPASS: "s3cretpw",
  ANSIBLE_BECOME_PASS: "rootpw1",
  LDAP_BIND_PASSCODE: "x9x9x9x9",
  // The value rule: a recovery phrase under any name.
  MY_WORDS: MNEMONIC,
};

/** Ordinary variables that pass (a short random seed is no credential). */
const ORDINARY: Record<string, string> = {
  SEED: "42",
  RANDOM_SEED: "1234",
  PYTHONHASHSEED: "0",
  TEST_SEED: "20240101",
  PIN_MEMORY: "true",
  TERM_SESSION_ID: "w0t0p0:6A1F",
  GPG_TTY: "/dev/pts/0",
  DESKTOP_SESSION: "gnome",
  XDG_SESSION_TYPE: "wayland",
  OTP_LENGTH: "6",
  MNEMONIC_FILE: "wallet.txt",
  COMPASS_HOME: "/opt/compass",
  PROXY_BYPASS: "localhost",
  SPINNER: "dots",
  GREETING: "the quick brown fox jumps over the lazy dog",
};

Deno.test("a10 finding 7: credential variables with ordinary-looking names are dropped; ordinary names pass", () => {
  const leaked = Object.entries(SECRETS).filter(([k, v]) => envDecision([], k, v).pass);
  assert.deepEqual(leaked.map(([k]) => k), [], "passed the scrub");
  const dropped = Object.entries(ORDINARY).filter(([k, v]) => !envDecision([], k, v).pass);
  assert.deepEqual(dropped.map(([k]) => k), [], "dropped although ordinary");
  // The guard's name rule (asks before `echo $SSHPASS`, redacts the values) agrees by name.
  const named = Object.keys(SECRETS).filter((k) => k !== "MY_WORDS" && !secretName(k));
  assert.deepEqual(named, [], "not secret by name for the guard");
  assert.deepEqual(Object.keys(ORDINARY).filter(secretName), []);
  // An Env allow rule still passes one.
  const allow = [{ kind: "env", decision: "allow", pattern: "SSHPASS", text: "Env(SSHPASS)" }];
  // deno-lint-ignore no-explicit-any
  assert.ok(envDecision(allow as any, "SSHPASS", "Winter2024!").pass);
});

Deno.test("a10 finding 7: the key rule masks the same words in configuration text, not apt's Pin or a random seed", () => {
  for (const k of ["smtp_passcode", "wallet_mnemonic", "totp_seed", "seedPhrase", "sshpass"]) {
    assert.equal(secretKey(k), "strong", k);
  }
  for (const k of ["seed", "random_seed", "Pin", "pin_memory", "session", "compass", "bypass"]) {
    assert.equal(secretKey(k), undefined, k);
  }
  assert.ok(secretAssignment("smtp_passcode = hunter33x"));
  assert.equal(secretAssignment("Pin: release a=stable"), undefined, "apt preferences");
  assert.equal(secretAssignment("seed = 42"), undefined);
  assert.equal(
    maskSecretValues(`totp_seed = "JBSWY3DPEHPK3PXP"\nseed = 42\n`, "xxxxxxxx", () => false),
    `totp_seed = "xxxxxxxx"\nseed = 42\n`,
  );
});

for (const forced of [false, true]) {
  Deno.test(
    `a10 finding 7 e2e: the variables do not reach a sandboxed command's environment${
      forced ? " (guard forced open)" : ""
    }`,
    { ignore: !ON, sanitizeOps: false, sanitizeResources: false },
    async () => {
      const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-a10env-" }));
      try {
        const r = await headlessTurns(ws, [[{ id: "c0", command: "env" }]], [], {
          extra: {
            ...SECRETS,
            ...ORDINARY,
            ...(forced ? { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" } : {}),
          },
        });
        const out = r.result("c0");
        for (const [k, v] of Object.entries(SECRETS)) {
          assert.ok(!out.includes(v), `${k}'s value reached the command`);
        }
        for (const k of ["RANDOM_SEED=1234", "PIN_MEMORY=true", "DESKTOP_SESSION=gnome"]) {
          assert.ok(out.includes(k), `${k} missing: ${out.slice(0, 2000)}`);
        }
      } finally {
        await Deno.remove(ws, { recursive: true });
      }
    },
  );
}
