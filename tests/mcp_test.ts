/**
 * MCP client tests: config discovery (files, priority, `${VAR}` expansion, bad JSON),
 * real npm MCP servers as subprocesses (server-everything, server-filesystem), a server
 * that crashes mid-call, start-up failures and timeouts, `coyote mcp list`, and MCP tools
 * used by the model through `coyote --acp-server` (workspace `.mcp.json` and ACP
 * `session/new` `mcpServers`).
 */
import assert from "node:assert/strict";
import type { AppOptions } from "../core/config/app_options.ts";
import type { ToolContext } from "../sdk/mod.ts";
import type { AnyTool } from "../core/protocol/types.ts";
import {
  connectMcpServers,
  discoverMcpServers,
  expandVars,
  loadMcpConfig,
  mcpServersFromAcp,
  parseMcpServers,
} from "../core/extensions/mcp/mod.ts";
import { mcpToolName } from "../core/extensions/mcp/tools.ts";
import {
  alivePids,
  COYOTE_FLAGS,
  descendantPids,
  MAIN_TS,
  startAcp,
  waitFor,
  waitForMcp,
} from "./support/acp_harness.ts";
import {
  crashSpec,
  everythingSpec,
  filesystemSpec,
  noisySpec,
  warmMcpServers,
} from "./support/mcp_servers.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";
import { runTool, testApp, toolContext } from "./support/fixtures.ts";

function appFor(configDir: string, extra: Partial<AppOptions> = {}): AppOptions {
  return testApp({ cwd: "/", configDir, dataDir: `${configDir}/data` }, extra);
}

function ctx(signal?: AbortSignal): ToolContext {
  return toolContext({ signal });
}

function run(tool: AnyTool | undefined, input: Record<string, unknown>) {
  assert.ok(tool, "tool exists");
  return runTool(tool, input, ctx());
}

