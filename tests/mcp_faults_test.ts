/**
 * Issue 10, "MCP": field faults of the MCP client against real MCP servers (fixtures built with
 * the MCP SDK, a minimal Streamable-HTTP server) and through `coyote --acp-server`.
 * Kinds: odd `inputSchema`s (root `$ref`, root `oneOf`, non-object root, array without
 * `items`, an unrepairable one), error results of tools with an `outputSchema`, renamed tools,
 * junk on a server's stdout, `tools/list_changed`, prompts and resources, a remote server whose
 * event-stream GET is a plain JSON 200, background start-up, wrapper process trees.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { connectMcpServers, type DiscoveredMcpServer } from "../core/extensions/mcp/mod.ts";
import { sanitizeInputSchema } from "../core/extensions/mcp/schema.ts";
import { acpTestEnv, startAcp, waitFor } from "./support/acp_harness.ts";
import { crashSpec, oddSpec } from "./support/mcp_servers.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

const odd = (name = "odd", waitFile?: string): DiscoveredMcpServer => ({
  name,
  spec: oddSpec(waitFile),
  source: "test",
});

Deno.test("mcp schemas: repairs root $ref, root oneOf, non-object roots, arrays without items; refuses remote refs", () => {
  const ref = sanitizeInputSchema({
    $ref: "#/$defs/A",
    $defs: {
      A: { type: "object", properties: { t: { $ref: "#/$defs/T" } } },
      T: { type: "array" },
    },
  });
  assert.ok(ref.ok);
  assert.deepEqual(ref.schema, {
    type: "object",
    properties: { t: { type: "array", items: { type: "string" } } },
  });
  const one = sanitizeInputSchema({
    oneOf: [
      { type: "object", properties: { a: { type: "string" }, s: {} }, required: ["a", "s"] },
      { type: "object", properties: { b: { type: "number" }, s: {} }, required: ["b", "s"] },
    ],
  });
  assert.ok(one.ok);
  assert.deepEqual(one.schema.required, ["s"]);
  assert.deepEqual(Object.keys(one.schema.properties as object), ["a", "s", "b"]);
  const str = sanitizeInputSchema({ type: "string" });
  assert.ok(str.ok && str.wrapped);
  assert.deepEqual(str.schema, {
    type: "object",
    properties: { value: { type: "string" } },
    required: ["value"],
  });
  const rec = sanitizeInputSchema({
    type: "object",
    properties: { node: { $ref: "#" } },
  });
  assert.ok(rec.ok, "a recursive schema is cut, not refused");
  assert.equal(sanitizeInputSchema({ $ref: "https://x/s.json" }).ok, false);
  assert.equal(sanitizeInputSchema({ $ref: "#/$defs/missing" }).ok, false);
  assert.equal(sanitizeInputSchema("object").ok, false);
  assert.equal(sanitizeInputSchema({ oneOf: [{ type: "string" }, { type: "object" }] }).ok, false);
  assert.deepEqual(sanitizeInputSchema(undefined), {
    ok: true,
    schema: { type: "object", properties: {} },
    wrapped: false,
    changes: [],
  });
});

Deno.test("mcp faults: one odd tool never removes a server; server error text; renames; list_changed; prompts; resources", async () => {
  const warnings: string[] = [];
  const infos: string[] = [];
  const conn = await connectMcpServers([odd()], {
    cwd: Deno.cwd(),
    toolTimeoutMs: 3000,
    onWarning: (w) => warnings.push(w),
    onInfo: (l) => infos.push(l),
  });
  try {
    assert.equal(conn.servers[0].status, "connected", conn.servers[0].error);
    const names = conn.tools.map((t) => t.name).sort();
    assert.deepEqual(names, [
      "mcp__odd__add_tool",
      "mcp__odd__dotted_name_tool",
      "mcp__odd__err_out",
      "mcp__odd__good",
      "mcp__odd__huge",
      "mcp__odd__no_items",
      "mcp__odd__one_of",
      "mcp__odd__ref_root",
      "mcp__odd__string_root",
    ]);
    // Exactly one warning, naming the one tool that could not be repaired.
    const dropped = warnings.filter((w) => w.includes("dropped"));
    assert.equal(dropped.length, 1, warnings.join("\n"));
    assert.match(dropped[0], /MCP server odd: tool "bad" dropped: .*https:\/\/example\.com/);
    const schema = (n: string) =>
      // deno-lint-ignore no-explicit-any
      conn.tools.find((t) => t.name === n)!.input as Record<string, any>;
    assert.deepEqual(schema("mcp__odd__no_items").properties.list, {
      type: "array",
      items: { type: "string" },
    });
    assert.equal(schema("mcp__odd__ref_root").type, "object");
    assert.deepEqual(schema("mcp__odd__ref_root").required, ["q"]);
    assert.equal(schema("mcp__odd__one_of").type, "object");
    assert.equal(schema("mcp__odd__string_root").type, "object");
    for (const t of conn.tools) {
      assert.ok(!JSON.stringify(t.input).includes("$ref"), t.name);
      assert.ok(!JSON.stringify(t.input).includes("oneOf"), t.name);
    }

    const ctx = toolContext();
    const err = await runTool(conn.tools.find((t) => t.name === "mcp__odd__err_out")!, {}, ctx);
    assert.equal(err.isError, true);
    assert.equal(err.content, "quota exceeded: retry after 60 s");
    const ok = await runTool(conn.tools.find((t) => t.name === "mcp__odd__ref_root")!, {
      q: "hi",
    }, ctx);
    assert.equal(ok.content, 'ref_root got {"q":"hi"}');

    // An answer line over 32 MiB is dropped with a warning; the call fails, the server lives on.
    const huge = await runTool(conn.tools.find((t) => t.name === "mcp__odd__huge")!, {}, ctx);
    assert.equal(huge.isError, true);
    assert.ok(warnings.some((w) => /odd wrote a stdout line over \d+ characters/.test(w)));
    const again = await runTool(conn.tools.find((t) => t.name === "mcp__odd__good")!, {
      x: "y",
    }, ctx);
    assert.equal(again.content, 'good got {"x":"y"}');

    // The renamed tool, logged once with both names.
    const renamed = infos.filter((l) => l.includes("dotted.name.tool"));
    assert.equal(renamed.length, 1, infos.join("\n"));
    assert.match(renamed[0], /mcp__odd__dotted_name_tool/);
    assert.match(renamed[0], /mcp__odd__dotted\.name\.tool/);

    // notifications/tools/list_changed: the new tool appears, once.
    const changes: string[] = [];
    conn.onChange((c) => changes.push(c.kind));
    await runTool(conn.tools.find((t) => t.name === "mcp__odd__add_tool")!, {}, ctx);
    await waitFor(() => conn.tools.some((t) => t.name === "mcp__odd__late"), 10_000, "late tool");
    assert.ok(changes.includes("tools"));
    assert.equal(infos.filter((l) => l.includes("dotted.name.tool")).length, 1);

    assert.deepEqual(conn.prompts().map((p) => [p.server, p.name, p.arguments[0]?.name]), [[
      "odd",
      "review",
      "file",
    ]]);
    const msgs = await conn.getPrompt("odd", "review", { file: "a.ts" });
    assert.match(JSON.stringify(msgs), /REVIEW-PROMPT: review a\.ts carefully/);
    assert.deepEqual(conn.resources().map((r) => r.uri), ["memo://notes"]);
    const contents = await conn.readResource("memo://notes");
    assert.equal(contents?.[0].text, "NOTES-CONTENT from the memo server");
    assert.equal(await conn.readResource("memo://unknown"), null);
  } finally {
    await conn.close();
  }
});

Deno.test("mcp faults: junk lines on a server's stdout are logged under COYOTE_DEBUG", async () => {
  const e = await acpEnv([{ text: "ok" }]);
  try {
    await Deno.writeTextFile(
      `${e.ws}/.mcp.json`,
      JSON.stringify({ mcpServers: { odd: oddSpec() } }),
    );
    // A workspace .mcp.json is read only in a trusted workspace (docs/mcp.md).
    const h = await startAcp({
      env: { ...e.env, COYOTE_DEBUG: "1" },
      args: ["--trust-workspace"],
    });
    try {
      const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
      await waitFor(() => /MCP server odd: \d+ tool/.test(h.stderr()), 20_000, "odd ready");
      assert.match(h.stderr(), /\[mcp odd\] not JSON-RPC on stdout, skipped: JUNK-LINE-ODD/);
      await h.agent.request("session/close", { sessionId });
    } finally {
      await h.close();
      h.assertStdoutPure();
    }
  } finally {
    await e.close();
  }
});

Deno.test("mcp faults over ACP: session/new does not wait for servers; status and tools when ready; prompts as commands; resource links", async () => {
  const e = await acpEnv([
    { text: "reviewed" },
    { text: "read the notes" },
  ]);
  const gate = `${e.ws}/.gate`;
  try {
    const h = await startAcp({ env: e.env });
    try {
      // The server answers nothing until the gate file exists: session/new must not wait for it.
      const { sessionId } = await h.agent.request("session/new", {
        cwd: e.ws,
        mcpServers: [{
          name: "odd",
          command: "deno",
          args: oddSpec(gate).args,
          env: [],
        }],
      });
      assert.ok(sessionId);
      const statusOf = () =>
        h.updatesFor(sessionId).filter((u) => u.sessionUpdate === "session_info_update")
          .map((u) =>
            ((u as { _meta?: { coyote?: { mcpServers?: { status: string; tools: number }[] } } })
              ._meta?.coyote?.mcpServers ?? [])[0]
          ).filter(Boolean);
      await waitFor(() => statusOf().length > 0, 5000, "first status");
      assert.equal(statusOf()[0]!.status, "starting");
      await Deno.writeTextFile(gate, "");
      await waitFor(() => statusOf().some((s) => s!.status === "connected"), 20_000, "ready");
      assert.equal(statusOf().find((s) => s!.status === "connected")!.tools, 9);
      await waitFor(
        () =>
          h.updatesFor(sessionId).some((u) =>
            u.sessionUpdate === "available_commands_update" &&
            u.availableCommands.some((c) => c.name === "odd:review")
          ),
        5000,
        "the MCP prompt as a slash command",
      );
      const cmd = h.updatesFor(sessionId).filter((u) =>
        u.sessionUpdate === "available_commands_update"
      ).at(-1) as { availableCommands: acp.AvailableCommand[] };
      assert.equal(cmd.availableCommands.find((c) => c.name === "odd:review")?.input?.hint, "file");

      // A required argument missing: the usage, without the model.
      const before = h.updatesFor(sessionId).length;
      const r0 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/odd:review" }],
      });
      assert.equal(r0.stopReason, "end_turn");
      assert.match(JSON.stringify(h.updatesFor(sessionId).slice(before)), /needs file/);
      assert.equal(e.ms.requests.length, 0);

      // An MCP prompt as a slash command: its messages go to the model.
      const r1 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "/odd:review src/main.ts" }],
      });
      assert.equal(r1.stopReason, "end_turn");
      const body1 = JSON.stringify(e.ms.requests[0].body);
      assert.match(body1, /REVIEW-PROMPT: review src\/main\.ts carefully/);
      assert.match(body1, /mcp__odd__ref_root/, "the server's tools reach the model");

      // A resource link to an MCP resource is attached with its contents.
      const r2 = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "summarise" }, {
          type: "resource_link",
          uri: "memo://notes",
          name: "notes",
        }],
      });
      assert.equal(r2.stopReason, "end_turn");
      assert.match(JSON.stringify(e.ms.requests[1].body), /NOTES-CONTENT from the memo server/);
    } finally {
      await h.close();
      h.assertStdoutPure();
    }
  } finally {
    await e.close();
  }
});

/** Live (non-zombie) pids whose command line starts with `prefix`. */
function pidsWith(prefix: string): number[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid=,stat=,args="], stdout: "piped" })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim().split(/\s+/))
    .filter((f) =>
      f.length >= 3 && !f[1].startsWith("Z") && f.slice(2).join(" ").startsWith(prefix)
    )
    .map((f) => Number(f[0]));
}

