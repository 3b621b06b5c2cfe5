/**
 * MCP resources the model lists and reads itself (issue 21; core/extensions/mcp/resource_tools.ts):
 * with a connected server that lists resources, the model gets `mcp__list_resources` and
 * `mcp__read_resource`, which run without a permission ask (read-only; a headless run denies
 * asks) and return the list and the contents; with servers that list none, the tools are not
 * offered; an unknown URI is a tool error naming it. main.ts subprocesses (headless), real MCP
 * servers (tests/fixtures/mcp/odd_server.ts, noisy_server.ts), scripted model server.
 */
import assert from "node:assert/strict";
import { type ScriptedReply, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { noisySpec, oddSpec } from "./support/mcp_servers.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function run(script: ScriptedReply[], servers: Record<string, unknown>) {
  const server = await startModelServer({ script });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-mcp-res-" }));
  try {
    await Deno.writeTextFile(`${env.configDir}/mcp.json`, JSON.stringify({ mcpServers: servers }));
    const r = await runCoyote(["--headless", "--output-format", "json", "go"], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    return { ...r, requests: server.requests.map((q) => q.body as Json) };
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
}

const names = (body: Json): string[] => (body.tools ?? []).map((t: Json) => t.function.name);
const toolMessages = (body: Json): string[] =>
  body.messages.filter((m: Json) => m.role === "tool").map((m: Json) => String(m.content));

Deno.test("mcp resources: the model lists and reads a server's resources with mcp__list_resources / mcp__read_resource", async () => {
  const r = await run([
    { tool_calls: [{ id: "l1", name: "mcp__list_resources", arguments: {} }] },
    { tool_calls: [{ id: "r1", name: "mcp__read_resource", arguments: { uri: "memo://notes" } }] },
    {
      tool_calls: [{
        id: "r2",
        name: "mcp__read_resource",
        arguments: { uri: "memo://missing", server: "odd" },
      }],
    },
    { text: "read them" },
  ], { odd: oddSpec() });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.requests.length, 4, r.stderr);
  assert.ok(names(r.requests[0]).includes("mcp__list_resources"));
  assert.ok(names(r.requests[0]).includes("mcp__read_resource"));
  const listed = JSON.parse(toolMessages(r.requests[1])[0]);
  assert.deepEqual(listed, [{
    server: "odd",
    uri: "memo://notes",
    name: "notes",
    mimeType: "text/plain",
  }]);
  assert.equal(toolMessages(r.requests[2])[1], "NOTES-CONTENT from the memo server");
  assert.match(
    toolMessages(r.requests[3])[2],
    /no running MCP server named odd lists the resource memo:\/\/missing/,
  );
  assert.doesNotMatch(
    r.stderr,
    /denied|needs approval/i,
    "no permission ask for the resource tools",
  );
});

Deno.test("mcp resources: no resource tools when no connected server lists resources", async () => {
  const r = await run([{ text: "nothing to read" }], { noisy: noisySpec() });
  assert.equal(r.code, 0, r.stderr);
  const tools = names(r.requests[0]);
  assert.ok(tools.some((n) => n.startsWith("mcp__noisy__")), "the server's own tools are there");
  assert.ok(!tools.includes("mcp__list_resources"));
  assert.ok(!tools.includes("mcp__read_resource"));
});
