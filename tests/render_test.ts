/**
 * The shared terminal renderer (core/frontends/render/): block splitting, what is shown for each event of
 * the envelope stream, and one-shot text mode streaming through a real subprocess.
 */
import assert from "node:assert/strict";
import { BlockSplitter, completedPrefix } from "../core/frontends/render/blocks.ts";
import { Renderer, turnFooter, userFacingError } from "../core/frontends/render/mod.ts";
import { unifiedDiff } from "../core/frontends/render/diff.ts";
import { outcomeForKey, permissionText } from "../core/frontends/render/permission.ts";
import type { EventEnvelope, SessionEvent } from "../core/protocol/types.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";

const usage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500, requests: 2 };

function env(update: SessionEvent, child = false): EventEnvelope {
  return {
    session_id: child ? "s2" : "s1",
    agent: child ? "explore" : "coyote",
    agent_id: child ? "explore-1234abcd" : "coyote-00000001",
    ...(child ? { parent_id: "coyote-00000001" } : {}),
    seq: 1,
    update,
  };
}

function capture(opts: Partial<ConstructorParameters<typeof Renderer>[0]> = {}) {
  const o = { out: "", err: "" };
  const r = new Renderer({
    out: (t) => (o.out += t),
    err: (t) => (o.err += t),
    color: false,
    cwd: "/w",
    now: () => 0,
    ...opts,
  });
  return { r, o };
}

Deno.test("blocks: a block completes at a blank line, never inside a code fence", () => {
  assert.equal(completedPrefix("para one\n\npara"), "para one\n\n".length);
  assert.equal(completedPrefix("```js\nx\n\ny\n"), 0);
  assert.equal(completedPrefix("```js\nx\n\ny\n```\nmore"), "```js\nx\n\ny\n```\n".length);
  const s = new BlockSplitter();
  assert.equal(s.push("Hello "), "");
  assert.equal(s.push("world\n\nNext"), "Hello world\n\n");
  assert.equal(s.flush(), "Next");
});

Deno.test("render: every assistant message streams to out; tools, diffs, plan, footer to err", () => {
  const { r, o } = capture({ price: () => ({ input: 1, output: 2 }) });
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "fix" }));
  r.onEnvelope(
    env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Look" } }),
  );
  assert.equal(o.out, "Look", "text is written as it arrives");
  r.onEnvelope(
    env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "ing." } }),
  );
  r.onEnvelope(env({
    sessionUpdate: "tool_call",
    toolCallId: "t1",
    title: "Edit a.txt",
    status: "pending",
  }));
  r.onEnvelope(env({
    sessionUpdate: "tool_call_update",
    toolCallId: "t1",
    status: "completed",
    content: [
      { type: "content", content: { type: "text", text: "ok" } },
      { type: "diff", path: "/w/a.txt", oldText: "one\ntwo\n", newText: "one\nTWO\n" },
    ],
  }));
  r.onEnvelope(env({
    sessionUpdate: "tool_call",
    toolCallId: "t2",
    title: "Run rm -rf x",
    status: "pending",
  }));
  r.onEnvelope(env({
    sessionUpdate: "tool_call_update",
    toolCallId: "t2",
    status: "failed",
    content: [{
      type: "content",
      content: {
        type: "text",
        text: "error: denied: rule asks — the user did not approve this action. Do not retry it.",
      },
    }],
  }));
  r.onEnvelope(env({
    sessionUpdate: "plan",
    entries: [{ content: "step one", status: "completed", priority: "medium" }],
  }));
  r.onEnvelope(env({
    sessionUpdate: "plan",
    entries: [{ content: "step one", status: "completed", priority: "medium" }],
  }));
  r.onEnvelope(
    env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } }),
  );
  r.onEnvelope(env({
    sessionUpdate: "turn_ended",
    stopReason: "end_turn",
    usage,
    denied: [],
    text: "Done.",
  }));
  assert.equal(o.out, "Looking.\nDone.\n");
  assert.match(o.err, /• Edit a\.txt/);
  assert.match(o.err, /--- a\/a\.txt\n\+\+\+ b\/a\.txt\n@@ .* @@\n one\n-two\n\+TWO/);
  assert.match(o.err, /✗ denied: rule asks\n/);
  assert.doesNotMatch(o.err, /Do not retry/, "advice for the model is not shown");
  assert.equal(o.err.match(/Plan/g)?.length, 1, "an unchanged plan is not repeated");
  assert.match(o.err, /\[x\] step one/);
  assert.match(o.err, /1\.5k tokens \(1\.0k in, 500 out\) · \$0\.0020 · 0ms/);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(o.err + o.out, /\x1b\[/, "no colour when color is off");
});

