/**
 * The next command's launching shell started ahead (core/policy/sandbox/launch_ahead.ts): a
 * cgroup v1 join waits for an RCU grace period (~10–20 ms here), so once a command has ended the
 * sandbox starts the next one's `/bin/sh`, which makes and joins the next cgroup and waits for its
 * command. Checked on this machine's writable cgroup v1 with real bwrap:
 *
 * - the next command runs in the cgroup that waiting shell had joined, a fresh one per command,
 *   with the same environment as a cold start and stdin `/dev/null`;
 * - a waiting shell that died, or one started for other limits, is not used: the command starts
 *   cold and runs; closing the sandbox ends the waiting shell and removes its cgroup;
 * - the one-use script file is gone once the command started;
 * - headless, as a user runs it: three commands of one session each get their own cgroup and the
 *   process limit still ends a bomb in a command started this way.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { existsSync } from "node:fs";
import { cgroupHost, OWN_CGROUP_PREFIX } from "../core/policy/sandbox/cgroup.ts";
import { LaunchAhead } from "../core/policy/sandbox/launch_ahead.ts";
import { planFile } from "../core/policy/sandbox/plan_file.ts";
import type { SandboxLimits } from "../core/policy/sandbox/limits.ts";
import { limitsWorld } from "./support/sandbox_world.ts";
import { headlessTurns } from "./support/headless_attack.ts";

const LIMITS: SandboxLimits = { processes: 128, memoryMb: 512, tmpfsMb: 256 };

/** Whether process `pid` is alive (not a zombie). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(Deno.readTextFileSync(`/proc/${pid}/status`));
  } catch {
    return false;
  }
}

/** The pids-hierarchy cgroup of process `pid` (`self` inside a command), e.g. `/coyote-…-3`. */
function pidsCgroupOf(text: string): string | undefined {
  return text.match(/^\d+:pids:(\S+)$/m)?.[1];
}

async function until(f: () => boolean, ms = 3000): Promise<boolean> {
  for (let t = 0; t < ms && !f(); t += 20) await new Promise((r) => setTimeout(r, 20));
  return f();
}

Deno.test("launch ahead: the next command runs in the cgroup its waiting shell joined, with a cold start's environment and stdin /dev/null", async () => {
  assert.ok(cgroupHost(), "this machine has a writable cgroup (root in a container, v1)");
  const w = await limitsWorld("coyote-ahead-", LIMITS);
  try {
    const envCmd =
      "env | grep -v '^COYOTE_COMMAND_ID=' | sort; echo fd0=$(readlink /proc/self/fd/0)";
    const cold = await w.run(envCmd);
    assert.equal(cold.isError, false, cold.content);
    // Once a command has ended, one shell waits for the next.
    const pid = w.sb.aheadPid;
    assert.ok(pid && alive(pid), "a shell waits for the next command");
    assert.match(Deno.readTextFileSync(`/proc/${pid}/cmdline`), /read -r __f/);
    const joined = await until(() =>
      pidsCgroupOf(Deno.readTextFileSync(`/proc/${pid}/cgroup`))?.includes(OWN_CGROUP_PREFIX) ??
        false
    );
    assert.ok(joined, "the waiting shell joined its own cgroup before the command came");
    const cg = pidsCgroupOf(Deno.readTextFileSync(`/proc/${pid}/cgroup`))!;
    const warm = await w.run(`${envCmd}; cat /proc/self/cgroup; cat; echo stdin-done`);
    assert.equal(warm.isError, false, warm.content);
    assert.equal(pidsCgroupOf(String(warm.content)), cg, "the command runs in that cgroup");
    // Same environment as the cold start, and stdin is /dev/null (cat ends at once).
    const envOf = (s: string) => s.slice(s.indexOf("---"), s.indexOf("fd0="));
    assert.equal(envOf(String(warm.content)), envOf(String(cold.content)));
    assert.match(String(warm.content), /fd0=\/dev\/null/);
    assert.match(String(cold.content), /fd0=\/dev\/null/);
    assert.match(String(warm.content), /stdin-done/);
    // The next command gets a fresh cgroup again.
    const third = await w.run("cat /proc/self/cgroup");
    const cg3 = pidsCgroupOf(String(third.content));
    assert.ok(cg3 && cg3 !== cg, `a fresh cgroup per command: ${cg} then ${cg3}`);
    const last = w.sb.aheadPid!;
    await until(() => pidsCgroupOf(Deno.readTextFileSync(`/proc/${last}/cgroup`)) !== "/");
    const lastDir = `/sys/fs/cgroup/pids${
      pidsCgroupOf(Deno.readTextFileSync(`/proc/${last}/cgroup`))
    }`;
    assert.match(lastDir, /\/coyote-/);
    assert.ok(existsSync(lastDir));
    w.sb.close();
    assert.equal(w.sb.aheadPid, undefined);
    // Closing ends the waiting shell; its cgroup goes with it.
    assert.ok(await until(() => !alive(last)), "no shell waits after close");
    assert.ok(await until(() => !existsSync(lastDir)), `${lastDir} removed`);
  } finally {
    await w.cleanup();
  }
});

