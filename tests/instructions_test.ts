/**
 * Workspace instructions discovery (core/config/instructions.ts). In a git repository: the chain from
 * the root down to the working directory, one file per directory, outermost first. Outside one:
 * in each directory from the working directory upwards, `COYOTE.md`, `AGENTS.md`, `CLAUDE.md`,
 * `GEMINI.md` in that order; the first non-empty one wins.
 */
import assert from "node:assert/strict";
import {
  buildSystemPrompt,
  findInstructions,
  MAX_INSTRUCTIONS,
} from "../core/config/instructions.ts";

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

Deno.test("instructions: in a git repository, the chain from the root down to the cwd, outermost first; nothing above the root", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-instr-chain-" }));
  try {
    const repo = `${root}/repo`;
    const cwd = `${repo}/sub/pkg`;
    await Deno.mkdir(cwd, { recursive: true });
    const git = await new Deno.Command("git", { args: ["init", "-q", repo] }).output();
    assert.ok(git.success);
    await Deno.writeTextFile(`${root}/AGENTS.md`, "ABOVE THE REPO");
    await Deno.writeTextFile(`${repo}/AGENTS.md`, "ROOT RULES");
    await Deno.writeTextFile(`${repo}/sub/CLAUDE.md`, "SUB RULES");
    await Deno.writeTextFile(`${cwd}/COYOTE.md`, "PKG RULES");
    await Deno.writeTextFile(`${cwd}/AGENTS.md`, "PKG AGENTS (shadowed by COYOTE.md)");
    const found = findInstructions(cwd)!;
    assert.deepEqual(found.files!.map((f) => f.path), [
      `${repo}/AGENTS.md`,
      `${repo}/sub/CLAUDE.md`,
      `${cwd}/COYOTE.md`,
    ]);
    assert.equal(
      found.text,
      `From ${repo}/AGENTS.md:\n\nROOT RULES\n\nFrom ${repo}/sub/CLAUDE.md:\n\nSUB RULES\n\n` +
        `From ${cwd}/COYOTE.md:\n\nPKG RULES`,
    );
    assert.ok(!found.text.includes("ABOVE THE REPO"));
    const prompt = buildSystemPrompt("You are Coyote.", { cwd }, found);
    assert.ok(prompt.indexOf("ROOT RULES") < prompt.indexOf("PKG RULES"));

    // Over the cap, the outermost file is cut first and the nearest one is whole.
    await Deno.writeTextFile(`${repo}/AGENTS.md`, "R".repeat(MAX_INSTRUCTIONS));
    const capped = findInstructions(cwd)!;
    assert.ok(capped.text.endsWith("PKG RULES"));
    assert.match(capped.files![0].text, /\[instructions truncated\]$/);
    const total = capped.files!.reduce((n, f) => n + f.text.length, 0);
    assert.ok(total <= MAX_INSTRUCTIONS + 40, `${total}`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