Deno.test("render: a sub-agent is one status line", () => {
  const { r, o } = capture();
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "go" }));
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "find the tests\nmore" }, true));
  r.onEnvelope(
    env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "child" } }, true),
  );
  r.onEnvelope(env({
    sessionUpdate: "turn_ended",
    stopReason: "end_turn",
    usage,
    denied: [],
    text: "child",
  }, true));
  assert.equal(o.out, "", "a child's text is not the answer");
  const lines = o.err.trim().split("\n");
  assert.equal(lines.length, 1);
  assert.match(lines[0], /↳ explore-1234abcd end_turn \(2 request\(s\), 1\.5k tokens/);
});

Deno.test("render: each gate decision and the intent line is one dim line; the intent nudge and other thoughts none", () => {
  const { r, o } = capture({ color: true, width: () => 80 });
  const thought = (text: string, coyote?: Record<string, unknown>) =>
    env({
      sessionUpdate: "agent_thought_chunk",
      content: { type: "text", text },
      ...(coyote ? { _meta: { coyote } } : {}),
    } as SessionEvent);
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "go" }));
  r.onEnvelope(thought("the model reasons"));
  r.onEnvelope(thought("intent", { event: "intent", class: "implementation", text: "fix it" }));
  r.onEnvelope(thought("gate", {
    event: "gate",
    gate: "plan_review",
    decision: "block",
    reason:
      "oracle-1: PLAN_REVIEW: REJECT\n\u001b[2Jand a long reason that cannot fit in eighty columns, not at all",
  }));
  r.onEnvelope(thought("other", { event: "auto_continue_stopped" }));
  r.onEnvelope(thought("nudge", { event: "gate", gate: "intent", decision: "nudge", reason: "x" }));
  const lines = o.err.split("\n").filter(Boolean);
  assert.deepEqual(lines, [
    "\x1b[2m⚑ intent (implementation): fix it\x1b[22m",
    "\x1b[2m⚑ gate plan_review: block — oracle-1: PLAN_REVIEW: REJECT \\u001b[2Jand a long…\x1b[22m",
  ]);
  assert.equal(o.out, "");
});

Deno.test("render: while a prompt is on screen (suspended) lines are held, then written in order", () => {
  // Seen in the REPL: a sub-agent's permission prompt ended with the key legend, and the parent's
  // next tool line ("• Collect sub-agents") was printed on the same line, after "deny always".
  const { r, o } = capture({ spinner: true, sameTerminal: true });
  const call = (id: string, title: string) =>
    r.onEnvelope(env({
      sessionUpdate: "tool_call",
      toolCallId: id,
      title,
      kind: "other",
      status: "pending",
    }));
  const done = (id: string) =>
    r.onEnvelope(env({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed" }));
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "go" }));
  r.suspend();
  const before = o.err;
  call("c1", "List .");
  done("c1");
  call("c2", "Collect sub-agents");
  r.onEnvelope(
    env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } }),
  );
  assert.equal(o.err, before, "nothing reaches the terminal while the prompt owns it");
  assert.equal(o.out, "");
  r.resume();
  // A call that ended meanwhile is shown with its mark; one still running with `•`.
  assert.equal(o.err.slice(before.length), "✓ List .\n• Collect sub-agents\n");
  assert.equal(o.out, "Done.");
  r.onEnvelope(env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "" } }));
  const mark = o.err.length;
  done("c2");
  assert.equal(o.err.slice(mark), "", "text was written after the held line: no rewrite");
});

Deno.test("render: a held call line still running at resume is marked in place when it ends", () => {
  const { r, o } = capture({ spinner: true, sameTerminal: true });
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "go" }));
  r.suspend();
  r.onEnvelope(env({
    sessionUpdate: "tool_call",
    toolCallId: "c2",
    title: "Collect sub-agents",
    kind: "other",
    status: "pending",
  }));
  r.resume();
  assert.match(o.err, /• Collect sub-agents\n$/);
  r.onEnvelope(env({ sessionUpdate: "tool_call_update", toolCallId: "c2", status: "completed" }));
  // deno-lint-ignore no-control-regex
  assert.match(o.err, /\x1b\[1A\r\x1b\[K✓ Collect sub-agents\n$/);
});

