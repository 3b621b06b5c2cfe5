/**
 * What a sandboxed command can read of the processes it sees and of /sys (issue 16, leak pass
 * items 1–2; core/policy/sandbox/plan_file.ts, root_view.ts `SYS_VIEW`): bwrap is PID 1 of the
 * command's PID namespace, and its argv used to be the whole mount plan. A command reading every
 * /proc/<pid>/cmdline and environ on real bwrap finds no mount option, no path of Coyote's empty
 * or masked copies, no masked file's token and no scrubbed secret; bwrap's own command line is
 * `--args 4` and the command. Of /sys it sees CPU topology and cgroup limits, no host MAC address.
 */
import assert from "node:assert/strict";
import { headlessAttack } from "./support/headless_attack.ts";
import { commandWorld } from "./support/sandbox_world.ts";

const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
const SECRET = "s3cr3t-value-of-the-test-9f2c";

Deno.test("sandbox: /proc/*/cmdline and /proc/*/environ show no mount plan, hidden path or secret", async () => {
  Deno.env.set("COYOTE_LEAK_TEST_API_TOKEN", SECRET);
  const w = await commandWorld(
    "coyote-proc-leaks-",
    `git init -q && git remote add origin 'https://bot:${TOKEN}@github.com/o/r.git'`,
  );
  try {
    // The command names nothing it looks for (its own text is PID 2's cmdline).
    const out = await w.run(
      `for d in /proc/[0-9]*; do echo "== $d"; tr '\\0' ' ' < $d/cmdline; echo; tr '\\0' '\\n' < $d/environ; done 2>&1`,
    );
    assert.match(out, /== \/proc\/1\n\S*bwrap --args 4 --chdir /, out);
    for (
      const leak of [
        "--ro-bind",
        "--tmpfs",
        "--bind",
        "coyote-empty-",
        "coyote-masked-",
        "coyote-plan-",
        TOKEN,
        SECRET,
      ]
    ) {
      assert.ok(!out.includes(leak), `${leak} visible:\n${out}`);
    }
    // The plan's descriptor was closed by bwrap: nothing to reopen.
    const fds = await w.run("ls /proc/1/fd /proc/self/fd; cat /proc/self/fd/4 2>&1 | head -c 200");
    assert.ok(!fds.includes("coyote-plan-") && !fds.includes("--ro-bind"), fds);
  } finally {
    Deno.env.delete("COYOTE_LEAK_TEST_API_TOKEN");
    await w.cleanup();
  }
});

Deno.test("sandbox: /sys shows CPU topology and cgroup limits, not the host's MAC addresses or serials", async () => {
  const host = (p: string) => Deno.readTextFile(p).then((t) => t.trim(), () => undefined);
  const macs: string[] = [];
  for await (const e of Deno.readDir("/sys/class/net")) {
    const m = await host(`/sys/class/net/${e.name}/address`);
    if (m && m !== "00:00:00:00:00:00") macs.push(m);
  }
  // cgroup v2 keeps the CPU quota in cpu.max, v1 in cpu/cpu.cfs_quota_us (Go, Rust, Node read it).
  const quota = ["/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"];
  const want = {
    online: await host("/sys/devices/system/cpu/online"),
    quota: (await host(quota[0])) ?? (await host(quota[1])),
  };
  assert.ok(want.online && want.quota, "the host has a CPU online list and a cgroup CPU quota");
  const w = await commandWorld("coyote-sys-view-");
  try {
    const out = await w.run(
      "echo nproc=$(nproc); echo online=$(cat /sys/devices/system/cpu/online); " +
        `echo quota=$(cat ${quota[0]} 2>/dev/null || cat ${quota[1]}); ` +
        "cat /sys/class/net/*/address /sys/class/dmi/id/* 2>&1; ls /sys /sys/firmware 2>&1",
    );
    assert.match(out, new RegExp(`nproc=${navigator.hardwareConcurrency}\\n`), out);
    assert.ok(out.includes(`online=${want.online}\n`), out);
    assert.ok(out.includes(`quota=${want.quota}\n`), out);
    for (const m of macs) assert.ok(!out.includes(m), `host MAC ${m} visible:\n${out}`);
    assert.match(out, /\/sys\/class\/net\/\*\/address': No such file/, out);
    assert.match(out, /\/sys\/firmware': No such file/, out);
  } finally {
    await w.cleanup();
  }
});

// A coyote run (the `coyote` task's `--allow-read`, not this test's `--allow-all`): Deno refused
// to stat /sys there (`NotCapable`), and the view left every /sys folder out.
Deno.test("sandbox: a headless coyote run's commands see the /sys CPU online list and transparent_hugepage", async () => {
  const host = (p: string) => Deno.readTextFile(p).then((t) => t.trim());
  const online = await host("/sys/devices/system/cpu/online");
  const thp = await host("/sys/kernel/mm/transparent_hugepage/enabled");
  const ws = await Deno.makeTempDir({ prefix: "coyote-sys-headless-" });
  try {
    const r = await headlessAttack(ws, [], [{
      id: "s",
      command: "echo online=$(cat /sys/devices/system/cpu/online); " +
        "echo thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled)",
    }], []);
    assert.deepEqual(r.denied, []);
    const tail = r.sent.slice(-400);
    assert.ok(r.sent.includes(`online=${online}\\n`), tail);
    assert.ok(r.sent.includes(`thp=${thp}"`), tail);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