Deno.test("mcp faults: a server started through sh -c leaves no process behind (group and setsid children)", async () => {
  const tag = `${71 + Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 1000)}`;
  const inner = crashSpec();
  const script = `sleep ${tag}1 & setsid sleep ${tag}2 & ${inner.command} ${
    inner.args.map((a) => `'${a}'`).join(" ")
  }`;
  const conn = await connectMcpServers([{
    name: "wrapped",
    spec: { command: "sh", args: ["-c", script] },
    source: "test",
  }], { cwd: Deno.cwd(), onWarning: () => {} });
  try {
    assert.equal(conn.servers[0].status, "connected", conn.servers[0].error);
    await waitFor(() => pidsWith(`sleep ${tag}`).length === 2, 5000, "the wrapper's children");
  } finally {
    await conn.close();
  }
  await waitFor(
    () => pidsWith(`sleep ${tag}`).length === 0,
    5000,
    "every process of the tree to end",
  );
});

Deno.test("mcp faults: a Streamable-HTTP server answering the GET with 200 application/json is not polled", async () => {
  let gets = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    if (req.method === "GET") {
      gets++;
      return Response.json({ ok: true });
    }
    if (req.method === "DELETE") return new Response(null, { status: 200 });
    const msg = await req.json();
    if (!("id" in msg)) return new Response(null, { status: 202 });
    const result = msg.method === "initialize"
      ? {
        protocolVersion: msg.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "json-only", version: "1" },
      }
      : msg.method === "tools/list"
      ? { tools: [{ name: "ping", inputSchema: { type: "object", properties: {} } }] }
      : { content: [{ type: "text", text: "pong" }] };
    return Response.json({ jsonrpc: "2.0", id: msg.id, result });
  });
  const infos: string[] = [];
  const conn = await connectMcpServers([{
    name: "jsononly",
    spec: { type: "http", url: `http://127.0.0.1:${server.addr.port}/mcp` },
    source: "test",
  }], { cwd: Deno.cwd(), onInfo: (l) => infos.push(l), onWarning: () => {} });
  try {
    assert.equal(conn.servers[0].status, "connected", conn.servers[0].error);
    const r = await runTool(conn.tools[0], {}, toolContext());
    assert.equal(r.content, "pong");
    // The SDK alone re-sends the GET every second; give it time to try.
    await new Promise((res) => setTimeout(res, 2500));
    assert.equal(gets, 1, "one GET, then no polling");
    assert.ok(
      infos.some((l) => /jsononly: its event-stream GET answered 200/.test(l)),
      infos.join(),
    );
  } finally {
    await conn.close();
    await server.shutdown();
  }
});

const acpEnv = (script: unknown[]) => acpTestEnv(script, "coyote-mcpf");
