/**
 * Second attacker pass on issue 16 (docs/permissions.md "The OS sandbox"): new siblings of each
 * class under default settings, on real bwrap, the launcher called directly (no guard in between,
 * as with the guard forced open). Code that runs later: hook runners' configs and package
 * managers' project configs that run code; secrets: a password inside a URL-valued variable;
 * resources: the limits' hard values cannot be raised. (The kernel files under /proc/sys are in
 * tests/sandbox_limits_test.ts; the guard rows in tests/auto_allow_yields_test.ts.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cgroupsOffHere } from "../core/policy/sandbox/cgroup.ts";
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, DEFAULT_SANDBOX } from "../core/policy/sandbox/mod.ts";
import { makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

async function world() {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack2-" }));
  const ws = join(root, "ws");
  for (const d of [ws, join(root, "cfg"), join(root, "home")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await new Deno.Command("git", { args: ["init", "-q", ws] }).output();
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: join(root, "cfg"),
    home: join(root, "home"),
  });
  const sb = await CommandSandbox.create(policy, DEFAULT_SANDBOX);
  const run = (command: string) =>
    runTool(makeExecuteCommandTool(sb), { command }, toolContext({ cwd: ws }));
  return {
    ws,
    policy,
    sb,
    run,
    cleanup: async () => {
      sb.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}

const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

/** Files that make a tool run code the next time the user runs it (outside the sandbox). */
const PLANTED = [
  ".pre-commit-config.yaml",
  "lefthook.yml",
  ".lintstagedrc.json",
  ".npmrc",
  "pkg/.yarnrc.yml",
  ".pnpmfile.cjs",
  "bunfig.toml",
  "mise.toml",
  ".mise/tasks/build",
  "team.code-workspace",
  ".nvim.lua",
  ".aider.conf.yml",
  ".kiro/hooks/x.json",
];

Deno.test("attack 2: hook-runner and package-manager configs planted by a command are removed; file tools ask", async () => {
  const w = await world();
  try {
    const command = PLANTED.map((p) => {
      const dir = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : ".";
      return `mkdir -p ${dir} && echo 'node-options=--require /tmp/evil.js' > ${p}`;
    }).join("; ") + "; echo made";
    const r = await w.run(command);
    assert.match(r.content, /made/);
    for (const p of PLANTED) {
      const top = p.split("/")[0] === "pkg" ? p : p.split("/")[0];
      assert.equal(await exists(join(w.ws, top)), false, `${top} must not survive`);
    }
    for (const p of PLANTED) {
      const v = await w.policy.evaluate({ type: "write", path: join(w.ws, p) });
      assert.equal(v.decision, "ask", `${p}: ${v.reason}`);
    }
    // Ordinary files with near names stay writable.
    for (const p of ["npmrc.md", "src/mise.ts", "docs/pre-commit.md"]) {
      const v = await w.policy.evaluate({ type: "write", path: join(w.ws, p) });
      assert.equal(v.decision, "allow", `${p}: ${v.reason}`);
    }
  } finally {
    await w.cleanup();
  }
});

Deno.test("attack 2: a password inside a URL-valued variable does not enter the sandbox", async () => {
  const saved = Deno.env.get("DATABASE_URL");
  Deno.env.set("DATABASE_URL", "postgres://app:s3cret-pw@db.internal/app");
  Deno.env.set("COYOTE_PLAIN_URL", "https://example.com/x");
  const w = await world();
  try {
    const r = await w.run('echo "db=[$DATABASE_URL] plain=[$COYOTE_PLAIN_URL]"');
    assert.doesNotMatch(r.content, /s3cret-pw/);
    assert.match(r.content, /db=\[\] plain=\[https:\/\/example\.com\/x\]/);
  } finally {
    if (saved === undefined) Deno.env.delete("DATABASE_URL");
    else Deno.env.set("DATABASE_URL", saved);
    Deno.env.delete("COYOTE_PLAIN_URL");
    await w.cleanup();
  }
});

Deno.test("attack 2: the limits' hard values cannot be raised from inside", async () => {
  // Both ways the process limit holds: the command's own cgroup (this machine), and pid_max
  // where no cgroup is writable (core/policy/sandbox/cgroup.ts, COYOTE_CGROUP=off).
  for (const cgroup of [true, false]) {
    if (!cgroup) cgroupsOffHere(true);
    const w = await world();
    try {
      const r = await w.run([
        "ulimit -Hd; ulimit -Hu; ulimit -d unlimited && echo RAISED_D; ulimit -u unlimited && echo RAISED_U",
        "p=$(grep :pids: /proc/self/cgroup | cut -d: -f3)",
        cgroup ? "cat /sys/fs/cgroup/pids$p/pids.max" : "cat /proc/sys/kernel/pid_max",
        "echo max > /sys/fs/cgroup/pids$p/pids.max && echo RAISED_PIDS",
        // Out of its cgroup: into the parent's, or a new one.
        "echo $$ > /sys/fs/cgroup/pids/cgroup.procs && echo MOVED",
        "mkdir /sys/fs/cgroup/pids/coyote-mine && echo MADE",
      ].join("; "));
      assert.doesNotMatch(r.content, /RAISED|MOVED|MADE/);
      assert.match(r.content, /^2097152$/m);
      assert.match(r.content, /^512$/m);
      assert.match(r.content, cgroup ? /^512\n512$/m : /^514$/m);
    } finally {
      cgroupsOffHere(false);
      await w.cleanup();
    }
  }
});

Deno.test("attack 2: another user's home is hidden (root reads world-readable dotfiles)", async () => {
  const other = `/home/coyote-other-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(other);
  await Deno.writeTextFile(
    `${other}/.gitconfig`,
    '[url "https://ghp_othertoken123@github.com/"]\n\tinsteadOf = https://github.com/\n',
  );
  await Deno.chmod(`${other}/.gitconfig`, 0o644);
  const w = await world();
  try {
    const r = await w.run(`cat ${other}/.gitconfig; ls -a ${other}; echo done`);
    assert.match(r.content, /done/);
    assert.doesNotMatch(r.content, /ghp_othertoken123|^\.gitconfig$/m);
    // Still readable to the guard's file tools only with a question (outside the workspace).
    const v = await w.policy.evaluate({ type: "read", path: `${other}/.gitconfig` });
    assert.equal(v.decision, "ask", v.reason);
  } finally {
    await w.cleanup();
    await Deno.remove(other, { recursive: true }).catch(() => {});
  }
});

Deno.test("attack 2: no virtio socket to the hypervisor host (AF_VSOCK), sockets of other kinds still work", async () => {
  const w = await world();
  try {
    // Created only, never connected: nothing is sent to the host.
    const r = await w.run(
      `python3 -c 'import socket
for fam in ("AF_VSOCK", "AF_UNIX", "AF_INET"):
    try:
        socket.socket(getattr(socket, fam), socket.SOCK_STREAM).close(); print(fam, "made")
    except OSError as e: print(fam, "ERR", e.errno)'`,
    );
    assert.match(r.content, /AF_VSOCK ERR 1\b/);
    assert.match(r.content, /AF_UNIX ERR 1\b/);
    assert.match(r.content, /AF_INET made/);
  } finally {
    await w.cleanup();
  }
});
