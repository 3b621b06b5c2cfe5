/**
 * A cgroup per sandboxed command (issue 16 §4, core/policy/sandbox/cgroup.ts): on this machine
 * (root in a container, cgroup v1 with writable memory and pids hierarchies) every command runs in
 * its own child cgroup. A bounded fork bomb (2000 processes, limit 64), a silent one, and memory
 * that RLIMIT_DATA does not count (a tmpfs file in /dev/shm, python's shared anonymous mmap) end
 * with the tool error; the session goes on; no child cgroup is left behind; the same holds in a
 * headless run with the guard forced open. The probe's choice on cgroup v2 layouts is checked on
 * directory trees shaped like /sys/fs/cgroup.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { existsSync } from "node:fs";
import { describeSandbox } from "../core/policy/sandbox/mod.ts";
import { deriveProfile } from "../core/policy/sandbox/profile.ts";
import {
  cgroupHost,
  cgroupsOffHere,
  counter,
  findCgroupHost as probe,
  OWN_CGROUP_PREFIX,
} from "../core/policy/sandbox/cgroup.ts";
import type { SandboxLimits } from "../core/policy/sandbox/limits.ts";
import { limitsWorld } from "./support/sandbox_world.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

const LIMITS: SandboxLimits = { processes: 64, memoryMb: 128, tmpfsMb: 1024 };

function world(limits: SandboxLimits = LIMITS) {
  return limitsWorld("coyote-cgroup-", limits);
}

/**
 * The `coyote-*` cgroups in this machine's hierarchies; with `own` only those this test module made
 * (`deno test --parallel` runs other modules in this process, with the same pid, at the same time).
 */
function coyoteCgroups(own = false): string[] {
  const h = cgroupHost();
  assert.ok(h, "this machine has a writable cgroup");
  const out: string[] = [];
  for (const dir of new Set([h.memory, h.pids])) {
    for (const e of Deno.readDirSync(dir)) {
      if (e.isDirectory && e.name.startsWith(own ? OWN_CGROUP_PREFIX : "coyote-")) {
        out.push(`${dir}/${e.name}`);
      }
    }
  }
  return out;
}

/**
 * The `coyote-*` cgroups (`own`: of this module; else those `keep` accepts) still there once
 * background teardowns had up to 3 s to end.
 */