Deno.test("mcp config: sources, priority, ${VAR} expansion, bad JSON warnings, --no-workspace-mcp", async () => {
  const dir = await Deno.makeTempDir();
  const cfg = `${dir}/cfg`;
  const ws = `${dir}/ws`;
  await Deno.mkdir(cfg, { recursive: true });
  await Deno.mkdir(`${ws}/.coyote`, { recursive: true });
  Deno.env.set("COYOTE_TEST_MCP_TOKEN", "s3cret");
  try {
    await Deno.writeTextFile(
      `${cfg}/mcp.json`,
      JSON.stringify({ mcpServers: { user: { command: "u" }, shared: { command: "from-user" } } }),
    );
    await Deno.writeTextFile(
      `${ws}/.mcp.json`,
      JSON.stringify({
        mcpServers: {
          shared: { command: "from-dot-mcp" },
          ws: { command: "from-dot-mcp" },
          api: {
            type: "http",
            url: "http://127.0.0.1:1/mcp",
            headers: { Authorization: "Bearer ${COYOTE_TEST_MCP_TOKEN}" },
          },
          legacy: { type: "sse", url: "http://127.0.0.1:1/sse" },
          remote: { url: "http://127.0.0.1:1/x" },
          broken: { args: ["no command"] },
          off: { command: "x", disabled: true },
        },
      }),
    );
    await Deno.writeTextFile(`${ws}/.coyote/.mcp.json`, "{ not json");
    await Deno.writeTextFile(
      `${ws}/.coyote/mcp.json`,
      JSON.stringify({
        mcpServers: {
          ws: {
            command: "from-coyote-mcp",
            args: ["${COYOTE_TEST_UNSET_VAR:-fallback}", "${COYOTE_TEST_UNSET_VAR}"],
            env: { T: "${COYOTE_TEST_MCP_TOKEN}" },
          },
        },
      }),
    );
    const app = appFor(cfg, {
      config: { mcpServers: { fromyaml: { command: "y" }, user: { command: "yaml-loses" } } },
    });
    const { servers, warnings } = await loadMcpConfig(app, ws);
    const by = Object.fromEntries(servers.map((s) => [s.name, s]));
    assert.deepEqual(Object.keys(by).sort(), [
      "api",
      "fromyaml",
      "legacy",
      "remote",
      "shared",
      "user",
      "ws",
    ]);
    assert.equal(by.fromyaml.source, "config.yaml");
    assert.equal(by.user.source, `${cfg}/mcp.json`, "user mcp.json beats config.yaml");
    // A workspace file cannot replace the user's server of the same name (issue 11 §3).
    assert.deepEqual(by.shared.spec, { command: "from-user" });
    assert.ok(
      warnings.some((w) =>
        w.startsWith(`${ws}/.mcp.json: MCP server "shared" ignored`) &&
        w.includes(`${cfg}/mcp.json`)
      ),
      warnings.join("\n"),
    );
    assert.deepEqual(by.ws.spec, {
      command: "from-coyote-mcp",
      args: ["fallback", ""],
      env: { T: "s3cret" },
    });
    assert.equal(
      by.ws.source,
      `${ws}/.coyote/mcp.json`,
      ".coyote/mcp.json has the highest priority",
    );
    assert.deepEqual(by.api.spec, {
      type: "http",
      url: "http://127.0.0.1:1/mcp",
      headers: { Authorization: "Bearer s3cret" },
    });
    assert.equal((by.legacy.spec as { type: string }).type, "sse");
    assert.equal((by.remote.spec as { type: string }).type, "http");
    assert.ok(
      warnings.some((w) => w.includes(`${ws}/.coyote/.mcp.json`) && w.includes("invalid JSON")),
      "bad JSON names the file",
    );
    assert.ok(
      warnings.some((w) => w.includes('"broken"') && w.includes("command")),
      "invalid entry warned",
    );
    assert.ok(warnings.some((w) => w.includes("COYOTE_TEST_UNSET_VAR")), "unset variable warned");

    // Workspace servers work without any global file.
    const noUser = await loadMcpConfig(appFor(`${dir}/none`), ws);
    const sharedWs = noUser.servers.find((s) => s.name === "shared")?.spec;
    assert.deepEqual(sharedWs, { command: "from-dot-mcp" });
    // An untrusted workspace's files are not read at all.
    const untrusted = await loadMcpConfig(appFor(cfg, { trustWorkspace: false }), ws);
    assert.deepEqual(untrusted.servers.map((s) => s.name).sort(), ["shared", "user"]);
    // --no-workspace-mcp turns workspace discovery off.
    const off = await discoverMcpServers(appFor(cfg, { noWorkspaceMcp: true }), ws);
    assert.deepEqual(off.map((s) => s.name).sort(), ["shared", "user"]);
    assert.equal(off.find((s) => s.name === "shared")?.source, `${cfg}/mcp.json`);
  } finally {
    Deno.env.delete("COYOTE_TEST_MCP_TOKEN");
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp names, expansion and ACP conversion", () => {
  assert.equal(mcpToolName("my server", "get.thing"), "mcp__my_server__get_thing");
  const long = mcpToolName("s".repeat(40), "t".repeat(40));
  assert.ok(long.length <= 64 && /^[a-zA-Z0-9_-]+$/.test(long));
  assert.notEqual(long, mcpToolName("s".repeat(40), "t".repeat(39) + "u"));
  assert.equal(expandVars("a${X}b${Y:-d}", (n) => (n === "X" ? "1" : undefined)), "a1bd");
  assert.deepEqual(
    mcpServersFromAcp([
      { name: "a", command: "cmd", args: ["x"], env: [{ name: "K", value: "V" }] },
      { type: "http", name: "h", url: "http://x/mcp", headers: [{ name: "H", value: "1" }] },
      { type: "sse", name: "s", url: "http://x/sse", headers: [] },
      { name: "", command: "skipped" },
    ]),
    {
      a: { command: "cmd", args: ["x"], env: { K: "V" } },
      h: { type: "http", url: "http://x/mcp", headers: { H: "1" } },
      s: { type: "sse", url: "http://x/sse" },
    },
  );
});

Deno.test("mcp client: real npm servers, a crash mid-call, a failing and a hanging server", async () => {
  await warmMcpServers();
  const ws = await Deno.makeTempDir();
  await Deno.writeTextFile(`${ws}/hello.txt`, "hello from the filesystem server\n");
  const warnings: string[] = [];
  const conn = await connectMcpServers([
    { name: "everything", spec: everythingSpec(), source: "test" },
    { name: "fs", spec: filesystemSpec(ws), source: "test" },
    { name: "crashy", spec: crashSpec(), source: "test" },
    { name: "missing", spec: { command: "coyote-no-such-binary-xyz" }, source: "test" },
  ], { cwd: ws, timeoutMs: 60_000, onWarning: (m) => warnings.push(m) });
  try {
    // A server that never answers `initialize` times out without holding up the others.
    // (A unique argument: other tests on the machine may run `sleep 30` too.)
    const hangArg = `30.${Math.floor(Math.random() * 1e6)}`;
    const t0 = Date.now();
    const hung = await connectMcpServers(
      [{ name: "hangs", spec: { command: "sleep", args: [hangArg] }, source: "test" }],
      { cwd: ws, timeoutMs: 800 },
    );
    assert.ok(Date.now() - t0 < 8000, "timeout honoured");
    assert.equal(hung.servers[0].status, "timeout");
    assert.equal(hung.tools.length, 0);
    assert.ok(hung.warnings.some((w) => w.includes("hangs") && w.includes("800 ms")));
    await hung.close();
    assert.equal(psHas(`sleep ${hangArg}`), false, "the hung child is killed");
    const names = conn.tools.map((t) => t.name);
    assert.ok(names.includes("mcp__everything__echo"), names.join(","));
    assert.ok(names.includes("mcp__fs__read_text_file"));
    assert.ok(names.includes("mcp__crashy__crash"));
    for (const n of names) assert.match(n, /^mcp__[a-zA-Z0-9_-]+$/);
    const status = Object.fromEntries(conn.servers.map((s) => [s.name, s.status]));
    assert.deepEqual(status, {
      everything: "connected",
      fs: "connected",
      crashy: "connected",
      missing: "failed",
    });
    assert.ok(conn.warnings.some((w) => w.includes("missing") && w.includes("failed to start")));

    const echo = conn.tools.find((t) => t.name === "mcp__everything__echo")!;
    assert.equal(echo.kind, "read", "readOnlyHint → read");
    assert.deepEqual(echo.access?.({}, ws), [{ type: "tool", name: "mcp__everything__echo" }]);
    assert.equal((echo.input as { type: string }).type, "object");
    const fsRead = conn.tools.find((t) => t.name === "mcp__fs__read_text_file")!;
    const schema = fsRead.input as { properties: Record<string, unknown>; $schema?: string };
    assert.ok(schema.properties.path, "the server's schema is passed on");
    assert.equal(schema.$schema, undefined, "$schema is dropped");
    assert.equal((await run(echo, { message: "ping" })).content, "Echo: ping");
    const read = await run(conn.tools.find((t) => t.name === "mcp__fs__read_text_file"), {
      path: `${ws}/hello.txt`,
    });
    assert.match(read.content, /hello from the filesystem server/);
    const outside = await run(conn.tools.find((t) => t.name === "mcp__fs__read_text_file"), {
      path: "/etc/passwd",
    });
    assert.equal(outside.isError, true, "server-side error is a tool error");

    assert.equal(
      (await run(conn.tools.find((t) => t.name === "mcp__crashy__echo"), { text: "x" })).content,
      "echo: x",
    );
    const crash = await run(conn.tools.find((t) => t.name === "mcp__crashy__crash"), {});
    assert.equal(crash.isError, true);
    assert.match(crash.content, /MCP server crashy is not running/);
    const after = await run(conn.tools.find((t) => t.name === "mcp__crashy__echo"), { text: "x" });
    assert.equal(after.isError, true);
    assert.match(after.content, /MCP server crashy is not running/);
    await waitFor(() => warnings.some((w) => w.includes("crashy")), 5000, "crash warning");
    // The others keep working.
    assert.equal((await run(echo, { message: "still" })).content, "Echo: still");
  } finally {
    await conn.close();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("mcp list: configured servers, source, status and tool counts", async () => {
  await warmMcpServers();
  const dir = await Deno.makeTempDir();
  const ws = `${dir}/ws`;
  await Deno.mkdir(ws);
  await Deno.writeTextFile(
    `${ws}/.mcp.json`,
    JSON.stringify({
      mcpServers: {
        everything: everythingSpec(),
        broken: { command: "coyote-no-such-binary-xyz" },
      },
    }),
  );
  try {
    const out = await new Deno.Command("deno", {
      args: [...COYOTE_FLAGS, MAIN_TS, "--trust-workspace", "mcp", "list"],
      cwd: ws,
      env: { COYOTE_CONFIG_DIR: `${dir}/cfg`, COYOTE_DATA_DIR: `${dir}/data`, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const row = (name: string) => text.split("\n").find((l) => l.startsWith(name + " ")) ?? "";
    assert.match(row("everything"), /stdio\s+connected\s+13\s+.*\.mcp\.json/);
    assert.match(row("broken"), /failed\s+-\s+.*\.mcp\.json/);
    const js = await new Deno.Command("deno", {
      args: [
        ...COYOTE_FLAGS,
        MAIN_TS,
        "--trust-workspace",
        "mcp",
        "list",
        "--json",
        "--no-connect",
      ],
      cwd: ws,
      env: { COYOTE_CONFIG_DIR: `${dir}/cfg`, COYOTE_DATA_DIR: `${dir}/data`, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(js.code, 0);
    const parsed = JSON.parse(new TextDecoder().decode(js.stdout));
    assert.deepEqual(parsed.servers.map((s: { name: string }) => s.name).sort(), [
      "broken",
      "everything",
    ]);
    assert.deepEqual(parsed.files, [`${ws}/.mcp.json`]);
    assert.deepEqual(
      parsed.servers.map((s: { status: string }) => s.status),
      ["unchecked", "unchecked"],
      "--no-connect does not start servers",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp through ACP: workspace .mcp.json and session/new mcpServers; a crash leaves the session alive", async () => {
  await warmMcpServers();
  const dir = await Deno.makeTempDir();
  const ws = `${dir}/ws`;
  await Deno.mkdir(ws);
  await Deno.writeTextFile(`${ws}/hello.txt`, "hi from fs\n");
  // The user config trusts the workspace, so its .mcp.json servers start (issue 11 §3).
  await Deno.mkdir(`${dir}/cfg`);
  await Deno.writeTextFile(`${dir}/cfg/config.yaml`, `trusted_workspaces: ["${ws}"]\n`);
  await Deno.writeTextFile(
    `${ws}/.mcp.json`,
    JSON.stringify({ mcpServers: { fs: filesystemSpec(ws) } }),
  );
  const ms = await startModelServer({
    script: [
      { tool_calls: [{ name: "mcp__fs__read_text_file", arguments: { path: `${ws}/hello.txt` } }] },
      { tool_calls: [{ name: "mcp__everything__echo", arguments: { message: "via acp" } }] },
      { tool_calls: [{ name: "mcp__crashy__crash", arguments: {} }] },
      { tool_calls: [{ name: "mcp__crashy__echo", arguments: { text: "again" } }] },
      { tool_calls: [{ name: "mcp__everything__get-env", arguments: {} }] },
      { text: "done with MCP" },
    ],
  });
  let kids: number[] = [];
  const h = await startAcp({
    env: {
      COYOTE_DATA_DIR: `${dir}/data`,
      COYOTE_CONFIG_DIR: `${dir}/cfg`,
      OPENAI_BASE_URL: ms.baseURL,
      OPENAI_API_KEY: "k",
      COYOTE_MODEL: "scripted",
    },
    permissionAnswers: ["allow_once", "allow_once", "allow_once", "allow_once", "allow_once"],
  });
  try {
    const c = crashSpec();
    const e = everythingSpec();
    const { sessionId } = await h.agent.request("session/new", {
      cwd: ws,
      mcpServers: [
        {
          name: "everything",
          command: e.command,
          args: e.args,
          env: [{ name: "COYOTE_TEST", value: "1" }],
        },
        { name: "crashy", command: c.command, args: c.args, env: [] },
      ],
    });
    // fs, everything and crashy run (as descendants of the ACP process).
    kids = descendantPids(h.child.pid);
    assert.ok(kids.length >= 3, `MCP server processes: ${kids.join(",")}`);
    // A prompt does not wait for servers still starting (core/session/mcp_startup.ts).
    await waitForMcp(h, sessionId);
    const r = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "use mcp" }],
    });
    assert.equal(r.stopReason, "end_turn");
    const upd = h.updatesFor(sessionId);
    const results = upd.filter((u) =>
      u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed")
    )
      .map((u) => JSON.stringify(u));
    assert.equal(results.length, 5, results.join("\n"));
    assert.match(results[0], /completed/);
    assert.match(results[0], /hi from fs/);
    assert.match(results[1], /completed/);
    assert.match(results[1], /Echo: via acp/);
    assert.match(results[2], /failed/);
    assert.match(results[3], /failed/);
    assert.match(results[3], /MCP server crashy is not running/);
    // ACP `env: [{name, value}]` is what the server gets, on a safe base (PATH, HOME), never
    // the agent's whole environment (issue 11 §3).
    const envText = (JSON.parse(results[4]).content as { content: { text: string } }[])[0].content
      .text;
    const serverEnv = JSON.parse(envText) as Record<string, string>;
    assert.equal(serverEnv.COYOTE_TEST, "1", "the ACP env entry");
    assert.equal(serverEnv.COYOTE_MODEL, undefined, "not inherited from the agent");
    assert.equal(serverEnv.OPENAI_API_KEY, undefined, "the provider key is not inherited");
    assert.ok(serverEnv.PATH, "PATH is part of the safe base");
    assert.equal(h.permissionRequests.length >= 2, true, "MCP tools ask by default");
    assert.ok(h.permissionRequests.every((p) => String(p.toolCall.toolCallId).length > 0));
    const texts = ms.requests.length;
    assert.equal(texts, 6);
    const tools = (ms.requests[0].body as { tools?: { function: { name: string } }[] }).tools ?? [];
    const toolNames = tools.map((t) => t.function.name);
    for (const n of ["mcp__fs__read_text_file", "mcp__everything__echo", "mcp__crashy__crash"]) {
      assert.ok(toolNames.includes(n), `${n} offered to the model`);
    }
  } finally {
    const code = await h.close();
    h.assertStdoutPure();
    await ms.close();
    await Deno.remove(dir, { recursive: true });
    assert.equal(code, 0);
  }
  // No MCP server outlives the ACP process (checked by pid: other tests may run the same servers).
  await waitFor(() => alivePids(kids).length === 0, 5000, "MCP children to exit");
});

function psHas(s: string): boolean {
  const out = new Deno.Command("ps", { args: ["-eo", "pid,args"], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").some((l) =>
    l.includes(s) && !l.includes(" ps ")
  );
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

async function startRemoteEverything(
  mode: "streamableHttp" | "sse",
): Promise<{ port: number; stop(): Promise<void> }> {
  await warmMcpServers();
  const port = freePort();
  const spec = everythingSpec();
  const child = new Deno.Command(spec.command, {
    args: [...spec.args.slice(0, -1), mode],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let err = "";
  const reading = (async () => {
    const dec = new TextDecoder();
    for await (const c of child.stderr) err += dec.decode(c, { stream: true });
  })();
  await waitFor(() => new RegExp(`port ${port}`).test(err), 30_000, `${mode} server on ${port}`);
  return {
    port,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await reading;
    },
  };
}

Deno.test("mcp client: remote servers over Streamable HTTP and SSE", async () => {
  const [http, sse] = await Promise.all([
    startRemoteEverything("streamableHttp"),
    startRemoteEverything("sse"),
  ]);
  try {
    const conn = await connectMcpServers([
      {
        name: "remote",
        spec: {
          type: "http",
          url: `http://127.0.0.1:${http.port}/mcp`,
          headers: { "X-Coyote-Test": "1" },
        },
        source: "test",
      },
      {
        name: "legacy",
        spec: { type: "sse", url: `http://127.0.0.1:${sse.port}/sse` },
        source: "test",
      },
      {
        name: "nobody",
        spec: { type: "http", url: `http://127.0.0.1:${freePort()}/mcp` },
        source: "test",
      },
    ], { cwd: "/", timeoutMs: 20_000 });
    try {
      const status = Object.fromEntries(conn.servers.map((s) => [s.name, [s.type, s.status]]));
      assert.deepEqual(status, {
        remote: ["http", "connected"],
        legacy: ["sse", "connected"],
        nobody: ["http", "failed"],
      });
      assert.equal(
        (await run(conn.tools.find((t) => t.name === "mcp__remote__echo"), {
          message: "over http",
        })).content,
        "Echo: over http",
      );
      assert.equal(
        (await run(conn.tools.find((t) => t.name === "mcp__legacy__echo"), { message: "over sse" }))
          .content,
        "Echo: over sse",
      );
      const sum = await run(conn.tools.find((t) => t.name === "mcp__remote__get-sum"), {
        a: 2,
        b: 3,
      });
      assert.match(sum.content, /5/);
    } finally {
      await conn.close();
    }
  } finally {
    await Promise.all([http.stop(), sse.stop()]);
  }
});

Deno.test("mcp guard and stdout purity: a noisy server; headless denies by default, Tool(...) rules allow; ACP stays pure", async () => {
  const ce = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir({ prefix: "coyote-mcp-noisy-" });
  await Deno.writeTextFile(
    `${ws}/.mcp.json`,
    JSON.stringify({ mcpServers: { noisy: noisySpec() } }),
  );
  const script = [
    { tool_calls: [{ name: "mcp__noisy__noise", arguments: {} }] },
    { text: "finished" },
  ];
  const ms = await startModelServer({ script: [...script, ...script, ...script] });
  try {
    const env = childEnv(ce, { baseURL: ms.baseURL });
    const statusOf = (lines: Record<string, unknown>[]) =>
      lines.flatMap((l) => {
        const u = l.update as { sessionUpdate?: string; status?: string } | undefined;
        return u?.sessionUpdate === "tool_call_update" && u.status ? [u.status] : [];
      });
    // Headless, no rule: the guard's default for MCP tools is ask → denied.
    const denied = await runCoyote([
      "--headless",
      "--trust-workspace",
      "--output-format",
      "stream-json",
      "noise",
    ], {
      cwd: ws,
      env,
    });
    assert.equal(denied.code, 0, denied.stderr);
    const dl = parseJsonLines(denied.stdout); // throws on a non-JSON line
    assert.deepEqual(statusOf(dl), ["failed"]);
    assert.match(denied.stdout, /denied/);
    assert.doesNotMatch(denied.stdout, /NOISE/);
    // Allowed by a Tool(...) rule.
    const allowed = await runCoyote([
      "--headless",
      "--trust-workspace",
      "--output-format",
      "stream-json",
      "--allow",
      "Tool(mcp__noisy__*)",
      "noise",
    ], { cwd: ws, env });
    assert.equal(allowed.code, 0, allowed.stderr);
    const al = parseJsonLines(allowed.stdout);
    assert.deepEqual(statusOf(al), ["in_progress", "completed"]);
    assert.match(allowed.stdout, /quiet result/);
    assert.doesNotMatch(allowed.stdout, /NOISE/);

    // ACP: the same server passed in session/new; the rule means no permission request.
    const h = await startAcp({
      env: {
        COYOTE_DATA_DIR: ce.dataDir,
        COYOTE_CONFIG_DIR: ce.configDir,
        OPENAI_BASE_URL: ms.baseURL,
        OPENAI_API_KEY: "k",
        COYOTE_MODEL: "scripted",
      },
      args: ["--no-workspace-mcp", "--allow", "Tool(mcp__noisy__*)"],
    });
    try {
      const n = noisySpec();
      const { sessionId } = await h.agent.request("session/new", {
        cwd: ws,
        mcpServers: [{ name: "noisy", command: n.command, args: n.args, env: [] }],
      });
      await waitForMcp(h, sessionId);
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "noise" }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.equal(h.permissionRequests.length, 0);
      assert.match(JSON.stringify(h.updatesFor(sessionId)), /quiet result/);
    } finally {
      const code = await h.close();
      h.assertStdoutPure();
      assert.equal(code, 0);
    }
    assert.equal(h.lines.filter((l) => l.includes("NOISE")).length, 0);
  } finally {
    await ms.close();
    await ce.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("mcp remote headers: ACP {name, value} arrays and ${VAR} values reach the server (http and sse)", async () => {
  const seen: { method: string; path: string; auth: string | null; extra: string | null }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push({
      method: req.method,
      path: new URL(req.url).pathname,
      auth: req.headers.get("authorization"),
      extra: req.headers.get("x-coyote"),
    });
    return new Response("no MCP here", { status: 500 });
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  Deno.env.set("COYOTE_TEST_HDR_TOKEN", "tok-123");
  try {
    const acpSpecs = mcpServersFromAcp([
      {
        type: "http",
        name: "h",
        url: `${base}/mcp`,
        headers: [{ name: "Authorization", value: "Bearer acp-1" }, {
          name: "X-Coyote",
          value: "a",
        }],
      },
      { type: "sse", name: "s", url: `${base}/sse`, headers: [{ name: "X-Coyote", value: "b" }] },
    ]);
    const fromFile = parseMcpServers(
      {
        mcpServers: {
          f: {
            type: "http",
            url: `${base}/file`,
            headers: {
              Authorization: "Bearer ${COYOTE_TEST_HDR_TOKEN}",
              "X-Coyote": "${NOPE_X:-dflt}",
            },
          },
        },
      },
      "test",
    );
    const conn = await connectMcpServers([
      { name: "h", spec: acpSpecs.h, source: "acp" },
      { name: "s", spec: acpSpecs.s, source: "acp" },
      ...fromFile.servers,
    ], { cwd: "/", timeoutMs: 5000, onWarning: () => {} });
    await conn.close();
    assert.deepEqual(conn.servers.map((x) => x.status), ["failed", "failed", "failed"]);
    const by = (path: string) => seen.find((x) => x.path === path);
    assert.deepEqual([by("/mcp")?.auth, by("/mcp")?.extra], ["Bearer acp-1", "a"]);
    assert.equal(by("/sse")?.method, "GET");
    assert.equal(by("/sse")?.extra, "b", "sse: headers on the event-stream GET");
    assert.deepEqual([by("/file")?.auth, by("/file")?.extra], ["Bearer tok-123", "dflt"]);
  } finally {
    Deno.env.delete("COYOTE_TEST_HDR_TOKEN");
    await server.shutdown();
  }
});
