/**
 * More REPL paper cuts of issue 20, each read off a real pseudo-terminal's screen (tmux
 * capture-pane): "always" says once, and truly, whether the rule is saved for the project
 * (trusted workspace) or holds for this session only (untrusted); `@file` shows what it attached
 * and refuses a path outside the workspace or a binary file; `/compact` shows its progress and a
 * one-line result.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) throw new Error("tests/repl_papercuts_test.ts needs tmux (installed by .ci/run)");

/** A REPL in tmux in a fresh workspace; `setup` fills the workspace before the start. */
async function repl(
  baseURL: string,
  args: string[] = [],
  setup: (cwd: string) => Promise<void> = async () => {},
) {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-repl-cuts-" }));
  await setup(cwd);
  const t = new Tmux();
  const { cmd, args: full } = coyoteCommand(["--no-sandbox", ...args]);
  await t.start([cmd, ...full], { cwd, env: childEnv(env, { baseURL }) });
  await t.waitFor(/› $/m);
  return {
    t,
    cwd,
    async close() {
      await t.kill();
      await env.cleanup();
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    },
  };
}

const count = (text: string, re: RegExp) => text.match(new RegExp(re, "g"))?.length ?? 0;

Deno.test("repl: 'always' in an untrusted workspace says 'this session only' once and saves nothing; trusted, it is saved for the project", async () => {
  for (const trusted of [false, true]) {
    const server = await startModelServer({
      script: [
        {
          tool_calls: [{ id: "c1", name: "execute_command", arguments: { command: "touch made" } }],
        },
        { text: "DONE-ALWAYS" },
      ],
    });
    const r = await repl(server.baseURL, trusted ? ["--trust-workspace"] : []);
    try {
      await r.t.type("go");
      await r.t.keys("Enter");
      const asked = await r.t.waitFor(/coyote wants to run:[\s\S]*deny always/);
      assert.match(asked, trusted ? /a always \(this project\)/ : /a always \(this session\)/);
      await r.t.keys("a");
      const end = await r.t.waitFor(/DONE-ALWAYS[\s\S]*› $/m);
      const local = await Deno.stat(`${r.cwd}/.coyote/config.local.yaml`).then(
        () => true,
        () => false,
      );
      if (trusted) {
        assert.match(end, /allowed always \(saved for this project\)/);
        assert.match(end, /saved to .*config\.local\.yaml/);
        assert.ok(local, "the rule is in .coyote/config.local.yaml");
      } else {
        assert.doesNotMatch(end, /saved for this project|saved to/, end);
        assert.equal(count(end, /session only/), 1, `said once:\n${end}`);
        assert.match(end, /allowed always \(this session only/);
        assert.ok(!local, "nothing written in an untrusted workspace");
      }
    } finally {
      await r.close();
      await server.close();
    }
  }
});
