/**
 * Interop: the public `acpx` ACP client from npm (`npx -y acpx@0.19.1`) drives
 * `coyote --acp-server` (as a raw `--agent` command) through one `exec` turn against the
 * scripted model: initialize → session/new → prompt (an fs_read answered through acpx's
 * own `fs/read_text_file`) → end_turn. acpx prints the ACP traffic as NDJSON
 * (`--format json`); `npx -y` fetches acpx on first use. Without Node's `npx` the test is skipped
 * with a message on stderr (README "Tests").
 */
import assert from "node:assert/strict";
import { COYOTE_FLAGS, MAIN_TS } from "./support/acp_harness.ts";
import { startModelServer } from "./support/model_server.ts";

export const ACPX = "acpx@0.19.1";

/** True when Node's `npx` runs. This one test needs it (and the npm registry or a warm cache). */
function hasNpx(): boolean {
  try {
    return new Deno.Command("npx", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const NPX = hasNpx();
if (!NPX) {
  console.error(
    "acpx_test: skipped: Node's `npx` is not on PATH (install Node.js; the test fetches acpx from the npm registry once)",
  );
}

Deno.test({
  name: "acpx (npm) drives coyote --acp-server through one exec turn",
  ignore: !NPX,
}, async () => {
  const ws = await Deno.makeTempDir({ prefix: "coyote-acpx-ws-" });
  const home = await Deno.makeTempDir({ prefix: "coyote-acpx-home-" });
  await Deno.writeTextFile(`${ws}/a.txt`, "alpha\n");
  const ms = await startModelServer({
    script: [
      { tool_calls: [{ name: "fs_read", arguments: { path: "a.txt" } }] },
      { text: "The file says alpha." },
    ],
  });
  const realHome = Deno.env.get("HOME") ?? "/root";
  try {
    const agent = ["deno", ...COYOTE_FLAGS, MAIN_TS, "--acp-server"].join(" ");
    const out = await new Deno.Command("npx", {
      args: [
        "-y",
        ACPX,
        "--agent",
        agent,
        "--cwd",
        ws,
        "--approve-all",
        "--format",
        "json",
        "--timeout",
        "120",
        "exec",
        "what is in a.txt?",
      ],
      env: {
        HOME: home,
        npm_config_cache: Deno.env.get("npm_config_cache") ?? `${realHome}/.npm`,
        npm_config_update_notifier: "false",
        DENO_DIR: Deno.env.get("DENO_DIR") ?? `${realHome}/.cache/deno`,
        COYOTE_DATA_DIR: `${home}/data`,
        COYOTE_CONFIG_DIR: `${home}/cfg`,
        OPENAI_BASE_URL: ms.baseURL,
        OPENAI_API_KEY: "k",
        COYOTE_MODEL: "scripted",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `acpx failed:\n${stderr.slice(-3000)}`);
    const msgs = stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    const fromAgent = msgs.filter((m) => m.method === "fs/read_text_file");
    assert.equal(fromAgent.length, 1, "the agent read the file through acpx");
    assert.equal(fromAgent[0].params.path, `${ws}/a.txt`);
    const stop = msgs.find((m) => m.result?.stopReason);
    assert.equal(stop?.result.stopReason, "end_turn");
    const text = msgs.filter((m) => m.params?.update?.sessionUpdate === "agent_message_chunk")
      .map((m) => m.params.update.content.text).join("");
    assert.equal(text, "The file says alpha.");
    assert.ok(
      msgs.some((m) =>
        m.params?.update?.sessionUpdate === "tool_call" && m.params.update.kind === "read"
      ),
    );
    assert.equal(ms.requests.length, 2);
  } finally {
    await ms.close();
    await Deno.remove(ws, { recursive: true }).catch(() => {});
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
