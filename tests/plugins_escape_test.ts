/**
 * Sandbox escapes beyond tests/plugins_hostile_test.ts: one hostile plugin
 * (fixtures/plugins/hostile/escape.js, dropped into a temp workspace's
 * `.coyote/plugins/` as a third party would ship it) tries, one per call,
 * pre-existing symlinks inside its grant, the process-wide state a Worker
 * shares with the host (cwd, env, signals, argv, exit), code built at run time
 * (eval/Function imports, nested Workers from data:/blob: URLs, Wasm),
 * network side doors (redirects, raw TCP, WebSocket) and lies over the RPC
 * (`__proto__` keys, toJSON, getters, forged oversized results, a silenced
 * postMessage, deep structures). Each attempt must fail with a tool error (or
 * at load), the host must survive, and the filesystem, the host's cwd/env and
 * loopback servers' hit counters prove nothing outside the grant was reached.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type LoadedPlugins,
  loadPlugins,
  type RpcLimits,
} from "../core/extensions/plugin_host/mod.ts";
import { Policy } from "../core/policy/policy.ts";
import type { AppOptions } from "../core/config/app_options.ts";
import type { ToolResult } from "../sdk/mod.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { assertToolError, testApp } from "./support/fixtures.ts";

const FIXTURE = new URL("./fixtures/plugins/hostile/escape.js", import.meta.url);

interface Env {
  root: string;
  ws: string;
  loaded: LoadedPlugins;
  call(kind: string, extra?: Record<string, unknown>): Promise<ToolResult>;
  cleanup(): Promise<void>;
}

async function setup(
  opts: {
    permissions?: Record<string, string[]>;
    allow?: string[];
    limits?: RpcLimits;
    before?: (root: string, ws: string) => Promise<void>;
  } = {},
): Promise<Env> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-escape-" }));
  const ws = join(root, "ws");
  const cfg = join(root, "cfg");
  const data = join(root, "data");
  const outside = join(root, "outside");
  for (const d of [join(ws, ".coyote", "plugins"), join(ws, "data"), join(ws, "inner"), cfg]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "id_rsa"), "OUTSIDE-SECRET");
  await Deno.writeTextFile(join(outside, "s.json"), JSON.stringify({ secret: "OUTSIDE-JSON" }));
  await Deno.writeTextFile(join(outside, "notes.txt"), "outside notes");
  await Deno.writeTextFile(join(outside, "evil.js"), "postMessage('evil ran');");
  await Deno.writeTextFile(join(ws, "inner", "file.txt"), "inside");
  await opts.before?.(root, ws);
  const text = (await Deno.readTextFile(FIXTURE)).replaceAll("__ROOT__", root)
    .replace("__PERMISSIONS__", JSON.stringify(opts.permissions ?? {}).replaceAll('"', '\\"'));
  await Deno.writeTextFile(join(ws, ".coyote", "plugins", "escape.js"), text);
  const app: AppOptions = testApp({ cwd: ws, configDir: cfg, dataDir: data });
  const policy = Policy.create({}, { allow: opts.allow ?? [], deny: [] }, {
    workspace: ws,
    configDir: cfg,
    dataDir: data,
    home: join(root, "home"),
  });
  const loaded = await loadPlugins(app, policy, ws, {
    limits: { timeoutMs: 3000, loadTimeoutMs: 3000, ...opts.limits },
    log: () => {},
    noCache: true,
  });
  let n = 0;
  return {
    root,
    ws,
    loaded,
    async call(kind, extra = {}) {
      const tool = loaded.tools.find((t) => t.name === "escape");
      assert.ok(tool, `plugin loaded (warnings: ${loaded.warnings.join(" | ")})`);
      const r = await tool.run({ kind, ...extra }, {
        cwd: ws,
        signal: new AbortController().signal,
        toolCallId: `call_${++n}`,
        log: { debug() {}, info() {}, warn() {}, error() {} },
        progress() {},
        requestPermission: () => Promise.resolve(false),
      });
      return typeof r === "string" ? { content: r } : r;
    },
    async cleanup() {
      await loaded.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

const NOT_CAPABLE = /NotCapable|Requires (read|write|run|net|env|sys|ffi|import) access/;

Deno.test("escape: symlinks inside a granted folder that lead outside refuse the worker start", async () => {
  const env = await setup({
    permissions: { read: ["."], write: ["data"] },
    before: async (root, ws) => {
      await Deno.symlink(join(root, "outside"), join(ws, "keys"));
      await Deno.symlink(join(root, "outside", "notes.txt"), join(ws, "data", "notes.txt"));
    },
  });
  try {
    assert.deepEqual(env.loaded.warnings, []);
    const r = await env.call("readLink");
    assertToolError(
      r,
      /refused to start: its read grant .* symbolic link .*keys/,
      "OUTSIDE-SECRET",
    );
    // Remove the read escape: the link under data/ (read and write grant) still refuses it.
    await Deno.remove(join(env.ws, "keys"));
    assertToolError(
      await env.call("writeLink"),
      /refused to start: its (read|write) grant .* contains the symbolic link .*notes\.txt/,
    );
    assert.equal(await Deno.readTextFile(join(env.root, "outside", "notes.txt")), "outside notes");
    // Without escaping links the (restarted) worker reads inside its grant.
    await Deno.remove(join(env.ws, "data", "notes.txt"));
    await Deno.symlink(join(env.ws, "inner"), join(env.ws, "inner-link"));
    assert.equal((await env.call("readInside")).content, "inside");
    // And it cannot make new links itself (Deno wants unscoped read+write for that).
    assertToolError(await env.call("makeLink"), /NotCapable/);
    assert.equal(
      await Deno.lstat(join(env.ws, "data", "mine")).then(() => true, () => false),
      false,
    );
  } finally {
    await env.cleanup();
  }
});

Deno.test("escape: a dangling link in a write grant is refused (a write would create its target)", async () => {
  const env = await setup({
    permissions: { write: ["data"] },
    before: async (_root, ws) => {
      await Deno.symlink("../../outside/created.txt", join(ws, "data", "notes.txt"));
    },
  });
  try {
    assertToolError(await env.call("writeLink"), /dangling symbolic link .*notes\.txt/);
    assert.equal(
      await Deno.lstat(join(env.root, "outside", "created.txt")).then(() => true, () => false),
      false,
    );
  } finally {
    await env.cleanup();
  }
});

Deno.test("escape: process-wide state (cwd, env, signals, argv) stays the host's", async () => {
  Deno.env.set("COYOTE_ESCAPE_VAR", "original");
  const cwd = Deno.cwd();
  const env = await setup({
    permissions: { read: ["."], env: ["COYOTE_ESCAPE_VAR"] },
    allow: ["Env(COYOTE_ESCAPE_VAR)"],
  });
  try {
    assert.deepEqual(env.loaded.warnings, []);
    assertToolError(await env.call("chdir"), /cannot change the working directory/);
    assert.equal(Deno.cwd(), cwd);
    for (const kind of ["envSet", "processEnvSet", "envDelete"]) {
      assertToolError(await env.call(kind), /cannot change environment variables/);
      assert.equal(Deno.env.get("COYOTE_ESCAPE_VAR"), "original", kind);
    }
    // Reading the granted variable still works.
    assert.equal((await env.call("envGet")).content, "original");
    assertToolError(await env.call("envAll"), /NotCapable|Requires env access/);
    for (const kind of ["signal", "processSignal"]) {
      assertToolError(await env.call(kind), /cannot listen to process signals/);
    }
    assert.equal((await env.call("args")).content, "[]");
    // A Worker of the plugin's own has a fresh realm: the host puts cwd and env back after the call.
    assert.equal((await env.call("nestedChdir")).content, "moved");
    assert.equal(Deno.cwd(), cwd);
    assert.equal((await env.call("nestedEnvSet")).content, "set");
    assert.equal(Deno.env.get("COYOTE_ESCAPE_VAR"), "original");
    // The grant is visible to the plugin (query), but it is only its own.
    const states = (await env.call("query")).content;
    assert.match(states, /ws=granted$/);
    assert.doesNotMatch(states.replace(/ws=granted$/, ""), /granted/, states);
  } finally {
    Deno.env.delete("COYOTE_ESCAPE_VAR");
    await env.cleanup();
  }
});

Deno.test("escape: plugin code is evaluated from a data: URL (a deno compile binary cannot import blob: URLs)", async () => {
  const env = await setup();
  try {
    assert.match((await env.call("moduleUrl")).content, /^data:application\/javascript,/);
  } finally {
    await env.cleanup();
  }
});

Deno.test("escape: programs a plugin runs get only base variables and its env grant, not the session's secrets", async () => {
  Deno.env.set("COYOTE_ESCAPE_VAR", "granted-value");
  Deno.env.set("COYOTE_ESCAPE_SECRET", "SESSION-SECRET-VALUE");
  const env = await setup({
    permissions: { run: ["printenv"], env: ["COYOTE_ESCAPE_VAR"] },
    allow: ["Execute(printenv:*)", "Env(COYOTE_ESCAPE_VAR)"],
  });
  try {
    assert.deepEqual(env.loaded.warnings, []);
    const r = await env.call("childEnv");
    assert.notEqual(r.isError, true, r.content);
    const parts = r.content.split("\n---\n");
    assert.equal(parts.length, 4);
    assert.equal(
      parts[1],
      "unreachable",
      "the original Deno.Command is not the wrapper's prototype",
    );
    for (const part of [parts[0], parts[2], parts[3]]) {
      assert.ok(
        !part.includes("SESSION-SECRET-VALUE"),
        `a child sees the session's secret: ${part}`,
      );
      assert.match(part, /^PATH=/m);
      assert.match(part, /^COYOTE_ESCAPE_VAR=granted-value$/m);
    }
  } finally {
    Deno.env.delete("COYOTE_ESCAPE_VAR");
    Deno.env.delete("COYOTE_ESCAPE_SECRET");
    await env.cleanup();
  }
});

Deno.test("escape: Deno.exit and process.exit in a plugin fail the call at once, not at the timeout", async () => {
  const env = await setup({ limits: { timeoutMs: 20_000 } });
  try {
    for (const [kind, re] of [["exit", /Deno\.exit\(3\)/], ["processExit", /process\.exit\(4\)/]]) {
      const t0 = performance.now();
      assertToolError(await env.call(kind as string), re as RegExp);
      assert.ok(performance.now() - t0 < 10_000, `${kind} detected before the timeout`);
    }
    assert.equal((await env.call("args")).content, "[]", "restarted");
  } finally {
    await env.cleanup();
  }
});

Deno.test("escape: code built at run time, nested Workers and Wasm stay inside the grant", async () => {
  const env = await setup({ permissions: { read: ["inner"] } });
  try {
    assert.deepEqual(env.loaded.warnings, []);
    for (
      const kind of [
        "evalImport",
        "evalImportJson",
        "functionImport",
        "fetchFile",
        "workerData",
        "workerBlob",
        "workerFile",
      ]
    ) {
      assertToolError(await env.call(kind), NOT_CAPABLE, "OUTSIDE-JSON", "evil ran");
    }
    assertToolError(await env.call("execPath"), /NotCapable|Requires run access/);
    assertToolError(await env.call("openKv"), /openKv is not a function|NotCapable/);
    assertToolError(await env.call("wasmHostImport"), /LinkError|TypeError/);
  } finally {
    await env.cleanup();
  }
});

Deno.test("escape: net granted to one loopback port reaches nothing else (redirect, TCP, WebSocket)", async () => {
  let otherHits = 0;
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    otherHits++;
    return new Response("OTHER-SECRET");
  });
  const granted = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () =>
      new Response(null, {
        status: 302,
        headers: { location: `http://127.0.0.1:${other.addr.port}/` },
      }),
  );
  const host = `127.0.0.1:${granted.addr.port}`;
  const env = await setup({ permissions: { net: [host] }, allow: [`Net(${host})`] });
  try {
    assert.deepEqual(env.loaded.warnings, []);
    assertToolError(
      await env.call("fetch", { url: `http://${host}/` }),
      /NotCapable|Requires net access/,
      "OTHER-SECRET",
    );
    assertToolError(
      await env.call("connect", { port: other.addr.port }),
      /NotCapable|Requires net access/,
    );
    assertToolError(
      await env.call("webSocket", { url: `ws://127.0.0.1:${other.addr.port}/` }),
      /NotCapable|Requires net access/,
    );
    assertToolError(
      await env.call("fetch", { url: `http://localhost:${other.addr.port}/` }),
      /NotCapable|Requires net access/,
    );
    assert.equal(otherHits, 0);
  } finally {
    await env.cleanup();
    await granted.shutdown();
    await other.shutdown();
  }
});

Deno.test("escape: lies over the RPC (__proto__, toJSON, getters, forged and oversized results) do not reach the host", async () => {
  const env = await setup({ limits: { maxResultBytes: 1000, timeoutMs: 2000 } });
  try {
    const p = await env.call("protoResult");
    assert.equal(p.content, "ok");
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(p), Object.prototype);
    assertToolError(await env.call("toJSON"), /toJSON is a function|malformed result/);
    assertToolError(await env.call("getter"), /getter boom/);
    // Limits are bytes of the result's JSON: {"content":"…"} is 14 bytes plus 2 per "é".
    assert.equal((await env.call("sized", { n: 493 })).content.length, 493);
    assertToolError(await env.call("sized", { n: 494 }), /result too large/);
    // A forged result that skips the worker's own check is checked again by the host.
    assertToolError(await env.call("forgeResult", { n: 494 }), /result too large/);
    // Replacing postMessage does not silence the RPC: the bootstrap kept its own reference.
    assert.equal((await env.call("silencePostMessage")).content, "silenced");
    assert.equal((await env.call("args")).content, "[]");
    // A structure too deep to clone fails in the plugin, not in the host.
    const deep = await env.call("deepLog");
    assert.ok(deep.isError === true || deep.content === "sent", deep.content);
    assert.equal((await env.call("args")).content, "[]");
  } finally {
    await env.cleanup();
  }
});

Deno.test("escape: imports hidden from a naive lexer and SDK path tricks are refused at load", async () => {
  const variants: Record<string, string> = {
    "template.js":
      "export default { name: 'a', version: '1', description: `${import('file:///etc/hostname')}` };",
    "comment.js":
      "/* */ import x from '../secret.json' with { type: 'json' };\nexport default { name: 'b', version: '1' };",
    "sdk-dotdot.js":
      "import { definePlugin } from '@coyote/sdk/../../core/app.ts';\nexport default definePlugin({ name: 'c', version: '1' });",
    "sdk-query.js":
      "import { definePlugin } from '@coyote/sdk?x=1';\nexport default definePlugin({ name: 'd', version: '1' });",
    "sdk-version-path.js":
      "import { definePlugin } from 'npm:@coyote/sdk@1/../../../x.js';\nexport default definePlugin({ name: 'e', version: '1' });",
    "export-from.ts": "export { definePlugin as default } from '@coyote/sdk';",
    "import-equals.ts":
      "import fs = require('node:fs');\nexport default { name: 'f', version: '1', description: typeof fs };",
    "nested-fn.js":
      "function later() { return import('./x.js'); }\nexport default { name: 'g', version: '1', later };",
  };
  const root = await Deno.makeTempDir({ prefix: "coyote-escape-lex-" });
  try {
    const app = (plugins: string[]): AppOptions =>
      testApp({ cwd: root, configDir: join(root, "cfg"), dataDir: join(root, "data") }, {
        plugins,
      });
    const policy = Policy.create({}, { allow: [], deny: [] }, {
      workspace: root,
      configDir: join(root, "cfg"),
    });
    for (const [file, text] of Object.entries(variants)) {
      const path = join(root, file);
      await Deno.writeTextFile(path, text);
      const loaded = await loadPlugins(app([path]), policy, root, { noCache: true });
      try {
        assert.equal(loaded.tools.length, 0, file);
        assert.equal(loaded.plugins[0]?.status, "error", file);
        assert.match(
          loaded.warnings.join("\n"),
          /refused: line \d+: (imports|dynamic import|re-exports|require)/,
          file,
        );
      } finally {
        await loaded.close();
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("escape: a plugin cannot be granted what Coyote loads and runs next session (.coyote/, .mcp.json)", async () => {
  for (const path of [".mcp.json", ".coyote", ".coyote/plugins", ".coyote/mcp.json", "."]) {
    const env = await setup({ permissions: { write: [path] } });
    try {
      const info = env.loaded.plugins[0];
      assert.equal(info.status, "refused", `${path}: ${info.error}`);
      assert.equal(env.loaded.tools.length, 0);
      assert.match(
        env.loaded.warnings.join("\n"),
        /declares write .* never written without an explicit allow rule/,
        path,
      );
      // The guard (view a) agrees for the model's own writes.
      const policy = Policy.create({}, { allow: [], deny: [] }, {
        workspace: env.ws,
        configDir: join(env.root, "cfg"),
      });
      const target = join(env.ws, path === "." ? ".coyote/x" : path);
      assert.equal(policy.decide({ type: "write", path: target }).decision, "deny", target);
    } finally {
      await env.cleanup();
    }
  }
});

Deno.test("escape: `coyote plugins check` reports a grant with an escaping link as invalid (exit 2, no stack)", async () => {
  const env = await makeCoyoteEnv();
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-escape-cli-" }));
  try {
    const ws = join(root, "ws");
    await Deno.mkdir(ws);
    const plugin = join(root, "reader.js");
    await Deno.writeTextFile(
      plugin,
      `export default { name: "reader", version: "1.0.0", permissions: { read: ["."] } };`,
    );
    const ok = await runCoyote(["plugins", "check", plugin], { cwd: ws, env: childEnv(env) });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`grant: read: ${ws};`));
    await Deno.symlink(env.configDir, join(ws, "cfg-link"));
    const bad = await runCoyote(["plugins", "check", plugin], { cwd: ws, env: childEnv(env) });
    assert.equal(bad.code, 2, bad.stdout);
    assert.match(bad.stdout, /^invalid$/m);
    assert.match(
      bad.stderr,
      /refused to start: its read grant .* contains the symbolic link .*cfg-link/,
    );
    assert.ok(!bad.stderr.includes("    at "), "no stack trace for a user error");
  } finally {
    await Deno.remove(root, { recursive: true });
    await env.cleanup();
  }
});
