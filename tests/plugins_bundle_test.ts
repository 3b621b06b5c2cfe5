/**
 * Folder plugins are bundled at load (core/extensions/plugin_host/bundle.ts, issue 11 §5):
 * relative imports inside the folder, `with { type: "text" }` data files,
 * `npm:` packages (from Deno's npm cache) and `node:` built-ins are inlined or
 * kept; imports leaving the folder are refused by name (also through a
 * symbolic link); bundling errors name file, line and column (also in
 * `coyote plugins check`, as a subprocess); bundles are cached by the content
 * of every input; and a bundled plugin still runs inside its grant.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../core/extensions/plugin_host/mod.ts";
import { Policy } from "../core/policy/policy.ts";
import type { ToolContext, ToolResult } from "../sdk/mod.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { assertToolError, testApp } from "./support/fixtures.ts";

// The two-file example plugin's own unit tests (docs/plugins.md) run with this suite.
import "../examples/plugins/wordstats/wordstats_test.ts";

const REPO = new URL("../", import.meta.url).pathname;
const WORDSTATS = join(REPO, "examples/plugins/wordstats");

interface Dirs {
  root: string;
  ws: string;
  cfg: string;
  data: string;
  plugin: string;
  cleanup(): Promise<void>;
}

/** A temp root with ws/, cfg/, data/ and a plugin folder `plugin/` holding `files`. */
async function dirs(files: Record<string, string> = {}): Promise<Dirs> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-bundle-" }));
  const d = {
    root,
    ws: join(root, "ws"),
    cfg: join(root, "cfg"),
    data: join(root, "data"),
    plugin: join(root, "plugin"),
  };
  for (const p of [d.ws, d.cfg, d.data, d.plugin]) await Deno.mkdir(p, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await Deno.mkdir(join(d.plugin, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(d.plugin, name), text);
  }
  return { ...d, cleanup: () => Deno.remove(root, { recursive: true }) };
}

async function load(d: Dirs, path = d.plugin, noCache = false) {
  const app = testApp({ cwd: d.ws, configDir: d.cfg, dataDir: d.data }, { plugins: [path] });
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: d.ws,
    configDir: d.cfg,
    dataDir: d.data,
  });
  return await loadPlugins(app, policy, d.ws, { log: () => {}, noCache });
}

const ctx = (cwd: string): ToolContext => ({
  cwd,
  signal: new AbortController().signal,
  toolCallId: "c1",
  log: { debug() {}, info() {}, warn() {}, error() {} },
  progress() {},
  requestPermission: () => Promise.resolve(false),
});

async function call(
  loaded: Awaited<ReturnType<typeof load>>,
  name: string,
  input: unknown,
  cwd: string,
): Promise<ToolResult> {
  const tool = loaded.tools.find((t) => t.name === name);
  assert.ok(tool, `tool ${name} loaded (warnings: ${loaded.warnings.join(" | ")})`);
  const r = await tool.run(input, ctx(cwd));
  return typeof r === "string" ? { content: r } : r;
}

const MOD = (body: string, imports = "") =>
  `import { definePlugin, defineTool } from "@coyote/sdk";\n${imports}\n` +
  `export default definePlugin({ name: "multi", version: "1.0.0", tools: [defineTool({\n` +
  `  name: "multi_run", description: "d", input: { type: "object" },\n` +
  `  run: async (input: Record<string, unknown>) => { ${body} } })] });\n`;

