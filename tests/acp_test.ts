/**
 * End-to-end tests of `coyote --acp-server`: a real subprocess (the `coyote` task's flags)
 * driven by the ACP SDK's own client, against the scripted model server. Every test also
 * asserts that every stdout line is a JSON-RPC 2.0 message.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import {
  acpTestEnv,
  COYOTE_FLAGS,
  finishAcp,
  isJsonRpc,
  MAIN_TS,
  startAcp,
  waitFor,
} from "./support/acp_harness.ts";
import { parseJsonLines, runCoyote } from "./support/run_coyote.ts";

const setup = (script: Parameters<typeof acpTestEnv>[0]) => acpTestEnv(script);
const finish = finishAcp;

type Upd = acp.SessionUpdate;
const toolCalls = (u: Upd[]) =>
  u.filter((x): x is Extract<Upd, { sessionUpdate: "tool_call" }> =>
    x.sessionUpdate === "tool_call"
  );
const callUpdates = (u: Upd[], id: string) =>
  u.filter((x): x is Extract<Upd, { sessionUpdate: "tool_call_update" }> =>
    x.sessionUpdate === "tool_call_update" && x.toolCallId === id
  );
const finalStatus = (u: Upd[], id: string) => {
  let st: string | undefined | null;
  for (const x of u) {
    if (
      (x.sessionUpdate === "tool_call" || x.sessionUpdate === "tool_call_update") &&
      x.toolCallId === id && x.status
    ) {
      st = x.status;
    }
  }
  return st;
};
const text = (u: Upd[]) =>
  u.filter((x) => x.sessionUpdate === "agent_message_chunk")
    .map((x) => (x as { content: { type: string; text?: string } }).content.text ?? "").join("");

/**
 * Merges consecutive chunks and keeps the kinds a replay must reproduce. Coyote's own status
 * chunks (`_meta.coyote.event`/`notice`: hooks, gates, MCP start-up) are live-only, not part of
 * the conversation, so a replay does not repeat them.
 */
function normalize(u: Upd[]): unknown[] {
  const out: Record<string, unknown>[] = [];
  for (const x of u) {
    const coyote = (x as { _meta?: { coyote?: { event?: string; notice?: string } } })._meta
      ?.coyote;
    if (coyote?.event || coyote?.notice) continue;
    if (
      !["agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"]
        .includes(x.sessionUpdate)
    ) continue;
    const prev = out[out.length - 1];
    if (
      (x.sessionUpdate === "agent_message_chunk" || x.sessionUpdate === "agent_thought_chunk") &&
      prev &&
      prev.sessionUpdate === x.sessionUpdate
    ) {
      prev.text = String(prev.text) + ((x.content as { text?: string }).text ?? "");
      continue;
    }
    if (x.sessionUpdate === "agent_message_chunk" || x.sessionUpdate === "agent_thought_chunk") {
      out.push({
        sessionUpdate: x.sessionUpdate,
        text: (x.content as { text?: string }).text ?? "",
      });
    } else {
      out.push(JSON.parse(JSON.stringify(x)));
    }
  }
  return out;
}

