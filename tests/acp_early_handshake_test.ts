/**
 * The ACP handshake answered before the SDK loads (core/frontends/acp/server.ts
 * `earlyHandshake`, issue 22), on real `coyote --acp-server` subprocesses fed raw lines: one
 * answer per request id (the replayed `initialize` is never answered twice), every line queued
 * meanwhile reaches the SDK in order, bad input stays the SDK's JSON-RPC error, and a prompt
 * after the early `session/new` runs through the SDK.
 */
import assert from "node:assert/strict";
import { acpTestEnv, COYOTE_FLAGS, isJsonRpc, MAIN_TS } from "./support/acp_harness.ts";

type Msg = Record<string, unknown> & { id?: unknown; method?: string };

/** Spawns the server, writes `lines` in one write, then more from `then(seen)`, until stdin closes. */
async function run(
  env: Record<string, string>,
  lines: unknown[],
  then?: (seen: Msg[], write: (m: unknown) => Promise<void>) => Promise<void>,
): Promise<Msg[]> {
  const child = new Deno.Command("deno", {
    args: [...COYOTE_FLAGS, MAIN_TS, "--acp-server"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    env,
  }).spawn();
  const enc = new TextEncoder();
  const w = child.stdin.getWriter();
  const seen: Msg[] = [];
  const reading = (async () => {
    let buf = "";
    for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += c;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const m = JSON.parse(line);
        assert.ok(isJsonRpc(m), `not JSON-RPC: ${line}`);
        seen.push(m);
      }
    }
    assert.equal(buf, "");
  })();
  await w.write(
    enc.encode(lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l)) + "\n").join("")),
  );
  await then?.(seen, (m) => w.write(enc.encode(JSON.stringify(m) + "\n")));
  await w.close();
  assert.equal((await child.status).code, 0);
  await reading;
  return seen;
}

const waitFor = async (seen: Msg[], pred: (m: Msg) => boolean) => {
  const end = Date.now() + 30_000;
  while (!seen.some(pred)) {
    if (Date.now() > end) throw new Error(`timed out; seen ${JSON.stringify(seen).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return seen.find(pred)!;
};

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } } },
};

Deno.test("acp early handshake: lines written with initialize + session/new are answered once each, in order", async () => {
  const t = await acpTestEnv([{ text: "done" }], "coyote-acp-early");
  try {
    const seen = await run(t.env, [
      INIT,
      { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: t.ws, mcpServers: [] } },
      { jsonrpc: "2.0", id: 3, method: "session/list", params: {} },
      "not json",
      { jsonrpc: "2.0", id: 4, method: "bogus/method", params: {} },
    ], async (seen) => {
      for (const id of [1, 2, 3, 4]) await waitFor(seen, (m) => m.id === id);
    });
    const answers = (id: unknown) => seen.filter((m) => m.id === id && !("method" in m));
    for (const id of [1, 2, 3, 4]) assert.equal(answers(id).length, 1, `answers to ${id}`);
    const init = answers(1)[0].result as Record<string, unknown>;
    assert.equal(init.protocolVersion, 1);
    const sid = (answers(2)[0].result as { sessionId: string }).sessionId;
    assert.match(sid, /^[0-9a-f-]{36}$/);
    assert.ok(Array.isArray((answers(3)[0].result as { sessions: unknown[] }).sessions));
    assert.equal((answers(4)[0].error as { code: number }).code, -32601);
    assert.equal(seen.filter((m) => m.id === null).length, 1, "the parse error");
    // The session's updates follow its response.
    const iNew = seen.indexOf(answers(2)[0]);
    const iCmds = seen.findIndex((m) =>
      m.method === "session/update" &&
      (m.params as { update: { sessionUpdate: string } }).update.sessionUpdate ===
        "available_commands_update"
    );
    assert.ok(iCmds > iNew, "available_commands_update after the session/new response");
  } finally {
    await t.close();
  }
});

Deno.test("acp early handshake: a prompt after the early session/new runs through the SDK", async () => {
  const t = await acpTestEnv([{ text: "hello from the model" }], "coyote-acp-early");
  try {
    const seen = await run(t.env, [
      INIT,
      { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: t.ws, mcpServers: [] } },
    ], async (seen, write) => {
      const created = await waitFor(seen, (m) => m.id === 2);
      const sessionId = (created.result as { sessionId: string }).sessionId;
      await write({
        jsonrpc: "2.0",
        id: 3,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "hi" }] },
      });
      // A bad one right behind it: the SDK's schema error.
      await write({ jsonrpc: "2.0", id: 4, method: "session/prompt", params: { sessionId } });
      await waitFor(seen, (m) => m.id === 3);
      await waitFor(seen, (m) => m.id === 4);
    });
    const done = seen.find((m) => m.id === 3)!;
    assert.equal((done.result as { stopReason: string }).stopReason, "end_turn");
    assert.equal((seen.find((m) => m.id === 4)!.error as { code: number }).code, -32602);
    const text = seen.filter((m) =>
      m.method === "session/update" &&
      (m.params as { update: { sessionUpdate: string } }).update.sessionUpdate ===
        "agent_message_chunk"
    ).map((m) => (m.params as { update: { content: { text: string } } }).update.content.text)
      .join("");
    assert.equal(text, "hello from the model");
    assert.equal(t.requests(), 1);
  } finally {
    await t.close();
  }
});

Deno.test("acp early handshake: bad first lines stay the SDK's JSON-RPC errors", async () => {
  const t = await acpTestEnv([], "coyote-acp-early");
  try {
    // A protocolVersion the schema refuses: answered by the SDK with -32602, never early.
    let seen = await run(t.env, [
      { ...INIT, params: { protocolVersion: "1" } },
    ], async (seen) => {
      await waitFor(seen, (m) => m.id === 1);
    });
    assert.equal(seen.length, 1);
    assert.equal((seen[0].error as { code: number }).code, -32602);
    // session/new before initialize: the SDK's "must be initialized" error.
    seen = await run(t.env, [
      { jsonrpc: "2.0", id: 7, method: "session/new", params: { cwd: t.ws, mcpServers: [] } },
    ], async (seen) => {
      await waitFor(seen, (m) => m.id === 7);
    });
    assert.equal((seen[0].error as { code: number }).code, -32600);
    // A session/new the early path does not take (a missing cwd): the SDK's schema error.
    seen = await run(t.env, [
      INIT,
      { jsonrpc: "2.0", id: 2, method: "session/new", params: { mcpServers: [] } },
    ], async (seen) => {
      await waitFor(seen, (m) => m.id === 2);
    });
    assert.equal(seen.filter((m) => m.id === 1).length, 1);
    assert.equal((seen.find((m) => m.id === 2)!.error as { code: number }).code, -32602);
  } finally {
    await t.close();
  }
});
