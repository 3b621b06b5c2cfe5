/**
 * No lost edits (issue 18): a real headless run in which the user changes a file on disk between
 * two model requests. `fs_write` over it is refused with what changed, and the user's change is
 * kept; an existing file the session never read is refused too; after the agent reads it again the
 * write goes through; `fs_patch` needs no prior read (it is exact) and keeps the user's change.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  tool_calls: [{ id, name, arguments: args }],
});

/** The text of the tool result answering `id`, from the messages of a later request. */
// deno-lint-ignore no-explicit-any
function toolResult(body: any, id: string): string {
  // deno-lint-ignore no-explicit-any
  const m = body.messages.find((m: any) => m.role === "tool" && m.tool_call_id === id);
  assert.ok(m, `no tool result for ${id}`);
  return String(m.content);
}

Deno.test("fs_write: refused after the file changed on disk since fs_read, and for a never-read file; allowed after a re-read", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-stale-" }));
  const notes = join(dir, "notes.txt");
  const other = join(dir, "other.txt");
  await Deno.writeTextFile(notes, "agent saw this\n");
  await Deno.writeTextFile(other, "never read\n");
  const server = await startModelServer({
    script: (_req, i) => {
      switch (i) {
        case 0:
          return call("r1", "fs_read", { path: "notes.txt" });
        case 1:
          // Between the read and the write, the user edits the file on disk.
          Deno.writeTextFileSync(notes, "agent saw this\nplus the user's line\n");
          return call("w1", "fs_write", { path: "notes.txt", content: "agent version\n" });
        case 2:
          return call("w2", "fs_write", { path: "other.txt", content: "overwritten\n" });
        case 3:
          return call("p1", "fs_patch", {
            path: "other.txt",
            old_string: "never read",
            new_string: "patched",
          });
        case 4:
          return call("r2", "fs_read", { path: "notes.txt" });
        case 5:
          return call("w3", "fs_write", { path: "notes.txt", content: "agent version\n" });
        case 6:
          return call("w4", "fs_write", { path: "new/fresh.txt", content: "created\n" });
        default:
          return { text: "done" };
      }
    },
  });
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote(
      ["--headless", "--output-format", "stream-json", "edit the notes"],
      { cwd: dir, env: childEnv(env, { baseURL: server.baseURL }) },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(parseJsonLines(r.stdout).at(-1)?.type, "result");
    const bodies = server.requests.map((q) => q.body);
    const w1 = toolResult(bodies[2], "w1");
    assert.match(
      w1,
      /Not written: notes\.txt changed on disk since you read it at \d\d:\d\d:\d\d UTC: size 15→36 bytes.*fs_read it again/,
    );
    const w2 = toolResult(bodies[3], "w2");
    assert.match(w2, /Not written: other\.txt exists and you have not read it in this session/);
    assert.match(toolResult(bodies[4], "p1"), /^Patched other\.txt/);
    assert.match(toolResult(bodies[6], "w3"), /^Wrote notes\.txt/);
    assert.match(toolResult(bodies[7], "w4"), /^Created new\/fresh\.txt/);
    // The refused writes left the user's bytes alone; the allowed ones landed.
    assert.equal(await Deno.readTextFile(other), "patched\n");
    assert.equal(await Deno.readTextFile(notes), "agent version\n");
    assert.equal(await Deno.readTextFile(join(dir, "new/fresh.txt")), "created\n");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_write: a same-size change made after fs_read is refused and kept; a patch over it does not make it writable", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-stale-" }));
  const f = join(dir, "a.txt");
  await Deno.writeTextFile(f, "one\ntwo\n");
  const server = await startModelServer({
    script: (_req, i) => {
      if (i === 0) return call("r1", "fs_read", { path: "a.txt" });
      if (i === 1) {
        Deno.writeTextFileSync(f, "ONE\ntwo\n");
        return call("p1", "fs_patch", { path: "a.txt", old_string: "two", new_string: "TWO" });
      }
      if (i === 2) return call("w1", "fs_write", { path: "a.txt", content: "mine\n" });
      return { text: "done" };
    },
  });
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote(["--headless", "go"], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const bodies = server.requests.map((q) => q.body);
    assert.match(toolResult(bodies[2], "p1"), /^Patched a\.txt/);
    assert.match(
      toolResult(bodies[3], "w1"),
      /changed on disk since you read it at .*: content differs \(same size, 8 bytes\)/,
    );
    // The user's ONE and the agent's exact patch are both there; the whole-file write was refused.
    assert.equal(await Deno.readTextFile(f), "ONE\nTWO\n");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
