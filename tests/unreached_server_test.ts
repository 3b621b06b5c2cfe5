/**
 * A run that never reached the model server (connection refused, HTTP 401, a wrong base URL's
 * 404) says what failed and nothing more: no "0 tokens" footer, no `coyote: session …` line to
 * continue a conversation that has no reply, and no stored session left behind, so
 * `--list-sessions` does not fill with rows of failed runs (fresh-user trial, item 7). A session
 * that did get a reply keeps its transcript, also when a later run on it fails. Real
 * subprocesses of main.ts against the scripted model server; the REPL in a real pty (tmux).
 */
import assert from "node:assert/strict";
import { startModelServer } from "./support/model_server.ts";
import {
  childEnv,
  cliWorld,
  coyoteCommand,
  type CoyoteEnv,
  parseJsonLines,
  runCoyote,
} from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

/** A base URL nothing listens on (a port bound, then freed). */
function refusedURL(): string {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return `http://127.0.0.1:${port}/v1`;
}

/** The stored transcripts of `env` (file names). */
async function stored(env: CoyoteEnv): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(`${env.dataDir}/sessions`)) out.push(e.name);
  } catch { /* no sessions folder */ }
  return out;
}

function world() {
  return cliWorld("coyote-unreached-");
}

Deno.test("one-shot: refused, 401 and 404 runs print the error alone and leave no stored session", async () => {
  const server = await startModelServer({
    script: [{ status: 401, error_body: { error: { message: "Incorrect API key provided" } } }],
  });
  const w = await world();
  try {
    const cases = [
      { what: "refused", baseURL: refusedURL(), error: /connection refused/ },
      { what: "401", baseURL: server.baseURL, error: /HTTP 401/ },
      // The usual mistake: a base URL without /v1 (the server has no such route).
      { what: "404", baseURL: server.baseURL.replace(/\/v1$/, "/wrong"), error: /HTTP 404/ },
    ];
    for (const c of cases) {
      const r = await runCoyote(["--no-sandbox", "hi"], {
        cwd: w.cwd,
        env: childEnv(w.env, { baseURL: c.baseURL }),
      });
      assert.equal(r.code, 1, `${c.what}: ${r.stderr}`);
      assert.match(r.stderr, c.error, c.what);
      assert.doesNotMatch(r.stderr, /tokens/, `${c.what}: no token footer:\n${r.stderr}`);
      assert.doesNotMatch(
        r.stderr,
        /session|--session/,
        `${c.what}: no session line:\n${r.stderr}`,
      );
      assert.deepEqual(await stored(w.env), [], `${c.what}: no stored session`);
    }
    const list = await runCoyote(["--list-sessions"], { cwd: w.cwd, env: childEnv(w.env) });
    assert.match(list.stdout + list.stderr, /no stored sessions/, list.stdout);
  } finally {
    await server.close();
    await w.close();
  }
});

Deno.test("stream-json: a refused run still ends in a result but stores no session", async () => {
  const w = await world();
  try {
    const r = await runCoyote([
      "--no-sandbox",
      "--headless",
      "--output-format",
      "stream-json",
      "hi",
    ], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: refusedURL() }),
    });
    assert.equal(r.code, 1, r.stderr);
    const lines = parseJsonLines(r.stdout);
    const result = lines[lines.length - 1];
    assert.equal(result.type, "result");
    assert.equal((result.error as { code: string }).code, "connection");
    assert.deepEqual(await stored(w.env), []);
  } finally {
    await w.close();
  }
});