Deno.test("render: markdown mode renders completed blocks only", () => {
  const blocks: string[] = [];
  const { r, o } = capture({ markdown: (b) => (blocks.push(b), `<${b.trim()}>\n`) });
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "x" }));
  r.onEnvelope(
    env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "# T" } }),
  );
  assert.equal(o.out, "");
  r.onEnvelope(
    env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "\n\nbody" } }),
  );
  assert.equal(o.out, "<# T>\n");
  r.onEnvelope(env({
    sessionUpdate: "turn_ended",
    stopReason: "end_turn",
    usage,
    denied: [],
    text: "",
  }));
  assert.equal(o.out, "<# T>\n\n<body>\n", "blocks of a message are a blank line apart");
});

Deno.test("render: diff of a new file, footer without price, error text", () => {
  const d = unifiedDiff({ path: "/w/n.txt", oldText: null, newText: "a\n" }, {
    color: true,
    cwd: "/w",
  });
  assert.match(d, /\/dev\/null/);
  // deno-lint-ignore no-control-regex
  assert.match(d, /\x1b\[32m\+a\x1b\[39m/);
  assert.equal(turnFooter(usage, 4200), "1.5k tokens (1.0k in, 500 out) · 4.2s");
  // No usage reported (cancelled before it came, or a server that sends none): not "0 tokens".
  const none = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 1 };
  assert.equal(turnFooter(none, 900), "tokens not reported · 900ms");
  assert.equal(turnFooter({ ...none, requests: 0 }, 5), "no model request · 5ms");
  assert.equal(userFacingError("error: cancelled by the user"), "cancelled by the user");
});

Deno.test("permission: verb, full command wrapped, keys", () => {
  const cmd = "echo " + "x".repeat(150) + " && tail -n 1 END-OF-COMMAND";
  const text = permissionText({
    sessionId: "s",
    toolCallId: "t",
    toolName: "execute_command",
    title: "Run",
    kind: "execute",
    rawInput: { command: cmd },
    verdicts: [{
      decision: "ask",
      reason: "no rule allows it",
      access: { type: "execute", command: cmd },
    }],
  }, { color: false, width: 60, cwd: "/w" });
  assert.match(text, /coyote wants to run:/);
  assert.match(text, /END-OF-COMMAND/, "the command is never cut");
  assert.ok(text.split("\n").every((l) => [...l].length <= 70), text);
  assert.equal(outcomeForKey("a"), "allow_always");
  assert.equal(outcomeForKey("y\n"), "allow_once");
  assert.equal(outcomeForKey("d"), "reject_always");
  assert.equal(outcomeForKey("n"), "reject_once");
  assert.equal(outcomeForKey("q"), null);
});

Deno.test("one-shot text mode streams: text is on stdout before the model's last chunk", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const server = await startModelServer({
    script: [{
      text: "FIRST-PART then the rest of the answer.",
      chunk_size: 10,
      hold_last_chunk: held,
    }],
  });
  try {
    const { cmd, args } = coyoteCommand(["say something"]);
    const child = new Deno.Command(cmd, {
      args,
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    const reader = child.stdout.getReader();
    let seen = "";
    while (!seen.includes("FIRST-PART")) {
      const { value, done } = await reader.read();
      assert.ok(!done, `stdout ended before streaming anything: ${JSON.stringify(seen)}`);
      seen += new TextDecoder().decode(value);
    }
    // The last chunk is still held back by the server: the text arrived while streaming.
    release();
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    const status = await child.status;
    assert.equal(status.code, 0, await stderr);
    assert.equal(seen, "FIRST-PART then the rest of the answer.\n");
  } finally {
    release();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("permission: a write shows the diff it would make; a sub-agent's request names it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a.txt`, "old line\n");
    const text = permissionText({
      sessionId: "s",
      toolCallId: "t",
      toolName: "fs_write",
      title: "Write a.txt",
      kind: "edit",
      rawInput: { path: "a.txt", content: "new line\n" },
      verdicts: [{
        decision: "ask",
        reason: "writes ask",
        access: { type: "write", path: `${dir}/a.txt` },
      }],
      scope: {
        agent: "explore",
        agentId: "explore-1234abcd",
        parentId: "coyote-1",
        rootSessionId: "r",
        depth: 1,
        sessionId: "s",
        toolCallId: "t",
        toolName: "fs_write",
      },
    }, { color: false, width: 100, cwd: dir });
    assert.match(text, /sub-agent explore-1234abcd wants to write:/);
    assert.match(text, /-old line\n\+new line/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("render: assistant messages of successive model requests are not glued together", () => {
  for (const markdown of [null, (b: string) => `<${b.trim()}>\n`]) {
    const { r, o } = capture({ markdown });
    r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "x" }));
    for (const text of ["first answer", "second answer"]) {
      r.onEnvelope(env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }));
      // Sent by the engine when a request ends (core/engine/loop.ts #addUsage).
      r.onEnvelope(env({ sessionUpdate: "usage_update", used: 10, size: 100 }));
    }
    r.onEnvelope(env({
      sessionUpdate: "turn_ended",
      stopReason: "end_turn",
      usage,
      denied: [],
      text: "",
    }));
    assert.equal(
      o.out,
      markdown ? "<first answer>\n<second answer>\n" : "first answer\nsecond answer\n",
    );
  }
});

Deno.test("render: a sub-agent ending while the root streams markdown does not cut its block", () => {
  const blocks: string[] = [];
  const { r, o } = capture({ markdown: (b) => (blocks.push(b), `<${b.trim()}>\n`) });
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "x" }));
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "look" }, true));
  const text = (t: string) =>
    r.onEnvelope(env({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } }));
  text("```ts\nconst a");
  r.onEnvelope(env({
    sessionUpdate: "turn_ended",
    stopReason: "end_turn",
    usage,
    denied: [],
    text: "",
  }, true));
  assert.match(o.err, /explore-1234abcd end_turn/);
  text(" = 1;\n```\n\nafter");
  r.onEnvelope(env({
    sessionUpdate: "turn_ended",
    stopReason: "end_turn",
    usage,
    denied: [],
    text: "",
  }));
  assert.deepEqual(blocks.map((b) => b.trim()), ["```ts\nconst a = 1;\n```", "after"]);
  assert.equal(o.out, "<```ts\nconst a = 1;\n```>\n\n<after>\n");
});

