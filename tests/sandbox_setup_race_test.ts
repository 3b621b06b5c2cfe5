/**
 * The sandbox's set-up racing the host (CI found it: a test removed a folder of /etc it had made
 * while another test's command started): the cached /etc scan hides a file whose folder is removed
 * between the plan and bwrap's start, so bwrap cannot make its mount point under the read-only
 * /etc and exits before the command runs. The bash tool then runs the command once more on a fresh
 * plan; a command that prints the same words itself is not run twice.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CommandSandbox, DEFAULT_SANDBOX } from "../core/policy/sandbox/mod.ts";
import { type CommandLauncher, makeExecuteCommandTool } from "../plugins/exec/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";
import { commandWorld } from "./support/sandbox_world.ts";

const id = () => crypto.randomUUID().slice(0, 8);

/** A launcher over `sb` that calls `between` after its first plan is made, counting plans. */
function racing(sb: CommandSandbox, between: () => void) {
  let plans = 0;
  const launcher: CommandLauncher = {
    prepare(command, cwd, shell) {
      const plan = sb.prepare(command, cwd, shell);
      if (plans++ === 0) between();
      return plan;
    },
    started: (t) => sb.started(t),
    finished: (t) => sb.finished(t),
  };
  return { launcher, plans: () => plans };
}

Deno.test("sandbox set-up race: a hidden /etc file whose folder goes between plan and start — the command runs once, on a fresh plan", async () => {
  assert.equal(Deno.uid(), 0, "making a folder in /etc needs root (the test machine runs as root)");
  const w = await commandWorld("coyote-race-");
  const dir = `/etc/coyote-race-${id()}`;
  await Deno.mkdir(dir, { mode: 0o755 });
  await Deno.chmod(dir, 0o755);
  await Deno.writeTextFile(join(dir, "key"), "HOSTKEY");
  await Deno.chmod(join(dir, "key"), 0o600);
  const sb = await CommandSandbox.create(w.policy, DEFAULT_SANDBOX);
  try {
    const r = racing(sb, () => Deno.removeSync(dir, { recursive: true }));
    const out = String(
      (await runTool(
        makeExecuteCommandTool(r.launcher),
        { command: "echo ran >> runs.txt; echo done" },
        toolContext({ cwd: w.ws }),
      )).content,
    );
    assert.match(out, /^exit code 0\n/, out);
    assert.match(out, /done/);
    assert.equal(r.plans(), 2, "the raced start was planned again");
    assert.equal(await Deno.readTextFile(join(w.ws, "runs.txt")), "ran\n", "the command ran once");
  } finally {
    sb.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await w.cleanup();
  }
});

Deno.test("sandbox set-up race: a command printing bwrap's words itself (a path not hidden, or one that exists) is not run again", async () => {
  const w = await commandWorld("coyote-race-");
  const sb = await CommandSandbox.create(w.policy, DEFAULT_SANDBOX);
  try {
    for (
      const p of [`/etc/coyote-race-${id()}/key`, `${w.data}`]
    ) {
      const r = racing(sb, () => {});
      const out = String(
        (await runTool(
          makeExecuteCommandTool(r.launcher),
          {
            command:
              `echo x >> runs.txt; echo "bwrap: Can't mkdir parents for ${p}: Read-only file system" >&2; exit 1`,
          },
          toolContext({ cwd: w.ws }),
        )).content,
      );
      assert.match(out, /^exit code 1\n/, out);
      assert.equal(r.plans(), 1, `not planned again for ${p}`);
    }
    assert.equal(await Deno.readTextFile(join(w.ws, "runs.txt")), "x\nx\n");
  } finally {
    sb.close();
    await w.cleanup();
  }
});
