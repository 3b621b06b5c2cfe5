/**
 * CLI behaviour a new user meets first, as real subprocesses of main.ts: `--session ID|NAME`,
 * `help [command]`, `-p/--prompt`, usage errors as a `result` object in json/stream-json modes,
 * and extra arguments where none are taken.
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import {
  childEnv,
  coyoteCommand,
  makeCoyoteEnv,
  parseJsonLines,
  runCoyote,
} from "./support/run_coyote.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** Writes a stored transcript with one earlier exchange, as a finished run leaves it. */
async function storeSession(dataDir: string, id: string, cwd: string, word: string, name?: string) {
  await Deno.mkdir(`${dataDir}/sessions`, { recursive: true });
  const lines = [
    {
      type: "session",
      id,
      cwd,
      created: new Date().toISOString(),
      model: "scripted",
      agent: "coyote",
      ...(name ? { name } : {}),
    },
    { type: "message", message: { role: "user", content: `remember ${word}` } },
    { type: "message", message: { role: "assistant", content: `ok ${word}` } },
  ];
  await Deno.writeTextFile(
    `${dataDir}/sessions/${id}.jsonl`,
    lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
}

const userTexts = (req: { body: unknown }) =>
  (req.body as Json).messages.map((m: Json) => m.content);

Deno.test("--session continues by id, unique id prefix (8+ chars) or name; else starts a named one", async () => {
  const server = await startModelServer({
    script: [{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }, { text: "e" }],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const run = (args: string[]) =>
      runCoyote(["--headless", "--output-format", "json", ...args], { cwd, env: e });
    const A = "0190aaaa-1111-7000-8000-000000000001";
    const B = "0190aaaa-2222-7000-8000-000000000002";
    await storeSession(env.dataDir, A, cwd, "ALPHA");
    await storeSession(env.dataDir, B, cwd, "BRAVO", "named-b");

    // The full id continues that session (the bug: a new session named after the id).
    const byId = await run(["--session", A, "what word?"]);
    assert.equal(byId.code, 0, byId.stderr);
    assert.equal(JSON.parse(byId.stdout).session_id, A);
    assert.ok(userTexts(server.requests[0]).includes("remember ALPHA"));
    assert.equal(Deno.readDirSync(`${env.dataDir}/sessions`).toArray().length, 2);

    // A unique prefix of 8+ characters.
    const byPrefix = await run(["--session", "0190aaaa-22", "and you?"]);
    assert.equal(byPrefix.code, 0, byPrefix.stderr);
    assert.equal(JSON.parse(byPrefix.stdout).session_id, B);
    assert.ok(userTexts(server.requests[1]).includes("remember BRAVO"));

    // An ambiguous prefix is a usage error, never a new session.
    const ambiguous = await run(["--session", "0190aaaa", "which?"]);
    assert.equal(ambiguous.code, 2);
    const amb = JSON.parse(ambiguous.stdout);
    assert.equal(amb.error.code, "usage");
    assert.match(amb.error.message, /matches 2 stored sessions/);
    assert.equal(server.requests.length, 2);

    // A name.
    const byName = await run(["--session", "named-b", "again"]);
    assert.equal(JSON.parse(byName.stdout).session_id, B);

    // Anything else starts a new session with that name, which the next run continues.
    const fresh = await run(["--session", "brand-new", "start"]);
    assert.equal(fresh.code, 0, fresh.stderr);
    const freshId = JSON.parse(fresh.stdout).session_id;
    assert.ok(freshId !== A && freshId !== B);
    const header = JSON.parse(
      (await Deno.readTextFile(`${env.dataDir}/sessions/${freshId}.jsonl`)).split("\n")[0],
    );
    assert.equal(header.name, "brand-new");
    const again = await run(["--session", "brand-new", "more"]);
    assert.equal(JSON.parse(again.stdout).session_id, freshId);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("help [command] prints help and never reaches the model; an unknown command is a usage error", async () => {
  const server = await startModelServer({ script: [{ text: "should not be asked" }] });
  const env = await makeCoyoteEnv();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const opts = { cwd: env.dataDir, env: e };
    const top = await runCoyote(["help"], opts);
    assert.equal(top.code, 0, top.stderr);
    assert.match(top.stdout, /Usage: coyote/);
    assert.match(top.stdout, /help \[command\.\.\.\]/);
    assert.match(top.stdout, /docs\/acp\.md/);
    assert.match(top.stdout, /docs\/mcp\.md/);
    const plugins = await runCoyote(["help", "plugins"], opts);
    assert.equal(plugins.code, 0, plugins.stderr);
    assert.match(plugins.stdout, /Usage: coyote plugins/);
    assert.match(plugins.stdout, /check/);
    const unknown = await runCoyote(["help", "me", "fix", "it"], opts);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^coyote: unknown command 'me' for help/);
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
    await env.cleanup();
  }
});

Deno.test("-p/--prompt gives the request as a flag value; words after it are appended; a bare -p is accepted", async () => {
  const server = await startModelServer({
    script: [{ text: "one" }, { text: "two" }, { text: "three" }],
  });
  const env = await makeCoyoteEnv();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const r = await runCoyote(["-p", "explain this repo", "--headless"], {
      cwd: env.dataDir,
      env: e,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "one\n");
    assert.equal(userTexts(server.requests[0]).at(-1), "explain this repo");
    const both = await runCoyote(["--headless", "--prompt", "fix", "the", "bug"], {
      cwd: env.dataDir,
      env: e,
    });
    assert.equal(both.code, 0, both.stderr);
    assert.equal(userTexts(server.requests[1]).at(-1), "fix the bug");
    // Claude Code habit: a bare -p followed by options, the prompt as an argument.
    const bare = await runCoyote(["-p", "--output-format", "json", "--headless", "why?"], {
      cwd: env.dataDir,
      env: e,
    });
    assert.equal(bare.code, 0, bare.stderr);
    assert.equal(JSON.parse(bare.stdout).text, "three");
    assert.equal(userTexts(server.requests[2]).at(-1), "why?");
  } finally {
    await server.close();
    await env.cleanup();
  }
});

Deno.test("json/stream-json: every usage or config error prints one result object (exit 2)", async () => {
  const env = await makeCoyoteEnv();
  try {
    const e = childEnv(env, { baseURL: "http://127.0.0.1:9/v1" });
    const opts = { cwd: env.dataDir, env: e };
    const check = (r: { code: number; stdout: string; stderr: string }, msg: RegExp) => {
      assert.equal(r.code, 2, r.stderr);
      const lines = parseJsonLines(r.stdout) as Json[];
      assert.equal(lines.length, 1, r.stdout);
      const res = lines[0];
      assert.equal(res.type, "result");
      assert.equal(res.schema_version, 2);
      assert.equal(res.stop_reason, null);
      assert.equal(res.session_id, null);
      assert.equal(res.is_error, true);
      assert.equal(res.exit_code, 2);
      assert.equal(res.error.code, "usage");
      assert.match(res.error.message, msg);
      assert.match(r.stderr, /^coyote: /);
    };
    // A bad flag stops the parser; the format still comes from argv.
    check(await runCoyote(["--output-format", "json", "--bogus", "hi"], opts), /--bogus/);
    check(
      await runCoyote(["--bogus", "--output-format=stream-json", "hi"], opts),
      /unknown option '--bogus'/,
    );
    check(
      await runCoyote(["--output-format", "json", "--max-turns", "0", "hi"], opts),
      /--max-turns/,
    );
    check(await runCoyote(["--headless", "--output-format", "json"], opts), /needs a prompt/);
    check(
      await runCoyote(["--output-format", "stream-json", "--list-sessions", "hello"], opts),
      /--list-sessions takes no prompt/,
    );
    await Deno.writeTextFile(`${env.configDir}/config.yaml`, "max_turns: -3\n");
    check(await runCoyote(["--output-format", "json", "hi"], opts), /config\.yaml.*max_turns/);
    // Text mode: nothing on stdout.
    const text = await runCoyote(["--bogus", "hi"], opts);
    assert.equal(text.code, 2);
    assert.equal(text.stdout, "");
  } finally {
    await env.cleanup();
  }
});

Deno.test("extra arguments where none are taken are usage errors (exit 2)", async () => {
  const env = await makeCoyoteEnv();
  try {
    const opts = { cwd: env.dataDir, env: childEnv(env) };
    const list = await runCoyote(["--list-sessions", "hello"], opts);
    assert.equal(list.code, 2);
    assert.match(list.stderr, /--list-sessions takes no prompt \(got "hello"\)/);
    assert.equal(list.stdout, "");
    const listP = await runCoyote(["--list-sessions", "-p", "hello"], opts);
    assert.equal(listP.code, 2);
    for (
      const [args, re] of [
        [["mcp", "list", "extra"], /too many arguments for 'list'/],
        [["plugins", "list", "extra"], /too many arguments for 'list'/],
        [["policy", "show", "extra"], /too many arguments for 'show'/],
        [["-p", "hi", "policy", "show"], /policy show takes no prompt/],
      ] as const
    ) {
      const r = await runCoyote([...args], opts);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, re);
    }
  } finally {
    await env.cleanup();
  }
});

Deno.test("--help and help into a closed pipe (`| head`): no broken-pipe error, exit 0", async () => {
  const env = await makeCoyoteEnv();
  try {
    for (const args of [["--help"], ["help", "plugins"]]) {
      const { cmd, args: full } = coyoteCommand(args);
      const child = new Deno.Command(cmd, {
        args: full,
        cwd: env.dataDir,
        env: childEnv(env),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      await child.stdout.cancel(); // the reader is gone before coyote writes
      const [status, stderr] = await Promise.all([
        child.status,
        new Response(child.stderr).text(),
      ]);
      assert.doesNotMatch(stderr, /BrokenPipe|internal error/, stderr);
      assert.equal(status.code, 0, stderr);
    }
  } finally {
    await env.cleanup();
  }
});
