/**
 * Resource limits of a sandboxed command (issue 16 §4, core/policy/sandbox/limits.ts): a bounded
 * fork bomb and a memory hog end that command with a clear tool error, the bound holds when the
 * bomb is silent, the command cannot raise it (nor reach a writable /proc/sys — `core_pattern`
 * would run a program as root outside every namespace), and the session goes on. Real bwrap, as
 * root on this machine; the launcher is called directly (no guard in between), and one headless
 * session runs with the guard forced open. These cover the fallback limits (no writable cgroup:
 * `COYOTE_CGROUP=off`); tests/sandbox_cgroup_test.ts covers the per-command cgroup.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cgroupsOffHere } from "../core/policy/sandbox/cgroup.ts";
import { describeSandbox, detectBackend, sandboxedCommand } from "../core/policy/sandbox/mod.ts";
import { deriveProfile } from "../core/policy/sandbox/profile.ts";
import { sandboxSettings } from "../core/policy/sandbox/settings.ts";
import { perNamespacePidMax, type SandboxLimits } from "../core/policy/sandbox/limits.ts";
import { limitsWorld } from "./support/sandbox_world.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

async function world(limits: SandboxLimits = { processes: 300, memoryMb: 256 }) {
  // The rlimit / pid_max limits, as on a host without a writable cgroup (core/policy/sandbox/cgroup.ts).
  cgroupsOffHere(true);
  const w = await limitsWorld("coyote-limits-", limits);
  return {
    ...w,
    cleanup: async () => {
      await w.cleanup();
      cgroupsOffHere(false);
    },
  };
}

/** Counts the sandbox's processes with shell builtins only (no fork needed at the limit). */
const COUNT = 'n=0; for d in /proc/[0-9]*; do n=$((n+1)); done; echo "count=$n"';

