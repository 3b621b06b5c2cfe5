/**
 * Issue 16 (fresh-user trial): a search tool reads every file under its path in one call, and
 * the guard judged only the path — `fs_grep {pattern}` printed a file a `Read` deny rule covers.
 * Now `fs_grep` and `ast_grep` leave out each file the guard would not let `fs_read` read without
 * a question, and say so (plugins/fs/held.ts). Driven from the headless frontend, as a user
 * runs it, and through a tool context whose guard is a real Policy.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { headlessTurns } from "./support/headless_attack.ts";
import { Policy } from "../core/policy/policy.ts";
import { fsGrepTool } from "../plugins/fs/grep.ts";
import type { ToolContext, ToolResult } from "../sdk/mod.ts";

async function workspace(): Promise<string> {
  const ws = await Deno.makeTempDir({ prefix: "coyote-grep-held-" });
  await Deno.mkdir(join(ws, "src"));
  await Deno.writeTextFile(join(ws, "secret.txt"), "TOPSECRET=hunter2\n");
  await Deno.writeTextFile(join(ws, "src", "secret_keys.ts"), "// TOPSECRET in code\n");
  await Deno.writeTextFile(join(ws, ".env"), "TOPSECRET_ENV=abc\n");
  await Deno.writeTextFile(join(ws, "src", "a.ts"), "export const TOPSECRET_NAME = 1;\n");
  return ws;
}

function text(r: ToolResult | string): string {
  return typeof r === "string" ? r : String(r.content);
}

Deno.test("fs_grep leaves out what a Read deny or ask rule covers, and says so (guard of a real Policy)", async () => {
  const ws = await workspace();
  try {
    const rows: [string[], string[], RegExp[], RegExp[]][] = [
      // [deny rules, ask rules, must show, must not show]
      [["Read(secret*)"], [], [/src\/a\.ts/, /\.env/, /secret_keys/], [
        /hunter2/,
        /^secret\.txt:/m,
      ]],
      [["Read(**/secret*)"], [], [/src\/a\.ts/], [/hunter2/, /secret_keys\.ts:/]],
      [["Read(secret.txt)"], [], [/secret_keys/, /src\/a\.ts/], [/hunter2/]],
      [[], ["Read(.env)"], [/src\/a\.ts/, /^secret\.txt:/m], [/TOPSECRET_ENV/]],
      [[], [], [/hunter2/, /TOPSECRET_ENV/, /src\/a\.ts/], [/left out/]],
    ];
    for (const [deny, ask, shows, hides] of rows) {
      const policy = Policy.create({ deny, ask }, { allow: [], deny: [] }, {
        workspace: ws,
        configDir: "/c",
      });
      await policy.globsReady();
      const ctx = {
        cwd: ws,
        signal: new AbortController().signal,
        toolCallId: "t",
        log: { debug() {}, info() {}, warn() {}, error() {} },
        progress() {},
        requestPermission: () => Promise.resolve(false),
        guard: (a) => policy.evaluate(a),
      } as ToolContext;
      const out = text(await fsGrepTool.run({ pattern: "TOPSECRET" }, ctx));
      for (const re of shows) assert.match(out, re, `${deny}${ask}: shows ${re}\n${out}`);
      for (const re of hides) assert.doesNotMatch(out, re, `${deny}${ask}: hides ${re}\n${out}`);
      // Denied only: fs_read is denied too, so the note sends the model to no fs_read.
      if (ask.length) {
        assert.match(out, /left out: the guard would not let fs_read .*; fs_read a file to ask\]/);
      } else if (deny.length) {
        assert.match(out, /left out: fs_read may not read (it|them) either \(rule Read\(/, out);
        assert.doesNotMatch(out, /to ask/, out);
      }
    }
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("fs_grep headless under --deny 'Read(secret*)': the secret never reaches the model, other matches do", async () => {
  const ws = await workspace();
  try {
    const { sent } = await headlessTurns(ws, [[
      { id: "g1", name: "fs_grep", args: { pattern: "TOPSECRET" } },
      { id: "g2", name: "fs_grep", args: { pattern: "hunter", path: "." } },
    ]], ["--deny", "Read(secret*)"]);
    assert.doesNotMatch(sent, /hunter2/, "the denied file's line never reaches the model");
    assert.match(sent, /src\/a\.ts:1:/, "an allowed file's match comes back");
    assert.match(sent, /No matches for \/hunter\//, "a search whose only match is held finds none");
    assert.match(sent, /left out/);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
