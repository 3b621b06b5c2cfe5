/**
 * MCP tool results with images (issue 21): a model whose `models:` entry says `images: true`
 * gets the image as an OpenAI `image_url` data-URL part (a user message right after the tool
 * results; a tool message carries text only), a text-only or unknown model gets the placeholder
 * alone. main.ts subprocesses, a real MCP stdio server (tests/fixtures/mcp/image_server.ts), the
 * scripted model server.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { DENO_JSON } from "./support/mcp_servers.ts";

const IMAGE_SERVER = new URL("./fixtures/mcp/image_server.ts", import.meta.url).pathname;
const PNG_PREFIX = "data:image/png;base64,iVBORw0KGgo";

async function run(images: boolean | undefined) {
  const ce = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir({ prefix: "coyote-mcp-img-" });
  await Deno.writeTextFile(
    `${ws}/.mcp.json`,
    JSON.stringify({
      mcpServers: {
        img: { command: "deno", args: ["run", "-A", "--config", DENO_JSON, IMAGE_SERVER] },
      },
    }),
  );
  if (images !== undefined) {
    await Deno.writeTextFile(
      `${ce.configDir}/config.yaml`,
      `models:\n  scripted:\n    images: ${images}\n`,
    );
  }
  const ms = await startModelServer({
    script: [
      {
        tool_calls: [
          { id: "s1", name: "mcp__img__snapshot", arguments: {} },
          { id: "s2", name: "mcp__img__snapshot", arguments: {} },
        ],
      },
      { text: "seen" },
    ],
  });
  try {
    const r = await runCoyote([
      "--headless",
      "--trust-workspace",
      "--output-format",
      "json",
      "--allow",
      "Tool(mcp__img__*)",
      "look",
    ], { cwd: ws, env: childEnv(ce, { baseURL: ms.baseURL }) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(ms.requests.length, 2, r.stderr);
    return (ms.requests[1].body as { messages: Record<string, unknown>[] }).messages;
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
}

Deno.test("mcp images: an image-capable model gets image_url parts after the tool results", async () => {
  const msgs = await run(true);
  const roles = msgs.map((m) => m.role);
  // system, user, assistant (2 calls), tool, tool, user (images) — tool results stay paired.
  assert.deepEqual(roles.slice(-4), ["assistant", "tool", "tool", "user"]);
  const last = msgs.at(-1)!.content as { type: string; image_url?: { url: string } }[];
  const urls = last.filter((p) => p.type === "image_url").map((p) => p.image_url!.url);
  assert.equal(urls.length, 2);
  for (const u of urls) assert.ok(u.startsWith(PNG_PREFIX), u.slice(0, 60));
  assert.match(String(msgs.at(-2)!.content), /snapshot taken/);
});

for (const images of [false, undefined]) {
  Deno.test(`mcp images: a model with images ${images} gets the placeholder only`, async () => {
    const msgs = await run(images);
    assert.deepEqual(msgs.slice(-3).map((m) => m.role), ["assistant", "tool", "tool"]);
    const text = JSON.stringify(msgs);
    assert.ok(!text.includes(PNG_PREFIX));
    assert.match(text, /\[image: image\/png, \d+ bytes\]/);
  });
}
