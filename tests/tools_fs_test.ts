/**
 * The fs tool pack against real temp folders and a real temp git repository:
 * fs_read, fs_ls, fs_glob, fs_grep (inline and worker paths), fs_write,
 * fs_patch, and the ACP client fs route (`ctx.host`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { HostServices, ToolContext } from "../sdk/mod.ts";
import {
  fsGlobTool,
  fsGrepTool,
  fsLsTool,
  fsPatchTool,
  fsReadTool,
  fsWriteTool,
} from "../plugins/fs/mod.ts";
import { buildSpec, grepTree, requiredLiteral } from "../plugins/fs/grep_engine.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

const run = runTool;
function ctxFor(cwd: string, host?: HostServices, signal?: AbortSignal): ToolContext {
  return toolContext({ cwd, host, signal });
}

/** A temp git repo with ignore rules at two levels, a binary file and sources. */
async function makeRepo(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  const git = await new Deno.Command("git", {
    args: ["init", "-q", dir],
    stdout: "null",
    stderr: "null",
  })
    .output();
  assert.ok(git.success, "git init");
  const files: Record<string, string> = {
    ".gitignore": "*.log\nbuild/\n!keep.log\n",
    "README.md": "# Demo\nneedle in readme\n",
    "src/main.ts": "import { add } from './util.ts';\nconsole.log(add(1, 2)); // needle\n",
    "src/util.ts": "export function add(a: number, b: number) {\n  return a + b;\n}\n",
    "src/app.log": "needle in a log\n",
    "keep.log": "needle kept by negation\n",
    "build/out.js": "needle in build\n",
    "pkg/.gitignore": "secret.txt\n",
    "pkg/secret.txt": "needle secret\n",
    "pkg/public.txt": "Needle public\n",
    "pkg/deep/x.py": "def f():\n    return 'needle'\n",
  };
  for (const [rel, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, rel), text);
  }
  const bin = new Uint8Array(4096);
  bin.set(new TextEncoder().encode("needle"), 100);
  await Deno.writeFile(join(dir, "src/blob.bin"), bin);
  return dir;
}