Deno.test("bundle: the two-file example plugin loads from its folder and its tool runs", async () => {
  const d = await dirs();
  const loaded = await load(d, WORDSTATS, true);
  try {
    assert.deepEqual(loaded.warnings, []);
    assert.equal(loaded.plugins[0].status, "loaded");
    assert.equal(
      (await call(loaded, "wordstats_count", { text: "to be or not to be", top: 2 }, d.ws))
        .content,
      "6 words, 1 lines, 18 characters; top: be (2), to (2)",
    );
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("bundle: sibling modules, text data, npm: packages and node: built-ins are bundled", async () => {
  const d = await dirs({
    "mod.ts": MOD(
      `const ig = ignore().add("*.log");\n` +
        `return [shout(String(input.s)), banner.trim(), ig.ignores("a.log"), basename("/x/y.txt")].join(" ");`,
      `import { shout } from "./lib/shout.ts";\nimport banner from "./banner.txt" with { type: "text" };\n` +
        `import ignore from "npm:ignore@^7";\nimport { basename } from "node:path";`,
    ),
    "lib/shout.ts": `import { suffix } from "../suffix.js";\n` +
      `export const shout = (s: string): string => s.toUpperCase() + suffix;\n`,
    "suffix.js": `export const suffix = "!";\n`,
    "banner.txt": "BANNER\n",
  });
  const loaded = await load(d);
  try {
    assert.deepEqual(loaded.warnings, []);
    assert.equal(
      (await call(loaded, "multi_run", { s: "hi" }, d.ws)).content,
      "HI! BANNER true y.txt",
    );
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("bundle: a CommonJS package in the folder's node_modules, requiring its dependency and a node built-in", async () => {
  const d = await dirs({
    "mod.ts": MOD(`return describe(String(input.p));`, `import describe from "describe-path";`),
    "node_modules/describe-path/package.json": JSON.stringify({
      name: "describe-path",
      version: "1.0.0",
      main: "lib/index.js",
      dependencies: { "upper-case-lite": "^2.0.0" },
    }),
    "node_modules/describe-path/lib/index.js": `const path = require("path");
` +
      `const { upper } = require("upper-case-lite");
` +
      `module.exports = (p) => upper(path.basename(p)) + " in " + require("node:path").dirname(p);
`,
    "node_modules/upper-case-lite/package.json": JSON.stringify({
      name: "upper-case-lite",
      version: "2.1.0",
      exports: { ".": { require: "./cjs.js", import: "./esm.js" } },
    }),
    "node_modules/upper-case-lite/cjs.js": `exports.upper = (s) => s.toUpperCase();
`,
    "node_modules/upper-case-lite/esm.js": `export const upper = () => "WRONG CONDITION";
`,
  });
  const loaded = await load(d, d.plugin, true);
  try {
    assert.deepEqual(loaded.warnings, []);
    assert.equal(
      (await call(loaded, "multi_run", { p: "/a/b/file.txt" }, d.ws)).content,
      "FILE.TXT in /a/b",
    );
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("bundle: imports leaving the folder are refused by name, with file and line", async () => {
  const variants: Record<string, string> = {
    parent: `import x from "../outside/secret.ts";`,
    absolute: `import x from "__ROOT__/outside/secret.ts";`,
    fileUrl: `import x from "file://__ROOT__/outside/secret.ts";`,
    link: `import x from "./linked/secret.ts";`,
    remote: `import x from "https://example.com/x.ts";`,
    jsr: `import x from "jsr:@std/path";`,
    npmSubpath: `import x from "npm:ignore@^7/../../../../outside/secret.ts";`,
    text: `import x from "../outside/secret.ts" with { type: "text" };`,
  };
  for (const [name, line] of Object.entries(variants)) {
    const d = await dirs();
    try {
      await Deno.mkdir(join(d.root, "outside"));
      await Deno.writeTextFile(
        join(d.root, "outside", "secret.ts"),
        `export default "OUTSIDE-SECRET";`,
      );
      await Deno.symlink(join(d.root, "outside"), join(d.plugin, "linked"));
      await Deno.writeTextFile(
        join(d.plugin, "mod.ts"),
        MOD("return String(x);", line.replace("__ROOT__", d.root)),
      );
      const loaded = await load(d, d.plugin, true);
      try {
        assert.equal(loaded.plugins[0].status, "error", name);
        assert.equal(loaded.tools.length, 0, name);
        const w = loaded.warnings.join("\n");
        const spec = /from "([^"]+)"/.exec(line)![1].replace("__ROOT__", d.root);
        assert.ok(w.includes(`cannot bundle: mod.ts:2:`), `${name}: file and line: ${w}`);
        assert.ok(w.includes(`refused: imports "${spec}"`), `${name}: names the import: ${w}`);
        assert.ok(!w.includes("OUTSIDE-SECRET"), name);
      } finally {
        await loaded.close();
      }
    } finally {
      await d.cleanup();
    }
  }
});

Deno.test("bundle: a bundled plugin still runs inside its grant (nothing declared: no reads)", async () => {
  const d = await dirs({
    "mod.ts": MOD(
      `return note.trim() + " / " + await Deno.readTextFile(String(input.path));`,
      `import note from "./note.txt" with { type: "text" };`,
    ),
    "note.txt": "inlined at load",
  });
  const loaded = await load(d);
  try {
    assert.deepEqual(loaded.plugins[0].grant.read, false);
    // The data file was inlined by the host at load; the plugin itself cannot read its folder.
    assertToolError(
      await call(loaded, "multi_run", { path: join(d.plugin, "note.txt") }, d.ws),
      /NotCapable|Requires read access/,
    );
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("bundle: bundles are cached by the content of every input; an edited helper is bundled again", async () => {
  const d = await dirs({
    "mod.ts": MOD(`return word;`, `import { word } from "./word.ts";`),
    "word.ts": `export const word = "v1";\n`,
  });
  try {
    let loaded = await load(d);
    assert.equal((await call(loaded, "multi_run", {}, d.ws)).content, "v1");
    await loaded.close();
    const cacheDir = join(d.data, "plugin-cache");
    const [entry] = [...Deno.readDirSync(cacheDir)];
    const cacheFile = join(cacheDir, entry.name);
    const cached = JSON.parse(await Deno.readTextFile(cacheFile));
    assert.deepEqual(
      cached.inputs.map((i: { path: string }) => i.path).filter((p: string) => p.endsWith(".ts"))
        .sort(),
      [join(d.plugin, "mod.ts"), join(d.plugin, "word.ts")],
    );
    cached.manifest.description = "from-cache";
    await Deno.writeTextFile(cacheFile, JSON.stringify(cached));
    loaded = await load(d);
    assert.equal(loaded.plugins[0].description, "from-cache", "unchanged inputs: no new bundle");
    await loaded.close();
    await Deno.writeTextFile(join(d.plugin, "word.ts"), `export const word = "v2";\n`);
    loaded = await load(d);
    try {
      assert.equal(loaded.plugins[0].description, undefined);
      assert.equal((await call(loaded, "multi_run", {}, d.ws)).content, "v2");
    } finally {
      await loaded.close();
    }
  } finally {
    await d.cleanup();
  }
});

Deno.test("bundle: a new file that changes what an import resolves to invalidates the cached bundle", async () => {
  const d = await dirs({
    "mod.ts": MOD(`return word;`, `import { word } from "./word";`),
    "word.js": `export const word = "from word.js";\n`,
  });
  try {
    let loaded = await load(d);
    assert.equal((await call(loaded, "multi_run", {}, d.ws)).content, "from word.js");
    await loaded.close();
    // "./word" tries word.ts before word.js: the new file is what the import means now.
    await Deno.writeTextFile(join(d.plugin, "word.ts"), `export const word = "from word.ts";\n`);
    loaded = await load(d);
    try {
      assert.equal((await call(loaded, "multi_run", {}, d.ws)).content, "from word.ts");
    } finally {
      await loaded.close();
    }
  } finally {
    await d.cleanup();
  }
});

Deno.test("bundle: `coyote plugins check` reports bundling errors with file and line (subprocess)", async () => {
  const env = await makeCoyoteEnv();
  const d = await dirs({
    "mod.ts": MOD(`return helper();`, `import { helper } from "./lib/helper.ts";`),
    "lib/helper.ts": `export function helper(): string {\n  return "x" +;\n}\n`,
  });
  try {
    const bad = await runCoyote(["plugins", "check", d.plugin], { cwd: d.ws, env: childEnv(env) });
    assert.equal(bad.code, 2, bad.stdout);
    assert.match(bad.stderr, /cannot bundle: lib\/helper\.ts:2:\d+: /);
    assert.ok(!bad.stderr.includes("    at "), "no stack trace for a user error");
    await Deno.writeTextFile(
      join(d.plugin, "lib", "helper.ts"),
      `export function helper(): string {\n  return "x";\n}\n`,
    );
    const ok = await runCoyote(["plugins", "check", d.plugin], { cwd: d.ws, env: childEnv(env) });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^multi 1\.0\.0 {2}\[loaded\]/m);
  } finally {
    await env.cleanup();
    await d.cleanup();
  }
});

Deno.test("bundle: a one-file plugin stays self-contained (its imports are refused, not bundled)", async () => {
  const d = await dirs({
    "single.ts": MOD(`return word;`, `import { word } from "./word.ts";`),
    "word.ts": `export const word = "w";\n`,
  });
  const loaded = await load(d, join(d.plugin, "single.ts"), true);
  try {
    assert.equal(loaded.plugins[0].status, "error");
    assert.match(loaded.warnings.join("\n"), /refused: line 2: imports "\.\/word\.ts".*folder/);
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});
