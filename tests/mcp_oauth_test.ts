/**
 * MCP OAuth (issue 21, docs/mcp.md "OAuth") against a loopback authorization server and a
 * loopback Streamable-HTTP MCP server written for the tests (tests/support/oauth_server.ts):
 * a run without tokens fails that server at once with a message naming `coyote mcp login`;
 * `coyote mcp login` completes discovery, registration, PKCE and the loopback redirect (the test
 * plays the browser by fetching the printed URL), stores the tokens with mode 0600 and never
 * prints them; a run then uses the tool; an expired token is refreshed; logout removes it all; a
 * forged `state` or an injected code (another PKCE challenge) is refused.
 * @module
 */
import assert from "node:assert/strict";
import { connectMcpServers, type DiscoveredMcpServer } from "../core/extensions/mcp/mod.ts";
import { credentialsPath } from "../core/extensions/mcp/oauth/store.ts";
import { CoyoteOAuthProvider, runAuthProvider } from "../core/extensions/mcp/oauth/provider.ts";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { type OAuthTestServer, startOAuthTestServer } from "./support/oauth_server.ts";
import { runTool, toolContext } from "./support/fixtures.ts";
import { acpTestEnv, finishAcp, startAcp, waitFor } from "./support/acp_harness.ts";

const remote = (
  url: string,
  name = "remote",
  type: "http" | "sse" = "http",
): DiscoveredMcpServer => ({ name, spec: { type, url }, source: "test" });

async function writeMcpConfig(configDir: string, servers: Record<string, unknown>) {
  await Deno.writeTextFile(`${configDir}/mcp.json`, JSON.stringify({ mcpServers: servers }));
}

/** Every file under `dir` (recursively), as text. */
async function allText(dir: string): Promise<string> {
  let out = "";
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out += await allText(p);
    else if (e.isFile) out += await Deno.readTextFile(p).catch(() => "");
  }
  return out;
}

/**
 * `coyote mcp login NAME` as a subprocess; `browser(url)` is called with the URL it prints and
 * plays the browser. Resolves with the exit code and all output.
 */
async function login(
  name: string,
  env: Record<string, string>,
  cwd: string,
  browser: (url: string) => Promise<void>,
  extra: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { cmd, args } = coyoteCommand(["mcp", "login", name, ...extra]);
  const child = new Deno.Command(cmd, {
    args,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const dec = new TextDecoder();
  let stdout = "";
  let browsed: Promise<void> | undefined;
  const readOut = (async () => {
    for await (const chunk of child.stdout) {
      stdout += dec.decode(chunk, { stream: true });
      const m = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stdout);
      if (m && !browsed) browsed = browser(m[1]);
    }
  })();
  const stderrP = new Response(child.stderr).text();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    const status = await child.status;
    await readOut;
    await browsed;
    return { code: status.code, stdout, stderr: await stderrP };
  } finally {
    clearTimeout(timer);
  }
}

async function setup(script: Parameters<typeof startModelServer>[0]["script"] = []) {
  const as = startOAuthTestServer();
  const model = await startModelServer({ script });
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir({ prefix: "coyote-oauth-ws-" });
  await writeMcpConfig(env.configDir, { remote: { type: "http", url: as.mcpUrl } });
  const cenv = childEnv(env, { baseURL: model.baseURL });
  return {
    as,
    model,
    env,
    ws,
    cenv,
    async close() {
      await as.close();
      await model.close();
      await env.cleanup();
      await Deno.remove(ws, { recursive: true }).catch(() => {});
    },
  };
}