Deno.test("fs_read: numbered lines, offset/limit, footer, locations", async () => {
  const dir = await makeRepo();
  try {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    await Deno.writeTextFile(join(dir, "n.txt"), lines);
    const all = await run(fsReadTool, { path: "n.txt" }, ctxFor(dir));
    assert.equal(all.isError, undefined);
    assert.equal(all.content.split("\n").length, 30);
    assert.equal(all.content.split("\n")[0], "     1\tline 1");
    assert.deepEqual(all.locations, [{ path: join(dir, "n.txt"), line: 1 }]);

    const win = await run(fsReadTool, { path: "n.txt", offset: 10, limit: 3 }, ctxFor(dir));
    assert.equal(
      win.content,
      "    10\tline 10\n    11\tline 11\n    12\tline 12\n[more lines follow; continue with offset=13]",
    );
    const tail = await run(fsReadTool, { path: join(dir, "n.txt"), offset: 29 }, ctxFor(dir));
    assert.equal(tail.content, "    29\tline 29\n    30\tline 30");

    const past = await run(fsReadTool, { path: "n.txt", offset: 31 }, ctxFor(dir));
    assert.equal(past.isError, true);
    assert.match(past.content, /offset 31 is past the end of n\.txt \(30 lines\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_read: errors, binary, empty, long lines, CRLF, no trailing newline", async () => {
  const dir = await makeRepo();
  try {
    const missing = await run(fsReadTool, { path: "nope.txt" }, ctxFor(dir));
    assert.equal(missing.isError, true);
    assert.equal(missing.content, "File not found: nope.txt");

    const isDir = await run(fsReadTool, { path: "src" }, ctxFor(dir));
    assert.equal(isDir.isError, true);
    assert.match(isDir.content, /src is a directory; use fs_ls/);

    const bin = await run(fsReadTool, { path: "src/blob.bin" }, ctxFor(dir));
    assert.equal(bin.isError, undefined);
    assert.match(bin.content, /binary file/);
    assert.ok(!bin.content.includes("needle"));

    await Deno.writeTextFile(join(dir, "empty.txt"), "");
    assert.match((await run(fsReadTool, { path: "empty.txt" }, ctxFor(dir))).content, /is empty/);

    await Deno.writeTextFile(join(dir, "long.txt"), "x".repeat(5000) + "\nshort");
    const long = await run(fsReadTool, { path: "long.txt" }, ctxFor(dir));
    const [first, second] = long.content.split("\n");
    assert.equal(first, `     1\t${"x".repeat(2000)} … [line truncated: 5000 chars]`);
    assert.equal(second, "     2\tshort");

    await Deno.writeTextFile(join(dir, "crlf.txt"), "a\r\nb\r\n");
    assert.equal(
      (await run(fsReadTool, { path: "crlf.txt" }, ctxFor(dir))).content,
      "     1\ta\n     2\tb",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_read: a big file is read as a window (streamed)", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  try {
    // ~6 MB, 300k lines; the window near the start must not need the rest.
    const chunk = Array.from({ length: 1000 }, (_, i) => `row ${i} ${"y".repeat(12)}`).join("\n") +
      "\n";
    using f = await Deno.open(join(dir, "big.txt"), { write: true, create: true });
    const bytes = new TextEncoder().encode(chunk);
    for (let i = 0; i < 300; i++) await f.write(bytes);
    const t0 = performance.now();
    const r = await run(fsReadTool, { path: "big.txt", offset: 1001, limit: 2 }, ctxFor(dir));
    const ms = performance.now() - t0;
    assert.equal(
      r.content,
      `  1001\trow 0 ${"y".repeat(12)}\n  1002\trow 1 ${"y".repeat(12)}\n` +
        "[more lines follow; continue with offset=1003]",
    );
    assert.ok(ms < 1000, `window read took ${ms} ms`);
    const deep = await run(fsReadTool, { path: "big.txt", offset: 299_999, limit: 5 }, ctxFor(dir));
    assert.equal(
      deep.content,
      `299999\trow 998 ${"y".repeat(12)}\n300000\trow 999 ${"y".repeat(12)}`,
    );
    // The default window (2000 lines) stays within the char budget and says how to go on.
    const def = await run(fsReadTool, { path: "big.txt" }, ctxFor(dir));
    assert.equal(def.content.split("\n").length, 2001);
    assert.match(def.content, /continue with offset=2001\]$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_read / fs_write / fs_patch go through the ACP client fs when offered", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  try {
    const buffers = new Map<string, string>([[join(dir, "a.ts"), "unsaved\nbuffer\n"]]);
    const host: HostServices = {
      readTextFile: (p) => {
        const t = buffers.get(p);
        return t === undefined ? Promise.reject(new Deno.errors.NotFound(p)) : Promise.resolve(t);
      },
      writeTextFile: (p, c) => {
        buffers.set(p, c);
        return Promise.resolve();
      },
    };
    const r = await run(fsReadTool, { path: "a.ts" }, ctxFor(dir, host));
    assert.equal(r.content, "     1\tunsaved\n     2\tbuffer");
    const w = await run(fsWriteTool, { path: "b/c.ts", content: "new\n" }, ctxFor(dir, host));
    assert.equal(w.isError, undefined);
    assert.equal(buffers.get(join(dir, "b/c.ts")), "new\n");
    const p = await run(
      fsPatchTool,
      { path: "a.ts", old_string: "buffer", new_string: "text" },
      ctxFor(dir, host),
    );
    assert.equal(p.isError, undefined);
    assert.equal(buffers.get(join(dir, "a.ts")), "unsaved\ntext\n");
    // Nothing touched the disk.
    await assert.rejects(Deno.stat(join(dir, "a.ts")), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(join(dir, "b")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_ls: trailing / for folders, .gitignore and .git hidden, errors", async () => {
  const dir = await makeRepo();
  try {
    const r = await run(fsLsTool, {}, ctxFor(dir));
    assert.equal(r.isError, undefined);
    const lines = r.content.split("\n");
    assert.deepEqual(lines.slice(0, -1), [".gitignore", "README.md", "keep.log", "pkg/", "src/"]);
    assert.match(lines.at(-1)!, /\[2 entries hidden by \.gitignore or \.git\]/); // build/ and .git
    const sub = await run(fsLsTool, { path: "src" }, ctxFor(dir));
    assert.deepEqual(sub.content.split("\n").slice(0, -1), ["blob.bin", "main.ts", "util.ts"]);
    // Nested .gitignore applies when listing the folder itself.
    const pkg = await run(fsLsTool, { path: "pkg" }, ctxFor(dir));
    assert.deepEqual(pkg.content.split("\n").slice(0, -1), [".gitignore", "deep/", "public.txt"]);
    // An ignored folder named explicitly is listed / searched as asked.
    assert.equal((await run(fsLsTool, { path: "build" }, ctxFor(dir))).content, "out.js");
    assert.equal(
      (await run(fsGrepTool, { pattern: "needle", path: "build" }, ctxFor(dir))).content,
      "build/out.js:1:needle in build",
    );
    const missing = await run(fsLsTool, { path: "zzz" }, ctxFor(dir));
    assert.equal(missing.isError, true);
    const file = await run(fsLsTool, { path: "README.md" }, ctxFor(dir));
    assert.equal(file.isError, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_ls: bounded at 1000 entries, cut marked", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  try {
    for (let i = 0; i < 1005; i++) {
      await Deno.writeTextFile(join(dir, `f${String(i).padStart(4, "0")}`), "");
    }
    const r = await run(fsLsTool, { path: dir }, ctxFor(dir));
    const lines = r.content.split("\n");
    assert.equal(lines.length, 1001);
    assert.equal(lines.at(-1), "[5 more entries not shown]");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_glob: picomatch patterns, .gitignore (nested, negation), newest first", async () => {
  const dir = await makeRepo();
  try {
    const old = new Date("2020-01-01T00:00:00Z");
    await Deno.utime(join(dir, "src/main.ts"), old, old);
    const ts = await run(fsGlobTool, { pattern: "**/*.ts" }, ctxFor(dir));
    assert.deepEqual(ts.content.split("\n"), ["src/util.ts", "src/main.ts"]); // newest first
    const logs = await run(fsGlobTool, { pattern: "**/*.log" }, ctxFor(dir));
    assert.deepEqual(logs.content.split("\n"), ["keep.log"]); // src/app.log ignored, keep.log re-included
    const txt = await run(fsGlobTool, { pattern: "**/*.txt" }, ctxFor(dir));
    assert.deepEqual(txt.content.split("\n"), ["pkg/public.txt"]); // pkg/secret.txt ignored by pkg/.gitignore
    const inPkg = await run(fsGlobTool, { pattern: "**/*.py", path: "pkg" }, ctxFor(dir));
    assert.deepEqual(inPkg.content.split("\n"), ["pkg/deep/x.py"]);
    assert.equal((await run(fsGlobTool, { pattern: "*.md" }, ctxFor(dir))).content, "README.md");
    assert.equal(
      (await run(fsGlobTool, { pattern: "*/*/*.py" }, ctxFor(dir))).content,
      "pkg/deep/x.py",
    );
    assert.match(
      (await run(fsGlobTool, { pattern: "*.py" }, ctxFor(dir))).content,
      /^No files match/,
    );
    const based = await run(fsGlobTool, { pattern: "src/*.{ts,bin}" }, ctxFor(dir));
    assert.deepEqual(based.content.split("\n").sort(), [
      "src/blob.bin",
      "src/main.ts",
      "src/util.ts",
    ]);
    const abs = await run(fsGlobTool, { pattern: `${dir}/pkg/**/*.py` }, ctxFor(join(dir, "src")));
    assert.deepEqual(abs.content.split("\n"), [`${dir}/pkg/deep/x.py`]);
    const none = await run(fsGlobTool, { pattern: "**/*.rs" }, ctxFor(dir));
    assert.equal(none.isError, undefined);
    assert.match(none.content, /No files match/);
    const bad = await run(fsGlobTool, { pattern: "*", path: "nope" }, ctxFor(dir));
    assert.equal(bad.isError, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_grep: path:line:text, .gitignore (root, nested, negation), binary skipped", async () => {
  const dir = await makeRepo();
  try {
    const r = await run(fsGrepTool, { pattern: "needle" }, ctxFor(dir));
    assert.equal(r.isError, undefined);
    assert.deepEqual(r.content.split("\n").sort(), [
      "README.md:2:needle in readme",
      "keep.log:1:needle kept by negation",
      "pkg/deep/x.py:2:    return 'needle'",
      "src/main.ts:2:console.log(add(1, 2)); // needle",
    ]);
    const ci = await run(fsGrepTool, { pattern: "NEEDLE p", ignore_case: true }, ctxFor(dir));
    assert.equal(ci.content, "pkg/public.txt:1:Needle public");
    const inline = await run(fsGrepTool, { pattern: "(?i)needle public" }, ctxFor(dir));
    assert.equal(inline.content, "pkg/public.txt:1:Needle public");
    const rx = await run(fsGrepTool, { pattern: "function \\w+\\(a" }, ctxFor(dir));
    assert.equal(rx.content, "src/util.ts:1:export function add(a: number, b: number) {");
    const globbed = await run(fsGrepTool, { pattern: "needle", glob: "*.py" }, ctxFor(dir));
    assert.equal(globbed.content, "pkg/deep/x.py:2:    return 'needle'");
    const pathGlob = await run(fsGrepTool, { pattern: "needle", glob: "src/**" }, ctxFor(dir));
    assert.equal(pathGlob.content, "src/main.ts:2:console.log(add(1, 2)); // needle");
    const oneFile = await run(fsGrepTool, { pattern: "return", path: "src/util.ts" }, ctxFor(dir));
    assert.equal(oneFile.content, "src/util.ts:2:  return a + b;");
    // An ignored file given explicitly is searched (like rg).
    const explicit = await run(fsGrepTool, { pattern: "needle", path: "src/app.log" }, ctxFor(dir));
    assert.equal(explicit.content, "src/app.log:1:needle in a log");
    // Searching a subfolder still applies the root .gitignore.
    const sub = await run(fsGrepTool, { pattern: "needle", path: "src" }, ctxFor(dir));
    assert.equal(sub.content, "src/main.ts:2:console.log(add(1, 2)); // needle");
    const none = await run(fsGrepTool, { pattern: "zebra" }, ctxFor(dir));
    assert.equal(none.isError, undefined);
    assert.match(none.content, /^No matches for \/zebra\/ in \./);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_grep: errors, line semantics, anchors, cap at 500 marked", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  try {
    const bad = await run(fsGrepTool, { pattern: "foo(" }, ctxFor(dir));
    assert.equal(bad.isError, true);
    assert.match(bad.content, /invalid regex/);
    const missing = await run(fsGrepTool, { pattern: "x", path: "nope" }, ctxFor(dir));
    assert.equal(missing.isError, true);
    assert.match(missing.content, /File not found: nope/);

    await Deno.writeTextFile(join(dir, "a.txt"), "alpha\nbeta gamma\n\ngamma\r\nend alpha");
    // \s must not join two lines into one match.
    const cross = await run(fsGrepTool, { pattern: "alpha\\s+beta" }, ctxFor(dir));
    assert.match(cross.content, /^No matches/);
    const anchored = await run(fsGrepTool, { pattern: "^gamma$" }, ctxFor(dir));
    assert.equal(anchored.content, "a.txt:4:gamma");
    const last = await run(fsGrepTool, { pattern: "alpha" }, ctxFor(dir));
    assert.equal(last.content, "a.txt:1:alpha\na.txt:5:end alpha");
    const special = await run(fsGrepTool, { pattern: "\\$\\{x\\}" }, ctxFor(dir));
    assert.match(special.content, /^No matches/);

    await Deno.writeTextFile(join(dir, "many.txt"), "hit\n".repeat(700));
    const many = await run(fsGrepTool, { pattern: "hit" }, ctxFor(dir));
    const lines = many.content.split("\n");
    assert.equal(lines.length, 501);
    assert.equal(lines[499], "many.txt:500:hit");
    assert.match(lines[500], /stopped after 500 matches/);

    await Deno.writeTextFile(
      join(dir, "wide.txt"),
      "a".repeat(1000) + "NEEDLE" + "b".repeat(1000) + "\n",
    );
    const wide = await run(fsGrepTool, { pattern: "NEEDLE" }, ctxFor(dir));
    assert.ok(wide.content.length < 400, `${wide.content.length}`);
    assert.match(wide.content, /NEEDLE.*line truncated, 2006 chars/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_grep engine: worker pool gives the same hits as the inline search", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  try {
    await Deno.writeTextFile(join(dir, ".gitignore"), "skip/\n");
    for (let d = 0; d < 6; d++) {
      await Deno.mkdir(join(dir, `d${d}`, "skip"), { recursive: true });
      for (let f = 0; f < 60; f++) {
        const body = `const x${f} = ${f};\n`.repeat(20) +
          (f % 7 === 0 ? `// TODO(fix) item ${d}.${f}\n` : "");
        await Deno.writeTextFile(join(dir, `d${d}`, `f${f}.ts`), body);
        await Deno.writeTextFile(join(dir, `d${d}`, "skip", `f${f}.ts`), "TODO(fix) ignored\n");
      }
    }
    const spec = buildSpec({ pattern: "TODO\\(fix\\) item \\d" });
    assert.equal(String.fromCharCode(...spec.literal!), "TODO(fix) item ");
    const inline = await grepTree({ root: dir, cwd: dir, spec, workers: 0 });
    const pooled = await grepTree({ root: dir, cwd: dir, spec, workers: 2, workerThreshold: 0 });
    assert.equal(inline.workersUsed, 0);
    assert.equal(pooled.workersUsed, 2);
    assert.equal(inline.hits.length, 6 * 9);
    assert.deepEqual(pooled.hits, inline.hits);
    assert.ok(inline.hits.every((h) => !h.path.includes("/skip/")));
    const capped = await grepTree({
      root: dir,
      cwd: dir,
      spec,
      workers: 2,
      workerThreshold: 0,
      limit: 10,
    });
    assert.deepEqual(capped.hits, inline.hits.slice(0, 10));
    assert.equal(capped.truncated, true);
    // Abort stops the search and rejects.
    const ac = new AbortController();
    ac.abort(new Error("stop"));
    await assert.rejects(grepTree({ root: dir, cwd: dir, spec, signal: ac.signal }), /stop/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("requiredLiteral: only literals every match must contain", () => {
  const cases: [string, string | null][] = [
    ["coyoteNeedle", "coyoteNeedle"],
    ["fn\\s+zz_needle_[0-9]{3}\\b", "zz_needle_"],
    ["foo|barbaz", null],
    ["(foo|bar)baz", "baz"],
    ["colou?r", "colo"],
    ["ab*c", "a"],
    ["x+yzw", "yzw"],
    ["a\\.b\\(c", "a.b(c"],
    ["[abc]def", "def"],
    ["^import .* from$", "import "],
    ["\\d+", null],
    ["abc{0,2}de", "ab"],
    ["ab{2}cd", "ab"],
    ["\\x41bc", "bc"],
    ["\\u0041zz", "zz"],
    ["\\u{1F600}yy", "yy"],
    ["\\p{Lu}ppp", "ppp"],
    ["(?<w>q)\\k<w>rr", "rr"],
    ["(a)\\12xyz", "xyz"],
    ["\\cMxy", "xy"],
  ];
  for (const [src, want] of cases) assert.equal(requiredLiteral(src), want, src);
});

Deno.test("fs_write: creates parents, diff with oldText null, then overwrite diff", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  try {
    const r = await run(fsWriteTool, { path: "a/b/c.txt", content: "one\ntwo\n" }, ctxFor(dir));
    const abs = join(dir, "a/b/c.txt");
    assert.equal(r.isError, undefined);
    assert.equal(r.content, "Created a/b/c.txt (2 lines)");
    assert.deepEqual(r.diffs, [{ path: abs, oldText: null, newText: "one\ntwo\n" }]);
    assert.deepEqual(r.locations, [{ path: abs }]);
    assert.equal(await Deno.readTextFile(abs), "one\ntwo\n");
    const again = await run(fsWriteTool, { path: abs, content: "three" }, ctxFor(dir));
    assert.equal(again.content, "Wrote a/b/c.txt (1 lines)");
    assert.deepEqual(again.diffs, [{ path: abs, oldText: "one\ntwo\n", newText: "three" }]);
    const onDir = await run(fsWriteTool, { path: "a", content: "x" }, ctxFor(dir));
    assert.equal(onDir.isError, true);
    assert.equal(fsWriteTool.access!({ path: "x", content: "" }, dir)[0].type, "write");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_patch: missing, ambiguous, identical, replace_all, literal $, CRLF, diff", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-" }));
  try {
    const abs = join(dir, "m.ts");
    const text = "let a = 1;\nlet b = 1;\nconsole.log(a + b);\n";
    await Deno.writeTextFile(abs, text);
    const missing = await run(
      fsPatchTool,
      { path: "m.ts", old_string: "let c", new_string: "x" },
      ctxFor(dir),
    );
    assert.equal(missing.isError, true);
    assert.equal(missing.content, "old_string not found in m.ts");
    const amb = await run(
      fsPatchTool,
      { path: "m.ts", old_string: "= 1;", new_string: "= 2;" },
      ctxFor(dir),
    );
    assert.equal(amb.isError, true);
    assert.equal(amb.content, "old_string occurs 2 times in m.ts; pass replace_all or add context");
    const same = await run(
      fsPatchTool,
      { path: "m.ts", old_string: "a", new_string: "a" },
      ctxFor(dir),
    );
    assert.equal(same.isError, true);
    const nofile = await run(
      fsPatchTool,
      { path: "zz.ts", old_string: "a", new_string: "b" },
      ctxFor(dir),
    );
    assert.equal(nofile.isError, true);
    assert.match(nofile.content, /File not found: zz\.ts/);
    assert.equal(await Deno.readTextFile(abs), text, "failed patches change nothing");

    const one = await run(fsPatchTool, {
      path: "m.ts",
      old_string: "let b = 1;",
      new_string: "let b = 2;",
    }, ctxFor(dir));
    assert.equal(one.isError, undefined);
    const afterOne = "let a = 1;\nlet b = 2;\nconsole.log(a + b);\n";
    assert.equal(await Deno.readTextFile(abs), afterOne);
    assert.deepEqual(one.diffs, [{ path: abs, oldText: text, newText: afterOne }]);
    assert.deepEqual(one.locations, [{ path: abs, line: 2 }]);
    assert.match(
      one.content,
      /^Patched m\.ts: replaced 1 occurrence\. Around line 2:\n {5}1\tlet a = 1;\n {5}2\tlet b = 2;/,
    );

    const all = await run(fsPatchTool, {
      path: "m.ts",
      old_string: "let",
      new_string: "const",
      replace_all: true,
    }, ctxFor(dir));
    assert.match(all.content, /replaced 2 occurrences/);
    const afterAll = "const a = 1;\nconst b = 2;\nconsole.log(a + b);\n";
    assert.deepEqual(all.diffs, [{ path: abs, oldText: afterOne, newText: afterAll }]);

    await run(
      fsPatchTool,
      { path: "m.ts", old_string: "a + b", new_string: "`$&${a}`" },
      ctxFor(dir),
    );
    assert.match(await Deno.readTextFile(abs), /console\.log\(`\$&\$\{a\}`\)/);

    await Deno.writeTextFile(join(dir, "w.txt"), "one\r\ntwo\r\nthree\r\n");
    const crlf = await run(fsPatchTool, {
      path: "w.txt",
      old_string: "one\ntwo",
      new_string: "1\n2",
    }, ctxFor(dir));
    assert.equal(crlf.isError, undefined);
    assert.equal(await Deno.readTextFile(join(dir, "w.txt")), "1\r\n2\r\nthree\r\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