Deno.test("a session that got a reply keeps its transcript whole, also when a later run on it fails", async () => {
  const server = await startModelServer({
    script: [
      { text: "FIRST-ANSWER" },
      { status: 401, error_body: { error: { message: "key revoked" } } },
    ],
  });
  const w = await world();
  try {
    const first = await runCoyote(["--no-sandbox", "first question"], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: server.baseURL }),
    });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /FIRST-ANSWER/);
    const id = first.stderr.match(/continue with --session (\S+)\)/)?.[1];
    assert.ok(id, `the id line is there after a reply:\n${first.stderr}`);
    assert.match(first.stderr, /─ \S+ tokens/, "and the footer");
    const [file] = await stored(w.env);
    const before = await Deno.readTextFile(`${w.env.dataDir}/sessions/${file}`);

    // Continued while the server refuses: the stored conversation stays, the id line too.
    const again = await runCoyote(["--no-sandbox", "--session", id, "second question"], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: server.baseURL }),
    });
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.stderr, /HTTP 401/);
    assert.match(again.stderr, /continue with --session/);
    assert.deepEqual(await stored(w.env), [file]);
    const after = await Deno.readTextFile(`${w.env.dataDir}/sessions/${file}`);
    assert.ok(after.startsWith(before), "the earlier lines are intact");
    assert.match(after, /second question/);

    // A fresh run whose server then fails is not kept; the stored one still is.
    const fresh = await runCoyote(["--no-sandbox", "third"], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: refusedURL() }),
    });
    assert.equal(fresh.code, 1);
    assert.deepEqual(await stored(w.env), [file]);
  } finally {
    await server.close();
    await w.close();
  }
});

Deno.test("a fresh run that got a reply and then lost the server is kept (the reply is in it)", async () => {
  const server = await startModelServer({
    script: [
      {
        text: "LOOKING",
        tool_calls: [{ id: "c1", name: "fs_read", arguments: { path: "notes.txt" } }],
      },
      { status: 404, error_body: "gone" },
    ],
  });
  const w = await world();
  try {
    await Deno.writeTextFile(`${w.cwd}/notes.txt`, "n\n");
    const r = await runCoyote(["--no-sandbox", "read notes"], {
      cwd: w.cwd,
      env: childEnv(w.env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /continue with --session/, r.stderr);
    assert.match(r.stderr, /─ .*tokens/, "the footer of a turn the model answered");
    assert.equal((await stored(w.env)).length, 1);
  } finally {
    await server.close();
    await w.close();
  }
});

Deno.test("repl: a prompt the server never answers shows the error without a footer; exit leaves no session", async () => {
  const w = await world();
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--no-sandbox"]);
    await t.start([cmd, ...args], { cwd: w.cwd, env: childEnv(w.env, { baseURL: refusedURL() }) });
    await t.waitFor(/› $/m);
    await t.type("hi");
    await t.keys("Enter");
    const shown = await t.waitFor(/after 2 attempts[\s\S]*› $/m);
    const after = shown.slice(shown.lastIndexOf("› hi"));
    assert.doesNotMatch(after, /tokens/, `no footer:\n${after}`);
    await t.keys("C-d");
    const end = await t.waitFor(/\[exited \d+\]/);
    assert.doesNotMatch(end, /continue with --session/, end);
    assert.deepEqual(await stored(w.env), []);
  } finally {
    await t.kill();
    await w.close();
  }
});

Deno.test("removeUnanswered: a failed turn with no reply is removed; one the user cancelled, or one with a reply, is kept", async () => {
  const { removeUnanswered, transcriptPath } = await import("../core/transcript/store.ts");
  const dataDir = await Deno.makeTempDir({ prefix: "coyote-unanswered-" });
  try {
    await Deno.mkdir(`${dataDir}/sessions`);
    const header = { type: "session", id: "x", cwd: "/w", created: "2026-12-03T00:00:00Z" };
    const prompt = { type: "message", message: { role: "user", content: "fix it" } };
    const end = (stopReason: string, extra: Record<string, unknown> = {}) => ({
      type: "turn_end",
      stopReason,
      usage: { inputTokens: 0, outputTokens: 0 },
      ...extra,
    });
    const write = (id: string, lines: unknown[]) =>
      Deno.writeTextFile(
        transcriptPath(dataDir, id),
        lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
      );
    await write("failed", [
      header,
      prompt,
      end("end_turn", { error: { code: "x", message: "refused" } }),
    ]);
    await write("cancelled", [header, prompt, end("cancelled")]);
    await write("answered", [header, prompt, {
      type: "message",
      message: { role: "assistant", content: "ok" },
    }, end("end_turn")]);
    assert.equal(await removeUnanswered(dataDir, "failed"), true);
    assert.equal(
      await removeUnanswered(dataDir, "cancelled"),
      false,
      "the user's typed prompt stays",
    );
    assert.equal(await removeUnanswered(dataDir, "answered"), false);
    const left = [...Deno.readDirSync(`${dataDir}/sessions`)].map((e) => e.name).sort();
    assert.deepEqual(left, ["answered.jsonl", "cancelled.jsonl"]);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
