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

const dec = new TextDecoder();
const opts = { sanitizeOps: false, sanitizeResources: false };
const FORCED = { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" };

async function sh(cmd: string, cwd?: string): Promise<string> {
  const o = await new Deno.Command("bash", { args: ["-c", cmd], cwd }).output();
  return dec.decode(o.stdout) + dec.decode(o.stderr);
}
const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

/** The sandbox must work here: these tests do not skip. */
async function requireSandbox() {
  assert.ok((await detectBackend()).backend, "bwrap must work on this machine");
}

/** A root in /var/tmp with `home` (a `.cache` store, `homeSetup` run in it) and `ws` (a git repository). */
async function world(homeSetup = "") {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "coyote-a11h-" }),
  );
  const home = join(root, "home"), ws = join(root, "ws");
  await sh(
    `set -e; mkdir -p ${home}/.ssh ${home}/.cache ${ws}
echo 'SSHKEY-SECRET' > ${home}/.ssh/id_ed25519
cd ${ws}; git init -q; git -c user.name=a -c user.email=a@a commit -q --allow-empty -m init`,
  );
  if (homeSetup) await sh(homeSetup, home);
  return {
    root,
    home,
    ws,
    cleanup: async () => {
      await sh(`chmod -R u+rwx '${root}'`);
      await Deno.remove(root, { recursive: true });
    },
  };
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
