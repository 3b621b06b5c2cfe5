/**
 * The provider API key never reaches stdout, stderr, the data dir (transcripts) or the model:
 * not through commands that print the environment, not through provider errors that echo it
 * (HTTP 401), whether it comes from `OPENAI_API_KEY` or `--api-key`. Real subprocesses of main.ts.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...await filesUnder(p));
    else if (e.isFile) out.push(p);
  }
  return out;
}

async function assertNowhere(secret: string, where: Record<string, string>, dirs: string[]) {
  for (const [name, text] of Object.entries(where)) {
    assert.ok(!text.includes(secret), `the key leaked into ${name}:\n${text}`);
  }
  let files = 0;
  for (const d of dirs) {
    for (const f of await filesUnder(d)) {
      files++;
      assert.ok(!(await Deno.readTextFile(f)).includes(secret), `the key leaked into ${f}`);
    }
  }
  return files;
}

Deno.test("secrets: the API key stays out of output, transcripts, commands and the model", async () => {
  const secret = `sk-secret-XYZ-${crypto.randomUUID().slice(0, 8)}`;
  const echoed401 = {
    status: 401,
    error_body: {
      error: {
        message: `Incorrect API key provided: ${secret}. You can find your API key at …`,
        type: "invalid_request_error",
        code: "invalid_api_key",
      },
    },
  };
  const server = await startModelServer({
    script: [
      {
        tool_calls: [
          { id: "e", name: "execute_command", arguments: { command: "echo key=$OPENAI_API_KEY" } },
          {
            id: "p",
            name: "execute_command",
            arguments: { command: "cat /proc/self/environ | tr '\\0' '\\n' | grep -c PATH=" },
          },
        ],
      },
      { text: "done" },
      echoed401,
      echoed401,
    ],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const base = childEnv(env, { baseURL: server.baseURL });
    const e = { ...base, OPENAI_API_KEY: secret };
    // /proc/self/environ is outside the workspace: reading it needs a Read allow rule naming
    // /proc; expanding a variable whose name looks secret needs an Env rule.
    const run = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--allow",
      "Read(/proc/**)",
      "--allow",
      "Env(OPENAI_API_KEY)",
      "go",
    ], { cwd, env: e });
    assert.equal(run.code, 0, run.stderr);
    // The commands ran (so the check is real) but saw no key.
    const toolMsgs = (server.requests[1].body as { messages: { role: string; content: string }[] })
      .messages.filter((m) => m.role === "tool").map((m) => m.content);
    assert.match(toolMsgs[0], /key=$/m);
    assert.match(toolMsgs[1], /^1$/m);
    // The key did go to the server, as the bearer token.
    assert.equal(server.requests[0].headers.authorization, `Bearer ${secret}`);

    // A 401 that echoes the key (env and flag): exit 1, the key redacted everywhere.
    const r401 = await runCoyote(["--headless", "--output-format", "stream-json", "go"], {
      cwd,
      env: e,
    });
    assert.equal(r401.code, 1, r401.stderr);
    assert.match(r401.stdout, /"code":"auth"/);
    const flag = await runCoyote(["--headless", "--api-key", secret, "go"], {
      cwd,
      env: { ...base, OPENAI_API_KEY: "" },
    });
    assert.equal(flag.code, 1, flag.stderr);
    assert.match(flag.stderr, /authentication failed/);
    assert.equal(server.requests[3].headers.authorization, `Bearer ${secret}`);

    const files = await assertNowhere(
      secret,
      {
        "stdout (run)": run.stdout,
        "stderr (run)": run.stderr,
        "stdout (401)": r401.stdout,
        "stderr (401)": r401.stderr,
        "stdout (--api-key)": flag.stdout,
        "stderr (--api-key)": flag.stderr,
        "model requests": JSON.stringify(server.requests.map((r) => r.body)),
      },
      [env.dataDir, env.configDir, cwd],
    );
    assert.ok(files >= 3, "expected transcripts in the data dir");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("secrets: a key from config.yaml is redacted from tool results that print it", async () => {
  const secret = `sk-cfg-secret-${crypto.randomUUID().slice(0, 12)}`;
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  const cfgFile = `${env.configDir}/config.yaml`;
  const server = await startModelServer({
    script: [
      {
        tool_calls: [
          { id: "c", name: "execute_command", arguments: { command: `cat ${cfgFile}` } },
          { id: "r", name: "fs_read", arguments: { path: ".env" } },
          { id: "g", name: "fs_grep", arguments: { pattern: "sk-cfg" } },
          {
            id: "w",
            name: "fs_patch",
            arguments: { path: ".env", old_string: "K=", new_string: "KEY=" },
          },
        ],
      },
      { text: "done" },
    ],
  });
  try {
    await Deno.writeTextFile(cfgFile, `provider:\n  api_key: ${secret}\n`);
    await Deno.writeTextFile(`${cwd}/.env`, `K=${secret}\n`);
    const e = childEnv(env, { baseURL: server.baseURL });
    delete e.OPENAI_API_KEY;
    // The config dir is outside the workspace: `cat` of it needs a Read allow rule.
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--allow",
      `Read(${env.configDir}/**)`,
      "go",
    ], { cwd, env: e });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests[0].headers.authorization, `Bearer ${secret}`);
    const replies = (server.requests[1].body as { messages: { role: string; content: string }[] })
      .messages.filter((m) => m.role === "tool").map((m) => m.content);
    assert.equal(replies.length, 4);
    for (const t of replies.slice(0, 3)) assert.match(t, /\[redacted\]/);
    // The file itself is untouched by the redaction: the patch wrote the real key back.
    assert.equal(await Deno.readTextFile(`${cwd}/.env`), `KEY=${secret}\n`);
    const files = await assertNowhere(
      secret,
      {
        stdout: r.stdout,
        stderr: r.stderr,
        "model requests": JSON.stringify(server.requests.map((q) => q.body)),
      },
      [env.dataDir],
    );
    assert.ok(files >= 1);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("secrets: every known secret is redacted — secret-named variables, MCP server env, MCP tool descriptions", async () => {
  const envSecret = `ghp_envsecret${crypto.randomUUID().slice(0, 12)}`;
  const mcpSecret = `svc-mcpsecret-${crypto.randomUUID().slice(0, 12)}`;
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  const leaky = new URL("./fixtures/mcp/leaky_server.ts", import.meta.url).pathname;
  const denoJson = new URL("../deno.json", import.meta.url).pathname;
  const server = await startModelServer({
    script: [
      {
        tool_calls: [
          { id: "r", name: "fs_read", arguments: { path: "notes.txt" } },
          { id: "m", name: "mcp__leaky__leak", arguments: {} },
        ],
      },
      { text: "done" },
    ],
  });
  try {
    await Deno.writeTextFile(
      `${env.configDir}/config.yaml`,
      `mcpServers:\n  leaky:\n    command: deno\n    args: [run, -A, --config, ${denoJson}, ${leaky}]\n    env:\n      SERVICE_TOKEN: ${mcpSecret}\n`,
    );
    await Deno.writeTextFile(`${cwd}/notes.txt`, `a=${envSecret}\nb=${mcpSecret}\n`);
    const e = { ...childEnv(env, { baseURL: server.baseURL }), GITHUB_TOKEN: envSecret };
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--allow",
      "Tool(mcp__leaky__*)",
      "go",
    ], { cwd, env: e });
    assert.equal(r.code, 0, r.stderr);
    // The tool list offered to the model had the MCP tool, its description redacted.
    const first = JSON.stringify(server.requests[0].body);
    assert.match(first, /Calls the service with token \[redacted\]/);
    assert.match(first, /defaults to \[redacted\]/);
    const replies = (server.requests[1].body as { messages: { role: string; content: string }[] })
      .messages.filter((m) => m.role === "tool").map((m) => m.content);
    assert.equal(replies.length, 2);
    assert.match(replies[0], /a=\[redacted\]/);
    assert.match(replies[0], /b=\[redacted\]/);
    assert.match(replies[1], /used token \[redacted\]/);
    for (const s of [envSecret, mcpSecret]) {
      await assertNowhere(s, {
        stdout: r.stdout,
        stderr: r.stderr,
        "model requests": JSON.stringify(server.requests.map((q) => q.body)),
      }, [env.dataDir]);
    }
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});
