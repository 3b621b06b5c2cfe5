/**
 * Truncation on character boundaries (issue 21): fs_read's long-line cut, fs_grep's clipped
 * match line, a tool result capped for the window, and the helpers of core/util/text.ts never
 * leave a lone UTF-16 surrogate (invalid Unicode strict servers reject) nor split a grapheme
 * cluster (ZWJ emoji, combining marks).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fsGrepTool, fsReadTool } from "../plugins/fs/mod.ts";
import { capText } from "../core/engine/context.ts";
import { condense } from "../core/supervisor/summary.ts";
import { cutIndex, headText, tailText } from "../core/util/text.ts";
import { runTool, toolContext } from "./support/fixtures.ts";

const FAMILY = "👨‍👩‍👧"; // 8 code units, one grapheme cluster

function wellFormed(s: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

/** True when every family emoji in `s` is whole (none split inside its ZWJ sequence). */
function wholeClusters(s: string): boolean {
  const seg = new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return [...seg.segment(s)].every((g) => !g.segment.includes("\u200d") || g.segment === FAMILY);
}

Deno.test("fs_read: a long line of emoji is cut on a character boundary", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-cut-" });
  try {
    // "a" first, so the cut at 2000 code units falls between the halves of a pair.
    await Deno.writeTextFile(join(dir, "emoji.txt"), "a" + "😀".repeat(1500) + "\nnext\n");
    await Deno.writeTextFile(join(dir, "zwj.txt"), "ab" + FAMILY.repeat(400) + "\n");
    for (const f of ["emoji.txt", "zwj.txt"]) {
      const r = await runTool(fsReadTool, { path: f }, toolContext({ cwd: dir }));
      assert.ok(wellFormed(r.content), `${f}: lone surrogate in fs_read output`);
      assert.ok(wholeClusters(r.content), `${f}: a grapheme cluster was split`);
      assert.match(r.content, /line truncated: \d+ chars/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("fs_grep: a clipped match line among emoji has no lone surrogate", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-cut-" });
  try {
    for (const pre of ["", "a"]) {
      await Deno.writeTextFile(
        join(dir, `w${pre}.txt`),
        pre + "😀".repeat(601) + "NEEDLE" + "😀".repeat(600) + "\n",
      );
    }
    await Deno.writeTextFile(
      join(dir, "z.txt"),
      "b" + FAMILY.repeat(200) + "NEEDLE" + FAMILY.repeat(200) + "\n",
    );
    const r = await runTool(fsGrepTool, { pattern: "NEEDLE" }, toolContext({ cwd: dir }));
    assert.match(r.content, /NEEDLE.*line truncated/);
    assert.ok(wellFormed(r.content), "lone surrogate in fs_grep output");
    assert.ok(wholeClusters(r.content), "a grapheme cluster was split");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("capText and the cut helpers keep pairs and clusters whole", () => {
  for (
    const s of [
      "x" + "😀".repeat(500),
      "xy" + "😀".repeat(500),
      "é".normalize("NFD").repeat(400),
      FAMILY.repeat(100) + "z",
    ]
  ) {
    for (const n of [1, 2, 3, 7, 100, 101, 333]) {
      const h = headText(s, n);
      const t = tailText(s, n);
      assert.ok(h.length <= n && t.length <= n, `length ${n}`);
      assert.ok(wellFormed(h) && wellFormed(t), `lone surrogate at ${n}`);
      assert.ok(wholeClusters(h) && wholeClusters(t), `cluster split at ${n}`);
      assert.ok(s.startsWith(h) && s.endsWith(t));
      assert.ok(wellFormed(capText(s, n + 50, "test")));
    }
  }
  assert.equal(cutIndex("abc", 10), 3);
  assert.equal(cutIndex("a😀", 2), 1);
  assert.equal(headText("plain ascii", 5), "plain");
});

Deno.test("a sub-agent's condensed answer keeps pairs whole at both cuts", () => {
  for (const pre of ["", "a"]) {
    const full = pre + "😀".repeat(3000);
    for (const threshold of [1001, 1002, 1500]) {
      const c = condense(full, threshold, "/t.jsonl");
      assert.ok(wellFormed(c), `lone surrogate at threshold ${threshold}`);
    }
  }
});
