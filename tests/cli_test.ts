/**
 * CLI behaviour as real subprocesses of main.ts with the `coyote` task's flags:
 * usage errors, version/help, provider configuration errors, prompt assembly,
 * instructions discovery, sessions (--session, --continue, --list-sessions).
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, parseJsonLines, runCoyote } from "./support/run_coyote.ts";
import denoJson from "../deno.json" with { type: "json" };

function noStack(s: string) {
  assert.doesNotMatch(s, /\n\s+at |Error:.*\n.*file:\/\//, `unexpected stack trace:\n${s}`);
}

Deno.test("usage errors exit 2 with one clear line and no stack trace", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: "http://127.0.0.1:9/v1" });
    const bad = await runCoyote(["--no-such-flag", "hi"], { cwd, env: e });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^coyote: unknown option '--no-such-flag'/);
    assert.equal(bad.stdout, "");
    noStack(bad.stderr);

    const fmt = await runCoyote(["--headless", "--output-format", "xml", "hi"], { cwd, env: e });
    assert.equal(fmt.code, 2);
    assert.match(fmt.stderr, /output-format/);

    const turns = await runCoyote(["--max-turns", "0", "hi"], { cwd, env: e });
    assert.equal(turns.code, 2);
    assert.match(turns.stderr, /--max-turns must be a positive integer/);

    const noPrompt = await runCoyote(["--headless"], { cwd, env: e });
    assert.equal(noPrompt.code, 2);
    assert.match(noPrompt.stderr, /--headless needs a prompt/);
    noStack(noPrompt.stderr);

    const noFile = await runCoyote(["--headless", "-f", "missing.txt", "hi"], { cwd, env: e });
    assert.equal(noFile.code, 2);
    assert.match(noFile.stderr, /cannot read --file missing.txt/);
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("--version and --help", async () => {
  const env = await makeCoyoteEnv();
  try {
    const v = await runCoyote(["--version"], { cwd: env.dataDir, env: childEnv(env) });
    assert.equal(v.code, 0);
    assert.equal(
      v.stdout.trim(),
      `coyote ${denoJson.version} (deno ${Deno.version.deno}, ${Deno.build.target})`,
    );
    // With other flags around it, commander answers --version with the same line.
    const v2 = await runCoyote(["--headless", "--version"], {
      cwd: env.dataDir,
      env: childEnv(env),
    });
    assert.equal(v2.code, 0);
    assert.equal(v2.stdout.trim(), v.stdout.trim());
    const h = await runCoyote(["--help"], { cwd: env.dataDir, env: childEnv(env) });
    assert.equal(h.code, 0);
    for (
      const s of [
        "--headless",
        "--output-format",
        "--max-turns",
        "Exit codes",
        "130",
        "plugins",
        "policy",
      ]
    ) {
      assert.ok(h.stdout.includes(s), `help lacks ${s}`);
    }
  } finally {
    await env.cleanup();
  }
});

Deno.test("no provider configured, bad config: exit 2 with a clear message", async () => {
  const env = await makeCoyoteEnv();
  try {
    const none = await runCoyote(["--headless", "--output-format", "json", "hi"], {
      cwd: env.dataDir,
      env: childEnv(env),
    });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no model provider configured/);
    assert.match(none.stderr, /OPENAI_BASE_URL/);
    noStack(none.stderr);
    const res = JSON.parse(none.stdout);
    assert.equal(res.type, "result");
    assert.equal(res.exit_code, 2);
    assert.equal(res.is_error, true);

    await Deno.writeTextFile(`${env.configDir}/config.yaml`, "max_turns: -3\n");
    const bad = await runCoyote(["--headless", "hi"], {
      cwd: env.dataDir,
      env: childEnv(env, { baseURL: "http://127.0.0.1:9/v1" }),
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /config\.yaml/);
    assert.match(bad.stderr, /max_turns/);
    noStack(bad.stderr);
  } finally {
    await env.cleanup();
  }
});

Deno.test("prompt assembly (args, -f, piped stdin) and workspace instructions reach the model", async () => {
  const server = await startModelServer({ script: [{ text: "fine" }] });
  const env = await makeCoyoteEnv();
  const root = await Deno.makeTempDir();
  try {
    const cwd = `${root}/a/b`;
    await Deno.mkdir(cwd, { recursive: true });
    await Deno.writeTextFile(`${root}/a/COYOTE.md`, "   \n"); // empty: skipped
    await Deno.writeTextFile(`${root}/a/AGENTS.md`, "Always answer in haiku. MARKER-42");
    await Deno.writeTextFile(`${root}/CLAUDE.md`, "not this one");
    await Deno.writeTextFile(`${cwd}/notes.txt`, "file body NOTES-7");
    await Deno.writeTextFile(`${cwd}/extra.md`, "Extra rules EXTRA-5");
    await Deno.writeTextFile(`${env.configDir}/config.yaml`, "instructions: [extra.md]\n");
    const r = await runCoyote(["--headless", "-f", "notes.txt", "explain", "this"], {
      cwd,
      env: childEnv(env, { baseURL: server.baseURL }),
      stdin: "piped text PIPE-9",
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "fine\n");
    // deno-lint-ignore no-explicit-any
    const msgs = (server.requests[0].body as any).messages;
    assert.equal(msgs[0].role, "system");
    assert.match(msgs[0].content, /MARKER-42/);
    assert.doesNotMatch(msgs[0].content, /not this one/);
    assert.match(msgs[0].content, /EXTRA-5/);
    assert.match(msgs[1].content, /^explain this/);
    assert.match(msgs[1].content, /NOTES-7/);
    assert.match(msgs[1].content, /PIPE-9$/);
    // The API key is never written to the transcript.
    for (const f of Deno.readDirSync(`${env.dataDir}/sessions`)) {
      assert.doesNotMatch(
        await Deno.readTextFile(`${env.dataDir}/sessions/${f.name}`),
        /test-key-not-secret/,
      );
    }
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("sessions: --session NAME continues, --continue picks the latest here, --list-sessions lists", async () => {
  const server = await startModelServer({
    script: [{ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" }],
  });
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir();
  try {
    const e = childEnv(env, { baseURL: server.baseURL });
    const run = (args: string[]) =>
      runCoyote(["--headless", "--output-format", "json", ...args], { cwd, env: e });
    const r1 = await run(["--session", "work", "remember the word PAPAYA"]);
    assert.equal(r1.code, 0, r1.stderr);
    const id1 = JSON.parse(r1.stdout).session_id;
    const r2 = await run(["--session", "work", "what was the word?"]);
    assert.equal(JSON.parse(r2.stdout).session_id, id1);
    // deno-lint-ignore no-explicit-any
    const m2 = (server.requests[1].body as any).messages.map((m: any) => m.content);
    assert.ok(m2.includes("remember the word PAPAYA") && m2.includes("one"));

    const r3 = await run(["a fresh session"]);
    const id3 = JSON.parse(r3.stdout).session_id;
    assert.notEqual(id3, id1);
    const r4 = await run(["--continue", "and again"]);
    assert.equal(JSON.parse(r4.stdout).session_id, id3);
    // deno-lint-ignore no-explicit-any
    const m4 = (server.requests[3].body as any).messages.map((m: any) => m.content);
    assert.ok(m4.includes("a fresh session") && !m4.includes("remember the word PAPAYA"));

    // A torn last line (crash) is tolerated when continuing.
    await Deno.writeTextFile(`${env.dataDir}/sessions/${id3}.jsonl`, '{"type":"upd', {
      append: true,
    });
    const list = await runCoyote(["--list-sessions"], { cwd, env: e });
    assert.equal(list.code, 0);
    const rows = list.stdout.trim().split("\n");
    assert.equal(rows.length, 3);
    assert.match(rows[0], /^ID\tUPDATED\tNAME\tTITLE$/);
    assert.ok(
      rows.some((r) =>
        r.startsWith(id1.slice(0, 8) + "\t") && r.includes("\twork\t") &&
        r.endsWith("remember the word PAPAYA")
      ),
      rows.join("\n"),
    );

    const listed = await runCoyote(["--list-sessions", "--output-format", "json"], { cwd, env: e });
    const listJson = JSON.parse(listed.stdout);
    assert.equal(listJson.length, 2);
    assert.equal(listJson.find((s: { name?: string }) => s.name === "work").sessionId, id1);
    const bad = await runCoyote(["--headless", "--session", "x", "--continue", "hi"], {
      cwd,
      env: e,
    });
    assert.equal(bad.code, 2);
    const none = await runCoyote(["--headless", "--continue", "hi"], {
      cwd: env.configDir,
      env: e,
    });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no earlier session/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("--max-turns reached exits 3; stream-json lines all parse", async () => {
  const server = await startModelServer({
    script: [{ tool_calls: [{ name: "no_such_tool", arguments: {} }] }, { text: "unreached" }],
  });
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote([
      "--headless",
      "--output-format",
      "stream-json",
      "--max-turns",
      "1",
      "go",
    ], {
      cwd: env.dataDir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 3, r.stderr);
    const lines = parseJsonLines(r.stdout);
    assert.equal(lines[0].type, "init");
    const res = lines.at(-1)!;
    assert.equal(res.type, "result");
    assert.equal(res.stop_reason, "max_turn_requests");
    assert.equal(res.exit_code, 3);
    assert.equal(server.requests.length, 1);
  } finally {
    await server.close();
    await env.cleanup();
  }
});