Deno.test("acp: read, edit, permitted and rejected commands → end_turn; load replays it; list, resume, close", async () => {
  const original = "line one\nthe bug here\nline three\n";
  const e = await setup([
    {
      reasoning: "Let me look.",
      tool_calls: [{ name: "fs_read", arguments: { path: "app.txt" } }],
    },
    {
      tool_calls: [{
        name: "fs_patch",
        arguments: { path: "app.txt", old_string: "the bug here", new_string: "the fix here" },
      }],
    },
    { tool_calls: [{ name: "execute_command", arguments: { command: "touch made-by-cmd" } }] },
    { tool_calls: [{ name: "execute_command", arguments: { command: "touch second-cmd" } }] },
    { text: "Fixed the bug; the second command was refused." },
  ]);
  try {
    await Deno.writeTextFile(`${e.ws}/app.txt`, original);
    // --no-sandbox: the permission flow (the OS sandbox would auto-allow these commands).
    const h = await startAcp({
      env: e.env,
      args: ["--no-sandbox"],
      permissionAnswers: ["allow_once", "reject_once"],
    });
    let sessionId: string;
    let live: Upd[];
    try {
      assert.equal(h.init?.protocolVersion, 1);
      assert.equal(h.init?.agentCapabilities?.loadSession, true);
      assert.equal(h.init?.agentCapabilities?.promptCapabilities?.embeddedContext, true);
      assert.equal(h.init?.agentCapabilities?.promptCapabilities?.image, false); // no models: table
      assert.equal(h.init?.agentCapabilities?.mcpCapabilities?.http, true);
      assert.deepEqual(Object.keys(h.init?.agentCapabilities?.sessionCapabilities ?? {}).sort(), [
        "close",
        "delete",
        "list",
        "resume",
      ]);
      assert.equal(h.init?.agentInfo?.name, "coyote");

      const s = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      sessionId = s.sessionId;
      const ids = (s.configOptions ?? []).map((o) => o.id);
      assert.deepEqual(ids, ["agent", "model"]);
      await waitFor(
        () => h.updatesFor(sessionId).some((u) => u.sessionUpdate === "available_commands_update"),
        5000,
        "available_commands_update",
      );
      // available_commands_update comes after the session/new response on the wire.
      const respIdx = h.lines.findIndex((l) =>
        l.includes(`"sessionId":"${sessionId}"`) && l.includes('"result"')
      );
      const cmdIdx = h.lines.findIndex((l) => l.includes("available_commands_update"));
      assert.ok(respIdx >= 0 && cmdIdx > respIdx, "available_commands_update after the response");

      const before = h.updates.length;
      const res = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "fix the bug" }],
      });
      assert.equal(res.stopReason, "end_turn");
      live = h.updates.slice(before).filter((u) => u.sessionId === sessionId).map((u) => u.update);
      // Every update of the turn precedes the response line.
      const promptResp = h.lines.findIndex((l) => l.includes('"stopReason"'));
      assert.ok(
        h.lines.slice(promptResp + 1).every((l) => !l.includes('"session/update"')),
        "no update after the prompt response",
      );

      const calls = toolCalls(live);
      const arg = (c: { rawInput?: unknown }) => {
        const r = (c.rawInput ?? {}) as { command?: string; path?: string };
        return r.path ?? r.command;
      };
      assert.deepEqual(calls.map(arg), [
        "app.txt",
        "app.txt",
        "touch made-by-cmd",
        "touch second-cmd",
      ]);
      const [read, patch, cmd1, cmd2] = calls;
      assert.equal(read.kind, "read");
      assert.equal(patch.kind, "edit");
      assert.equal(cmd1.kind, "execute");
      for (const c of calls) {
        assert.equal(c.status ?? "pending", "pending", "tool_call starts pending");
      }
      assert.equal(finalStatus(live, read.toolCallId), "completed");
      assert.equal(finalStatus(live, patch.toolCallId), "completed");
      assert.equal(finalStatus(live, cmd1.toolCallId), "completed");
      assert.equal(finalStatus(live, cmd2.toolCallId), "failed");
      for (const c of calls) {
        const sts = callUpdates(live, c.toolCallId).map((u) => u.status).filter(Boolean);
        assert.ok(sts.length >= 1, `updates for ${c.toolCallId}`);
      }
      // The edit carries a diff with the absolute path and the real old text.
      const diffs = callUpdates(live, patch.toolCallId).flatMap((u) => u.content ?? []).filter((
        c,
      ) => c.type === "diff") as {
        type: "diff";
        path: string;
        oldText?: string | null;
        newText: string;
      }[];
      assert.equal(diffs.length >= 1, true, "diff content");
      assert.equal(diffs[0].path, `${e.ws}/app.txt`);
      assert.equal(diffs[0].oldText, original);
      assert.equal(diffs[0].newText, original.replace("the bug here", "the fix here"));
      assert.equal(
        await Deno.readTextFile(`${e.ws}/app.txt`),
        original.replace("the bug here", "the fix here"),
      );
      // Two permission requests, each after its pending tool_call was sent.
      assert.equal(h.permissionRequests.length, 2);
      assert.equal(h.permissionRequests[0].toolCall.toolCallId, cmd1.toolCallId);
      assert.equal(h.permissionRequests[1].toolCall.toolCallId, cmd2.toolCallId);
      assert.deepEqual(h.permissionRequests[0].options.map((o) => o.kind), [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
      ]);
      for (const [i, r] of h.permissionRequests.entries()) {
        const seen = h.updates.slice(0, h.permissionAt[i]).map((u) => u.update);
        assert.ok(
          toolCalls(seen).some((c) => c.toolCallId === r.toolCall.toolCallId),
          "pending tool_call before the permission request",
        );
      }
      assert.ok((await Deno.stat(`${e.ws}/made-by-cmd`)).isFile);
      await assert.rejects(Deno.stat(`${e.ws}/second-cmd`));
      assert.match(text(live), /Fixed the bug/);
      assert.ok(
        live.some((u) => u.sessionUpdate === "agent_thought_chunk"),
        "thought chunk forwarded",
      );
      assert.ok(live.some((u) => u.sessionUpdate === "usage_update"), "usage_update forwarded");
    } finally {
      await finish(h);
    }

    // A new process: list, load (replay), resume (no replay), close.
    const h2 = await startAcp({ env: e.env });
    try {
      const list = await h2.agent.request("session/list", {});
      const entry = list.sessions.find((x) => x.sessionId === sessionId);
      assert.ok(entry, "session listed");
      assert.equal(entry.cwd, e.ws);
      const filtered = await h2.agent.request("session/list", { cwd: "/nonexistent-dir" });
      assert.equal(filtered.sessions.length, 0);

      await h2.agent.request("session/load", { sessionId, cwd: e.ws, mcpServers: [] });
      const replay = h2.updatesFor(sessionId);
      assert.ok(
        replay.some((u) =>
          u.sessionUpdate === "user_message_chunk" &&
          (u.content as { text?: string }).text?.includes("fix the bug")
        ),
        "user message replayed",
      );
      assert.deepEqual(normalize(replay), normalize(live));
      // On the wire: the whole replay, then the load response, then available_commands_update.
      await waitFor(
        () => h2.lines.some((l) => l.includes("available_commands_update")),
        5000,
        "available_commands_update after load",
      );
      const loadResp = h2.lines.findIndex((l) => l.includes('"result":{"configOptions"'));
      const lastReplay = h2.lines.findLastIndex((l) =>
        l.includes('"session/update"') && !l.includes("available_commands_update") &&
        !l.includes("session_info_update")
      );
      const cmds = h2.lines.findIndex((l) => l.includes("available_commands_update"));
      assert.ok(lastReplay >= 0 && lastReplay < loadResp, "replay before the load response");
      assert.ok(cmds > loadResp, "available_commands_update after the load response");
      await assert.rejects(
        h2.agent.request("session/load", {
          sessionId: "no-such-session",
          cwd: e.ws,
          mcpServers: [],
        }),
        (err: { code?: number }) => err.code === -32002,
      );
      await h2.agent.request("session/close", { sessionId });
    } finally {
      await finish(h2);
    }

    const h3 = await startAcp({ env: e.env });
    try {
      await h3.agent.request("session/resume", { sessionId, cwd: e.ws, mcpServers: [] });
      await new Promise((r) => setTimeout(r, 50));
      // No replay: only the command list and the stored title.
      assert.deepEqual(h3.updatesFor(sessionId).map((u) => u.sessionUpdate), [
        "available_commands_update",
        "session_info_update",
      ], "resume does not replay");
    } finally {
      await finish(h3);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: cancel mid-stream and during a running command → cancelled, tool calls failed, child killed", async () => {
  const marker = `sleep ${37 + Math.floor(Math.random() * 1000) / 1000}`;
  const e = await setup([
    { text: "a long answer that streams slowly ".repeat(20), chunk_size: 4, chunk_delay_ms: 40 },
    { tool_calls: [{ name: "execute_command", arguments: { command: marker } }] },
    { text: "after cancel" },
  ]);
  try {
    const h = await startAcp({ env: e.env, permissionAnswers: ["allow_once"] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const p1 = h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "talk" }],
      });
      await waitFor(
        () => h.updatesFor(sessionId).some((u) => u.sessionUpdate === "agent_message_chunk"),
        10_000,
        "first chunk",
      );
      await h.agent.notify("session/cancel", { sessionId });
      assert.equal((await p1).stopReason, "cancelled");

      const before = h.updates.length;
      const p2 = h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "run it" }],
      });
      await waitFor(
        () =>
          h.updates.slice(before).some((u) =>
            u.update.sessionUpdate === "tool_call_update" && u.update.status === "in_progress"
          ),
        10_000,
        "command in progress",
      );
      await waitFor(() => running(marker), 5000, "the command's process");
      await h.agent.notify("session/cancel", { sessionId });
      assert.equal((await p2).stopReason, "cancelled");
      const turn = h.updates.slice(before).map((u) => u.update);
      const [call] = toolCalls(turn);
      assert.equal(finalStatus(turn, call.toolCallId), "failed");
      // ACP: the agent answers `cancelled` after its operations were aborted.
      assert.equal(running(marker), false, "the command was killed before the response");

      // Cancel for idle and unknown sessions is a no-op; the session still works.
      await h.agent.notify("session/cancel", { sessionId });
      await h.agent.notify("session/cancel", { sessionId: "unknown-session" });
      const p3 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "again" }],
      });
      assert.equal(p3.stopReason, "end_turn");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

