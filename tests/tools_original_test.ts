/**
 * The original Coyote's `fs_cat` and `ast_grep` tools (plugins/fs/cat.ts, ast_grep.ts; issue 17):
 * `fs_cat` returns a whole file as it is and stamps the read; `ast_grep` runs the real ast-grep
 * program (npm `@ast-grep/cli`, tests/support/ast_grep.ts) and matches syntax, not text, honours
 * `.gitignore`, names a bad language and a missing program, and in a session runs inside the OS
 * sandbox; both reach an agent only by name.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fsCatTool } from "../plugins/fs/cat.ts";
import { AST_GREP_MISSING, makeAstGrepTool } from "../plugins/fs/ast_grep.ts";
import { fsWriteTool } from "../plugins/fs/write.ts";
import { type CommandLauncher, directLauncher } from "../plugins/exec/mod.ts";
import { NAMED_ONLY_TOOLS, selectTools } from "../core/agents/resolve.ts";
import { corePlugins } from "../plugins/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";
import { astGrepDir } from "./support/ast_grep.ts";
import { Policy } from "../core/policy/policy.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

/** The direct launcher with `PATH` set (the folder of ast-grep first, or none of it). */
function withPath(path: string): CommandLauncher {
  return {
    prepare: async (c, cwd, sh) => {
      const plan = await directLauncher.prepare(c, cwd, sh);
      return "refused" in plan ? plan : { ...plan, env: { ...plan.env, PATH: path } };
    },
  };
}

async function tree(files: Record<string, string | Uint8Array>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "coyote-orig-tools-" });
  for (const [rel, body] of Object.entries(files)) {
    await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
    if (typeof body === "string") await Deno.writeTextFile(join(dir, rel), body);
    else await Deno.writeFile(join(dir, rel), body);
  }
  return dir;
}

