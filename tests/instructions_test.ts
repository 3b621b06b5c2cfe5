/**
 * Workspace instructions discovery (core/instructions.ts): in each directory from the working
 * directory upwards, `COYOTE.md`, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` in that order; the first
 * non-empty one wins, so a nearer file beats a higher-priority name further up.
 */
import assert from "node:assert/strict";
import { buildSystemPrompt, findInstructions } from "../core/instructions.ts";

Deno.test("instructions: priority within a folder, nearest folder first, empty files skipped", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-instr-" }));
  try {
    const cwd = `${root}/repo/pkg`;
    await Deno.mkdir(cwd, { recursive: true });
    const names = ["COYOTE.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md"];
    for (const n of names) await Deno.writeTextFile(`${cwd}/${n}`, `from ${n}`);
    await Deno.writeTextFile(`${root}/repo/COYOTE.md`, "from the parent");
    for (const n of names) {
      const found = findInstructions(cwd);
      assert.equal(found?.path, `${cwd}/${n}`);
      assert.equal(found?.text, `from ${n}`);
      await Deno.writeTextFile(`${cwd}/${n}`, " \n\t\n"); // empty now: the next name wins
    }
    assert.equal(findInstructions(cwd)?.text, "from the parent");
    await Deno.remove(`${root}/repo/COYOTE.md`);
    await Deno.writeTextFile(`${root}/GEMINI.md`, "from the top");
    assert.equal(findInstructions(cwd)?.path, `${root}/GEMINI.md`);
    const prompt = buildSystemPrompt("You are Coyote.", { cwd }, findInstructions(cwd));
    assert.match(prompt, /^You are Coyote\./);
    assert.match(prompt, /from the top$/);
    await Deno.remove(`${root}/GEMINI.md`);
    // Nothing up to the root (the temp dir's parents hold none of the four names).
    assert.equal(findInstructions(cwd)?.path.startsWith(root) ?? false, false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
