/**
 * Slash commands over ACP (issue 19) with the official client (`@agentclientprotocol/sdk`):
 * `available_commands_update` lists the built-ins of the shared list and the custom commands
 * (a project one of a trusted workspace with `input.hint` from `argument-hint`, a namespaced
 * user one); a custom command sent as `session/prompt` reaches the model expanded, with its
 * `model` and only its `allowed-tools`; `/status` answers without a model request.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { acpTestEnv, finishAcp, startAcp, waitFor } from "./support/acp_harness.ts";
import { BUILTIN_COMMANDS } from "../core/frontends/slash_commands.ts";

Deno.test("acp: available_commands_update lists built-ins and custom commands; a custom command over session/prompt expands", async () => {
  const e = await acpTestEnv((req: { index: number }) => ({ text: `REPLY-${req.index}` }));
  try {
    await Deno.mkdir(`${e.ws}/.git`);
    await Deno.mkdir(`${e.ws}/.claude/commands`, { recursive: true });
    await Deno.writeTextFile(
      `${e.ws}/.claude/commands/fix-issue.md`,
      "---\ndescription: Fix a GitHub issue\nargument-hint: [issue-number]\n" +
        "allowed-tools: Read, Grep\nmodel: tiny-model\n---\nFix issue #$1 carefully.\n",
    );
    await Deno.mkdir(`${e.env.COYOTE_CONFIG_DIR}/commands/git`, { recursive: true });
    await Deno.writeTextFile(
      `${e.env.COYOTE_CONFIG_DIR}/commands/git/commit.md`,
      "Write a commit message for $ARGUMENTS.\n",
    );
    const h = await startAcp({ env: e.env, args: ["--no-sandbox", "--trust-workspace"] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      await waitFor(
        () => h.updatesFor(sessionId).some((u) => u.sessionUpdate === "available_commands_update"),
        10_000,
        "available_commands_update",
      );
      const upd = h.updatesFor(sessionId).find((u) =>
        u.sessionUpdate === "available_commands_update"
      ) as Extract<acp.SessionUpdate, { sessionUpdate: "available_commands_update" }>;
      const names = upd.availableCommands.map((c) => c.name);
      for (const b of BUILTIN_COMMANDS) assert.ok(names.includes(b.name), `built-in /${b.name}`);
      for (const b of ["init", "review", "status", "permissions", "memory", "resume"]) {
        assert.ok(names.includes(b), `/${b} is offered`);
      }
      const fix = upd.availableCommands.find((c) => c.name === "fix-issue");
      assert.deepEqual(fix, {
        name: "fix-issue",
        description: "Fix a GitHub issue (project)",
        input: { hint: "[issue-number]" },
      });
      assert.ok(names.includes("git:commit"), names.join(" "));

      const before = e.requests();
      const res = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/fix-issue 42" }],
      });
      assert.equal(res.stopReason, "end_turn");
      assert.equal(e.requests(), before + 1);
      // deno-lint-ignore no-explicit-any
      const body = e.ms.requests.at(-1)!.body as any;
      const user = body.messages.filter((m: { role: string }) => m.role === "user").at(-1);
      assert.match(JSON.stringify(user.content), /Fix issue #42 carefully\./);
      assert.equal(body.model, "tiny-model");
      assert.deepEqual(
        body.tools.map((t: { function: { name: string } }) => t.function.name).sort(),
        ["fs_grep", "fs_read"],
      );

      // The next turn has the session's model and tools back.
      await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/git:commit the fix" }],
      });
      // deno-lint-ignore no-explicit-any
      const next = e.ms.requests.at(-1)!.body as any;
      assert.equal(next.model, "scripted");
      assert.ok(next.tools.length > 2);
      assert.match(JSON.stringify(next.messages.at(-1).content), /commit message for the fix\./);

      // /status answers locally.
      const n = e.requests();
      const from = h.updates.length;
      const st = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/status" }],
      });
      assert.equal(st.stopReason, "end_turn");
      assert.equal(e.requests(), n, "no model request for /status");
      const said = h.updates.slice(from).map((u) => u.update).filter((u) =>
        u.sessionUpdate === "agent_message_chunk"
      ).map((u) => (u as { content: { text?: string } }).content.text ?? "").join("");
      assert.match(said, /^model\s+scripted/m);
      assert.match(said, /^trust\s+trusted \(--trust-workspace\)/m);
      assert.match(said, /^commands\s+2 custom/m);
    } finally {
      await finishAcp(h);
    }
  } finally {
    await e.close();
  }
});
