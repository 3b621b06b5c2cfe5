/**
 * The terminal trust question, answered in a real pty (tmux): the block asks "Trust this folder?"
 * once, and a "no" is acknowledged in one line naming what is ignored — not that line and then
 * the workspace's own near-identical "is not trusted: ignoring …" note (fresh-user trial, item 9).
 * A later run, not asked again, still gets the note once.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const count = (text: string, re: RegExp) => text.match(new RegExp(re, "g"))?.length ?? 0;

Deno.test("trust question: asked once per block; 'n' prints one line; the next run notes it once", async () => {
  const server = await startModelServer({ script: [{ text: "ANSWER-1" }, { text: "ANSWER-2" }] });
  const env = await makeCoyoteEnv();
  const repo = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-trust-q-" }));
  await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
  await Deno.mkdir(`${repo}/.coyote`);
  await Deno.writeTextFile(`${repo}/.coyote/config.yaml`, "mode: default\n");
  const run = async (prompt: string, answer?: string) => {
    const t = new Tmux();
    try {
      const { cmd, args } = coyoteCommand(["--no-sandbox", prompt]);
      await t.start([cmd, ...args], { cwd: repo, env: childEnv(env, { baseURL: server.baseURL }) });
      if (answer !== undefined) {
        await t.waitFor(/\[y\/N\] $/m);
        await t.type(answer);
        await t.keys("Enter");
      }
      return await t.waitFor(/\[exited \d+\]/);
    } finally {
      await t.kill();
    }
  };
  try {
    const first = await run("first", "n");
    assert.match(first, /ANSWER-1/);
    assert.equal(count(first, /Trust this folder\?/), 1, `asked once:\n${first}`);
    assert.match(first, /\.coyote\/config\.yaml/);
    assert.equal(count(first, /not trusted/), 1, `one line after "n":\n${first}`);
    assert.match(first, /^coyote: not trusted: ignoring \.coyote\/config\.yaml \(change with/m);

    // Remembered: not asked again, and the untrusted note comes once.
    const second = await run("second");
    assert.match(second, /ANSWER-2/);
    assert.doesNotMatch(second, /Trust this folder/);
    assert.equal(count(second, /is not trusted: ignoring \.coyote\/config\.yaml/), 1, second);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(repo, { recursive: true }).catch(() => {});
  }
});
