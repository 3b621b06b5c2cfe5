/** Session store: JSONL transcripts, torn lines, coalescing, listing, history repair. */
import assert from "node:assert/strict";
import { listStoredSessions, newSessionId, transcriptPath } from "../core/transcript/store.ts";
import { loadSession, parseTranscript, repairHistory } from "../core/transcript/load.ts";
import { TranscriptWriter } from "../core/transcript/writer.ts";

const usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, requests: 1 };

Deno.test("newSessionId is a random UUID: 8-character prefixes of ids made together differ", () => {
  const ids = Array.from({ length: 2000 }, () => newSessionId());
  for (const id of ids) {
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  }
  // Time-prefixed (v7) ids made within one millisecond share their first 8 characters.
  assert.equal(new Set(ids.map((id) => id.slice(0, 8))).size, ids.length);
});

Deno.test("transcript: lines round-trip, chunks coalesce, a torn last line is tolerated and closed off", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const w = TranscriptWriter.create(dir, {
      id: "t1",
      cwd: "/w",
      created: "2026-01-01T00:00:00Z",
      model: "m",
      agent: "coyote",
      name: "nm",
    });
    w.message({ role: "user", content: "fix the bug please" });
    w.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } });
    w.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo" } });
    w.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" } });
    w.update({
      sessionUpdate: "tool_call",
      toolCallId: "c",
      title: "t",
      kind: "read",
      status: "pending",
    });
    w.message({
      role: "assistant",
      content: "Hello",
      tool_calls: [{ id: "c", type: "function", function: { name: "x", arguments: "{}" } }],
    });
    w.turnEnd("end_turn", usage);
    w.close();
    const path = transcriptPath(dir, "t1");
    // Simulate a crash in the middle of a write.
    await Deno.writeTextFile(path, '{"type":"message","message":{"role":"tool","tool_ca', {
      append: true,
    });
    const s = (await loadSession(dir, "t1"))!;
    assert.equal(s.skipped, 1);
    assert.equal(s.header.name, "nm");
    assert.deepEqual(s.updates.map((u) => u.sessionUpdate), [
      "agent_message_chunk",
      "agent_thought_chunk",
      "tool_call",
    ]);
    const first = s.updates[0];
    assert.ok(
      first.sessionUpdate === "agent_message_chunk" && first.content.type === "text" &&
        first.content.text === "Hello",
    );
    // The unanswered tool call is answered so the history is valid for the API.
    assert.equal(s.messages.length, 3);
    assert.equal(s.messages[2].role, "tool");
    assert.equal(s.messages[2].tool_call_id, "c");
    // Appending after the torn line starts a fresh line.
    const w2 = TranscriptWriter.open(path);
    w2.message({ role: "user", content: "again" });
    w2.close();
    const text = await Deno.readTextFile(path);
    const s2 = parseTranscript(text)!;
    assert.equal(s2.skipped, 1);
    assert.equal(s2.messages.at(-1)?.content, "again");
    for (
      const line of text.trim().split("\n").filter((l) =>
        !l.includes("tool_ca\n") && !l.endsWith("tool_ca")
      )
    ) {
      JSON.parse(line);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("listStoredSessions: newest first, cwd and name filters, title from the first prompt", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (
      const [id, cwd, name, prompt] of [["a", "/p1", undefined, "first\nprompt"], [
        "b",
        "/p2",
        "x",
        "second",
      ], ["c", "/p1", "x", "third " + "y".repeat(100)]] as const
    ) {
      const w = TranscriptWriter.create(dir, {
        id,
        cwd,
        created: new Date().toISOString(),
        model: "m",
        agent: "coyote",
        ...(name ? { name } : {}),
      });
      w.message({ role: "user", content: prompt });
      w.close();
      await new Promise((r) => setTimeout(r, 15));
    }
    await Deno.writeTextFile(`${dir}/sessions/junk.jsonl`, "not json\n");
    const all = await listStoredSessions(dir);
    assert.deepEqual(all.map((s) => s.id), ["c", "b", "a"]);
    assert.equal(all[2].title, "first prompt");
    assert.ok(all[0].title.length <= 80 && all[0].title.endsWith("…"));
    assert.deepEqual((await listStoredSessions(dir, { cwd: "/p1" })).map((s) => s.id), ["c", "a"]);
    assert.deepEqual((await listStoredSessions(dir, { name: "x" })).map((s) => s.id), ["c", "b"]);
    assert.deepEqual(await listStoredSessions(`${dir}/nope`), []);
    assert.equal(await loadSession(dir, "../etc/passwd"), null);
    assert.equal(await loadSession(dir, "missing"), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("repairHistory leaves complete histories alone", () => {
  const h = [
    { role: "user" as const, content: "q" },
    {
      role: "assistant" as const,
      content: null,
      tool_calls: [{
        id: "1",
        type: "function" as const,
        function: { name: "f", arguments: "{}" },
      }],
    },
    { role: "tool" as const, tool_call_id: "1", content: "r" },
    { role: "assistant" as const, content: "a" },
  ];
  assert.deepEqual(repairHistory(h), h);
});

Deno.test("transcript createAsync: early lines land in order once the file exists; a vanished sessions folder is made again", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const header = (id: string) => ({
      id,
      cwd: "/w",
      created: "2026-01-01T00:00:00Z",
      model: "m",
      agent: "coder",
    });
    const a = TranscriptWriter.createAsync(dir, header("a1"));
    a.message({ role: "user", content: "first" });
    a.message({ role: "assistant", content: "second" });
    // Nothing is on disk until after the current task.
    assert.throws(() => Deno.statSync(transcriptPath(dir, "a1")), Deno.errors.NotFound);
    await a.ready;
    a.message({ role: "user", content: "third" });
    a.close();
    const first = await loadSession(dir, "a1");
    assert.deepEqual(first?.messages.map((m) => m.content), ["first", "second", "third"]);

    // The folder is made once per process; if it is removed meanwhile, the next one makes it.
    await Deno.remove(`${dir}/sessions`, { recursive: true });
    const b = TranscriptWriter.createAsync(dir, header("b1"));
    b.message({ role: "user", content: "again" });
    await b.ready;
    b.close();
    assert.equal(b.failed, false);
    const second = await loadSession(dir, "b1");
    assert.deepEqual(second?.messages.map((m) => m.content), ["again"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
