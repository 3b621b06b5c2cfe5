/**
 * `deno task bench` leaves nothing behind (issue 10: it left ~600 MB in the temp dir): the grep
 * bench's generated tree is removed when the bench ends, unless `BENCH_KEEP=1` asks to keep it.
 * Runs the real bench module on its tiny tree (200 files).
 */
import assert from "node:assert/strict";
import runGrepBench from "../bench/grep.bench.ts";

function exists(p: string): boolean {
  try {
    Deno.statSync(p);
    return true;
  } catch {
    return false;
  }
}

Deno.test("bench: the grep bench removes its generated tree unless asked to keep it", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "coyote-bench-clean-" });
  try {
    const root = `${tmp}/grep`;
    const results = await runGrepBench({ mode: "tiny", root, keep: false });
    assert.ok(results.some((r) => r.name.startsWith("fs_grep literal")), JSON.stringify(results));
    assert.equal(exists(root), false, "the tree and its folder are gone");

    await runGrepBench({ mode: "tiny", root, keep: true });
    assert.ok(exists(`${root}/tiny/.complete`), "BENCH_KEEP keeps the tree for the next run");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
