/**
 * The fourth attacker pass on issue 16 (docs/permissions.md "The OS sandbox"): each test is a leak
 * that pass found on real bwrap with default settings, the launcher called directly (no guard in
 * between, as with the guard forced open) or, for the auto-allow rows, the guard itself; each now
 * holds by a mechanism, and its siblings have their own tests beside the mechanism's:
 *
 * - IPC that is not a socket: a FIFO in a world-readable folder (the allow-listed root view,
 *   core/policy/sandbox/root_view.ts; tests/sandbox_root_view_test.ts); SysV message queues
 *   (`--unshare-ipc`);
 * - credentials outside files: the kernel keyring (seccomp refuses keyctl, add_key, request_key),
 *   secrets in values the scrub did not know by name (core/tools/secret_value.ts;
 *   tests/env_values_test.ts), browser profiles deep in the stores (the store scan by structure;
 *   tests/sandbox_home_deep_test.ts);
 * - code that runs later: a nested repository's or a submodule's own `core.hooksPath`, an
 *   embedded bare repository made at run time (core/policy/sandbox/git_dirs.ts;
 *   tests/sandbox_runs_later4_test.ts);
 * - resources: a SysV shared memory segment outliving the command (`--unshare-ipc`); bwrap's
 *   `/dev` tmpfs uncapped (`/dev` read-only once `/dev/shm`, capped, is in);
 * - auto-allow vs a deny rule: `hash -p`, `printf -v`/`read` with a subscript, an exported bash
 *   function, `openssl -engine`, `git grep -O` (opaque; tests/auto_allow_yields_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { SANDBOX_ON } from "./support/sandbox_world.ts";
import { CommandSandbox, DEFAULT_SANDBOX, sandboxGuard } from "../core/policy/sandbox/mod.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

const dec = new TextDecoder();
async function sh(cmd: string, cwd?: string): Promise<string> {
  const o = await new Deno.Command("bash", { args: ["-c", cmd], cwd }).output();
  return dec.decode(o.stdout) + dec.decode(o.stderr);
}

async function world(setup?: (ws: string, root: string) => Promise<void>) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack4-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  for (const d of [ws, join(root, "cfg"), home]) await Deno.mkdir(d, { recursive: true });
  await sh(`git init -q ${ws}`);
  await setup?.(ws, root);
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: join(root, "cfg"),
    home,
  });
  await policy.globsReady();
  const run = async (command: string) => {
    const sb = await CommandSandbox.create(policy, DEFAULT_SANDBOX);
    try {
      const r = await runTool(
        makeExecuteCommandTool(sb),
        { command },
        toolContext({ cwd: ws }),
      );
      return String(r.content);
    } finally {
      sb.close();
    }
  };
  return { ws, root, home, run, cleanup: () => Deno.remove(root, { recursive: true }) };
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);
const GIT_ID = "-c user.name=a -c user.email=a@example.com";

Deno.test("attack 4 class 1: a FIFO a host process reads is not writable from the sandbox", async () => {
  const w = await world();
  const fifo = join("/var/tmp", `coyote-attack4-${crypto.randomUUID()}.fifo`);
  await sh(`mkfifo ${fifo}`);
  const reader = new Deno.Command("bash", {
    args: ["-c", `exec cat ${fifo} > ${fifo}.out`],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await w.run(`echo PWNED > ${fifo}`);
    await new Promise((r) => setTimeout(r, 200));
    assert.doesNotMatch(await Deno.readTextFile(`${fifo}.out`).catch(() => ""), /PWNED/);
  } finally {
    try {
      reader.kill();
    } catch { /* ended */ }
    await reader.status;
    await Deno.remove(fifo).catch(() => {});
    await Deno.remove(`${fifo}.out`).catch(() => {});
    await w.cleanup();
  }
});