function running(pattern: string): boolean {
  const out = new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").some((l) =>
    l.trim() === pattern || l.includes(`${pattern}\n`) || l.endsWith(pattern) && !l.includes("ps ")
  );
}

Deno.test("acp: two sessions with different cwd in one process", async () => {
  const e = await setup((req) => {
    const body = (req as { body: { messages: { role: string; content: unknown }[] } }).body;
    const hasTool = body.messages.some((m) => m.role === "tool");
    if (!hasTool) return { tool_calls: [{ name: "fs_read", arguments: { path: "which.txt" } }] };
    const tool = body.messages.filter((m) => m.role === "tool").map((m) => String(m.content)).join(
      "",
    );
    return {
      text: tool.includes("project-A")
        ? "saw A"
        : tool.includes("project-B")
        ? "saw B"
        : "saw nothing",
    };
  });
  const wsB = await Deno.makeTempDir({ prefix: "coyote-acp-wsB-" });
  try {
    await Deno.writeTextFile(`${e.ws}/which.txt`, "project-A\n");
    await Deno.writeTextFile(`${wsB}/which.txt`, "project-B\n");
    // Images are advertised (and accepted) only for a model configured for them.
    await Deno.mkdir(`${e.data}/config`, { recursive: true });
    await Deno.writeTextFile(
      `${e.data}/config/config.yaml`,
      "models:\n  scripted:\n    images: true\n",
    );
    const h = await startAcp({ env: e.env });
    try {
      const a = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const b = await h.agent.request("session/new", { cwd: wsB, mcpServers: [] });
      assert.notEqual(a.sessionId, b.sessionId);
      const [ra, rb] = await Promise.all([
        h.agent.request("session/prompt", {
          sessionId: a.sessionId,
          prompt: [
            { type: "text", text: "which?" },
            {
              type: "resource",
              resource: {
                uri: `file://${e.ws}/ctx.md`,
                text: "EMBEDDED-CONTEXT-XYZ",
                mimeType: "text/markdown",
              },
            },
          ],
        }),
        h.agent.request("session/prompt", {
          sessionId: b.sessionId,
          prompt: [{ type: "text", text: "which?" }, {
            type: "image",
            mimeType: "image/png",
            data: "iVBORw0KGgo=",
          }],
        }),
      ]);
      assert.equal(ra.stopReason, "end_turn");
      assert.equal(rb.stopReason, "end_turn");
      assert.equal(text(h.updatesFor(a.sessionId)), "saw A");
      assert.equal(text(h.updatesFor(b.sessionId)), "saw B");
      assert.ok(
        e.bodies().some((b) => b.includes("EMBEDDED-CONTEXT-XYZ")),
        "embedded context reaches the model",
      );
      assert.ok(
        e.bodies().some((b) =>
          b.includes('"image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}')
        ),
        "image reaches the model",
      );
      // Relative cwd is refused.
      await assert.rejects(
        h.agent.request("session/new", { cwd: "relative/dir", mcpServers: [] }),
        (err: { code?: number }) => err.code === -32602,
      );
    } finally {
      await finish(h);
    }
  } finally {
    await Deno.remove(wsB, { recursive: true }).catch(() => {});
    await e.close();
  }
});

