/**
 * The plugin host with well-behaved plugins: discovery, the example plugin,
 * the ToolContext proxy (progress, log, permission, cancellation), host-side
 * JSON Schema validation, zod-typed bundled plugins, name rules, refused
 * grants, the probe cache, grants inside a worker and the
 * `coyote plugins list|check` commands (as subprocesses).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  loadPlugins,
  type LoadPluginsOptions,
  PluginWorker,
} from "../core/extensions/plugin_host/mod.ts";
import { compilePluginSource } from "../core/extensions/plugin_host/source.ts";
import { NO_PERMISSIONS } from "../core/extensions/plugin_host/grant.ts";
import { Policy } from "../core/policy/policy.ts";
import type { AppOptions } from "../core/config/app_options.ts";
import type { PermissionQuestion, ToolContext, ToolProgress, ToolResult } from "../sdk/mod.ts";
import { SDK_VERSION } from "../sdk/mod.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

// The example plugin's own unit tests (docs/plugins.md, "Testing a plugin") run with this suite.
import "../examples/plugins/hello/hello_test.ts";
import { testApp } from "./support/fixtures.ts";

const REPO = new URL("../", import.meta.url).pathname;
const GOOD = join(REPO, "tests/fixtures/plugins/good");
const HELLO = join(REPO, "examples/plugins/hello");

interface Dirs {
  root: string;
  ws: string;
  cfg: string;
  data: string;
  cleanup(): Promise<void>;
}

async function dirs(): Promise<Dirs> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-plugins-" }));
  const d = { root, ws: join(root, "ws"), cfg: join(root, "cfg"), data: join(root, "data") };
  for (const p of [d.ws, d.cfg, d.data]) await Deno.mkdir(p, { recursive: true });
  return { ...d, cleanup: () => Deno.remove(root, { recursive: true }) };
}

function appFor(d: Dirs, extra: Partial<AppOptions> = {}): AppOptions {
  return testApp({ cwd: d.ws, configDir: d.cfg, dataDir: d.data }, extra);
}

function policyFor(d: Dirs): Policy {
  return Policy.create({}, { allow: [], deny: [] }, {
    workspace: d.ws,
    configDir: d.cfg,
    dataDir: d.data,
  });
}

interface Captured {
  progress: ToolProgress[];
  questions: PermissionQuestion[];
}

function ctxFor(
  d: Dirs,
  cap: Captured,
  opts: { signal?: AbortSignal; answer?: boolean } = {},
): ToolContext {
  return {
    cwd: d.ws,
    signal: opts.signal ?? new AbortController().signal,
    toolCallId: "call_1",
    log: { debug() {}, info() {}, warn() {}, error() {} },
    progress: (u) => cap.progress.push(u),
    requestPermission: (q) => {
      cap.questions.push(q);
      return Promise.resolve(opts.answer ?? false);
    },
  };
}

async function run(
  loaded: { tools: { name: string; run: (i: unknown, c: ToolContext) => unknown }[] },
  name: string,
  input: unknown,
  ctx: ToolContext,
): Promise<ToolResult> {
  const tool = loaded.tools.find((t) => t.name === name);
  assert.ok(tool, `tool ${name} is loaded`);
  const r = await tool.run(input, ctx) as ToolResult | string;
  return typeof r === "string" ? { content: r } : r;
}

const PLUGIN = (name: string, tool = `${name.replace(/\W/g, "_")}_t`, extra = "") =>
  `import { definePlugin } from "@coyote/sdk";\n` +
  `export default definePlugin({ name: ${JSON.stringify(name)}, version: "1.0.0", ${extra}\n` +
  `  tools: [{ name: ${
    JSON.stringify(tool)
  }, description: "d", input: { type: "object" }, run: () => ${JSON.stringify(name)} }] });\n`;

Deno.test("plugins: the example plugin loads via --plugin and its tool runs in a worker", async () => {
  const d = await dirs();
  const logs: string[] = [];
  const loaded = await loadPlugins(appFor(d, { plugins: [HELLO] }), policyFor(d), d.ws, {
    log: (p, l, m) => logs.push(`${p}:${l}:${m}`),
  });
  try {
    assert.deepEqual(loaded.warnings, []);
    const [info] = loaded.plugins;
    assert.equal(info.name, "hello");
    assert.equal(info.status, "loaded");
    assert.deepEqual(info.tools, ["hello_greet"]);
    assert.deepEqual(
      info.grant,
      NO_PERMISSIONS,
      "nothing declared, nothing granted; every key explicit",
    );
    const tool = loaded.tools[0];
    assert.equal(tool.readOnly, true);
    assert.deepEqual((tool.input as { required: string[] }).required, ["name"]);
    const cap = { progress: [], questions: [] };
    assert.equal(
      (await run(loaded, "hello_greet", { name: "Ada" }, ctxFor(d, cap))).content,
      "Hello, Ada!",
    );
    assert.deepEqual(logs, ["hello:info:greeting Ada"]);
    const bad = await run(loaded, "hello_greet", { nam: "Ada" }, ctxFor(d, cap));
    assert.equal(bad.isError, true);
    assert.match(bad.content, /invalid input for hello_greet: .*required property "name"/);
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("plugins: discovery from flag, config, workspace and user dir; de-duplicated by real path", async () => {
  const d = await dirs();
  const wsPlugins = join(d.ws, ".coyote", "plugins");
  const userPlugins = join(d.cfg, "plugins");
  await Deno.mkdir(join(wsPlugins, "folder"), { recursive: true });
  await Deno.mkdir(join(userPlugins, "other"), { recursive: true });
  await Deno.mkdir(join(d.root, "cfgplugins"), { recursive: true });
  await Deno.writeTextFile(join(d.root, "flag.ts"), PLUGIN("from-flag"));
  await Deno.writeTextFile(join(d.root, "cfgplugins", "c.js"), PLUGIN("from-config"));
  await Deno.writeTextFile(join(wsPlugins, "ws.ts"), PLUGIN("from-ws"));
  await Deno.writeTextFile(join(wsPlugins, "folder", "mod.ts"), PLUGIN("from-ws-folder"));
  await Deno.writeTextFile(join(wsPlugins, "_disabled.ts"), PLUGIN("disabled"));
  await Deno.writeTextFile(join(wsPlugins, "types.d.ts"), "export type X = 1;");
  await Deno.writeTextFile(join(wsPlugins, "notes.md"), "# not a plugin");
  await Deno.symlink(join(d.root, "flag.ts"), join(wsPlugins, "link.ts")); // same real path as --plugin
  await Deno.writeTextFile(join(userPlugins, "other", "plugin.ts"), PLUGIN("from-user"));
  const app = appFor(d, {
    plugins: [join(d.root, "flag.ts"), join(d.root, "missing.ts")],
    configPath: join(d.root, "config.yaml"),
    config: { plugins: ["cfgplugins/c.js", "https://example.com/p.ts"] },
  });
  const loaded = await loadPlugins(app, policyFor(d), d.ws);
  try {
    assert.deepEqual(
      loaded.plugins.map((p) => `${p.origin}:${p.name}`),
      [
        "flag:from-flag",
        "config:from-config",
        "workspace:from-ws-folder",
        "workspace:from-ws",
        "user:from-user",
      ],
    );
    const w = loaded.warnings.join("\n");
    assert.match(w, /missing\.ts: not found/);
    assert.match(w, /https:\/\/example\.com\/p\.ts: only local paths are supported/);
    assert.equal(loaded.tools.length, 5);
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("plugins: ToolContext is proxied (result fields, progress, log, permission, cancellation)", async () => {
  const d = await dirs();
  const logs: string[] = [];
  const loaded = await loadPlugins(
    appFor(d, { plugins: [join(GOOD, "kitchen.ts")] }),
    policyFor(d),
    d.ws,
    {
      log: (_p, l, m) => logs.push(`${l}:${m}`),
    },
  );
  try {
    assert.deepEqual(loaded.warnings, []);
    assert.deepEqual(loaded.agents.map((a) => a.name), ["kitchen-chef"]);
    assert.deepEqual(loaded.skills, [{
      name: "plating",
      description: "How to plate.",
      content: "Plate nicely.",
    }]);
    const echoTool = loaded.tools.find((t) => t.name === "kitchen_echo")!;
    assert.equal(echoTool.kind, "think");
    const cap: Captured = { progress: [], questions: [] };
    const echo = await run(loaded, "kitchen_echo", { text: "ab", times: 2 }, ctxFor(d, cap));
    assert.equal(echo.content, "abab");
    assert.deepEqual(echo.locations, [{ path: `${d.ws}/x.txt`, line: 3 }]);
    assert.deepEqual(echo.rawOutput, { sdk: SDK_VERSION, toolCallId: "call_1" });
    const invalid = await run(loaded, "kitchen_echo", { text: "ab", times: 0 }, ctxFor(d, cap));
    assert.equal(invalid.isError, true);
    assert.match(invalid.content, /#\/times/);

    assert.equal((await run(loaded, "kitchen_progress", {}, ctxFor(d, cap))).content, "done");
    assert.deepEqual(cap.progress.map((p) => p.message), ["step 1", "step 2", "step 3"]);
    assert.ok(logs.includes("warn:almost done"));

    assert.equal(
      (await run(loaded, "kitchen_ask", {}, ctxFor(d, cap, { answer: true }))).content,
      "granted",
    );
    assert.equal(
      (await run(loaded, "kitchen_ask", {}, ctxFor(d, cap, { answer: false }))).content,
      "denied",
    );
    assert.deepEqual(cap.questions[0], {
      title: "[plugin kitchen] Do the thing",
      detail: "really",
    });

    const ac = new AbortController();
    const pending = run(loaded, "kitchen_wait", {}, ctxFor(d, cap, { signal: ac.signal }));
    setTimeout(() => ac.abort(), 50);
    const cancelled = await pending;
    assert.equal(cancelled.isError, true);
    assert.match(cancelled.content, /cancelled/);
    for (let i = 0; i < 50 && !logs.some((l) => l.startsWith("info:aborted")); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(logs.includes("info:aborted: AbortError"), `abort reached the plugin: ${logs}`);
    // The worker honoured the signal, so it was kept: the next call works.
    assert.equal((await run(loaded, "kitchen_echo", { text: "z" }, ctxFor(d, cap))).content, "z");
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("plugins: a bundled zod-typed plugin exposes JSON Schema and validates in the worker", async () => {
  const d = await dirs();
  const loaded = await loadPlugins(
    appFor(d, { plugins: [join(GOOD, "zod_bundle.js")] }),
    policyFor(d),
    d.ws,
  );
  try {
    assert.deepEqual(loaded.warnings, []);
    const tool = loaded.tools.find((t) => t.name === "calc_add")!;
    const schema = tool.input as {
      type: string;
      properties: Record<string, { type: string }>;
      required: string[];
    };
    assert.equal(schema.type, "object");
    assert.equal(schema.properties.a.type, "integer");
    assert.deepEqual(schema.required.sort(), ["a", "b"]);
    assert.equal("$schema" in schema, false);
    const cap = { progress: [], questions: [] };
    assert.equal(
      (await run(loaded, "calc_add", { a: 2, b: 3 }, ctxFor(d, cap))).content,
      "2 + 3 = 5",
    );
    const bad = await run(loaded, "calc_add", { a: 2.5, b: 3 }, ctxFor(d, cap));
    assert.equal(bad.isError, true);
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("plugins: bad names, duplicate tools, SDK majors and unknown permissions are refused with warnings", async () => {
  const d = await dirs();
  const p = join(d.ws, ".coyote", "plugins");
  await Deno.mkdir(p, { recursive: true });
  await Deno.writeTextFile(join(p, "a.ts"), PLUGIN("first", "shared_tool"));
  await Deno.writeTextFile(join(p, "b.ts"), PLUGIN("second", "shared_tool"));
  await Deno.writeTextFile(join(p, "c.ts"), PLUGIN("third", "bad name!"));
  await Deno.writeTextFile(join(p, "d.ts"), PLUGIN("fourth", "fs_read"));
  await Deno.writeTextFile(join(p, "e.ts"), PLUGIN("fifth", "t5", `sdkVersion: "2.0.0",`));
  await Deno.writeTextFile(join(p, "f.ts"), PLUGIN("sixth", "t6", `permissions: { ffi: ["x"] },`));
  await Deno.writeTextFile(join(p, "g.ts"), PLUGIN("first", "t7")); // same plugin name
  await Deno.writeTextFile(join(p, "h.js"), `export default 42;`);
  await Deno.writeTextFile(join(p, "i.js"), `export default {;`);
  const loaded = await loadPlugins(appFor(d), policyFor(d), d.ws, {
    reservedToolNames: ["fs_read"],
  });
  try {
    assert.deepEqual(loaded.tools.map((t) => t.name), ["shared_tool"]);
    const w = loaded.warnings.join("\n");
    assert.match(w, /plugin second: tool "shared_tool" collides with an existing tool; skipped/);
    assert.match(w, /plugin fourth: tool "fs_read" collides/);
    assert.match(w, /tool name "bad name!" must match/);
    assert.ok(
      w.includes(`written for SDK 2.0.0; this Coyote implements SDK ${SDK_VERSION}`),
      w,
    );
    assert.match(w, /unknown permission "ffi"/);
    assert.match(w, /another plugin named "first" is already loaded/);
    assert.match(w, /default export is not a plugin/);
    assert.match(w, /i\.js: syntax error/);
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("plugins: grant = declared ∩ policy; a refused permission refuses the plugin, naming the rule", async () => {
  const d = await dirs();
  const netPlugin = join(d.root, "net.ts");
  const readPlugin = join(d.root, "read.ts");
  const denied = join(d.root, "denied.ts");
  await Deno.writeTextFile(
    netPlugin,
    PLUGIN("wants-net", "n", `permissions: { net: ["example.com"] },`),
  );
  await Deno.writeTextFile(
    readPlugin,
    PLUGIN("wants-read", "r", `permissions: { read: ["data"] },`),
  );
  await Deno.writeTextFile(
    denied,
    PLUGIN("wants-secret", "s", `permissions: { read: ["secret/x"] },`),
  );
  const policyWith = (allow: string[], deny: string[]) =>
    Policy.create({}, { allow, deny }, { workspace: d.ws, configDir: d.cfg, dataDir: d.data });
  const app = appFor(d, { plugins: [netPlugin, readPlugin, denied] });
  let loaded = await loadPlugins(app, policyWith([], ["Read(secret/**)"]), d.ws);
  try {
    const [net, read, secret] = loaded.plugins;
    assert.equal(net.status, "refused");
    assert.deepEqual(net.tools, []);
    assert.deepEqual(net.grant, NO_PERMISSIONS);
    const w = loaded.warnings.join("\n");
    assert.match(
      w,
      /plugin "wants-net" declares net "example\.com" but .*add --allow 'Net\(example\.com\)'/,
    );
    assert.equal(secret.status, "refused");
    assert.equal(secret.refused[0].rule, "Read(secret/**)");
    assert.match(
      w,
      /plugin "wants-secret" declares read "secret\/x" but rule Read\(secret\/\*\*\)/,
    );
    assert.equal(read.status, "loaded");
    assert.deepEqual(read.grant, { ...NO_PERMISSIONS, read: [join(d.ws, "data")] });
    assert.deepEqual(loaded.tools.map((t) => t.name), ["r"]);
  } finally {
    await loaded.close();
  }
  loaded = await loadPlugins(app, policyWith(["Net(example.com)"], []), d.ws);
  try {
    assert.equal(loaded.plugins[0].status, "loaded");
    assert.deepEqual(loaded.plugins[0].grant, { ...NO_PERMISSIONS, net: ["example.com"] });
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("plugins: a granted net host is reachable, any other port is not", async () => {
  const d = await dirs();
  const hits: string[] = [];
  const servers = [0, 1].map(() =>
    Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      hits.push(new URL(req.url).port);
      return new Response("pong");
    })
  );
  const [allowed, other] = servers.map((s) => s.addr.port);
  const file = join(d.root, "net.ts");
  await Deno.writeTextFile(
    file,
    PLUGIN("fetcher", "fetch_url", `permissions: { net: ["127.0.0.1:${allowed}"] },`).replace(
      `run: () => "fetcher"`,
      `run: async (i) => await (await fetch(i.url)).text()`,
    ),
  );
  const policy = Policy.create({}, { allow: [`Net(127.0.0.1:${allowed})`], deny: [] }, {
    workspace: d.ws,
    configDir: d.cfg,
  });
  const loaded = await loadPlugins(appFor(d, { plugins: [file] }), policy, d.ws);
  try {
    assert.deepEqual(loaded.warnings, []);
    const cap = { progress: [], questions: [] };
    const ok = await run(
      loaded,
      "fetch_url",
      { url: `http://127.0.0.1:${allowed}/` },
      ctxFor(d, cap),
    );
    assert.equal(ok.content, "pong");
    const no = await run(
      loaded,
      "fetch_url",
      { url: `http://127.0.0.1:${other}/` },
      ctxFor(d, cap),
    );
    assert.equal(no.isError, true);
    assert.match(no.content, /NotCapable|Requires net access/);
    assert.deepEqual(hits, [String(allowed)]);
  } finally {
    await loaded.close();
    for (const s of servers) await s.shutdown();
    await d.cleanup();
  }
});

Deno.test("plugins: probes are cached by content; an edited plugin is probed again", async () => {
  const d = await dirs();
  const file = join(d.root, "cached.ts");
  await Deno.writeTextFile(file, PLUGIN("cached", "c", `description: "v1",`));
  const opts: LoadPluginsOptions = {};
  const app = appFor(d, { plugins: [file] });
  let loaded = await loadPlugins(app, policyFor(d), d.ws, opts);
  await loaded.close();
  assert.equal(loaded.plugins[0].description, "v1");
  const cacheDir = join(d.data, "plugin-cache");
  const [entry] = [...Deno.readDirSync(cacheDir)];
  const cacheFile = join(cacheDir, entry.name);
  const cached = JSON.parse(await Deno.readTextFile(cacheFile));
  cached.manifest.description = "from-cache";
  await Deno.writeTextFile(cacheFile, JSON.stringify(cached));
  loaded = await loadPlugins(app, policyFor(d), d.ws, opts);
  await loaded.close();
  assert.equal(loaded.plugins[0].description, "from-cache", "a warm start does not re-probe");
  await Deno.writeTextFile(file, PLUGIN("cached", "c", `description: "v2",`));
  loaded = await loadPlugins(app, policyFor(d), d.ws, opts);
  try {
    assert.equal(loaded.plugins[0].description, "v2");
  } finally {
    await loaded.close();
    await d.cleanup();
  }
});

Deno.test("plugins: a worker reads inside its grant and nothing outside", async () => {
  const d = await dirs();
  await Deno.mkdir(join(d.ws, "data"));
  await Deno.writeTextFile(join(d.ws, "data", "in.txt"), "inside");
  await Deno.writeTextFile(join(d.ws, "out.txt"), "outside");
  const code = await compilePluginSource(
    `import { definePlugin, defineTool } from "@coyote/sdk";
     export default definePlugin({ name: "reader", version: "1", permissions: { read: ["data"] }, tools: [
       defineTool({ name: "read", description: "d", input: { type: "object" },
         run: (i: { path: string }) => Deno.readTextFile(i.path) }) ] });`,
    "reader.ts",
  );
  const w = new PluginWorker("reader", code, { ...NO_PERMISSIONS, read: [join(d.ws, "data")] });
  try {
    const manifest = await w.start();
    assert.deepEqual(manifest.permissions, { read: ["data"] });
    const meta = { cwd: d.ws, toolCallId: "c" };
    assert.deepEqual(await w.call("read", { path: join(d.ws, "data", "in.txt") }, meta), {
      content: "inside",
    });
    const out = await w.call("read", { path: join(d.ws, "out.txt") }, meta);
    assert.equal(out.isError, true);
    assert.match(out.content, /NotCapable|Requires read access/);
    assert.equal(w.starts, 1);
  } finally {
    w.close();
    await d.cleanup();
  }
});

Deno.test("plugins: `coyote plugins check` and `coyote plugins list` (subprocess)", async () => {
  const env = await makeCoyoteEnv();
  const d = await dirs();
  try {
    const ok = await runCoyote(["plugins", "check", HELLO], { cwd: d.ws, env: childEnv(env) });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^hello 1\.0\.0 {2}\[loaded\]/m);
    assert.match(ok.stdout, /tools: hello_greet/);
    assert.match(
      ok.stdout,
      /grant: read: no; write: no; net: no; run: no; env: no; sys: no; ffi: no; import: no/,
    );
    assert.match(ok.stdout, /^ok$/m);
    const json = await runCoyote(["plugins", "check", HELLO, "--json"], {
      cwd: d.ws,
      env: childEnv(env),
    });
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.plugins[0].status, "loaded");
    assert.equal(report.plugins[0].grant.net, false);

    const bad = join(d.root, "bad.ts");
    await Deno.writeTextFile(
      bad,
      `import x from "./secret.txt" with { type: "text" };\nexport default x;`,
    );
    const refused = await runCoyote(["plugins", "check", bad], { cwd: d.ws, env: childEnv(env) });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /refused: line 1: imports "\.\/secret\.txt"/);
    assert.ok(!refused.stderr.includes("    at "), "no stack trace for a user error");

    await Deno.mkdir(join(d.ws, ".coyote", "plugins"), { recursive: true });
    await Deno.copyFile(join(GOOD, "kitchen.ts"), join(d.ws, ".coyote", "plugins", "kitchen.ts"));
    // `.coyote/plugins/` loads only in a trusted workspace (issue 11 §3).
    const list = await runCoyote(["--trust-workspace", "--plugin", HELLO, "plugins", "list"], {
      cwd: d.ws,
      env: childEnv(env),
    });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^hello 1\.0\.0 {2}\[loaded\] {2}\(flag\)/m);
    assert.match(list.stdout, /^kitchen 2\.1\.0 {2}\[loaded\] {2}\(workspace\)/m);
    assert.match(list.stdout, /agents: kitchen-chef/);
  } finally {
    await env.cleanup();
    await d.cleanup();
  }
});
