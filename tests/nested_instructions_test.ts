/**
 * Nested instruction files (issue 21): from the repository root, `pkg/AGENTS.md` (and a deeper
 * `pkg/sub/CLAUDE.md`) reach the model when a file tool first works in that directory, once per
 * directory — main.ts subprocess, scripted server, a real git repository.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

Deno.test("nested instructions: pkg/AGENTS.md is loaded when a file tool reads there, once", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ id: "r1", name: "fs_read", arguments: { path: "pkg/a.txt" } }] },
      { tool_calls: [{ id: "r2", name: "fs_ls", arguments: { path: "pkg" } }] },
      { tool_calls: [{ id: "r3", name: "fs_grep", arguments: { pattern: "x", path: "pkg/sub" } }] },
      { text: "done" },
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-nested-" }));
  try {
    await Deno.mkdir(`${cwd}/.git`);
    await Deno.mkdir(`${cwd}/pkg/sub`, { recursive: true });
    await Deno.writeTextFile(`${cwd}/AGENTS.md`, "ROOT-RULE-1\n");
    await Deno.writeTextFile(`${cwd}/pkg/AGENTS.md`, "PKG-RULE-7\n");
    await Deno.writeTextFile(`${cwd}/pkg/sub/CLAUDE.md`, "SUB-RULE-9\n");
    await Deno.writeTextFile(`${cwd}/pkg/a.txt`, "hello\n");
    await Deno.writeTextFile(`${cwd}/pkg/sub/b.txt`, "x\n");
    const r = await runCoyote(["--headless", "--no-sandbox", "--output-format", "json", "go"], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const bodies = server.requests.map((q) => JSON.stringify(q.body));
    assert.equal(bodies.length, 4);
    const count = (s: string, w: string) => s.split(w).length - 1;
    assert.match(bodies[0], /ROOT-RULE-1/);
    assert.equal(count(bodies[0], "PKG-RULE-7"), 0);
    // After fs_read pkg/a.txt: in its tool result, once.
    assert.equal(count(bodies[1], "PKG-RULE-7"), 1);
    assert.match(bodies[1], /Instructions from pkg\/AGENTS.md/);
    // fs_ls pkg adds nothing new; fs_grep in pkg/sub adds pkg/sub/CLAUDE.md.
    assert.equal(count(bodies[2], "PKG-RULE-7"), 1);
    assert.equal(count(bodies[2], "SUB-RULE-9"), 0);
    assert.equal(count(bodies[3], "SUB-RULE-9"), 1);
    assert.equal(count(bodies[3], "ROOT-RULE-1"), 1, "the root file is not added again");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
