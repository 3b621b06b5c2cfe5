/**
 * The fs tools never open special files: a FIFO with no writer (or a link to a terminal) would
 * block a read forever and a write would wait for a reader, hanging a headless run. fs_read,
 * fs_write and fs_patch answer a clear tool error at once; fs_grep skips them.
 */
import assert from "node:assert/strict";
import type { ToolContext, ToolResult } from "../sdk/mod.ts";
import { fsGrepTool, fsPatchTool, fsReadTool, fsWriteTool } from "../plugins/fs/mod.ts";
import { toolContext } from "./support/fixtures.ts";

function ctxFor(cwd: string): ToolContext {
  return toolContext({ cwd });
}

async function run(
  // deno-lint-ignore no-explicit-any
  tool: { run: (i: any, c: ToolContext) => unknown },
  input: unknown,
  cwd: string,
): Promise<ToolResult> {
  // A hang here is the bug: bound it so the test fails instead of stalling the suite.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const r = await Promise.race([
    Promise.resolve(tool.run(input, ctxFor(cwd))),
    new Promise<never>((_, rej) => timer = setTimeout(() => rej(new Error("tool hung")), 5_000)),
  ]).finally(() => clearTimeout(timer));
  return typeof r === "string" ? { content: r } : r as ToolResult;
}

Deno.test("fs tools refuse FIFOs and devices at once; fs_grep skips them", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-fs-special-" }));
  try {
    const mk = await new Deno.Command("mkfifo", { args: [`${dir}/pipe`] }).output();
    assert.equal(mk.code, 0);
    await Deno.symlink("/dev/zero", `${dir}/zero`);
    await Deno.writeTextFile(`${dir}/a.txt`, "needle here\n");

    const read = await run(fsReadTool, { path: "pipe" }, dir);
    assert.equal(read.isError, true);
    assert.match(read.content, /^pipe is a named pipe \(FIFO\); only regular files/);
    const zero = await run(fsReadTool, { path: "zero" }, dir);
    assert.equal(zero.isError, true);
    assert.match(zero.content, /^zero is a device/);

    const write = await run(fsWriteTool, { path: "pipe", content: "x" }, dir);
    assert.equal(write.isError, true);
    assert.match(write.content, /named pipe/);
    const patch = await run(fsPatchTool, { path: "pipe", old_string: "a", new_string: "b" }, dir);
    assert.equal(patch.isError, true);
    assert.match(patch.content, /named pipe/);
    assert.ok((await Deno.lstat(`${dir}/pipe`)).isFifo, "the FIFO was replaced");

    const grep = await run(fsGrepTool, { pattern: "needle" }, dir);
    assert.match(grep.content, /a\.txt:1:needle here/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