Deno.test("acp: client fs and terminal capabilities route file tools and commands through the client", async () => {
  const e = await setup([
    { tool_calls: [{ name: "fs_read", arguments: { path: "note.txt" } }] },
    {
      tool_calls: [{
        name: "fs_write",
        arguments: { path: "out/new.txt", content: "hello from coyote\n" },
      }],
    },
    {
      tool_calls: [{ name: "execute_command", arguments: { command: "echo terminal-output-42" } }],
    },
    { text: "done" },
  ]);
  try {
    await Deno.writeTextFile(`${e.ws}/note.txt`, "a note\n");
    const h = await startAcp({
      env: e.env,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      permissionAnswers: ["allow_once"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.ok(
        h.fsCalls.some((c) => c.method === "fs/read_text_file" && c.path === `${e.ws}/note.txt`),
        "read through the client",
      );
      assert.ok(
        h.fsCalls.some((c) =>
          c.method === "fs/write_text_file" && c.path === `${e.ws}/out/new.txt`
        ),
        "write through the client",
      );
      assert.equal(await Deno.readTextFile(`${e.ws}/out/new.txt`), "hello from coyote\n");
      assert.equal(h.terminals.length, 1, "one client terminal");
      const term = h.terminals[0];
      assert.ok(term.released, "terminal released");
      assert.match(term.output, /terminal-output-42/);
      const upd = h.updatesFor(sessionId);
      const [, , cmd] = toolCalls(upd);
      const embeds = callUpdates(upd, cmd.toolCallId).filter((u) =>
        (u.content ?? []).some((c) => c.type === "terminal")
      );
      assert.equal(embeds.length, 1, "the terminal is embedded in the tool call");
      assert.equal(finalStatus(upd, cmd.toolCallId), "completed");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: malformed lines, batches, unknown methods, invalid params, early requests, a second prompt", async () => {
  const e = await setup([{ text: "slow ".repeat(30), chunk_size: 5, chunk_delay_ms: 30 }, {
    text: "ok",
  }, { text: "third" }]);
  const child = new Deno.Command("deno", {
    args: [...COYOTE_FLAGS, MAIN_TS, "--acp-server"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    env: { ...e.env, NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const send = (line: string) => writer.write(enc.encode(line + "\n"));
  const lines: string[] = [];
  const byId = new Map<unknown, Record<string, unknown>>();
  const nullIds: Record<string, unknown>[] = [];
  const reader = (async () => {
    let buf = "";
    const dec = new TextDecoder();
    for await (const c of child.stdout) {
      buf += dec.decode(c, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const l = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(l);
        const m = JSON.parse(l);
        if ("id" in m && m.id === null) nullIds.push(m);
        else if ("id" in m && !("method" in m)) byId.set(m.id, m);
      }
    }
  })();
  const reply = async (id: unknown) => {
    await waitFor(() => byId.has(id), 15_000, `response ${id}`);
    return byId.get(id)!;
  };
  try {
    await send(
      '{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}',
    );
    assert.equal(
      ((await reply(1)).error as { code: number }).code,
      -32600,
      "request before initialize",
    );
    await send("this is not json");
    await send('[{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}]');
    await send(
      '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":99,"clientCapabilities":{}}}',
    );
    const init = await reply(3);
    assert.equal(
      (init.result as { protocolVersion: number }).protocolVersion,
      1,
      "answers v1 to a higher version",
    );
    await waitFor(() => nullIds.length >= 2, 5000, "parse and batch errors");
    assert.deepEqual(nullIds.map((m) => (m.error as { code: number }).code), [-32700, -32600]);
    assert.equal(byId.has(2), false, "batch entries are not processed");
    await send('{"jsonrpc":"2.0","id":4,"method":"no/such_method","params":{}}');
    assert.equal(((await reply(4)).error as { code: number }).code, -32601);
    await send('{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":42}}');
    assert.equal(((await reply(5)).error as { code: number }).code, -32602);
    await send(
      '{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}',
    );
    assert.equal(((await reply(6)).error as { code: number }).code, -32002, "unknown session");
    await send('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}');
    await send(
      `{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":${
        JSON.stringify(e.ws)
      },"mcpServers":[]}}`,
    );
    const sid = ((await reply(7)).result as { sessionId: string }).sessionId;
    await send(
      `{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"${sid}","prompt":[{"type":"text","text":"hi"}]}}`,
    );
    await waitFor(
      () => lines.some((l) => l.includes("agent_message_chunk")),
      10_000,
      "first chunk",
    );
    await send(
      `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"${sid}","prompt":[{"type":"text","text":"again"}]}}`,
    );
    const second = await reply(9);
    assert.equal(
      (second.error as { code: number }).code,
      -32600,
      "second prompt while one runs is rejected",
    );
    assert.match((second.error as { message: string }).message, /already running/);
    assert.equal(
      ((await reply(8)).result as { stopReason: string }).stopReason,
      "end_turn",
      "the first turn is unharmed",
    );
    await send(
      `{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":"${sid}","prompt":[{"type":"text","text":"again"}]}}`,
    );
    assert.equal(
      ((await reply(10)).result as { stopReason: string }).stopReason,
      "end_turn",
      "still serving",
    );
    // Arrival order decides what a cancel applies to, even within one write:
    // prompt then cancel → that prompt is cancelled; cancel (idle) then prompt → it runs.
    const prompt = (id: number) =>
      `{"jsonrpc":"2.0","id":${id},"method":"session/prompt","params":{"sessionId":"${sid}","prompt":[{"type":"text","text":"p${id}"}]}}`;
    const cancel = `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"${sid}"}}`;
    await send(`${prompt(11)}\n${cancel}`);
    assert.equal(((await reply(11)).result as { stopReason: string }).stopReason, "cancelled");
    await send(`${cancel}\n${prompt(12)}`);
    assert.equal(((await reply(12)).result as { stopReason: string }).stopReason, "end_turn");
    assert.equal(e.requests(), 3, "the cancelled prompt never reached the model");
  } finally {
    await writer.close().catch(() => {});
    const st = await child.status;
    await reader;
    await e.close();
    for (const l of lines) assert.ok(isJsonRpc(JSON.parse(l)), `JSON-RPC line: ${l}`);
    assert.equal(st.code, 0, "exits 0 when stdin closes");
  }
});

const ALWAYS = "npm_config_loglevel=silent touch always-file";

Deno.test("acp: permission edge cases, allow_always, user questions, plan", async () => {
  const e = await setup([
    // Turn 1: a pending permission request is abandoned by session/cancel.
    { tool_calls: [{ name: "execute_command", arguments: { command: "touch held-file" } }] },
    // Turn 2: the client answers `cancelled` → the turn ends cancelled.
    { tool_calls: [{ name: "execute_command", arguments: { command: "touch cancelled-file" } }] },
    // Turn 3: allow_always, then the same command again without asking (its environment
    // prefix asked too, and the recorded rule lifts that as well); questions; plan.
    { tool_calls: [{ name: "execute_command", arguments: { command: ALWAYS } }] },
    { tool_calls: [{ name: "execute_command", arguments: { command: ALWAYS } }] },
    { tool_calls: [{ name: "user__confirm", arguments: { question: "Proceed?" } }] },
    {
      tool_calls: [{
        name: "user__select",
        arguments: { question: "Which one?", options: ["red", "blue"] },
      }],
    },
    {
      tool_calls: [{
        name: "todo__write",
        arguments: {
          todos: [{ content: "first", status: "completed" }, {
            content: "second",
            status: "in_progress",
          }],
        },
      }],
    },
    { text: "finished" },
  ]);
  try {
    // --no-sandbox: the permission flow (the OS sandbox would auto-allow these commands).
    const h = await startAcp({
      env: e.env,
      args: ["--no-sandbox"],
      permissionAnswers: ["hold", "cancelled", "allow_always", "yes", "option-1"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      // The plain `coyote` agent: the default (sisyphus) has `auto_continue` and would be
      // re-prompted for the open plan item this script leaves.
      await h.agent.request("session/set_config_option", {
        sessionId,
        configId: "agent",
        value: "coyote",
      } as acp.SetSessionConfigOptionRequest);
      const p1 = h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "one" }],
      });
      await waitFor(() => h.permissionRequests.length === 1, 10_000, "permission request");
      await h.agent.notify("session/cancel", { sessionId });
      assert.equal((await p1).stopReason, "cancelled");
      const t1 = h.updatesFor(sessionId);
      assert.equal(finalStatus(t1, toolCalls(t1)[0].toolCallId), "failed");
      await assert.rejects(Deno.stat(`${e.ws}/held-file`));

      const before2 = h.updatesFor(sessionId).length;
      const p2 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "two" }],
      });
      assert.equal(p2.stopReason, "cancelled", "a cancelled permission outcome ends the turn");
      const t2 = h.updatesFor(sessionId).slice(before2);
      assert.equal(finalStatus(t2, toolCalls(t2)[0].toolCallId), "failed");
      await assert.rejects(Deno.stat(`${e.ws}/cancelled-file`));

      const before3 = h.updatesFor(sessionId).length;
      const p3 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "three" }],
      });
      assert.equal(p3.stopReason, "end_turn");
      const t3 = h.updatesFor(sessionId).slice(before3);
      const calls = toolCalls(t3);
      assert.deepEqual(calls.map((c) => finalStatus(t3, c.toolCallId)), [
        "completed",
        "completed",
        "completed",
        "completed",
        "completed",
      ]);
      // allow_always: only the first `touch always-file` asked; then the two questions.
      assert.equal(h.permissionRequests.length, 5);
      assert.equal(h.permissionRequests[2].toolCall.toolCallId, calls[0].toolCallId);
      assert.equal(h.permissionRequests[3].toolCall.title, "Proceed?");
      assert.deepEqual(h.permissionRequests[4].options.map((o) => o.name), ["red", "blue"]);
      const outputs = t3.filter((u) =>
        u.sessionUpdate === "tool_call_update" && u.status === "completed"
      ).map((u) => JSON.stringify(u));
      assert.ok(
        outputs.some((o) => o.includes(calls[2].toolCallId) && o.includes("yes")),
        "confirm answered yes",
      );
      assert.ok(
        outputs.some((o) => o.includes(calls[3].toolCallId) && o.includes("blue")),
        "select answered blue",
      );
      const plans = t3.filter((u) => u.sessionUpdate === "plan") as {
        entries: { content: string; status: string }[];
      }[];
      assert.ok(plans.length >= 1, "plan update");
      assert.deepEqual(plans.at(-1)!.entries.map((x) => [x.content, x.status]), [[
        "first",
        "completed",
      ], ["second", "in_progress"]]);
    } finally {
      await finish(h);
    }
    // The replay of these three turns (cancelled ones included) equals what was streamed:
    // tool calls with their final states, the plan, the answers.
    const sessionId = h.updates[0].sessionId;
    const h2 = await startAcp({ env: e.env });
    try {
      await h2.agent.request("session/load", { sessionId, cwd: e.ws, mcpServers: [] });
      assert.deepEqual(normalize(h2.updatesFor(sessionId)), normalize(h.updatesFor(sessionId)));
      assert.deepEqual(
        h2.updatesFor(sessionId).filter((u) => u.sessionUpdate === "user_message_chunk")
          .map((u) => (u as { content: { text: string } }).content.text),
        ["one", "two", "three"],
      );
    } finally {
      await finish(h2);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: stdout stays pure when a plugin tool writes to stdout", async () => {
  const e = await setup([{ tool_calls: [{ name: "noisy_tool", arguments: {} }] }, {
    text: "quiet now",
  }]);
  try {
    const plugin = new URL("./fixtures/acp/noisy_plugin.ts", import.meta.url).pathname;
    const h = await startAcp({ env: e.env, args: ["--plugin", plugin] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "noise" }],
      });
      assert.equal(r.stopReason, "end_turn");
      const upd = h.updatesFor(sessionId);
      assert.equal(finalStatus(upd, toolCalls(upd)[0].toolCallId), "completed");
    } finally {
      await finish(h);
    }
    assert.equal(h.lines.filter((l) => l.includes("NOISE")).length, 0);
    assert.equal(h.stderr().match(/NOISE/g)?.length, 5, "the noise went to stderr");
  } finally {
    await e.close();
  }
});

