/**
 * core/util/path.ts against node:path's posix functions: a fixed corpus of edge cases plus 20,000
 * generated paths (seeded) from parts that make the hard cases — empty parts, `.`, `..`, runs of
 * slashes, dots in names, a backslash (an ordinary character on POSIX) — for every function.
 */
import assert from "node:assert/strict";
import { posix } from "node:path";
import * as ours from "../core/util/path.ts";

const CORPUS = [
  "",
  ".",
  "..",
  "/",
  "//",
  "///",
  "a",
  "a/",
  "a//",
  "/a",
  "//a",
  "/a/b",
  "a/b/",
  "a//b",
  "a/./b",
  "a/../b",
  "../a",
  "../../a/..",
  "/..",
  "/../a",
  "./",
  "./a",
  "a/..",
  "a/../",
  ".a",
  "..a",
  "a.",
  "a..",
  "...",
  ".a.b",
  "a.b.c",
  "/a/b.c/",
  "a\\b",
  "a\\..\\b",
  "\\",
  "/a/b/c/../../..",
  "x/./.",
];

function* generated(n: number) {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const parts = ["", "", "/", "//", ".", "..", "a", "b", "x.y", ".z", "c.", "\\", "a\\b"];
  for (let i = 0; i < n; i++) {
    let p = "";
    const len = Math.floor(rand() * 6);
    for (let j = 0; j < len; j++) {
      p += parts[Math.floor(rand() * parts.length)] + (rand() < 0.6 ? "/" : "");
    }
    yield p;
  }
}

const cases = [...CORPUS, ...generated(20_000)];

Deno.test("path: normalize, isAbsolute, dirname, basename, extname agree with node:path posix", () => {
  for (const p of cases) {
    assert.equal(ours.normalize(p), posix.normalize(p), `normalize(${JSON.stringify(p)})`);
    assert.equal(ours.isAbsolute(p), posix.isAbsolute(p), `isAbsolute(${JSON.stringify(p)})`);
    assert.equal(ours.dirname(p), posix.dirname(p), `dirname(${JSON.stringify(p)})`);
    assert.equal(ours.basename(p), posix.basename(p), `basename(${JSON.stringify(p)})`);
    assert.equal(ours.extname(p), posix.extname(p), `extname(${JSON.stringify(p)})`);
    // With an extension: names (no trailing slash, an extension without one), as Coyote uses it.
    if (!p.endsWith("/")) {
      for (const ext of [".y", "y", "b", ".md", ours.basename(p)]) {
        assert.equal(
          ours.basename(p, ext),
          posix.basename(p, ext),
          `basename(${JSON.stringify(p)}, ${ext})`,
        );
      }
    }
  }
  assert.equal(ours.sep, posix.sep);
});

Deno.test("path: join, resolve, relative agree with node:path posix (pairs and triples)", () => {
  const list = cases.slice(0, 3000);
  for (let i = 0; i < list.length; i++) {
    const a = list[i], b = list[(i * 7 + 3) % list.length], c = list[(i * 13 + 5) % list.length];
    const q = JSON.stringify([a, b, c]);
    assert.equal(ours.join(a, b), posix.join(a, b), `join ${q}`);
    assert.equal(ours.join(a, b, c), posix.join(a, b, c), `join ${q}`);
    assert.equal(ours.resolve(a, b), posix.resolve(a, b), `resolve ${q}`);
    assert.equal(ours.resolve(a, b, c), posix.resolve(a, b, c), `resolve ${q}`);
    assert.equal(ours.relative(a, b), posix.relative(a, b), `relative ${q}`);
  }
  assert.equal(ours.join(), posix.join());
  assert.equal(ours.resolve(), posix.resolve());
});
