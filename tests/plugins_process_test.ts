/**
 * Each plugin runs in a process of its own (core/extensions/plugin_host/process.ts, issue
 * 11 §4): a busy loop is killed with its process (so its core is freed), the
 * process runs with exactly the plugin's grant as `deno run` flags and its heap
 * cap as a V8 flag, its environment holds no session secret, and the flags
 * are derived from the grant with no widening (a comma in a path is refused).
 * The /proc checks are Linux-only (CI runs Linux).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { compilePluginSource } from "../core/extensions/plugin_host/source.ts";
import { PluginWorker } from "../core/extensions/plugin_host/worker.ts";
import { NO_PERMISSIONS } from "../core/extensions/plugin_host/grant.ts";
import { grantFlags, processEnvFor } from "../core/extensions/plugin_host/process.ts";
import { assertToolError } from "./support/fixtures.ts";

const linux = Deno.build.os === "linux";
const meta = { cwd: Deno.cwd(), toolCallId: "c" };

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

Deno.test("process: a busy loop that never yields is killed with its process; the next call gets a fresh one", async () => {
  const code = await compilePluginSource(
    `export default { name: "spin", version: "1", tools: [
       { name: "spin", description: "d", input: { type: "object" }, run() { while (true) {} } },
       { name: "ok", description: "d", input: { type: "object" }, run: () => "ok" }] };`,
    "spin.js",
  );
  const w = new PluginWorker("spin", code, NO_PERMISSIONS, { timeoutMs: 300 }, () => {});
  try {
    await w.start();
    const pid = w.pid!;
    assert.ok(alive(pid));
    assertToolError(await w.call("spin", {}, meta), /timed out after 300 ms/);
    assert.equal(await waitGone(pid), true, "the spinning process is gone, its core freed");
    assert.equal((await w.call("ok", {}, meta)).content, "ok");
    assert.notEqual(w.pid, pid);
    assert.equal(w.starts, 2);
  } finally {
    await w.close();
  }
});

Deno.test({
  name:
    "process: the plugin's process runs with its grant as flags, its heap cap, and a scrubbed environment",
  ignore: !linux,
  async fn() {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-proc-" }));
    Deno.env.set("COYOTE_PROC_GRANTED", "granted-value");
    Deno.env.set("COYOTE_PROC_SECRET", "SESSION-SECRET");
    const grant = {
      ...NO_PERMISSIONS,
      read: [join(root, "data")],
      env: ["COYOTE_PROC_GRANTED"],
    };
    await Deno.mkdir(join(root, "data"));
    const code = await compilePluginSource(
      `export default { name: "p", version: "1", tools: [{ name: "env", description: "d",
         input: { type: "object" }, run: () => Deno.env.get("COYOTE_PROC_GRANTED") }] };`,
      "p.js",
    );
    const w = new PluginWorker("p", code, grant, { maxHeapMB: 128 }, () => {});
    try {
      assert.equal((await w.call("env", {}, meta)).content, "granted-value");
      const pid = w.pid!;
      const argv = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0");
      assert.ok(argv.includes(`--allow-read=${join(root, "data")}`), argv.join(" "));
      assert.ok(argv.includes("--allow-env=COYOTE_PROC_GRANTED"), argv.join(" "));
      assert.ok(argv.includes("--v8-flags=--max-old-space-size=128"), argv.join(" "));
      assert.ok(argv.includes("--deny-import"), argv.join(" "));
      for (const broad of ["-A", "--allow-all", "--allow-write", "--allow-net", "--allow-run"]) {
        assert.ok(!argv.some((a) => a === broad || a.startsWith(`${broad}=`)), broad);
      }
      const environ = await Deno.readTextFile(`/proc/${pid}/environ`);
      assert.ok(environ.includes("COYOTE_PROC_GRANTED=granted-value"));
      assert.ok(!environ.includes("SESSION-SECRET"), "the session's secrets stay out");
    } finally {
      await w.close();
      Deno.env.delete("COYOTE_PROC_GRANTED");
      Deno.env.delete("COYOTE_PROC_SECRET");
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("process: grant → deno flags, never wider than the grant", () => {
  assert.deepEqual(grantFlags(NO_PERMISSIONS), ["--deny-import"]);
  assert.deepEqual(
    grantFlags({ ...NO_PERMISSIONS, read: ["/a", "/b"], net: ["h:1"], run: ["git"], env: [] }),
    ["--allow-read=/a,/b", "--allow-net=h:1", "--allow-run=git", "--deny-import"],
  );
  // Deno splits flag values on commas: "/ws/a,/etc" would grant /etc.
  assert.throws(() => grantFlags({ ...NO_PERMISSIONS, read: ["/ws/a,/etc"] }), /comma/);
  Deno.env.set("COYOTE_PROC_X", "1");
  try {
    assert.equal(processEnvFor(NO_PERMISSIONS).COYOTE_PROC_X, undefined);
    assert.equal(processEnvFor({ ...NO_PERMISSIONS, env: ["COYOTE_PROC_X"] }).COYOTE_PROC_X, "1");
  } finally {
    Deno.env.delete("COYOTE_PROC_X");
  }
});

Deno.test("process: a grant with a comma in a path refuses the start instead of widening it", async () => {
  const code = await compilePluginSource(`export default { name: "c", version: "1" };`, "c.js");
  const w = new PluginWorker("c", code, { ...NO_PERMISSIONS, read: ["/nonexistent,/etc"] }, {
    maxLinkScanEntries: 10,
  });
  try {
    await assert.rejects(w.start(), /contains a comma/);
  } finally {
    await w.close();
  }
});

Deno.test('process: with isolate "worker" (what a compiled binary uses) the grant, crashes and kills still hold', async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-proc-w-" }));
  await Deno.mkdir(join(root, "in"));
  await Deno.writeTextFile(join(root, "in", "a.txt"), "inside");
  await Deno.writeTextFile(join(root, "b.txt"), "OUTSIDE");
  const code = await compilePluginSource(
    `const t = (name, run) => ({ name, description: "d", input: { type: "object" }, run });
     export default { name: "w", version: "1", tools: [
       t("read", (i) => Deno.readTextFile(i.path)),
       t("url", () => import.meta.url.slice(0, 30)),
       t("exit", () => Deno.exit(5)),
       t("close", () => { setTimeout(() => self.close(), 5); return new Promise(() => {}); }),
       t("spin", () => { while (true) {} }),
     ] };`,
    "w.js",
  );
  const w = new PluginWorker(
    "w",
    code,
    { ...NO_PERMISSIONS, read: [join(root, "in")] },
    { isolate: "worker", timeoutMs: 1500 },
    () => {},
  );
  try {
    assert.equal(
      (await w.call("read", { path: join(root, "in", "a.txt") }, meta)).content,
      "inside",
    );
    assertToolError(
      await w.call("read", { path: join(root, "b.txt") }, meta),
      /NotCapable|Requires read access/,
      "OUTSIDE",
    );
    assert.match((await w.call("url", {}, meta)).content, /^data:application\/javascript,/);
    assertToolError(await w.call("exit", {}, meta), /Deno\.exit\(5\)/);
    assertToolError(await w.call("close", {}, meta), /closed its worker/);
    await w.start();
    const pid = w.pid!;
    assertToolError(await w.call("spin", {}, meta), /timed out/);
    assert.equal(await waitGone(pid), true);
    assert.equal(
      (await w.call("read", { path: join(root, "in", "a.txt") }, meta)).content,
      "inside",
    );
  } finally {
    await w.close();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("process: when Coyote exits, a plugin process still spinning is killed with it", async () => {
  // The child (this file, below) starts a spinning plugin call, prints its pid and exits.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL(import.meta.url).pathname],
    env: { COYOTE_TEST_SPIN_CHILD: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  assert.match(text, /^\d+$/, new TextDecoder().decode(out.stderr).slice(-1000));
  assert.equal(await waitGone(Number(text)), true, "no orphan spins after Coyote exits");
});

async function spinChild(): Promise<void> {
  const code = await compilePluginSource(
    `export default { name: "s", version: "1", tools: [{ name: "spin", description: "d",
       input: { type: "object" }, run() { while (true) {} } }] };`,
    "s.js",
  );
  const w = new PluginWorker("s", code, NO_PERMISSIONS, { timeoutMs: 60_000 }, () => {});
  await w.start();
  w.call("spin", {}, meta);
  await new Promise((r) => setTimeout(r, 300)); // the call is spinning in the plugin process
  console.log(w.pid);
  Deno.exit(0);
}
if (import.meta.main && Deno.env.get("COYOTE_TEST_SPIN_CHILD") === "1") await spinChild();