Deno.test("limits: a fork bomb ends with 'hit the process limit', the next command runs", async () => {
  const { backend } = await detectBackend();
  assert.ok(backend, "bwrap must be installed for these tests (.ci/run installs bubblewrap)");
  assert.ok(
    perNamespacePidMax(),
    `this test machine's kernel ${Deno.osRelease()} has pid_max per namespace`,
  );
  const w = await world();
  try {
    // Bounded: 700 sleeps of 20 s at most, even if no limit held.
    const bomb = await w.run("for i in $(seq 700); do sleep 20 & done; wait");
    assert.equal(bomb.isError, true);
    assert.match(bomb.content, /^command hit the process limit \(300\)/);
    // Ended at once, not at the 20 s sleeps nor the timeout.
    assert.ok(((bomb.rawOutput as { durationMs: number }).durationMs) < 15_000, bomb.content);
    // The recursive kind, bounded by depth.
    const rec = await w.run(
      "f(){ [ $1 -gt 0 ] || return; f $(($1-1)) & f $(($1-1)) & wait; }; f 11",
    );
    assert.match(rec.content, /^command hit the process limit \(300\)/);
    const next = await w.run("echo alive");
    assert.equal(next.isError, false, next.content);
    assert.match(next.content, /alive/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: the bound holds for a silent bomb, as root, and the command cannot raise it", async () => {
  const w = await world();
  try {
    const r = await w.run([
      "echo 100000 > /proc/sys/kernel/pid_max",
      "for f in /proc/[0-9]*/root/proc/sys/kernel/pid_max; do echo 100000 > $f && echo RAISED; done",
      "ulimit -u unlimited && echo NPROC_RAISED",
      // The bomb's shell dies when fork fails; its sleeps stay, and this shell counts them.
      "bash -c 'for i in $(seq 700); do sleep 4 & done' 2>/dev/null",
      COUNT,
      "wait",
    ].join("; "));
    assert.doesNotMatch(r.content, /RAISED/);
    const n = Number(/count=(\d+)/.exec(r.content)?.[1]);
    assert.ok(n >= 250 && n <= 302, `${n} processes in the sandbox:\n${r.content}`);
    assert.equal(
      Deno.uid(),
      0,
      "this machine runs the tests as root: the case RLIMIT_NPROC misses",
    );
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: /proc/sys is read-only in the sandbox, with and without limits (core_pattern)", async () => {
  for (const limits of [{ processes: 300, memoryMb: 256 }, { processes: 0, memoryMb: 0 }]) {
    const w = await world(limits);
    try {
      // Writing the current value back: harmless if it ever got through.
      const r = await w.run([
        "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern && echo CORE_WRITTEN",
        "for f in /proc/[0-9]*/root/proc/sys/kernel/core_pattern; do cat $f > $f && echo CORE_WRITTEN; done",
        "cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness && echo VM_WRITTEN",
        "echo done",
      ].join("; "));
      assert.match(r.content, /done/);
      assert.doesNotMatch(r.content, /CORE_WRITTEN|VM_WRITTEN/, JSON.stringify(limits));
      assert.match(r.content, /Read-only file system/);
    } finally {
      await w.cleanup();
    }
  }
});

Deno.test("limits: a memory hog ends with 'hit the memory limit'; node and deno still start", async () => {
  const w = await world();
  try {
    const hog = await w.run(`node -e 'const a=[]; for (;;) a.push(Buffer.alloc(1 << 26))'`);
    assert.equal(hog.isError, true);
    assert.match(hog.content, /^command hit the memory limit \(256 MB per process/);
    const awk = await w.run(`awk 'BEGIN { s = "x"; while (1) s = s s }'`);
    assert.match(awk.content, /^command hit the memory limit/);
    // RLIMIT_DATA, not RLIMIT_AS: JIT runtimes that reserve address space keep working.
    const ok = await w.run(`node -e 'console.log("node ok")' && ulimit -d`);
    assert.equal(ok.isError, false, ok.content);
    assert.match(ok.content, /node ok\n262144/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: config shape, errors naming the key, and policy show", async () => {
  assert.deepEqual(sandboxSettings({ limits: { processes: 64, memory_mb: 512 } }).limits, {
    processes: 64,
    memoryMb: 512,
    tmpfsMb: 512,
    openFiles: 8192,
    fileMb: 4096,
  });
  assert.deepEqual(sandboxSettings({ limits: { processes: 0, tmpfs_mb: 0 } }).limits, {
    processes: 0,
    memoryMb: 2048,
    tmpfsMb: 0,
    openFiles: 8192,
    fileMb: 4096,
  });
  assert.deepEqual(sandboxSettings({ limits: { open_files: 1024, file_mb: 0 } }).limits, {
    processes: 512,
    memoryMb: 2048,
    tmpfsMb: 512,
    openFiles: 1024,
    fileMb: 0,
  });
  assert.throws(() => sandboxSettings({ limits: { open_files: 10 } }), /limits\.open_files/);
  assert.throws(() => sandboxSettings({ limits: { tmpfs_mb: 4 } }), /limits\.tmpfs_mb/);
  assert.throws(() => sandboxSettings({ limits: { procs: 5 } }), /limits\.procs/);
  assert.throws(() => sandboxSettings({ limits: { processes: -1 } }), /limits\.processes/);
  assert.throws(() => sandboxSettings({ limits: { memory_mb: "2G" } }), /limits\.memory_mb/);
  const w = await world({ processes: 512, memoryMb: 2048 });
  try {
    const text = describeSandbox(deriveProfile(w.policy), w.sb.status);
    assert.match(text, /limits: +processes 512 \(the sandbox's own PID namespace pid_max/);
    assert.match(
      text,
      /memory 2048 MB per process \(RLIMIT_DATA; shared mappings not counted: no writable cgroup here\)/,
    );
    assert.match(
      text,
      /tmpfs 512 MB each \(home, \/tmp if tmpfs, \/dev\/shm\) \(sandbox\.limits\.tmpfs_mb\)/,
    );
    assert.match(text, /socket buffers not bounded \(no memory cgroup here\)/);
    assert.match(text, /open files 8192 per process \(RLIMIT_NOFILE, hard\)/);
    assert.match(text, /file size 4096 MB per file \(RLIMIT_FSIZE, hard;/);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits: the sandbox's tmpfs mounts (/dev/shm, a tmpfs /tmp) are capped at tmpfs_mb, the home is read-only (attack trial 2 item 4)", async () => {
  const w = await world({ processes: 300, memoryMb: 256, tmpfsMb: 16 });
  try {
    const fill = (dir: string) =>
      `dd if=/dev/zero of=${dir}/fill bs=1M count=40 2>&1 | grep -o 'No space left on device' | head -1; ` +
      `echo "${dir}=$(( $(stat -c %s ${dir}/fill) / 1048576 ))"; rm -f ${dir}/fill`;
    // The home's tmpfs is read-only (attack pass 10): nothing can be written there at all.
    const home = deriveProfile(w.policy).home!.path;
    const ro = await w.run(`touch ${home}/fill 2>&1; echo rc=$?`);
    assert.match(ro.content, /Read-only file system[\s\S]*rc=1/, ro.content);
    const r = await w.run(fill("/dev/shm"));
    assert.equal(r.content.match(/No space left on device/g)?.length, 1, r.content);
    for (const d of ["/dev/shm"]) {
      const n = Number(new RegExp(`${d}=(\\d+)`).exec(r.content)?.[1]);
      assert.ok(n <= 16, `${d}: ${n} MB written, cap 16: ${r.content}`);
    }
    // A per-command /tmp tmpfs (no private temp dir) is capped too.
    const c = sandboxedCommand(w.policy, `${fill("/tmp")}`, {
      cwd: w.ws,
      backend: (await detectBackend()).backend!,
      limits: { processes: 300, memoryMb: 256, tmpfsMb: 16 },
    });
    const o = await new Deno.Command(c.program, {
      args: c.args,
      env: c.env,
      clearEnv: true,
      cwd: w.ws,
    })
      .output();
    const out = new TextDecoder().decode(o.stdout);
    assert.match(out, /No space left on device/, out);
    assert.ok(Number(/\/tmp=(\d+)/.exec(out)?.[1]) <= 16, out);
  } finally {
    await w.cleanup();
  }
});

Deno.test("limits e2e: headless, guard forced open: the bomb is a tool error and the session goes on", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  await Deno.writeTextFile(
    join(env.configDir, "config.yaml"),
    "sandbox:\n  limits:\n    processes: 300\n    memory_mb: 1024\n    tmpfs_mb: 64\n",
  );
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{
          id: "bomb",
          name: "execute_command",
          arguments: { command: "for i in $(seq 700); do sleep 20 & done; wait" },
        }],
      },
      {
        tool_calls: [{ id: "next", name: "execute_command", arguments: { command: "echo alive" } }],
      },
      { text: "done" },
    ],
  });
  try {
    const r = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd: w.ws,
      env: childEnv(env, {
        baseURL: server.baseURL,
        extra: { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow", COYOTE_CGROUP: "off" },
      }),
    });
    assert.equal(r.code, 0, r.stderr);
    const text = new Map<string, string>();
    for (const l of r.stdout.trim().split("\n").map((l) => JSON.parse(l))) {
      const u = l.update;
      if (u?.sessionUpdate === "tool_call_update" && u.content) {
        text.set(u.toolCallId, JSON.stringify(u.content));
      }
    }
    assert.match(text.get("bomb")!, /command hit the process limit \(300\)/);
    assert.match(text.get("next")!, /alive/);
    assert.match(r.stdout, /done/);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("limits: a bad sandbox.limits or protected_paths in config.yaml is an error naming file and field", async () => {
  const env = await makeCoyoteEnv();
  try {
    for (
      const [yaml, field] of [
        ["sandbox:\n  limits: {processes: 3}\n", "sandbox.limits.processes"],
        ["sandbox:\n  limits: {procs: 5}\n", "sandbox.limits.procs"],
        ["sandbox:\n  limits: {open_files: 3}\n", "sandbox.limits.open_files"],
        ["sandbox:\n  protected_paths: [ok.cfg, a/b/c]\n", "sandbox.protected_paths[1]"],
      ]
    ) {
      const file = join(env.configDir, "config.yaml");
      await Deno.writeTextFile(file, yaml);
      const r = await runCoyote(["policy", "show"], { cwd: env.dataDir, env: childEnv(env) });
      assert.notEqual(r.code, 0);
      assert.ok(r.stderr.includes(file) && r.stderr.includes(field), r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
    }
  } finally {
    await env.cleanup();
  }
});
