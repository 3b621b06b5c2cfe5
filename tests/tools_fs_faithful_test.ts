/**
 * Edits that change only what was asked (issue 10): line endings, encodings and near misses, on
 * real files, through the fs tools' `run` with a real tool context.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fsPatchTool, fsReadTool, fsWriteTool } from "../plugins/fs/mod.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "coyote-faithful-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const bytes = (s: string) => new TextEncoder().encode(s);
const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

Deno.test("fs edits: a CRLF file stays CRLF when lines are inserted; a CRLF-only difference changes nothing and says so", async () => {
  await withDir(async (dir) => {
    const f = join(dir, "w.txt");
    await Deno.writeTextFile(f, "one\r\ntwo\r\nthree\r\n");
    const ctx = toolContext({ cwd: dir });
    const r = await runTool(fsPatchTool, {
      path: "w.txt",
      old_string: "two",
      new_string: "two\nnew a\nnew b",
    }, ctx);
    assert.equal(r.isError, undefined, r.content);
    assert.equal(await Deno.readTextFile(f), "one\r\ntwo\r\nnew a\r\nnew b\r\nthree\r\n");
    // old_string that differs from the file only by CRLF: nothing to change, no "Patched".
    const before = await Deno.readFile(f);
    const same = await runTool(fsPatchTool, {
      path: "w.txt",
      old_string: "one\r\ntwo",
      new_string: "one\ntwo",
    }, ctx);
    assert.equal(same.isError, true);
    assert.match(same.content, /^Nothing changed in w\.txt: .*differ only in line endings.*CRLF/);
    assert.deepEqual(await Deno.readFile(f), before);
    // fs_write of LF text over a CRLF file keeps CRLF (an existing file is read first: stamps.ts).
    await runTool(fsReadTool, { path: "w.txt" }, ctx);
    await runTool(fsWriteTool, { path: "w.txt", content: "a\nb\n" }, ctx);
    assert.equal(await Deno.readTextFile(f), "a\r\nb\r\n");
    // An LF file gets no CR from a CRLF new_string.
    await Deno.writeTextFile(join(dir, "lf.txt"), "x\ny\n");
    await runTool(fsPatchTool, { path: "lf.txt", old_string: "x", new_string: "x\r\nz" }, ctx);
    assert.equal(await Deno.readTextFile(join(dir, "lf.txt")), "x\nz\ny\n");
  });
});

Deno.test("fs edits: a Latin-1 file is read with a note and patched byte-exactly; unencodable text is refused", async () => {
  await withDir(async (dir) => {
    const f = join(dir, "l1.txt");
    const original = latin1("caf\xe9 cr\xe8me\nna\xefve r\xe9sum\xe9\n");
    await Deno.writeFile(f, original);
    const ctx = toolContext({ cwd: dir });
    const read = await runTool(fsReadTool, { path: "l1.txt" }, ctx);
    assert.match(read.content, /café crème/);
    assert.ok(!read.content.includes("\ufffd"), "no replacement characters");
    assert.match(
      read.content,
      /\[l1\.txt is ISO-8859-1 \(Latin-1\), not UTF-8: shown decoded; fs_patch and fs_write keep its encoding\]/,
    );
    const r = await runTool(fsPatchTool, {
      path: "l1.txt",
      old_string: "crème",
      new_string: "brûlée",
    }, ctx);
    assert.equal(r.isError, undefined, r.content);
    const after = await Deno.readFile(f);
    assert.deepEqual(after, latin1("caf\xe9 br\xfbl\xe9e\nna\xefve r\xe9sum\xe9\n"));
    // Bytes outside the edit are untouched: the prefix and suffix are identical.
    assert.deepEqual(after.subarray(0, 5), original.subarray(0, 5));
    assert.deepEqual(after.subarray(after.length - 14), original.subarray(original.length - 14));
    // A character Latin-1 cannot hold is refused, and the file is unchanged.
    const bad = await runTool(fsPatchTool, {
      path: "l1.txt",
      old_string: "café",
      new_string: "café €5",
    }, ctx);
    assert.equal(bad.isError, true);
    assert.match(
      bad.content,
      /^Not patched: the file is ISO-8859-1 \(Latin-1\) and cannot hold "€" \(U\+20AC, line 1\)/,
    );
    assert.deepEqual(await Deno.readFile(f), after);
  });
});

Deno.test("fs edits: a UTF-8 byte-order mark is kept by fs_patch and fs_write", async () => {
  await withDir(async (dir) => {
    const f = join(dir, "bom.txt");
    await Deno.writeFile(f, new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("alpha\nbeta\n")]));
    const ctx = toolContext({ cwd: dir });
    const r = await runTool(fsPatchTool, {
      path: "bom.txt",
      old_string: "alpha",
      new_string: "ALPHA",
    }, ctx);
    assert.equal(r.isError, undefined, r.content);
    assert.deepEqual(
      await Deno.readFile(f),
      new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("ALPHA\nbeta\n")]),
    );
    await runTool(fsReadTool, { path: "bom.txt" }, ctx);
    await runTool(fsWriteTool, { path: "bom.txt", content: "gamma\n" }, ctx);
    assert.deepEqual(
      await Deno.readFile(f),
      new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("gamma\n")]),
    );
  });
});

Deno.test("fs edits: near misses say what differs (whitespace, tabs, trailing spaces, Unicode form)", async () => {
  await withDir(async (dir) => {
    const ctx = toolContext({ cwd: dir });
    await Deno.writeTextFile(
      join(dir, "t.py"),
      "def f():\n\treturn 1   \n\nname = 'Ame\u0301lie'\n",
    );
    const tabs = await runTool(fsPatchTool, {
      path: "t.py",
      old_string: "def f():\n    return 1",
      new_string: "x",
    }, ctx);
    assert.match(
      tabs.content,
      /^old_string not found in t\.py: .*matches after normalising (trailing whitespace at line ends|tabs vs spaces).* at line 1/,
    );
    const trailing = await runTool(fsPatchTool, {
      path: "t.py",
      old_string: "\treturn 1\n\nname",
      new_string: "x",
    }, ctx);
    assert.match(trailing.content, /normalising trailing whitespace at line ends at line 2/);
    const nfc = await runTool(fsPatchTool, {
      path: "t.py",
      old_string: "Am\u00e9lie",
      new_string: "x",
    }, ctx);
    assert.match(nfc.content, /normalising the Unicode form \(NFC vs NFD/);
    const none = await runTool(fsPatchTool, {
      path: "t.py",
      old_string: "no such text",
      new_string: "x",
    }, ctx);
    assert.equal(none.content, "old_string not found in t.py");
    assert.equal(
      await Deno.readTextFile(join(dir, "t.py")),
      "def f():\n\treturn 1   \n\nname = 'Ame\u0301lie'\n",
    );
  });
});
