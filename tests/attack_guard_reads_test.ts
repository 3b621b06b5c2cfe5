/**
 * Attack: Coyote started in the home directory (or any workspace that contains it) — the
 * credential stores the OS sandbox hides from commands (`~/.ssh`, `~/.aws`, `~/.netrc`, …) and
 * Coyote's own config dir (the provider key) are then "inside the workspace", and `fs_read` /
 * `fs_grep` read them without asking while `cat` in the sandbox sees nothing. The guard's read
 * default must agree with the sandbox's hidden defaults: asking, unless a Read allow rule covers
 * the path. Real Policy, real files; plus the same through a real headless run of main.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Policy } from "../core/policy/policy.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

Deno.test("attack guard reads: credential stores inside the workspace ask, like the sandbox hides them", async () => {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-attack-home-" }));
  try {
    for (const d of [".ssh", ".aws", "cfg"]) await Deno.mkdir(join(home, d));
    await Deno.writeTextFile(join(home, ".ssh", "id_rsa"), "HOME-SSH-SECRET");
    await Deno.writeTextFile(join(home, ".aws", "credentials"), "x");
    await Deno.writeTextFile(join(home, ".netrc"), "x");
    await Deno.writeTextFile(join(home, "notes.txt"), "x");
    const policy = (allow: string[] = []) =>
      Policy.create({}, { allow, deny: [] }, {
        workspace: home,
        configDir: join(home, "cfg"),
        home,
      });
    const p = policy();
    for (const f of [".ssh/id_rsa", ".aws/credentials", ".netrc", "cfg/config.yaml"]) {
      const v = await p.evaluate({ type: "read", path: join(home, f) });
      assert.equal(v.decision, "ask", `${f}: ${v.reason}`);
    }
    assert.equal(
      (await p.evaluate({ type: "read", path: join(home, "notes.txt") })).decision,
      "allow",
    );
    // A Read allow rule covering it lifts it, as it keeps it visible in the sandbox.
    const open = policy(["Read(~/.ssh/**)"]);
    assert.equal(
      (await open.evaluate({ type: "read", path: join(home, ".ssh", "id_rsa") })).decision,
      "allow",
    );

    // End to end: `coyote` started in $HOME, fs_read and fs_grep of ~/.ssh are refused headless.
    const env = await makeCoyoteEnv();
    const server = await startModelServer({
      script: [
        {
          tool_calls: [
            { id: "r", name: "fs_read", arguments: { path: ".ssh/id_rsa" } },
            { id: "g", name: "fs_grep", arguments: { pattern: "SECRET", path: ".ssh" } },
          ],
        },
        { text: "done" },
      ],
    });
    try {
      const r = await runCoyote(["--headless", "--output-format", "json", "go"], {
        cwd: home,
        env: childEnv(env, { baseURL: server.baseURL, extra: { HOME: home } }),
      });
      assert.equal(r.code, 0, r.stderr);
      const seen = JSON.stringify(server.requests.map((q) => q.body));
      assert.equal(seen.includes("HOME-SSH-SECRET"), false, "the model never sees the key");
      const denied = JSON.parse(r.stdout).denied.map((d: { toolCallId: string }) => d.toolCallId);
      assert.deepEqual(denied.sort(), ["g", "r"]);
    } finally {
      await server.close();
      await env.cleanup();
    }
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
});