Deno.test("render: a failed call whose line is not the last one shown is named on its ✗ line", () => {
  const { r, o } = capture();
  r.onEnvelope(env({ sessionUpdate: "turn_started", prompt: "x" }));
  for (const [id, title] of [["c1", "Spawn reviewer: review"], ["c2", "List sub-agents"]]) {
    r.onEnvelope(env({ sessionUpdate: "tool_call", toolCallId: id, title, status: "pending" }));
  }
  const failed = (id: string, why: string) =>
    r.onEnvelope(env({
      sessionUpdate: "tool_call_update",
      toolCallId: id,
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: `error: ${why}` } }],
    }));
  failed("c1", "not trusted");
  assert.match(o.err, /• List sub-agents\n {2}✗ Spawn reviewer: review: not trusted\n$/);
  r.onEnvelope(
    env({ sessionUpdate: "tool_call", toolCallId: "c3", title: "Read a", status: "pending" }),
  );
  failed("c3", "no such file");
  assert.match(o.err, /• Read a\n {2}✗ no such file\n$/, "right below its own line: not repeated");
});

Deno.test("render: a markdown heading is shown bold without its ## (as the peers render it)", async () => {
  const { loadMarkdown } = await import("../core/frontends/render/markdown.ts");
  const md = await loadMarkdown(80);
  assert.ok(md, "marked-terminal loads");
  const out = md!("## Fixed\n");
  assert.doesNotMatch(out, /#/, out);
  assert.match(out, /Fixed/);
});

Deno.test("render: an fs_patch permission prompt shows the file's diff with context, not the fragments alone", async () => {
  const { requestDiff } = await import("../core/frontends/render/permission.ts");
  const dir = await Deno.makeTempDir({ prefix: "coyote-reqdiff-" });
  try {
    await Deno.writeTextFile(`${dir}/calc.sh`, "#!/bin/sh\n# subtract\necho $(( $1 - $2 ))\n");
    const d = requestDiff(
      {
        rawInput: { path: "calc.sh", old_string: "$1 - $2", new_string: "$1 + $2" },
      } as never,
      false,
      dir,
    );
    assert.match(d, /^ # subtract$/m, "a context line of the file");
    assert.match(d, /^-echo \$\(\( \$1 - \$2 \)\)$/m);
    assert.match(d, /^\+echo \$\(\( \$1 \+ \$2 \)\)$/m);
    assert.doesNotMatch(d, /No newline at end of file/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
