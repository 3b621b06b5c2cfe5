/**
 * The seeds' flow (tests/support/journeys.ts `seedFlow`, the script the headless and REPL
 * journeys drive too) through `coyote --acp-server`, driven by the official ACP client
 * (`@agentclientprotocol/sdk`, tests/support/acp_harness.ts), from the default agent (sisyphus) on
 * a real git repository: each gate decision and the intent line as a `session/update`
 * `agent_thought_chunk` with `_meta.coyote.event`; the children as `tool_call` updates (each
 * spawn's card carries its child's progress, the resumed coder's too, under the same id); the
 * approvals of the coordinator and of the coder child as `session/request_permission` with the
 * same options, the child's naming it (`_meta.coyote`).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { finishAcp, startAcp } from "./support/acp_harness.ts";
import { startModelServer } from "./support/model_server.ts";
import {
  gatePairs,
  inOrder,
  type Json,
  NOTES,
  PLAN_V2,
  repo,
  SEED_GATES,
  SEED_PROMPT,
  seedFlow,
} from "./support/journeys.ts";

Deno.test("journey (ACP): the seeds' flow from sisyphus — gate events as thought chunks, children on their tool calls, the resumed coder as the same child, children's approvals like the coordinator's", async () => {
  const parent = await Deno.makeTempDir({ prefix: "coyote-journey-acp-" });
  const dir = await repo(parent);
  const data = join(parent, "data");
  const config = join(parent, "config");
  await Deno.mkdir(config);
  await Deno.writeTextFile(
    join(config, "config.yaml"),
    "permissions:\n  ask:\n    - Write(**/*.md)\n",
  );
  const flow = seedFlow(dir);
  const server = await startModelServer({ script: flow.script });
  try {
    const h = await startAcp({
      env: {
        COYOTE_DATA_DIR: data,
        COYOTE_CONFIG_DIR: config,
        OPENAI_BASE_URL: server.baseURL,
        OPENAI_API_KEY: "test-key",
        COYOTE_MODEL: "scripted",
      },
      permissionAnswers: ["allow_once", "allow_once", "allow_once"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: dir, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: SEED_PROMPT }],
      });
      assert.equal(r.stopReason, "end_turn", h.stderr().slice(-2000));
      const updates = h.updatesFor(sessionId) as Json[];

      // Each gate decision, in order: an agent_thought_chunk whose _meta.coyote is the event.
      const gates = updates.filter((u) =>
        u.sessionUpdate === "agent_thought_chunk" &&
        ["intent", "gate"].includes(u._meta?.coyote?.event)
      );
      const pairs = gatePairs(gates.map((u) => u._meta.coyote));
      assert.ok(inOrder(pairs, SEED_GATES), JSON.stringify(pairs));
      assert.ok(gates.every((u) => u.content.type === "text" && u.content.text.endsWith("\n")));
      assert.ok(!pairs.some(([, d]) => d === "nudge"));

      // The children as tool calls: one card per spawn; a child's progress on its card.
      const calls = updates.filter((u) => u.sessionUpdate === "tool_call");
      const spawns = calls.filter((u) => /^Spawn /.test(u.title));
      const byTitle = (re: RegExp) => spawns.filter((u) => re.test(u.title));
      assert.equal(byTitle(/^Spawn explore: /).length, 2, "the fan-out: two cards");
      const progress = (id: string) =>
        updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id)
          .flatMap((u) => (u.content ?? []).map((c: Json) => c.content?.text ?? ""))
          .at(-1) ?? "";
      for (const card of byTitle(/^Spawn explore: /)) {
        assert.match(progress(card.toolCallId), /\[explore-[0-9a-f]{8}\] started: What does /);
        assert.match(progress(card.toolCallId), /\[explore-[0-9a-f]{8}\] • Read /);
        assert.match(progress(card.toolCallId), /\[explore-[0-9a-f]{8}\] end_turn \(2 request/);
      }
      // The coder: spawned once (after the refused spawn), resumed by agent__send; both of its
      // runs report under its one id.
      const coder = flow.facts.coder;
      const coderCards = byTitle(/^Spawn coder: /);
      assert.equal(coderCards.length, 2, "the refused spawn and the spawn");
      const refused = updates.find((u) =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === coderCards[0].toolCallId &&
        u.status === "failed"
      );
      assert.match(JSON.stringify(refused?.content), /plan review gate/);
      const send = calls.find((u) => u.title.startsWith(`Send to ${coder}: Complaints:`));
      assert.ok(send, "the agent__send card names the same coder");
      // Its first run on the spawn's card, the resumed run on the agent__send's card (the call
      // that runs it), both under its one id.
      const card = (id: string) =>
        updates.filter((u) =>
          u.sessionUpdate === "tool_call_update" && u.toolCallId === id &&
          u._meta?.coyote?.agent_id === coder
        ).map((u) => u.content[0].content.text.split("\n").at(-1));
      const first = card(coderCards[1].toolCallId);
      const resumed = card(send!.toolCallId);
      assert.equal(first[0], `[${coder}] started: ${SEED_PROMPT}`);
      assert.match(first.at(-1)!, new RegExp(`^\\[${coder}\\] end_turn \\(\\d+ request`));
      assert.ok(first.includes(`[${coder}]   ✗ exit code 2`), "its failing check, on its card");
      assert.equal(resumed[0], `[${coder}] started: Complaints:`);
      assert.ok(resumed.includes(`[${coder}] • Write NOTES.md`));
      assert.match(resumed.at(-1)!, new RegExp(`^\\[${coder}\\] end_turn`));
      assert.ok(
        !first.some((l) => l.includes("Complaints:")),
        "the follow-up is not on the spent card",
      );

      // Approvals: the coordinator's two PLAN.md writes, then the coder child's NOTES.md write
      // (its graph's implement node), with the same options; the child's request names it.
      assert.equal(h.permissionRequests.length, 3);
      const [p1, p2, child] = h.permissionRequests as (acp.RequestPermissionRequest & Json)[];
      const ids = (p: Json) => p.options.map((o: Json) => o.optionId);
      assert.deepEqual(ids(child), ids(p1));
      assert.deepEqual(ids(p1), ["allow_once", "allow_always", "reject_once", "reject_always"]);
      for (const p of [p1, p2]) {
        assert.match(p.toolCall.title, /^Write PLAN\.md/);
        assert.equal(p._meta?.coyote?.agent_id, undefined, "the coordinator's own request");
      }
      assert.match(child.toolCall.title, new RegExp(`^${coder}: Write NOTES\\.md`));
      assert.equal(child._meta.coyote.agent_id, coder);
      assert.equal(
        child._meta.coyote.parent_tool_call_id,
        send!.toolCallId,
        "the resumed run's call",
      );
      // The child's announced call gets its final status like a root call.
      const done = updates.find((u) =>
        u.sessionUpdate === "tool_call_update" && u.toolCallId === child.toolCall.toolCallId &&
        u.status === "completed"
      );
      assert.ok(done, "the child's approved call completed");

      // The work is on disk; the coder's check failed, then passed.
      assert.equal(await Deno.readTextFile(join(dir, "src.txt")), "fixed\n");
      assert.equal(await Deno.readTextFile(join(dir, "PLAN.md")), PLAN_V2);
      assert.equal(await Deno.readTextFile(join(dir, "NOTES.md")), NOTES);
      const collected = server.requests.map((r) => JSON.stringify(r.body)).find((b) =>
        b.includes("CODER_COMPLETE")
      )!;
      assert.match(collected, /attempt 1: `make test` exit 2.*attempt 2: `make test` exit 0/);
      assert.equal(flow.facts.reviewers, "adversary;code-reviewer,adversary");
      const last = updates.filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => u.content.text).join("");
      assert.match(last, /DONE: src\.txt says fixed[^]*ADVERSARIAL_REVIEW: CONFORMS/);
    } finally {
      await finishAcp(h);
    }
  } finally {
    await server.close();
    await Deno.remove(parent, { recursive: true }).catch(() => {});
  }
});