async function leftAfter(own = false, keep = (_d: string) => true): Promise<string[]> {
  const left = () => coyoteCgroups(own).filter(keep);
  for (let i = 0; i < 150 && left().length; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return left();
}

const ms = (r: { rawOutput?: unknown }) => (r.rawOutput as { durationMs: number }).durationMs;

Deno.test("cgroup: this machine has one (v1, writable), and policy show names it", async () => {
  const h = cgroupHost();
  assert.ok(h, "root in this container with cgroup v1: memory and pids hierarchies are writable");
  assert.equal(h.version, 1);
  assert.match(
    h.describe,
    /^cgroup v1, writable \(\/sys\/fs\/cgroup\/memory\/.*, \/sys\/fs\/cgroup\/pids/,
  );
  const w = await world({ processes: 512, memoryMb: 2048 });
  try {
    const text = describeSandbox(deriveProfile(w.policy), w.sb.status);
    assert.match(text, /limits: +processes 512 \(pids\.max of the command's own cgroup: cgroup v1/);
    assert.match(text, /memory 2048 MB for the command's whole tree, shared mappings and tmpfs/);
    // Inside, the command sees its own cgroup in both hierarchies.
    const r = await w.run("cat /proc/self/cgroup");
    assert.match(r.content, new RegExp(`memory:.*/coyote-${Deno.pid}-[0-9a-f]{8}-\\d+\\n`));
    assert.match(r.content, new RegExp(`pids:.*/coyote-${Deno.pid}-[0-9a-f]{8}-\\d+\\n`));
  } finally {
    await w.cleanup();
  }
  assert.deepEqual(await leftAfter(true), [], "removed after the command");
});

Deno.test("cgroup: a fork bomb of 2000 with limit 64 ends with the process limit; a silent one too; the session goes on", async () => {
  const w = await world();
  try {
    const bomb = await w.run("for i in $(seq 2000); do sleep 20 & done; wait");
    assert.equal(bomb.isError, true);
    assert.match(bomb.content, /^command hit the process limit \(64\)/);
    assert.ok(ms(bomb) < 10_000, bomb.content);
    // Silent: no "fork: retry" on stderr; the cgroup's pids.events shows the refused fork.
    const silent = await w.run(
      "python3 -c 'import os,time\nfor i in range(2000):\n  try:\n    if os.fork() == 0: time.sleep(20); os._exit(0)\n  except OSError: pass\ntime.sleep(20)' 2>/dev/null",
    );
    assert.equal(silent.isError, true);
    assert.match(silent.content, /^command hit the process limit \(64\)/);
    assert.ok(ms(silent) < 10_000, silent.content);
    // The classic one, made to wait: without `wait` its first shell returns at once and the PID
    // namespace ends the rest with it, sometimes before the limit is reached.
    const recursive = await w.run(":(){ :|:& wait; };:");
    assert.match(recursive.content, /^command hit the process limit \(64\)/);
    // Under the limit: 40 at once run to the end.
    const many = await w.run("for i in $(seq 40); do sleep 1 & done; wait; echo all-done");
    assert.equal(many.isError, false, many.content);
    assert.match(many.content, /all-done/);
    const next = await w.run("echo alive");
    assert.equal(next.isError, false, next.content);
    assert.match(next.content, /alive/);
  } finally {
    await w.cleanup();
  }
  assert.deepEqual(await leftAfter(true), []);
});

Deno.test("cgroup: memory RLIMIT_DATA misses (tmpfs, shared anonymous mmap) ends with the memory limit", async () => {
  const w = await world();
  try {
    const shm = await w.run("head -c 2G /dev/zero > /dev/shm/x; echo rc=$?");
    assert.equal(shm.isError, true);
    assert.match(shm.content, /^command hit the memory limit \(128 MB for its whole process tree/);
    // MAP_SHARED|MAP_ANONYMOUS, filled 1 MB at a time (no private buffer beyond 1 MB).
    const mmap =
      'python3 -c \'import mmap\nm = mmap.mmap(-1, 1 << 30)\nc = b"x" * (1 << 20)\nfor i in range(1024): m[i << 20:(i + 1) << 20] = c\nprint("filled")\'';
    const r = await w.run(mmap);
    assert.equal(r.isError, true);
    assert.match(r.content, /^command hit the memory limit \(128 MB for its whole process tree/);
    assert.doesNotMatch(r.content, /filled/);
    // A memfd (an anonymous file in memory), 1 GB written 1 MB at a time.
    const memfd = await w.run(
      'python3 -c \'import os\nfd = os.memfd_create("hog")\nc = b"x" * (1 << 20)\nfor i in range(1024): os.write(fd, c)\nprint("filled")\'',
    );
    assert.match(
      memfd.content,
      /^command hit the memory limit \(128 MB for its whole process tree/,
    );
    assert.doesNotMatch(memfd.content, /filled/);
    // Two processes of 100 MB each: RLIMIT_DATA is per process, the cgroup is the tree's sum.
    const two = await w.run(
      `for i in 1 2; do python3 -c 'import mmap,time\nm = mmap.mmap(-1, 100 << 20)\nfor i in range(100): m[i << 20:(i + 1) << 20] = b"x" * (1 << 20)\ntime.sleep(2)' & done; wait %1; a=$?; wait %2; exit $(($? | a))`,
    );
    assert.match(two.content, /^command hit the memory limit/);
    const next = await w.run("echo alive");
    assert.equal(next.isError, false, next.content);
  } finally {
    await w.cleanup();
  }
  assert.deepEqual(await leftAfter(true), []);
  // Without a cgroup (COYOTE_CGROUP=off: the fallback) the shared mapping is not bounded by
  // RLIMIT_DATA — the gap the cgroup closes (a bounded 300 MB here).
  cgroupsOffHere(true);
  const f = await world();
  try {
    const r = await f.run(
      'python3 -c \'import mmap\nm = mmap.mmap(-1, 300 << 20)\nc = b"x" * (1 << 20)\nfor i in range(300): m[i << 20:(i + 1) << 20] = c\nprint("filled")\'',
    );
    assert.match(r.content, /filled/);
    assert.doesNotMatch(r.content, /coyote-/);
  } finally {
    cgroupsOffHere(false);
    await f.cleanup();
  }
});

Deno.test("cgroup: a caller that only runs the plan and its after() (hooks, the REPL's !cmd) leaves none behind", async () => {
  const w = await world();
  try {
    const plan = w.sb.prepare("cat /proc/self/cgroup; exit 3", w.ws, "bash");
    assert.ok(!("refused" in plan));
    const o = await new Deno.Command(plan.program, {
      args: plan.args,
      env: plan.env,
      clearEnv: true,
      cwd: w.ws,
      stdin: "null",
      stdout: "piped",
    }).output();
    assert.equal(o.code, 3);
    assert.match(new TextDecoder().decode(o.stdout), new RegExp(`pids:.*/coyote-${Deno.pid}-`));
    plan.after?.();
    assert.deepEqual(await leftAfter(true), []);
  } finally {
    await w.cleanup();
  }
});

Deno.test("cgroup: closing the session with a command running removes its cgroup", async () => {
  const w = await world();
  const live = w.run("sleep 30");
  for (let i = 0; i < 250 && coyoteCgroups(true).length < 2; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(coyoteCgroups(true).length, 2, "memory and pids cgroups while it runs");
  await w.cleanup();
  await live;
  for (let i = 0; i < 100 && coyoteCgroups(true).length; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(await leftAfter(true), []);
});

Deno.test("cgroup e2e: headless, guard forced open: bomb and shared-memory hog are tool errors, the session goes on, nothing left behind", async () => {
  const w = await world();
  const env = await makeCoyoteEnv();
  await Deno.writeTextFile(
    join(env.configDir, "config.yaml"),
    "sandbox:\n  limits:\n    processes: 64\n    memory_mb: 128\n    tmpfs_mb: 1024\n",
  );
  const before = new Set(coyoteCgroups());
  const server = await startModelServer({
    script: [
      {
        tool_calls: [{
          id: "bomb",
          name: "execute_command",
          arguments: { command: "for i in $(seq 2000); do sleep 20 & done; wait" },
        }],
      },
      {
        tool_calls: [{
          id: "hog",
          name: "execute_command",
          arguments: { command: "head -c 2G /dev/zero > /dev/shm/x" },
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
        extra: { COYOTE_TEST_MODE: "1", COYOTE_TEST_GUARD: "allow" },
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
    assert.match(text.get("bomb")!, /command hit the process limit \(64\)/);
    assert.match(
      text.get("hog")!,
      /command hit the memory limit \(128 MB for its whole process tree/,
    );
    assert.match(text.get("next")!, /alive/);
    assert.match(r.stdout, /done/);
    // The run's own cgroups (named by its pid; other tests' coyote runs come and go meanwhile).
    const child = (d: string) => !before.has(d) && d.includes(`/coyote-${r.pid}-`);
    assert.deepEqual(await leftAfter(false, child), []);
  } finally {
    await server.close();
    await env.cleanup();
    await w.cleanup();
  }
});

Deno.test("cgroup probe: v2 own (namespace root), v2 delegated parent, v2 without controllers, hybrid", () => {
  const root = Deno.makeTempDirSync({ prefix: "coyote-cgfs-" });
  const file = (p: string, text: string) => {
    Deno.mkdirSync(join(root, p, ".."), { recursive: true });
    Deno.writeTextFileSync(join(root, p), text);
  };
  // The probe reads a /proc/PID/cgroup file: here one with the given text.
  const proc = join(root, "..", `${root.split("/").pop()}.cgroup`);
  const findCgroupHost = (r: string, text: string) => {
    Deno.writeTextFileSync(proc, text);
    return probe(r, proc);
  };
  try {
    file("cgroup.controllers", "cpu io memory pids\n");
    file("cgroup.subtree_control", "memory pids\n");
    // Left by a Coyote that died (removed by the probe) and by this one (kept).
    Deno.mkdirSync(join(root, "coyote-999999999-3"));
    Deno.mkdirSync(join(root, `coyote-${Deno.pid}-1`));
    // A container's cgroup namespace: the process sits in its root, children get both controllers.
    assert.deepEqual(findCgroupHost(root, "0::/\n"), {
      version: 2,
      memory: root,
      pids: root,
      describe: `cgroup v2, own (${root})`,
    });
    assert.ok(!existsSync(join(root, "coyote-999999999-3")), "a dead Coyote's cgroup is removed");
    assert.ok(existsSync(join(root, `coyote-${Deno.pid}-1`)));
    // A systemd user session: app.slice (delegated) enables both; the terminal's scope does not.
    const app = "user.slice/user-1000.slice/user@1000.service/app.slice";
    file(`${app}/cgroup.subtree_control`, "cpu memory pids\n");
    file(`${app}/cgroup.procs`, "");
    file(`${app}/term.scope/cgroup.subtree_control`, "");
    const h = findCgroupHost(root, `0::/${app}/term.scope\n`);
    assert.equal(h?.version, 2);
    assert.equal(h?.memory, `${root}/${app}`);
    assert.match(h!.describe, /^cgroup v2, delegated/);
    // Controllers not enabled for children (a session scope under a root-owned slice): none.
    file(`${app}/cgroup.subtree_control`, "cpu\n");
    assert.equal(findCgroupHost(root, `0::/${app}/term.scope\n`), null);
    // Hybrid: v1 hierarchies without memory/pids for us, v2 mounted elsewhere: none.
    assert.equal(findCgroupHost(join(root, "nowhere"), "1:cpu:/\n0::/\n"), null);
  } finally {
    Deno.removeSync(root, { recursive: true });
    Deno.removeSync(proc);
  }
  assert.equal(counter("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n", "oom_kill"), 1);
  assert.equal(counter("max 0\n", "max"), 0);
  assert.equal(counter(undefined, "max"), 0);
});