Deno.test("fs_cat: the whole file as it is, a note for an empty one, errors naming the way out", async () => {
  const long = "x".repeat(5000);
  const dir = await tree({
    "a.txt": `one\n${long}\nthree\n`,
    "empty.txt": "",
    "bin.dat": new Uint8Array([1, 0, 2]),
    "big.txt": "y".repeat(300 * 1024),
    "sub/b.txt": "b\n",
  });
  try {
    const ctx = toolContext({ cwd: dir });
    const a = await runTool(fsCatTool, { path: "a.txt" }, ctx);
    assert.equal(a.isError, undefined);
    assert.equal(a.content, `one\n${long}\nthree\n`, "no numbers, no line cut");
    assert.equal(
      (await runTool(fsCatTool, { path: "empty.txt" }, ctx)).content,
      "(empty file: empty.txt)",
    );
    const err = async (path: string, re: RegExp) => {
      const r = await runTool(fsCatTool, { path }, ctx);
      assert.equal(r.isError, true, path);
      assert.match(String(r.content), re);
    };
    await err("bin.dat", /bin\.dat is a binary file/);
    await err("sub", /sub is a directory; use fs_ls/);
    await err("missing.txt", /missing\.txt/);
    await err(
      "big.txt",
      /big\.txt is 307200 bytes, over fs_cat's 262144; read it in parts with fs_read/,
    );
    // The read is stamped: fs_write may replace the file next, as after fs_read.
    const w = await runTool(fsWriteTool, { path: "a.txt", content: "new\n" }, ctx);
    assert.notEqual(w.isError, true, String(w.content));
    assert.equal(await Deno.readTextFile(join(dir, "a.txt")), "new\n");
    const unseen = await runTool(fsWriteTool, { path: "sub/b.txt", content: "c\n" }, ctx);
    assert.equal(unseen.isError, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ast_grep: structural matches across formatting, .gitignore honoured, language and paths", async () => {
  const bin = await astGrepDir();
  const dir = await tree({
    ".gitignore": "build/\n",
    "src/a.ts":
      "const a = foo(1, 2);\nfunction f() {\n  return foo(\n    3);\n}\n// foo(4) in a comment\n",
    "src/b.py": "foo(5)\n",
    "build/c.ts": "foo(6)\n",
    "src/n.ts": "x = -1;\n",
  });
  try {
    await new Deno.Command("git", { args: ["init", "-q", dir] }).output();
    const ctx = toolContext({ cwd: dir });
    const tool = makeAstGrepTool(withPath(`${bin}:/usr/bin:/bin`));
    const ts = await runTool(tool, { pattern: "foo($$$A)", language: "typescript" }, ctx);
    assert.equal(ts.isError, undefined, String(ts.content));
    assert.equal(
      ts.content,
      "src/a.ts:1:const a = foo(1, 2);\nsrc/a.ts:3:  return foo( (+1 lines)",
      "the comment is no call; build/ is ignored; b.py is another language",
    );
    const py = await runTool(tool, { pattern: "foo($X)", language: "python", paths: ["src"] }, ctx);
    assert.equal(py.content, "src/b.py:1:foo(5)");
    // A pattern that looks like an option is still the pattern.
    const neg = await runTool(tool, { pattern: "-1", language: "ts", paths: ["src/n.ts"] }, ctx);
    assert.equal(neg.content, "src/n.ts:1:x = -1;");
    const none = await runTool(tool, { pattern: "bar($X)", language: "ts" }, ctx);
    assert.equal(none.isError, undefined);
    assert.match(String(none.content), /^No structural matches for bar\(\$X\) in \./);
    const bad = await runTool(tool, { pattern: "foo($X)", language: "klingon" }, ctx);
    assert.equal(bad.isError, true);
    assert.match(String(bad.content), /ast-grep failed \(exit 2\): .*klingon is not supported/s);
    const gone = await runTool(tool, { pattern: "foo($X)", paths: ["nope"] }, ctx);
    assert.equal(gone.isError, true);
    assert.equal(gone.content, "path not found: nope");
    // Without the program: how to install it, and fs_grep meanwhile.
    const missing = await runTool(
      makeAstGrepTool(withPath("/usr/bin:/bin")),
      { pattern: "foo($X)" },
      ctx,
    );
    assert.equal(missing.isError, true);
    assert.equal(missing.content, AST_GREP_MISSING);
    // A file a Read deny rule covers is left out, and the result says so (plugins/fs/held.ts).
    const policy = Policy.create({ deny: ["Read(src/a.ts)"] }, { allow: [], deny: [] }, {
      workspace: dir,
      configDir: "/c",
    });
    await policy.globsReady();
    const held = await runTool(
      tool,
      { pattern: "foo($$$A)", language: "typescript" },
      { ...ctx, guard: (a) => policy.evaluate(a) },
    );
    assert.doesNotMatch(String(held.content), /^src\/a\.ts:/m);
    assert.match(String(held.content), /1 file with matches left out: .*Read\(src\/a\.ts\)/);
    // Read-only, and its reads are the paths asked for.
    assert.equal(tool.readOnly, true);
    assert.deepEqual(tool.access?.({ pattern: "x", paths: ["src", "lib"] }, dir), [
      { type: "read", path: "src" },
      { type: "read", path: "lib" },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_cat and ast_grep reach an agent only when its tools name them", () => {
  const all = corePlugins.flatMap((p) => p.tools ?? []);
  assert.deepEqual([...NAMED_ONLY_TOOLS].filter((n) => all.some((t) => t.name === n)), [
    "fs_cat",
    "ast_grep",
  ]);
  const names = (tools?: string[]) =>
    selectTools(all, { name: "a", description: "d", instructions: "", tools }).map((t) => t.name);
  assert.ok(!names(undefined).includes("fs_cat") && !names(undefined).includes("ast_grep"));
  assert.ok(names(undefined).includes("fs_read"));
  assert.deepEqual(names(["fs_*"]).filter((n) => NAMED_ONLY_TOOLS.has(n)), []);
  assert.deepEqual(names(["fs_cat", "ast_grep", "fs_grep"]), ["fs_grep", "fs_cat", "ast_grep"]);
});

Deno.test("ast_grep in a session runs the program inside the session's OS sandbox", async () => {
  const server = await startModelServer({
    script: [
      { tool_calls: [{ name: "ast_grep", arguments: { pattern: "foo($X)", language: "ts" } }] },
      { text: "done" },
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-orig-tools-" });
  try {
    await Deno.mkdir(join(env.configDir, "agents/finder"), { recursive: true });
    await Deno.writeTextFile(
      join(env.configDir, "agents/finder/config.yaml"),
      "description: finds calls\ntools: [ast_grep]\ninstructions: find\n",
    );
    await Deno.writeTextFile(join(cwd, "a.ts"), "foo(1)\n");
    const path = `${await astGrepDir()}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
    const r = await runCoyote(
      ["-a", "finder", "--headless", "--output-format", "stream-json", "find foo calls"],
      { cwd, env: childEnv(env, { baseURL: server.baseURL, extra: { PATH: path } }) },
    );
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(events[0].sandbox.active, true, "this test needs the OS sandbox (bwrap)");
    const done = events.find((e) =>
      e.update?.sessionUpdate === "tool_call_update" && e.update.status === "completed"
    );
    assert.equal(done.update.content[0].content.text, "a.ts:1:foo(1)");
    assert.deepEqual(done.update.rawOutput, { matches: 1, truncated: false, sandboxed: true });
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