Deno.test("acp: closing stdin mid-turn ends the process with 0 and kills the running command", async () => {
  const marker = `sleep ${41 + Math.floor(Math.random() * 1000) / 1000}`;
  const e = await setup([{
    tool_calls: [{ name: "execute_command", arguments: { command: marker } }],
  }, { text: "never" }]);
  try {
    const h = await startAcp({ env: e.env, permissionAnswers: ["allow_once"] });
    const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    const p = h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "run" }],
    });
    p.catch(() => {}); // the connection closes under it
    await waitFor(() => running(marker), 10_000, "the command's process");
    const t0 = Date.now();
    const code = await h.close();
    h.assertStdoutPure();
    assert.equal(code, 0, h.stderr().slice(-1000));
    assert.ok(Date.now() - t0 < 10_000, "prompt shutdown");
    await waitFor(() => !running(marker), 5000, "the command to be killed");
  } finally {
    await e.close();
  }
});

Deno.test("acp: config options switch the model for the next turn; unknown values are refused", async () => {
  const e = await setup([{ text: "one" }, { text: "two" }]);
  try {
    const h = await startAcp({ env: e.env });
    try {
      const { sessionId, configOptions } = await h.agent.request("session/new", {
        cwd: e.ws,
        mcpServers: [],
      });
      const model = configOptions?.find((o) => o.id === "model");
      assert.equal(model?.currentValue, "scripted");
      await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "a" }] });
      const r = await h.agent.request("session/set_config_option", {
        sessionId,
        configId: "model",
        value: "other-model",
      });
      assert.equal(r.configOptions.find((o) => o.id === "model")?.currentValue, "other-model");
      await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "b" }] });
      const models = e.bodies().map((b) => JSON.parse(b).model);
      assert.deepEqual(models, ["scripted", "other-model"]);
      await assert.rejects(
        h.agent.request("session/set_config_option", {
          sessionId,
          configId: "agent",
          value: "no-such-agent",
        }),
        (err: { code?: number }) => err.code === -32602,
      );
      await assert.rejects(
        h.agent.request("session/set_config_option", {
          sessionId,
          configId: "colour",
          value: "red",
        }),
        (err: { code?: number }) => err.code === -32602,
      );
      const ok = await h.agent.request("session/set_config_option", {
        sessionId,
        configId: "agent",
        value: "coyote",
      });
      assert.equal(ok.configOptions.find((o) => o.id === "agent")?.currentValue, "coyote");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: cancel during a client-terminal command → killed and released before the cancelled response", async () => {
  const e = await setup([
    { tool_calls: [{ name: "execute_command", arguments: { command: "sleep 45.5" } }] },
    { text: "after" },
  ]);
  try {
    const h = await startAcp({
      env: e.env,
      clientCapabilities: { terminal: true },
      permissionAnswers: ["allow_once"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const p = h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "run" }],
      });
      await waitFor(
        () =>
          h.updatesFor(sessionId).some((u) =>
            u.sessionUpdate === "tool_call_update" &&
            (u.content ?? []).some((c) => c.type === "terminal")
          ),
        10_000,
        "terminal embedded",
      );
      await h.agent.notify("session/cancel", { sessionId });
      const r = await p;
      // Checked at the moment the response arrives.
      const [term] = h.terminals;
      const killed = term.killed, released = term.released;
      assert.equal(r.stopReason, "cancelled");
      assert.ok(killed, "terminal/kill sent before the response");
      assert.ok(released, "terminal/release sent before the response");
      const upd = h.updatesFor(sessionId);
      assert.equal(finalStatus(upd, toolCalls(upd)[0].toolCallId), "failed");
      const after = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "again" }],
      });
      assert.equal(after.stopReason, "end_turn");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: failing tools end failed, reject_always stops asking, a new file's diff has oldText null", async () => {
  const e = await setup([
    { tool_calls: [{ name: "fs_read", arguments: { path: "missing.txt" } }] },
    { tool_calls: [{ name: "no_such_tool", arguments: {} }] },
    { tool_calls: [{ name: "fs_write", arguments: "{not json" }] },
    { tool_calls: [{ name: "execute_command", arguments: { command: "touch never" } }] },
    { tool_calls: [{ name: "execute_command", arguments: { command: "touch never" } }] },
    { tool_calls: [{ name: "fs_write", arguments: { path: "sub/new.txt", content: "fresh\n" } }] },
    { text: "done" },
  ]);
  try {
    // --no-sandbox: the permission flow (the OS sandbox would auto-allow these commands).
    const h = await startAcp({
      env: e.env,
      args: ["--no-sandbox"],
      permissionAnswers: ["reject_always"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
      assert.equal(r.stopReason, "end_turn", "refusals and errors do not end the turn");
      const upd = h.updatesFor(sessionId);
      const calls = toolCalls(upd);
      assert.equal(calls.length, 6);
      assert.deepEqual(calls.map((c) => finalStatus(upd, c.toolCallId)), [
        "failed",
        "failed",
        "failed",
        "failed",
        "failed",
        "completed",
      ]);
      // reject_always: the second identical command is refused without asking.
      assert.equal(h.permissionRequests.length, 1, "asked once (workspace writes are allowed)");
      assert.equal(h.permissionRequests[0].toolCall.toolCallId, calls[3].toolCallId);
      assert.match(JSON.stringify(callUpdates(upd, calls[4].toolCallId)), /denied by policy/);
      await assert.rejects(Deno.stat(`${e.ws}/never`));
      const diff = callUpdates(upd, calls[5].toolCallId).flatMap((u) => u.content ?? [])
        .find((c) => c.type === "diff") as { path: string; oldText?: string | null } | undefined;
      assert.equal(diff?.path, `${e.ws}/sub/new.txt`);
      assert.equal(diff?.oldText, null, "new file: oldText null");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: client fs answering an opaque error for a missing file → fs_write creates it (oldText null)", async () => {
  const e = await setup([
    { tool_calls: [{ name: "fs_write", arguments: { path: "fresh.txt", content: "new\n" } }] },
    { text: "done" },
  ]);
  try {
    const h = await startAcp({
      env: e.env,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      opaqueFsErrors: true,
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "create" }],
      });
      assert.equal(r.stopReason, "end_turn");
      const upd = h.updatesFor(sessionId);
      const [call] = toolCalls(upd);
      assert.equal(finalStatus(upd, call.toolCallId), "completed");
      const diff = callUpdates(upd, call.toolCallId).flatMap((u) => u.content ?? [])
        .find((c) => c.type === "diff") as { oldText?: string | null } | undefined;
      assert.equal(diff?.oldText, null);
      assert.ok(h.fsCalls.some((c) => c.method === "fs/write_text_file"), "written by the client");
      assert.equal(await Deno.readTextFile(`${e.ws}/fresh.txt`), "new\n");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: a provider repeating tool call ids → toolCallIds stay unique in the session", async () => {
  const same = { id: "call_0", name: "fs_read", arguments: { path: "f.txt" } };
  const e = await setup([
    { tool_calls: [same] },
    { text: "one" },
    { tool_calls: [same] },
    { text: "two" },
  ]);
  try {
    await Deno.writeTextFile(`${e.ws}/f.txt`, "content\n");
    const h = await startAcp({ env: e.env });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      for (const text of ["a", "b"]) {
        const r = await h.agent.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text }],
        });
        assert.equal(r.stopReason, "end_turn");
      }
      const ids = toolCalls(h.updatesFor(sessionId)).map((c) => c.toolCallId);
      assert.equal(ids.length, 2);
      assert.notEqual(ids[0], ids[1], "unique toolCallId per session");
      // The model saw each result paired with the id of its own call.
      const last = JSON.parse(e.bodies().at(-1)!) as {
        messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
      };
      const callIds = last.messages.flatMap((m) => (m.tool_calls ?? []).map((t) => t.id));
      const resultIds = last.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
      assert.deepEqual(callIds, ids);
      assert.deepEqual(resultIds, ids);
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: a session of the headless CLI is listed and loads with its tool calls", async () => {
  const e = await setup([
    { tool_calls: [{ name: "fs_read", arguments: { path: "cli.txt" } }] },
    { text: "read it from the CLI" },
  ]);
  try {
    await Deno.writeTextFile(`${e.ws}/cli.txt`, "cli content\n");
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      // The parent's Deno cache: without it a moved cache (DENO_DIR) is cold in the child.
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      NO_COLOR: "1",
      ...e.env,
    };
    const cli = await runCoyote(
      ["--headless", "--output-format", "stream-json", "read cli.txt from the terminal"],
      { cwd: e.ws, env },
    );
    assert.equal(cli.code, 0, cli.stderr);
    const init = parseJsonLines(cli.stdout).find((l) => l.type === "init");
    const sid = String(init?.session_id);
    const h = await startAcp({ env: e.env });
    try {
      const list = await h.agent.request("session/list", { cwd: e.ws });
      const entry = list.sessions.find((x) => x.sessionId === sid);
      assert.ok(entry, "the CLI session is listed");
      assert.equal(entry.cwd, e.ws);
      assert.match(String(entry.title), /read cli\.txt/);
      await h.agent.request("session/load", { sessionId: sid, cwd: e.ws, mcpServers: [] });
      const replay = h.updatesFor(sid);
      assert.ok(
        replay.some((u) =>
          u.sessionUpdate === "user_message_chunk" &&
          (u.content as { text?: string }).text === "read cli.txt from the terminal"
        ),
      );
      const [call] = toolCalls(replay);
      assert.equal(call.kind, "read");
      assert.equal(finalStatus(replay, call.toolCallId), "completed");
      assert.equal(text(replay), "read it from the CLI");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: load replays the user's prompt as the blocks the client sent", async () => {
  const e = await setup([{ text: "seen" }]);
  try {
    const prompt: acp.ContentBlock[] = [
      { type: "text", text: "look at" },
      { type: "resource_link", uri: `file://${e.ws}/a.ts`, name: "a.ts" },
      {
        type: "resource",
        resource: { uri: `file://${e.ws}/b.md`, text: "EMBEDDED", mimeType: "text/markdown" },
      },
    ];
    const h = await startAcp({ env: e.env });
    let sessionId: string;
    try {
      sessionId = (await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] })).sessionId;
      await h.agent.request("session/prompt", { sessionId, prompt });
    } finally {
      await finish(h);
    }
    const h2 = await startAcp({ env: e.env });
    try {
      await h2.agent.request("session/load", { sessionId, cwd: e.ws, mcpServers: [] });
      const user = h2.updatesFor(sessionId).filter((u) => u.sessionUpdate === "user_message_chunk")
        .map((u) => (u as { content: unknown }).content);
      assert.deepEqual(user, prompt);
    } finally {
      await finish(h2);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: the turn limit answers max_turn_requests", async () => {
  const e = await setup([
    { tool_calls: [{ name: "fs_ls", arguments: { path: "." } }] },
    { tool_calls: [{ name: "fs_ls", arguments: { path: "." } }] },
  ]);
  try {
    const h = await startAcp({ env: e.env, args: ["--max-turns", "2"] });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "loop" }],
      });
      assert.equal(r.stopReason, "max_turn_requests");
      assert.equal(e.requests(), 2);
      const upd = h.updatesFor(sessionId);
      for (const c of toolCalls(upd)) assert.equal(finalStatus(upd, c.toolCallId), "completed");
    } finally {
      await finish(h);
    }
  } finally {
    await e.close();
  }
});

Deno.test("acp: a provider failure answers a JSON-RPC error, stdout stays pure, the session keeps working", async () => {
  const e = await setup([
    { text: "partial answer ", cut_after_chunks: 2 },
    { status: 400, error_body: { error: { message: "bad request from provider" } } },
    { text: "recovered" },
  ]);
  try {
    const h = await startAcp({ env: e.env });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      await assert.rejects(
        h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "a" }] }),
        (err: { code?: number; message?: string }) =>
          err.code === -32603 && /broke off/.test(String(err.message)),
      );
      await assert.rejects(
        h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "b" }] }),
        (err: { code?: number; message?: string }) =>
          err.code === -32603 && /bad request from provider/.test(String(err.message)),
      );
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "c" }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.match(text(h.updatesFor(sessionId)), /recovered/);
    } finally {
      await finish(h);
    }
    assert.match(h.stderr(), /bad request from provider/, "the failure is logged on stderr");
  } finally {
    await e.close();
  }
});
