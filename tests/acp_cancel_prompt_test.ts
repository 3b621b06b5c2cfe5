/**
 * ACP regression (issue 21): `session/cancel` and a new `session/prompt` in one write while a
 * turn streams — the running turn ends `cancelled` and the new prompt runs (docs/acp.md), it is
 * not rejected with "a prompt turn is already running". Raw JSON-RPC lines to a real
 * `--acp-server` subprocess, scripted model server.
 */
import assert from "node:assert/strict";
import { acpTestEnv, COYOTE_FLAGS, isJsonRpc, MAIN_TS, waitFor } from "./support/acp_harness.ts";

Deno.test("acp: session/cancel + session/prompt in one write → cancelled, then the new prompt runs", async () => {
  const e = await acpTestEnv([
    { text: "slow ".repeat(60), chunk_size: 5, chunk_delay_ms: 40 },
    { text: "second answer" },
  ]);
  const child = new Deno.Command("deno", {
    args: [...COYOTE_FLAGS, MAIN_TS, "--acp-server"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    env: { ...e.env, NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const send = (text: string) => writer.write(enc.encode(text + "\n"));
  const lines: string[] = [];
  const byId = new Map<unknown, Record<string, unknown>>();
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
        if ("id" in m && !("method" in m)) byId.set(m.id, m);
      }
    }
  })();
  const reply = async (id: unknown) => {
    await waitFor(() => byId.has(id), 15_000, `response ${id}`);
    return byId.get(id)!;
  };
  try {
    await send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}');
    await reply(1);
    await send(
      `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":${
        JSON.stringify(e.ws)
      },"mcpServers":[]}}`,
    );
    const sid = ((await reply(2)).result as { sessionId: string }).sessionId;
    const prompt = (id: number, text: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"session/prompt","params":{"sessionId":"${sid}","prompt":[{"type":"text","text":"${text}"}]}}`;
    await send(prompt(3, "first"));
    await waitFor(
      () => lines.some((l) => l.includes("agent_message_chunk")),
      10_000,
      "first chunk",
    );
    await send(
      `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"${sid}"}}\n${
        prompt(4, "second")
      }`,
    );
    const first = await reply(3);
    assert.equal((first.result as { stopReason: string })?.stopReason, "cancelled");
    const second = await reply(4);
    assert.equal(
      second.error,
      undefined,
      `second prompt rejected: ${JSON.stringify(second.error)}`,
    );
    assert.equal((second.result as { stopReason: string }).stopReason, "end_turn");
    assert.equal(e.requests(), 2);
    assert.match(e.bodies()[1], /second/, "the second request carries the new prompt");
  } finally {
    await writer.close().catch(() => {});
    const st = await child.status;
    await reader;
    await e.close();
    for (const l of lines) assert.ok(isJsonRpc(JSON.parse(l)), `JSON-RPC line: ${l}`);
    assert.equal(st.code, 0, "exits 0 when stdin closes");
  }
});
