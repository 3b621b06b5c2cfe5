/**
 * The permission prompt on a real terminal (tmux): the recorded answer ("allowed once", "denied")
 * is on a line of its own after the key legend, never run into it, and the guard's reason is
 * wrapped at spaces within the terminal width, so no `))` is left alone on a line (fresh-user
 * trial, item 8). Both prompts are checked: the REPL's and a one-shot run's on a terminal.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const WIDTH = 72;

/** A write whose reason (it names the path) is longer than one line of the terminal. */
function writeScript(name: string, text: string) {
  return [
    { tool_calls: [{ id: "w1", name: "fs_write", arguments: { path: name, content: "x\n" } }] },
    { text },
  ];
}

/** The prompt's lines, from its question to the answer line after the legend. */
function promptBlock(screen: string): string[] {
  const lines = screen.split("\n");
  const from = lines.findIndex((l) => /coyote wants to write/.test(l));
  const legend = lines.findIndex((l, i) => i > from && /deny always/.test(l));
  assert.ok(from >= 0 && legend > from, screen);
  return lines.slice(from, legend + 2);
}

function checkBlock(block: string[], answer: RegExp) {
  const text = block.join("\n");
  for (const l of block) assert.ok([...l].length <= WIDTH, `within ${WIDTH} columns: ${l}`);
  assert.ok(!block.some((l) => /^\s*\)+\s*$/.test(l)), `no lone closing parenthesis:\n${text}`);
  const legendAt = block.length - 2;
  // The reason runs from "(default mode" to the diff of the write.
  const from = block.findIndex((l) => l.includes("(default mode"));
  const reason = block.slice(from, block.findIndex((l, i) => i > from && l.startsWith("---")));
  assert.ok(reason.length > 1, `the reason wraps at this width:\n${text}`);
  // Broken at spaces only: the lines joined by one space give the reason back, word for word.
  assert.match(
    reason.map((l) => l.trim()).join(" "),
    /^\(default mode asks before writing \/\S+\/notes-\w+\.txt \(accept-edits and auto allow writes inside the workspace\)\)$/,
  );
  assert.match(block[legendAt], /d deny always\s*$/, `nothing after the legend:\n${text}`);
  assert.match(block[legendAt + 1], answer, `the answer on its own line:\n${text}`);
}

Deno.test("repl: the answer is on its own line after the legend; the reason wraps at spaces", async () => {
  const server = await startModelServer({
    script: [...writeScript("notes-one.txt", "WROTE-1")],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-perm-lines-" }));
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox", "--mode", "default"]);
    await t.start([cmd, ...args], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
      width: WIDTH,
    });
    await t.waitFor(/› $/m);
    await t.type("write it");
    await t.keys("Enter");
    await t.waitFor(/wants to write[\s\S]*deny always/);
    await t.keys("y");
    const end = await t.waitFor(/WROTE-1[\s\S]*› $/m);
    checkBlock(promptBlock(end), /^ {2}→ allowed once$/);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});

Deno.test("one-shot on a terminal: the same prompt shape; `n` is recorded as '→ denied'", async () => {
  const server = await startModelServer({
    script: [...writeScript("notes-two.txt", "NOT-WRITTEN")],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-perm-lines-" }));
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox", "--mode", "default", "write it"]);
    await t.start([cmd, ...args], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
      width: WIDTH,
    });
    await t.waitFor(/wants to write[\s\S]*deny always/);
    await t.keys("n");
    const end = await t.waitFor(/\[exited \d+\]/);
    checkBlock(promptBlock(end), /^ {2}→ denied$/);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
});