Deno.test("attack 4 class 1: the host's SysV message queues are neither visible nor writable", async () => {
  const w = await world();
  const id = (await sh("ipcmk -Q")).match(/id: (\d+)/)?.[1];
  assert.ok(id, "ipcmk made a queue");
  try {
    const out = await w.run(
      `ipcs -q; perl -e 'msgsnd(${id}, pack("l! a*",1,"PWNED"),0) or die "msgsnd: $!"; print "sent\\n"'`,
    );
    const host = await sh(`ipcs -q -i ${id}`);
    assert.doesNotMatch(out, /sent/, out);
    assert.match(host, /qnum=0|messages\s*=\s*0|qnum\s*=\s*0/i, host);
  } finally {
    await sh(`ipcrm -q ${id}`);
    await w.cleanup();
  }
});

Deno.test("attack 4 class 2: the user's kernel keyring is not readable from the sandbox", async () => {
  const w = await world();
  const desc = `coyote-attack4-${crypto.randomUUID().slice(0, 8)}`;
  const py = (code: string) =>
    `python3 -c "import ctypes;l=ctypes.CDLL(None,use_errno=True);${code}"`;
  // add_key(2) = 248, keyctl(2) = 250 on x86_64; KEY_SPEC_USER_KEYRING = -4.
  const key = (await sh(py(`print(l.syscall(248,b'user',b'${desc}',b'KEYSECRET',9,-4))`))).trim();
  try {
    const out = await w.run(
      py(
        `k=l.syscall(250,10,-4,b'user',b'${desc}',0);b=ctypes.create_string_buffer(64);l.syscall(250,11,k,b,64);print(b.value)`,
      ),
    );
    assert.doesNotMatch(out, /KEYSECRET/, out);
  } finally {
    await sh(py(`l.syscall(250,21,${key})`)); // KEYCTL_INVALIDATE
    await w.cleanup();
  }
});

