/**
 * `/rewind` in the REPL (a real terminal under tmux, the screen read with capture-pane) and over
 * ACP (the official client through tests/support/acp_harness.ts): a scripted turn edits files with
 * fs tools and runs `rm -rf src` in the sandboxed `execute_command` (real bwrap); the REPL's bare
 * `/rewind` picks the turn and "files and conversation", ACP's lists the turn with its checkpoint
 * and `/rewind 1` rewinds it; what it restores is shown first, then the workspace is the
 * repository as it was, byte for byte, and the conversation no longer holds the turn.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";
import { finishAcp, startAcp } from "./support/acp_harness.ts";
import {
  assertChanged,
  assertRestored,
  changingTurn,
  makeRepo,
  RESTORE_LINES,
  snapshot,
  userGitState,
} from "./support/rewind_scene.ts";

/** Each test runs with the OS sandbox required (real bwrap) and with `--no-sandbox`. */
const SANDBOX = [
  { name: "sandbox required", config: "sandbox: required\n", flags: [] as string[] },
  { name: "--no-sandbox", config: "", flags: ["--no-sandbox", "--allow", "Execute(*)"] },
];

for (const sb of SANDBOX) {
  Deno.test(`repl (${sb.name}): a bare /rewind picks the turn and what to restore, shows the changes, rewinds files and conversation`, async () => {
    const ws = await makeRepo();
    const before = await snapshot(ws);
    const git = await userGitState(ws);
    const server = await startModelServer({
      script: [...changingTurn(), { text: "AFTER-REWIND" }],
    });
    const env = await makeCoyoteEnv();
    const t = new Tmux();
    try {
      await Deno.writeTextFile(join(env.configDir, "config.yaml"), sb.config);
      const { cmd, args } = coyoteCommand(sb.flags);
      await t.start([cmd, ...args], {
        cwd: ws,
        env: childEnv(env, { baseURL: server.baseURL }),
        height: 80,
      });
      await t.waitFor(/› $/m);
      await t.type("change things");
      await t.keys("Enter");
      await t.waitFor(/done[\s\S]*› $/m);
      await assertChanged(ws);
      // A bare /rewind picks the turn, then what to restore.
      await t.type("/rewind");
      await t.keys("Enter");
      await t.waitFor(
        /Rewind to before which turn\?[\s\S]*turn 1: change things\s+\[checkpoint [0-9a-f]{12}\]/,
      );
      await t.type("1");
      await t.waitFor(/Restore what\?[\s\S]*files and conversation/);
      await t.type("1");
      const screen = await t.waitFor(/conversation rewound: it now ends before turn 1[\s\S]*› $/m);
      const shown = screen.slice(screen.lastIndexOf("Restore what?"));
      for (const re of RESTORE_LINES) assert.match(shown, re);
      assert.ok(shown.indexOf("restoring") < shown.indexOf("files restored"));
      await assertRestored(ws, before);
      assert.equal(await userGitState(ws), git);
      // The next request carries none of the rewound turn.
      await t.type("next");
      await t.keys("Enter");
      await t.waitFor(/AFTER-REWIND[\s\S]*› $/m);
      const sent = JSON.stringify(requestMessages(server.requests.at(-1)!));
      assert.doesNotMatch(sent, /change things/);
      assert.match(sent, /next/);
    } finally {
      await t.kill();
      await server.close();
      await env.cleanup();
      await Deno.remove(ws, { recursive: true }).catch(() => {});
    }
  });

  Deno.test(`acp (${sb.name}): /rewind over session/prompt restores files and conversation; the turn's checkpoint is in _meta`, async () => {
    const ws = await makeRepo();
    const before = await snapshot(ws);
    const server = await startModelServer({
      script: [...changingTurn(), { text: "AFTER-REWIND" }],
    });
    const data = await Deno.makeTempDir({ prefix: "coyote-acp-rewind-" });
    await Deno.mkdir(`${data}/config`, { recursive: true });
    await Deno.writeTextFile(`${data}/config/config.yaml`, sb.config);
    const h = await startAcp({
      args: sb.flags,
      env: {
        COYOTE_DATA_DIR: `${data}/data`,
        COYOTE_CONFIG_DIR: `${data}/config`,
        OPENAI_BASE_URL: server.baseURL,
        OPENAI_API_KEY: "test-key",
        COYOTE_MODEL: "scripted",
      },
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: ws, mcpServers: [] });
      const first = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "change things" }],
      });
      assert.equal(first.stopReason, "end_turn");
      // deno-lint-ignore no-explicit-any
      const ids = (first._meta as any)?.coyote?.checkpoints as string[];
      assert.equal(ids?.length, 1, JSON.stringify(first._meta));
      await assertChanged(ws);
      // The checkpoint event itself is not an ACP update.
      assert.ok(
        !h.updatesFor(sessionId).some((u) => (u.sessionUpdate as string) === "checkpoint"),
      );
      const textSince = (from: number) =>
        h.updatesFor(sessionId).slice(from)
          .map((u) =>
            u.sessionUpdate === "agent_message_chunk" && u.content.type === "text"
              ? u.content.text
              : ""
          ).join("");
      const listed = h.updatesFor(sessionId).length;
      await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/rewind" }],
      });
      assert.match(
        textSince(listed),
        new RegExp(`1\\. change things\\s+\\[checkpoint ${ids[0].slice(0, 12)}\\]`),
      );
      assert.equal(server.requests.length, 3, "/rewind asks the model nothing");
      const seen = h.updatesFor(sessionId).length;
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/rewind 1" }],
      });
      assert.equal(r.stopReason, "end_turn");
      const text = h.updatesFor(sessionId).slice(seen)
        .map((u) =>
          u.sessionUpdate === "agent_message_chunk" && u.content.type === "text"
            ? u.content.text
            : ""
        )
        .join("");
      for (const re of RESTORE_LINES) assert.match(text, re);
      assert.match(text, new RegExp(`files restored to checkpoint ${ids[0].slice(0, 12)}`));
      assert.match(text, /conversation rewound: it now ends before turn 1/);
      await assertRestored(ws, before);
      const asked = server.requests.length;
      await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "next" }],
      });
      assert.equal(server.requests.length, asked + 1);
      assert.doesNotMatch(
        JSON.stringify(requestMessages(server.requests.at(-1)!)),
        /change things/,
      );
      await finishAcp(h);
    } finally {
      await server.close();
      await Deno.remove(ws, { recursive: true }).catch(() => {});
      await Deno.remove(data, { recursive: true }).catch(() => {});
    }
  });
}
