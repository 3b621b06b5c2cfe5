/**
 * More REPL paper cuts of issue 20, each read off a real pseudo-terminal's screen (tmux
 * capture-pane): "always" says once, and truly, whether the rule is saved for the project
 * (trusted workspace) or holds for this session only (untrusted); `@file` shows what it attached
 * and refuses a path outside the workspace or a binary file; `/compact` shows its progress and a
 * one-line result.
 */
import assert from "node:assert/strict";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";
import { SUMMARY_INSTRUCTIONS } from "../core/engine/compact.ts";

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

Deno.test("repl: @file shows what it attached under the entry; a file outside the workspace or a binary one is refused, saying why", async () => {
  const server = await startModelServer({ script: [{ text: "READ-THEM" }] });
  const outside = await Deno.makeTempDir({ prefix: "coyote-outside-" });
  await Deno.writeTextFile(`${outside}/secret.txt`, "OUTSIDE-SECRET\n");
  const r = await repl(server.baseURL, [], async (cwd) => {
    await Deno.writeTextFile(`${cwd}/notes.txt`, "alpha\nbeta\nNOTES-BODY\n");
    await Deno.writeFile(`${cwd}/blob.bin`, new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0]));
  });
  try {
    await r.t.type(`look at @notes.txt, @blob.bin and @${outside}/secret.txt`);
    await r.t.keys("Enter");
    const end = await r.t.waitFor(/READ-THEM[\s\S]*› $/m);
    const shown = end.slice(end.indexOf("look at @notes.txt"));
    assert.match(shown, /^ {2}⎿ attached @notes\.txt \(3 lines, 22 B\)$/m, shown);
    assert.match(shown, /⎿ @blob\.bin not attached: a binary file/, shown);
    assert.match(shown, /⎿ @\/.*\/secret\.txt not attached: outside the workspace/, shown);
    assert.ok(
      shown.indexOf("attached @notes.txt") < shown.indexOf("READ-THEM"),
      "the attachment line comes right after the entry, before the answer",
    );
    const sent = JSON.stringify(requestMessages(server.requests[0]));
    assert.match(sent, /NOTES-BODY/, "the attached file reached the model");
    assert.doesNotMatch(sent, /OUTSIDE-SECRET/, "the refused file did not");
  } finally {
    await r.close();
    await server.close();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("repl: /compact shows a spinner 'compacting N earlier turn(s)…' with the elapsed time, then one result line", async () => {
  let release!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  let answers = 0;
  const server = await startModelServer({
    script: async (req) => {
      const sys = requestMessages(req)[0]?.content;
      if (typeof sys === "string" && sys.startsWith(SUMMARY_INSTRUCTIONS)) {
        await hold; // the summary takes a while (~14 s on a real model)
        return { text: "SUMMARY" };
      }
      return { text: `ANSWER-${++answers}` };
    },
  });
  const r = await repl(server.baseURL);
  try {
    for (const q of ["first question", "second question", "third question"]) {
      await r.t.type(q);
      await r.t.keys("Enter");
      await r.t.waitFor(new RegExp(`ANSWER-${answers + 1}[\\s\\S]*› $`, "m"));
    }
    await r.t.type("/compact");
    await r.t.keys("Enter");
    // The spinner runs with the time since /compact began (it ticks: a later second shows).
    await r.t.waitFor(/^. [1-9]\d*s compacting 2 earlier turn\(s\)…$/m);
    release();
    const end = await r.t.waitFor(
      /compacted 2 earlier turn\(s\) in [\d.]+m?s: ~\S+ → ~\S+ tokens[\s\S]*› $/m,
    );
    const after = end.slice(end.lastIndexOf("/compact"));
    assert.doesNotMatch(after, /compacting/, `the spinner line is gone:\n${after}`);
    assert.equal(after.trimEnd().split("\n").length, 3, `one result line:\n${after}`);
  } finally {
    release();
    await r.close();
    await server.close();
  }
});

Deno.test("REPL: an unknown -a NAME or a variable no agent declares is a usage error before the banner (exit 2)", async () => {
  for (const flags of [["-a", "nope"], ["--agent-variable", "FOO", "bar"]]) {
    const env = await makeCoyoteEnv();
    const cwd = await Deno.makeTempDir({ prefix: "coyote-repl-usage-" });
    const t = new Tmux();
    try {
      const { cmd, args } = coyoteCommand(["--no-sandbox", ...flags]);
      await t.start([cmd, ...args], {
        cwd,
        env: childEnv(env, { baseURL: "http://127.0.0.1:9/v1" }),
      });
      const screen = await t.waitFor(/\[exited \d+\]/);
      assert.match(screen, /\[exited 2\]/, screen);
      assert.match(screen, /coyote: /, screen);
      assert.doesNotMatch(screen, /\/help for commands/, `no banner before the error:\n${screen}`);
    } finally {
      await t.kill();
      await env.cleanup();
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    }
  }
});
