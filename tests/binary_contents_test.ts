/**
 * Everything a run can load is in the compiled binary (issue 22, "compile-ready").
 *
 * `deno run` loads our literal dynamic imports lazily (deno.json `"unstable":
 * ["lazy-dynamic-imports"]`: Deno no longer walks them before main.ts runs, ≈ 30–50 ms of every
 * start), while `deno compile` type-checks and so walks and embeds them as before. What the binary
 * holds is therefore the module graph of main.ts as `deno info` resolves it (static, literal
 * dynamic and `with { type: "text" }` imports). This test fails when
 *
 * - a file of the program (main.ts, core/, plugins/, sdk/, agents/, skills/) is not in that graph:
 *   a module or asset a run would reach by a computed path, a file read from Coyote's own folder
 *   at run time, or a dead file;
 * - an `import(…)` in the program takes anything but a string literal, except the listed loaders
 *   of *user* code (plugins, graph scripts), which load data URLs or the user's files.
 * @module
 */
import assert from "node:assert/strict";
import { denoInfo } from "./support/module_graph.ts";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./support/run_coyote.ts";

const PROGRAM_DIRS = ["core", "plugins", "sdk", "agents", "skills"];

/** `import(x)` with a computed `x`, on purpose: they load user code, never ours. */
const USER_CODE_LOADERS: Record<string, string> = {
  "core/extensions/plugin_host/host_main.ts": "a plugin's bundled source, as a data URL",
  "core/extensions/plugin_host/worker_main.ts": "a plugin's module, as a data URL",
  "core/graph/script_main.ts": "a graph's own .ts script from the user's agent folder",
};

/**
 * `import(x)` with a computed `x` that loads our own code from the start bundle (`.bundle/`,
 * scripts/bundle_start.ts): the same program, built from these files and used only while its
 * stamp matches them (core/frontends/cli/start_bundle.ts). A compiled binary has no bundle and
 * takes the literal import of the sources beside each of these, which is what it embeds.
 */
const START_BUNDLE_LOADERS: Record<string, string> = {
  "main.ts": "the CLI and the ACP stdio guard, from the start bundle when it is fresh",
};

/**
 * Files of the program that no run loads yet, each with why; a run cannot reach them, so the binary
 * need not hold them. Keep this list short and each entry temporary.
 */
const NOT_LOADED_YET: Record<string, string> = {};

async function programFiles(): Promise<string[]> {
  const out = ["main.ts"];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(join(REPO_ROOT, dir))) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(rel);
      else if (e.isFile) out.push(rel);
    }
  };
  for (const d of PROGRAM_DIRS) await walk(d);
  return out.sort();
}

Deno.test("binary: every file of the program is in main.ts's module graph (what deno compile embeds)", async () => {
  const info = await denoInfo("main.ts") as { modules: { specifier: string }[] };
  const inGraph = new Set(
    info.modules.filter((m) => m.specifier.startsWith("file://")).map((m) =>
      relative(REPO_ROOT, decodeURIComponent(new URL(m.specifier).pathname))
    ),
  );
  const missing = (await programFiles()).filter((f) => !inGraph.has(f) && !NOT_LOADED_YET[f]);
  for (const f of Object.keys(NOT_LOADED_YET)) {
    assert.ok(!inGraph.has(f), `${f} is loaded now: take it off NOT_LOADED_YET`);
  }
  assert.deepEqual(
    missing,
    [],
    "not reachable from main.ts by a literal import, so not in the compiled binary",
  );
});

Deno.test("binary: every import() of the program takes a string literal (user-code loaders listed)", async () => {
  const bad: string[] = [];
  for (const f of await programFiles()) {
    if (!f.endsWith(".ts") || USER_CODE_LOADERS[f]) continue;
    if (START_BUNDLE_LOADERS[f]) {
      // Each computed import of the bundle has the literal import of the sources beside it.
      const text = await Deno.readTextFile(join(REPO_ROOT, f));
      const computed = text.match(/import\(`\$\{bundle\}[\w.]+`\)/g)?.length ?? 0;
      const literal = text.match(/: await import\("\.\/core\/[\w/.]+"\)/g)?.length ?? 0;
      assert.ok(computed > 0 && computed === literal, `${f}: a bundle import without its source`);
      continue;
    }
    const lines = (await Deno.readTextFile(join(REPO_ROOT, f))).split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "");
      if (/^\s*\*/.test(code)) return; // a doc comment
      for (const m of code.matchAll(/(?<![\w.$])import\(\s*(.)/g)) {
        // `typeof import("x")` is a type; the argument must start a plain string literal.
        if (/typeof\s+$/.test(code.slice(0, m.index))) continue;
        if (m[1] === ")") continue; // `import()` named in text
        if (m[1] !== '"' && m[1] !== "'") bad.push(`${f}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(bad, [], "a computed import() is not embedded by deno compile");
});

Deno.test("binary: lazy dynamic imports are on for deno run, and Deno's progress line is off (--quiet)", async () => {
  const cfg = JSON.parse(await Deno.readTextFile(join(REPO_ROOT, "deno.json")));
  assert.ok(cfg.unstable.includes("lazy-dynamic-imports"));
  // A lazy import on a terminal makes Deno redraw its progress line on stderr, which erased the
  // REPL's prompt (tests/repl_test.ts reads the screen); `--quiet` turns it off.
  for (const task of ["coyote", "install"]) {
    assert.match(cfg.tasks[task], / --quiet /, `deno task ${task} passes --quiet`);
  }
});