Deno.test("launch ahead: a waiting shell that died is not used, and one made for other limits is discarded; the command starts cold and runs", async () => {
  const w = await limitsWorld("coyote-ahead2-", LIMITS);
  try {
    await w.run("true");
    const pid = w.sb.aheadPid!;
    assert.ok(pid && alive(pid));
    Deno.kill(pid, "SIGKILL");
    assert.ok(await until(() => !alive(pid)));
    await new Promise((r) => setTimeout(r, 50));
    const r = await w.run("echo after-kill; cat /proc/self/cgroup");
    assert.equal(r.isError, false, r.content);
    assert.match(String(r.content), /after-kill/);
    assert.ok(pidsCgroupOf(String(r.content))?.includes(OWN_CGROUP_PREFIX), r.content);
    // Other limits: the waiting shell (made for the old ones) is killed, the command starts cold.
    const old = w.sb.aheadPid!;
    assert.ok(old && old !== pid && alive(old), "a new shell waits after the cold start");
    w.sb.settings.limits = { ...LIMITS, processes: 64 };
    const bomb = await w.run("for i in $(seq 200); do sleep 5 & done; wait");
    assert.match(String(bomb.content), /^command hit the process limit \(64\)/, bomb.content);
    assert.ok(await until(() => !alive(old)), "the old shell was ended");
  } finally {
    await w.cleanup();
  }
});

Deno.test("launch ahead: the one-use script is removed before bwrap starts; close ends the waiting shell", async () => {
  const dir = dirname(planFile(["--launch-ahead-test"]));
  const runs = () =>
    new Set([...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => /^run-/.test(n)));
  const before = runs();
  const ahead = new LaunchAhead();
  const cg = { host: cgroupHost()!, dirs: [], memoryMb: 0, processes: 0 };
  ahead.start("k", cg, "", { PATH: "/usr/bin:/bin" }, "COYOTE_COMMAND_ID");
  const w = ahead.take("k");
  assert.ok(w, "a shell waits for key k");
  assert.equal(ahead.take("k"), undefined, "taken once");
  const { child } = w.go(`ls ${dir} | grep '^run-' | wc -l > /dev/null; exec echo went "$PATH"`);
  const out = await child.output();
  assert.equal(new TextDecoder().decode(out.stdout), "went /usr/bin:/bin\n");
  assert.ok(
    await until(() => [...runs()].every((n) => before.has(n))),
    "no new script file is left",
  );
  // Closed: one that waited is ended, and nothing more starts.
  ahead.start("k2", cg, "", {}, "COYOTE_COMMAND_ID");
  const k2 = ahead.pid!;
  assert.ok(alive(k2));
  ahead.close();
  assert.equal(ahead.take("k2"), undefined);
  assert.ok(await until(() => !alive(k2)), "the waiting shell was ended");
  ahead.start("k3", cg, "", {}, "COYOTE_COMMAND_ID");
  assert.equal(ahead.pid, undefined, "nothing starts after close");
});

Deno.test("launch ahead, headless: each command of a session gets its own cgroup, and a bomb in one started ahead ends with the limit", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "ws-ahead-" }));
  try {
    // The default limits (processes 512).
    const { result } = await headlessTurns(ws, [
      [{ id: "c1", command: "cat /proc/self/cgroup" }],
      [{ id: "c2", command: "cat /proc/self/cgroup; readlink /proc/self/fd/0" }],
      [{ id: "c3", command: "for i in $(seq 2000); do sleep 20 & done; wait" }],
      [{ id: "c4", command: "cat /proc/self/cgroup; echo alive" }],
    ]);
    const cgs = ["c1", "c2", "c4"].map((id) => result(id).match(/\d+:pids:([^\\\s]+)/)?.[1]);
    assert.ok(cgs.every((c) => c?.includes("/coyote-")), cgs.join(" "));
    assert.equal(new Set(cgs).size, 3, `one cgroup per command: ${cgs.join(" ")}`);
    assert.match(result("c2"), /\/dev\/null/);
    assert.match(result("c3"), /command hit the process limit \(512\)/);
    assert.match(result("c4"), /alive/);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
