/**
 * `-C DIR` / `--cd DIR`: the session works in DIR (workspace, instructions, guard, transcript cwd)
 * and `-f FILE` is relative to it; a missing DIR is a usage error (exit 2). This is how the
 * `deno task coyote` command, which always starts in Coyote's own folder, works on another repo.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";

Deno.test("-C DIR: the session works in DIR; -f is relative to it; a bad DIR exits 2", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "w", name: "fs_write", arguments: { path: "out.txt", content: "y" } }] },
      { text: "written" },
    ],
  });
  const env = await makeCoyoteEnv();
  const from = await Deno.makeTempDir();
  const repo = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.writeTextFile(`${repo}/AGENTS.md`, "REPO-RULES-5");
    await Deno.writeTextFile(`${repo}/notes.txt`, "NOTES-6");
    const e = childEnv(env, { baseURL: server.baseURL });
    const r = await runCoyote(
      ["-C", repo, "--headless", "--output-format", "stream-json", "-f", "notes.txt", "write it"],
      { cwd: from, env: e },
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = parseJsonLines(r.stdout);
    assert.equal(lines[0].cwd, repo);
    assert.equal(await Deno.readTextFile(`${repo}/out.txt`), "y");
    await assert.rejects(Deno.stat(`${from}/out.txt`));
    // deno-lint-ignore no-explicit-any
    const msgs = (server.requests[0].body as any).messages;
    assert.match(msgs[0].content, /REPO-RULES-5/);
    assert.match(msgs[1].content, /NOTES-6/);

    const bad = await runCoyote(["--cd", `${repo}/missing`, "--headless", "hi"], {
      cwd: from,
      env: e,
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^coyote: cannot work in -C .*missing/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(from, { recursive: true });
    await Deno.remove(repo, { recursive: true });
  }
});
