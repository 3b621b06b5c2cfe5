/**
 * Keys that arrive in one terminal read (`tmux send-keys Down Enter`: a fast typist, a held
 * arrow, SSH) are each handled, in order (core/frontends/render/keys.ts): the `coyote -r` picker
 * (one-shot stdin), the REPL's `/resume` picker (the line editor's keys), and the one-key
 * permission prompt in one-shot text mode and in the REPL (a key it ignores, then `y`, in one
 * read). A fresh user's `Down Enter` in a picker moved the cursor and lost the Enter.
 */
import assert from "node:assert/strict";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const hasTmux = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((o) => o.success, () => false);
if (!hasTmux) throw new Error("tests/key_bursts_test.ts needs tmux (installed by .ci/run)");

/** A workspace with two stored sessions, FIRST-WORD then SECOND-WORD (newest first in pickers). */
async function twoSessions() {
  const server = await startModelServer({ script: (req) => ({ text: `REPLY-${req.index}` }) });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-key-bursts-" }));
  const envVars = childEnv(env, { baseURL: server.baseURL });
  for (const word of ["FIRST-WORD", "SECOND-WORD"]) {
    const r = await runCoyote(["--headless", "--output-format", "json", `remember ${word}`], {
      cwd,
      env: envVars,
    });
    assert.equal(r.code, 0, r.stderr);
  }
  return {
    server,
    cwd,
    envVars,
    async close() {
      await server.close();
      await env.cleanup();
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    },
  };
}

/** The last request carries FIRST-WORD's conversation, not SECOND-WORD's. */
function assertResumedFirst(server: { requests: Parameters<typeof requestMessages>[0][] }) {
  const sent = JSON.stringify(requestMessages(server.requests.at(-1)!));
  assert.match(sent, /FIRST-WORD/);
  assert.doesNotMatch(sent, /SECOND-WORD/);
}

for (const where of ["coyote -r", "/resume"]) {
  Deno.test(`${where} picker: Down and Enter in one read pick the second session`, async () => {
    const w = await twoSessions();
    const t = new Tmux();
    try {
      const { cmd, args } = coyoteCommand([
        "--no-sandbox",
        ...(where === "coyote -r" ? ["-r"] : []),
      ]);
      await t.start([cmd, ...args], { cwd: w.cwd, env: w.envVars });
      if (where === "/resume") {
        await t.waitFor(/› $/m);
        await t.type("/resume");
        await t.keys("Enter");
      }
      await t.waitFor(/Resume which session\?[\s\S]*1\. .*SECOND-WORD[\s\S]*2\. .*FIRST-WORD/);
      await t.keys("Down", "Enter");
      await t.waitFor(where === "/resume" ? /resumed session[\s\S]*› $/m : /› $/m, 10_000);
      await t.type("which word?");
      await t.keys("Enter");
      await t.waitFor(/REPLY-2/);
      assertResumedFirst(w.server);
    } finally {
      await t.kill();
      await w.close();
    }
  });
}

for (const where of ["one-shot", "repl"]) {
  Deno.test(`${where} permission prompt: an ignored key and 'y' in one read allow the write`, async () => {
    const server = await startModelServer({
      script: [
        {
          tool_calls: [{
            id: "w1",
            name: "fs_write",
            arguments: { path: "notes.txt", content: "hello\n" },
          }],
        },
        { text: "WROTE-IT" },
      ],
    });
    const env = await makeCoyoteEnv();
    const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-key-bursts-" }));
    const t = new Tmux();
    try {
      const prompt = where === "one-shot" ? ["write notes"] : [];
      const { cmd, args } = coyoteCommand(["--no-sandbox", "--mode", "default", ...prompt]);
      await t.start([cmd, ...args], { cwd, env: childEnv(env, { baseURL: server.baseURL }) });
      if (where === "repl") {
        await t.waitFor(/› $/m);
        await t.type("write notes");
        await t.keys("Enter");
      }
      await t.waitFor(/wants to write[\s\S]*deny always/);
      await t.type("xy");
      await t.waitFor(/allowed once[\s\S]*WROTE-IT/, 10_000);
      assert.equal(await Deno.readTextFile(`${cwd}/notes.txt`), "hello\n");
    } finally {
      await t.kill();
      await server.close();
      await env.cleanup();
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    }
  });
}