/** The browser: follows the authorization URL's redirect to Coyote's loopback callback. */
async function browse(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

function noTokenIn(text: string, as: OAuthTestServer, where: string) {
  for (const t of [...as.issuedAccessTokens, ...as.issuedRefreshTokens]) {
    assert.ok(!text.includes(t), `a token appears in ${where}`);
  }
}

const variants = [
  { wwwAuthenticate: true, type: "http" },
  { wwwAuthenticate: false, type: "http" },
  { wwwAuthenticate: true, type: "sse" },
] as const;
for (const { wwwAuthenticate, type } of variants) {
  Deno.test(
    `mcp oauth: a 401 without stored tokens fails that server at once, naming coyote mcp login (${type}, ${
      wwwAuthenticate ? "WWW-Authenticate resource_metadata" : "well-known discovery"
    })`,
    async () => {
      const as = startOAuthTestServer({ wwwAuthenticate });
      const open = startOAuthTestServer({ requireAuth: false });
      const dataDir = await Deno.makeTempDir({ prefix: "coyote-oauth-data-" });
      const warnings: string[] = [];
      const conn = await connectMcpServers([
        remote(as.mcpUrl, "remote", type),
        remote(open.mcpUrl, "open"),
      ], {
        cwd: Deno.cwd(),
        dataDir,
        timeoutMs: 60_000,
        onWarning: (w) => warnings.push(w),
      });
      try {
        const [r, o] = conn.servers;
        assert.equal(r.status, "failed");
        assert.match(
          r.error ?? "",
          /needs OAuth \(authorization server http:\/\/127\.0\.0\.1:\d+\/?\)/,
        );
        assert.match(r.error ?? "", /^needs OAuth.*run `coyote mcp login remote`/);
        assert.match(warnings.join("\n"), /MCP server remote \(test\) needs OAuth/);
        assert.equal(o.status, "connected", o.error);
        assert.deepEqual(conn.tools.map((t) => t.name), ["mcp__open__whoami"]);
        // A run registers nothing and stores nothing.
        assert.equal(as.counts.register, 0);
        assert.equal(as.counts.authorize, 0);
        assert.equal([...Deno.readDirSync(dataDir)].length, 0);
      } finally {
        await conn.close();
        await as.close();
        await open.close();
        await Deno.remove(dataDir, { recursive: true });
      }
    },
  );
}

Deno.test("mcp oauth: a 401 without OAuth metadata says so (credentials belong in headers)", async () => {
  const as = startOAuthTestServer({ noMetadata: true });
  const dataDir = await Deno.makeTempDir({ prefix: "coyote-oauth-data-" });
  const conn = await connectMcpServers([remote(as.mcpUrl)], {
    cwd: Deno.cwd(),
    dataDir,
    onWarning: () => {},
  });
  try {
    assert.equal(conn.servers[0].status, "failed");
    assert.match(conn.servers[0].error ?? "", /401 Unauthorized and publishes no OAuth metadata/);
    assert.match(conn.servers[0].error ?? "", /"headers"/);
  } finally {
    await conn.close();
    await as.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("mcp oauth: login, a run using the tool, refresh of an expired token, logout", async () => {
  const call = { tool_calls: [{ name: "mcp__remote__whoami", arguments: {} }] };
  const t = await setup([
    { text: "done 0" },
    call,
    { text: "done 1" },
    call,
    { text: "done 2" },
    { text: "done 3" },
  ]);
  try {
    // 1. Headless without tokens: the server fails clearly, the turn goes on.
    const before = await runCoyote(["--output-format", "stream-json", "hello"], {
      cwd: t.ws,
      env: { ...t.cenv, MCP_TIMEOUT: "60000" },
    });
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stderr, /MCP server remote \(.*mcp\.json\) needs OAuth/);
    assert.match(before.stderr, /run `coyote mcp login remote`/);

    // 2. coyote mcp login: the test is the browser.
    let page = { status: 0, body: "" };
    const r = await login("remote", t.cenv, t.ws, async (url) => {
      page = await browse(url);
    });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /logged in/);
    assert.match(r.stdout, /Logged in to MCP server remote; tokens saved in .*mcp-oauth/);
    assert.equal(t.as.counts.register, 1);
    assert.equal(t.as.counts.code, 1);
    const file = await credentialsPath(t.env.dataDir, t.as.mcpUrl);
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${t.env.dataDir}/mcp-oauth`)).mode! & 0o777, 0o700);
    const stored = JSON.parse(await Deno.readTextFile(file));
    assert.equal(stored.tokens.access_token, t.as.issuedAccessTokens[0]);
    noTokenIn(r.stdout + r.stderr, t.as, "the login's output");

    // 3. A run uses the tool with the stored token.
    const run = await runCoyote([
      "--allow",
      "Tool(mcp__remote__*)",
      "--output-format",
      "stream-json",
      "who am i",
    ], { cwd: t.ws, env: t.cenv });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /authorized as client_/);
    assert.doesNotMatch(run.stderr, /needs OAuth/);

    // 4. The server expires the access token: the next run refreshes it silently.
    t.as.expireAccessTokens();
    const again = await runCoyote([
      "--allow",
      "Tool(mcp__remote__*)",
      "--output-format",
      "stream-json",
      "who am i now",
    ], { cwd: t.ws, env: t.cenv });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /authorized as client_/);
    assert.equal(t.as.counts.refresh, 1);
    const refreshed = JSON.parse(await Deno.readTextFile(file));
    assert.equal(refreshed.tokens.access_token, t.as.issuedAccessTokens[1]);
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);

    // No token in any output, transcript or log of the data dir but the credentials file.
    noTokenIn(before.stdout + before.stderr + run.stdout + run.stderr, t.as, "a run's output");
    noTokenIn(again.stdout + again.stderr, t.as, "a run's output");
    const sessions = `${t.env.dataDir}/sessions`;
    noTokenIn(await allText(sessions), t.as, "the transcripts");
    for await (const e of Deno.readDir(t.env.dataDir)) {
      if (e.name === "mcp-oauth") continue;
      const p = `${t.env.dataDir}/${e.name}`;
      noTokenIn(e.isDirectory ? await allText(p) : await Deno.readTextFile(p), t.as, p);
    }

    // 5. Logout deletes tokens and registration; the next run needs a login again.
    const out = await runCoyote(["mcp", "logout", "remote"], { cwd: t.ws, env: t.cenv });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /Logged out of MCP server remote/);
    await assert.rejects(Deno.stat(file), Deno.errors.NotFound);
    const after = await runCoyote(["--output-format", "stream-json", "hello"], {
      cwd: t.ws,
      env: t.cenv,
    });
    assert.equal(after.code, 0, after.stderr);
    assert.match(after.stderr, /needs OAuth.*coyote mcp login remote/);
  } finally {
    await t.close();
  }
});

Deno.test("mcp oauth: an expired access token is refreshed before the first request", async () => {
  const t = await setup();
  try {
    const r = await login("remote", t.cenv, t.ws, async (url) => void await browse(url));
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const file = await credentialsPath(t.env.dataDir, t.as.mcpUrl);
    const stored = JSON.parse(await Deno.readTextFile(file));
    stored.tokens.expires_at = 0; // expired by the client's clock; the server still takes it
    await Deno.writeTextFile(file, JSON.stringify(stored));
    const refused = t.as.counts.mcp401; // the login's probe
    const conn = await connectMcpServers([remote(t.as.mcpUrl)], {
      cwd: Deno.cwd(),
      dataDir: t.env.dataDir,
      onWarning: () => {},
    });
    try {
      assert.equal(conn.servers[0].status, "connected", conn.servers[0].error);
      assert.equal(t.as.counts.refresh, 1);
      assert.equal(t.as.counts.mcp401, refused, "refreshed before any request was refused");
      const res = await runTool(conn.tools[0], {}, toolContext());
      assert.match(String(res.content), /authorized as client_/);
    } finally {
      await conn.close();
    }
  } finally {
    await t.close();
  }
});

Deno.test("mcp oauth: login refuses a redirect with a forged state and an injected code (PKCE)", async () => {
  const t = await setup();
  try {
    let forged = { status: 0, body: "" };
    let injected = { status: 0, body: "" };
    const r = await login("remote", t.cenv, t.ws, async (url) => {
      const u = new URL(url);
      const callback = new URL(u.searchParams.get("redirect_uri")!);
      // A redirect with another state is refused and the login goes on waiting.
      callback.searchParams.set("code", "code_forged");
      callback.searchParams.set("state", "not-the-state");
      forged = await browse(callback.href);
      // A code obtained with another PKCE challenge (an attacker's) but the right state.
      const evil = new URL(url);
      evil.searchParams.set("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
      const res = await fetch(evil, { redirect: "manual" });
      await res.body?.cancel();
      injected = await browse(res.headers.get("location")!);
    }, ["--timeout", "30000"]);
    assert.equal(forged.status, 400);
    assert.match(forged.body, /state of this redirect does not match/);
    assert.equal(injected.status, 400, injected.body);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /token exchange failed/);
    // (The SDK's auth() tries the exchange once more after an invalid_grant.)
    assert.ok(t.as.tokenErrors.length >= 1, "the exchange reached the token endpoint");
    for (const e of t.as.tokenErrors) assert.equal(e, "invalid_grant: PKCE verification failed");
    assert.equal(t.as.issuedAccessTokens.length, 0);
    const file = await credentialsPath(t.env.dataDir, t.as.mcpUrl);
    const stored = JSON.parse(await Deno.readTextFile(file));
    assert.equal(stored.tokens, undefined);
  } finally {
    await t.close();
  }
});

Deno.test("mcp oauth: login without a redirect ends with a clear error after --timeout", async () => {
  const t = await setup();
  try {
    const r = await login("remote", t.cenv, t.ws, async () => {}, ["--timeout", "300"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no redirect came back within .*coyote mcp login remote/);
    const bad = await runCoyote(["mcp", "login", "nope"], { cwd: t.ws, env: t.cenv });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no MCP server named "nope" \(configured: remote/);
  } finally {
    await t.close();
  }
});

Deno.test("mcp oauth over ACP: a session's server without tokens is reported to the client, the turn goes on", async () => {
  const as = startOAuthTestServer();
  let told1 = () => false;
  const e = await acpTestEnv(async (_req: unknown, i: number) => {
    // The first turn lasts until the client was told (the server fails before or during it).
    if (i === 0) await waitFor(() => told1(), 20_000, "the needs-OAuth notice");
    return { text: `reply ${i}` };
  }, "coyote-oauth-acp");
  const h = await startAcp({ env: e.env });
  try {
    const { sessionId } = await h.agent.request("session/new", {
      cwd: e.ws,
      mcpServers: [{ type: "http", name: "remote", url: as.mcpUrl, headers: [] }],
    });
    told1 = () =>
      h.updatesFor(sessionId).some((u) => JSON.stringify(u).includes("coyote mcp login remote"));
    for (const text of ["hello", "hello again"]) {
      const r = await h.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      assert.equal(r.stopReason, "end_turn", h.stderr().slice(-1500));
    }
    const told = h.updatesFor(sessionId).filter((u) => u.sessionUpdate === "agent_thought_chunk")
      .map((u) => JSON.stringify(u)).join("\n");
    // Told once, whether the server failed before a turn or during it.
    assert.match(
      told,
      /MCP server remote (failed to start: )?needs OAuth.*coyote mcp login remote/,
    );
    assert.equal(told.split("\n").filter((l) => /needs OAuth/.test(l)).length, 1);
    // A second session naming the same server meets it failed already: told at its first turn,
    // not at the next.
    const second = await h.agent.request("session/new", {
      cwd: e.ws,
      mcpServers: [{ type: "http", name: "remote", url: as.mcpUrl, headers: [] }],
    });
    // The MCP notices (`_meta.coyote.notice`); other status chunks (e.g. a gate's) are not counted.
    const notes = () =>
      h.updatesFor(second.sessionId).filter((u) =>
        u.sessionUpdate === "agent_thought_chunk" &&
        !!(u as { _meta?: { coyote?: { notice?: string } } })._meta?.coyote?.notice
      ).map((u) => JSON.stringify(u));
    for (const text of ["again", "and again"]) {
      const r2 = await h.agent.request("session/prompt", {
        sessionId: second.sessionId,
        prompt: [{ type: "text", text }],
      });
      assert.equal(r2.stopReason, "end_turn");
      assert.equal(notes().length, 1, notes().join("\n"));
    }
    assert.match(notes()[0], /"text":"MCP server remote needs OAuth.*coyote mcp login remote/);
    assert.match(told, /"notice":"mcp_failed"/);
    assert.equal(as.counts.register, 0);
  } finally {
    await finishAcp(h);
    await e.close();
    await as.close();
  }
});

Deno.test("mcp oauth: a refresh token rotated by another process is not fatal (the newer tokens are taken)", async () => {
  const t = await setup();
  try {
    const r = await login("remote", t.cenv, t.ws, async (url) => void await browse(url));
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const file = await credentialsPath(t.env.dataDir, t.as.mcpUrl);
    const stored = JSON.parse(await Deno.readTextFile(file));
    stored.tokens.expires_at = 0;
    await Deno.writeTextFile(file, JSON.stringify(stored));
    // A holds the old tokens in memory; B (another run) refreshes first and rotates them.
    const a = await CoyoteOAuthProvider.load({
      name: "remote",
      serverUrl: t.as.mcpUrl,
      dataDir: t.env.dataDir,
    });
    const b = await runAuthProvider({
      name: "remote",
      serverUrl: t.as.mcpUrl,
      dataDir: t.env.dataDir,
    });
    assert.equal(b.tokens()?.access_token, t.as.issuedAccessTokens[1]);
    assert.equal(await auth(a, { serverUrl: t.as.mcpUrl }), "AUTHORIZED");
    assert.equal(a.tokens()?.access_token, t.as.issuedAccessTokens[2]);
    assert.deepEqual(t.as.tokenErrors, ["invalid_grant: unknown refresh token"]);
  } finally {
    await t.close();
  }
});
