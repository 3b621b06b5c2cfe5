/**
 * Eighth attacker pass: `fs_grep` searches a folder the engine allowed as a whole, and printed the
 * lines of files inside it that a `Read` rule denies: `fs_grep {pattern: "S3CRET"}` under
 * `--deny 'Read(secret.txt)'` (or `Read(secret*)`, `Read(config/**)`) showed `secret.txt:1:…`,
 * while `fs_read secret.txt` was denied. Now each file with matches is checked
 * (`ToolContext.guard`, core/engine/execute.ts; plugins/fs/held.ts): one a `Read` deny rule or an
 * explicit ask rule decides is left out and the result says how many were. Likewise `fs_patch`
 * of a denied file printed the lines around its edit ("Around line 1: S3CRET-VAxLUE") and told
 * whether `old_string` occurs: it declares a read of the file too (plugins/fs/patch.ts). Headless
 * `coyote` with a scripted model; without a rule the same calls work.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

/** One headless run calling tool `name` (default fs_grep) with `args`; resolves the result's text. */
async function grep(
  ws: string,
  flags: string[],
  args: Record<string, unknown>,
  name = "fs_grep",
): Promise<string> {
  const env = await makeCoyoteEnv();
  const server = await startModelServer({
    script: [{ tool_calls: [{ id: "g", name, arguments: args }] }, { text: "done" }],
  });
  try {
    const r = await runCoyote(["--headless", "--output-format", "json", ...flags, "go"], {
      cwd: ws,
      env: childEnv(env, { baseURL: server.baseURL }),
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const msgs = requestMessages(server.requests.at(-1)!) as { role: string; content: unknown }[];
    return String(msgs.find((m) => m.role === "tool")?.content);
  } finally {
    await server.close();
    await env.cleanup();
  }
}

Deno.test("fs_grep leaves out the files a Read rule denies or asks for", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-grep-rules-" }));
  try {
    await Deno.mkdir(join(ws, "config"));
    await Deno.writeTextFile(join(ws, "secret.txt"), "S3CRET-FILE\n");
    await Deno.writeTextFile(join(ws, "config", "x.env"), "S3CRET-CONF\n");
    await Deno.writeTextFile(join(ws, "README.md"), "S3 readme\n");
    for (
      const flags of [
        ["--deny", "Read(secret.txt)", "--deny", "Read(config/**)"],
        ["--deny", "Read(secret*)", "--deny", "Read(config/x.env)"],
      ]
    ) {
      const out = await grep(ws, flags, { pattern: "S3" });
      assert.doesNotMatch(out, /S3CRET/, `${flags}: ${out}`);
      assert.match(out, /README\.md:1:S3 readme/, out);
      assert.match(
        out,
        /2 files with matches left out: fs_read may not read them either \(rule Read\(/,
        out,
      );
      const only = await grep(ws, flags, { pattern: "S3CRET", glob: "secret*" });
      assert.match(only, /No matches[\s\S]*1 file with matches left out/, only);
    }
    assert.match(await grep(ws, [], { pattern: "S3CRET" }), /secret\.txt:1:S3CRET-FILE/);
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});

Deno.test("fs_patch of a file a Read rule denies is denied: it would show the lines around the edit", async () => {
  const ws = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-patch-rules-" }));
  try {
    await Deno.writeTextFile(join(ws, "secret.txt"), "S3CRET-VALUE\n");
    const args = { path: "secret.txt", old_string: "S3CRET-VA", new_string: "S3CRET-VAx" };
    const out = await grep(ws, ["--deny", "Read(secret.txt)"], args, "fs_patch");
    assert.match(out, /denied by policy: rule Read\(secret\.txt\)/, out);
    assert.doesNotMatch(out, /LUE/, out);
    assert.equal(await Deno.readTextFile(join(ws, "secret.txt")), "S3CRET-VALUE\n");
    assert.match(
      await grep(ws, [], args, "fs_patch"),
      /S3CRET-VAxLUE/,
      "without the rule it patches",
    );
  } finally {
    await Deno.remove(ws, { recursive: true }).catch(() => {});
  }
});
