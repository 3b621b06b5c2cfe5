/**
 * Permission modes in the REPL (issue 18, core/frontends/repl/modes.ts) in a real terminal
 * (tmux): `--mode plan` shows in the prompt and refuses a write without asking; Shift+Tab steps
 * to the next mode and offers the plan; Enter on the empty prompt sends the plan, which now
 * writes; `/mode NAME` switches and Shift+Tab cycles on from there.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) {
  throw new Error("tests/permission_modes_repl_test.ts needs tmux (installed by .ci/run)");
}

Deno.test("repl modes: plan in the prompt, Shift+Tab cycles and hands the plan over, /mode switches", async () => {
  const write = (id: string) => ({
    tool_calls: [{ id, name: "fs_write", arguments: { path: "hello.txt", content: "hi\n" } }],
  });
  const server = await startModelServer({
    script: [
      write("w1"),
      { text: "PLAN-STEP-ONE: write hello.txt" },
      write("w2"),
      { text: "WROTE-IT" },
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-repl-modes-" });
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--mode", "plan"]);
    await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
    await t.waitFor(/plan › $/m);
    await t.type("plan the greeting");
    await t.keys("Enter");
    // The write is refused by plan mode without a permission prompt; the plan is the answer.
    await t.waitFor(/PLAN-STEP-ONE[\s\S]*plan › $/m);
    await assert.rejects(Deno.stat(join(cwd, "hello.txt")));
    assert.match(JSON.stringify(requestMessages(server.requests[1])), /plan mode is read-only/);
    // Shift+Tab: plan → auto, and the offer.
    await t.keys("BTab");
    const offer = await t.waitFor(/mode: auto[\s\S]*carry out the plan[\s\S]*› $/m);
    assert.doesNotMatch(offer.split("mode: auto").at(-1)!, /plan › $/m);
    // Enter on the empty prompt sends the plan; in auto the write goes through.
    await t.keys("Enter");
    await t.waitFor(/WROTE-IT[\s\S]*› $/m);
    assert.equal(await Deno.readTextFile(join(cwd, "hello.txt")), "hi\n");
    const sent = JSON.stringify(requestMessages(server.requests[2]));
    assert.match(sent, /Carry out the plan/);
    assert.match(sent, /PLAN-STEP-ONE/);
    // /mode NAME switches; Shift+Tab goes on from there (default → accept-edits).
    await t.type("/mode default");
    await t.keys("Enter");
    await t.waitFor(/mode: default — asks before file writes[\s\S]*default › $/m);
    await t.keys("BTab");
    await t.waitFor(/mode: accept-edits[\s\S]*accept-edits › $/m);
    await t.type("/mode");
    await t.keys("Enter");
    await t.waitFor(/\* accept-edits/);
    assert.equal(server.requests.length, 4, "switching modes asks the model nothing");
    // Through plan and out again without a plan written there: no hand-over is offered (the last
    // answer was written in auto mode).
    await t.keys("BTab");
    await t.waitFor(/mode: plan[\s\S]*plan › $/m);
    await t.keys("BTab");
    const out = await t.waitFor(/mode: auto[\s\S]*› $/m);
    assert.doesNotMatch(out.split("mode: plan").at(-1)!, /carry out the plan/);
    await t.keys("Enter");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(server.requests.length, 4, "an empty entry sends nothing");
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});