Deno.test("attack 4 class 2: browser profiles and token URLs inside the stores stay hidden", async () => {
  const w = await world();
  const files: Record<string, string> = {
    ".cache/ms-playwright/mcp-chrome-profile/Default/Cookies": "SECRET-1",
    ".cache/chrome-devtools-mcp/chrome-profile-stable/Default/Login Data": "SECRET-2",
    ".cache/pre-commit/repoab12/.git/config": "url = https://oauth2:SECRET-3@gitlab.example/x.git",
    ".cargo/git/db/dep-1234/config": "url = https://SECRET-4@github.com/x/dep",
  };
  try {
    for (const [p, t] of Object.entries(files)) {
      await Deno.mkdir(join(w.home, p, ".."), { recursive: true });
      await Deno.writeTextFile(join(w.home, p), t);
    }
    const out = await w.run(
      Object.keys(files).map((p) => `cat '${join(w.home, p)}'; echo`).join("; "),
    );
    assert.doesNotMatch(out, /SECRET-/, out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 4 class 2: credential values the scrub does not know by name stay out", async () => {
  const vars: Record<string, string> = {
    GIT_CONFIG_PARAMETERS: "'http.extraheader'='AUTHORIZATION: basic eC1hY2Nlc3M6U0VDUkVU'",
    PIP_INDEX_URL: "https://SECRETtoken1234@pypi.example/simple",
    SLACK_HOOK_URL: "https://hooks.slack.com/services/T000/B000/SECRETxyz",
    STRIPE: "sk_live_SECRET51Habc",
    SLACKBOT: "xoxp-1234-SECRET",
  };
  for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
  const w = await world();
  try {
    const out = await w.run("env");
    assert.doesNotMatch(out, /SECRET/, out);
  } finally {
    for (const k of Object.keys(vars)) Deno.env.delete(k);
    await w.cleanup();
  }
});

Deno.test("attack 4 class 3: a nested repository's own core.hooksPath is protected", async () => {
  const w = await world(async (ws) => {
    await sh(
      `git init -q vendor/lib && git -C vendor/lib config core.hooksPath .githooks && git -C vendor/lib ${GIT_ID} commit -q --allow-empty -m i`,
      ws,
    );
  });
  try {
    await w.run(
      `mkdir -p vendor/lib/.githooks && printf '#!/bin/sh\\ntouch ${w.ws}/PROOF\\n' > vendor/lib/.githooks/pre-commit && chmod +x vendor/lib/.githooks/pre-commit`,
    );
    await sh(`git -C vendor/lib ${GIT_ID} commit -q --allow-empty -m x`, w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false, "the planted hook ran on the host");
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 6: a submodule's core.hooksPath is protected", async () => {
  const w = await world(async (ws, root) => {
    await sh(
      `git init -q ${root}/subsrc && git -C ${root}/subsrc ${GIT_ID} commit -q --allow-empty -m s && git -c protocol.file.allow=always submodule -q add ${root}/subsrc sub && git -C sub config core.hooksPath .githooks && git ${GIT_ID} commit -q -m sup`,
      ws,
    );
  });
  try {
    await w.run(
      `mkdir -p sub/.githooks && printf '#!/bin/sh\\ntouch ${w.ws}/PROOF\\n' > sub/.githooks/pre-commit && chmod +x sub/.githooks/pre-commit`,
    );
    await sh(`git -C sub ${GIT_ID} commit -q --allow-empty -m x`, w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false, "the planted hook ran on the host");
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 4 class 3: an embedded bare repository made at run time does not survive", async () => {
  const w = await world();
  try {
    await w.run(
      `git init -q --bare tools/cache && git -C tools/cache config core.bare false && git -C tools/cache config core.worktree ${w.ws}/tools/cache && git -C tools/cache config core.fsmonitor 'touch ${w.ws}/PROOF; false'`,
    );
    await sh(`cd tools/cache 2>/dev/null && git status`, w.ws);
    assert.equal(await exists(join(w.ws, "PROOF")), false, "git status on the host ran fsmonitor");
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 4 class 4: a SysV shared memory segment does not outlive the command", async () => {
  const w = await world();
  let id: string | undefined;
  try {
    const out = await w.run(
      `python3 -c "import ctypes;l=ctypes.CDLL(None);l.shmat.restype=ctypes.c_void_p;i=l.shmget(0,64<<20,0o1600);p=l.shmat(i,None,0);ctypes.memset(p,1,64<<20);print('shmid',i)"`,
    );
    id = out.match(/shmid (\d+)/)?.[1];
    const host = id && Number(id) >= 0 ? await sh(`ipcs -m -i ${id}`) : "";
    assert.doesNotMatch(host, /size=67108864|bytes=67108864/, `segment ${id} persists:\n${host}`);
  } finally {
    if (id && Number(id) >= 0) await sh(`ipcrm -m ${id}`);
    await w.cleanup();
  }
});

Deno.test("attack 4 class 4: bwrap's /dev tmpfs cannot be filled (read-only; /dev/shm keeps its cap) — passes with the bwrap.ts fix", async () => {
  const w = await world();
  try {
    const out = await w.run(
      "dd if=/dev/zero of=/dev/fill bs=1M count=700 2>&1 | tail -1; rm -f /dev/fill",
    );
    assert.match(out, /Read-only file system|No space left on device/, out);
  } finally {
    await w.cleanup();
  }
});

const ON = SANDBOX_ON;

Deno.test("attack 4 class 5: auto-allow yields to a deny rule for bash's code-evaluating builtins and loaders", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack4-g-" }));
  await sh(`git init -q ${ws}`);
  const rows: [string[], string][] = [
    [[], "hash -p /usr/bin/rm ls; ls -rf victim"],
    [[], "printf -v 'a[$(rm -rf victim)]' x"],
    [[], "read -r 'a[$(rm -rf victim)]' <<< x"],
    [[], "env 'BASH_FUNC_ls%%=() { rm -rf victim; }' bash -c ls"],
    [[], "openssl req -engine ./e.so"],
    [[], "git grep -O'rm -rf victim' -e x"],
    [["Execute(git*)"], "git grep -O'rm -rf victim' -e x"],
  ];
  const failures: string[] = [];
  try {
    for (const [allow, command] of rows) {
      const policy = Policy.create({}, { allow, deny: ["Execute(rm *)"] }, {
        workspace: ws,
        configDir: "/c",
      });
      const v = await sandboxGuard(policy, ON).evaluate({ type: "execute", command });
      if (v.decision === "allow") failures.push(`${command} (allow ${allow}): ${v.reason}`);
    }
    assert.deepEqual(failures, []);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
