/**
 * ACP prompt capabilities (issue 21): a prompt with a content kind `initialize` did not
 * advertise (an image while `promptCapabilities.image` is false, audio) is refused with
 * `-32602` naming the block and the capability, and nothing reaches the model; the same image
 * is accepted when the model is configured for images. Real `--acp-server` subprocess, the
 * official client, scripted model server.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { acpTestEnv, finishAcp, startAcp } from "./support/acp_harness.ts";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

Deno.test("acp prompt caps: an image or audio block not advertised is refused with -32602; nothing reaches the model", async () => {
  const e = await acpTestEnv([{ text: "plain answer" }], "coyote-acp-caps");
  const h = await startAcp({ env: e.env });
  try {
    assert.equal(h.init?.agentCapabilities?.promptCapabilities?.image, false);
    const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    for (
      const block of [
        { type: "image", data: PNG, mimeType: "image/png" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      ] as acp.ContentBlock[]
    ) {
      const err = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "look" }, block],
      }).then(() => null, (x) => x as acp.RequestError);
      assert.ok(err, `${block.type} refused`);
      assert.equal(err.code, -32602, `invalid params for ${block.type}`);
      assert.match(err.message, new RegExp(`prompt\\[1\\] is a "${block.type}" block`));
      assert.match(err.message, /promptCapabilities\.(image|audio): false/);
    }
    assert.equal(e.requests(), 0, "no model request for a refused prompt");
    // The session is unharmed: a text prompt runs, and the refused image is not in its history.
    const ok = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "just text" }],
    });
    assert.equal(ok.stopReason, "end_turn");
    assert.doesNotMatch(e.bodies()[0], /image_url|data:image/);
  } finally {
    await finishAcp(h);
    await e.close();
  }
});

Deno.test("acp prompt caps: with models.<name>.images true the image is advertised and sent", async () => {
  const e = await acpTestEnv([{ text: "a red pixel" }], "coyote-acp-caps");
  await Deno.mkdir(`${e.data}/config`, { recursive: true });
  await Deno.writeTextFile(
    `${e.data}/config/config.yaml`,
    "models:\n  scripted:\n    images: true\n",
  );
  const h = await startAcp({ env: e.env });
  try {
    assert.equal(h.init?.agentCapabilities?.promptCapabilities?.image, true);
    const { sessionId } = await h.agent.request("session/new", { cwd: e.ws, mcpServers: [] });
    const r = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "look" }, { type: "image", data: PNG, mimeType: "image/png" }],
    });
    assert.equal(r.stopReason, "end_turn");
    assert.match(e.bodies()[0], /image_url/);
  } finally {
    await finishAcp(h);
    await e.close();
  }
});
