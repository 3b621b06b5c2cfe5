/**
 * `--record FILE` / `--replay FILE` (core/provider/tape.ts, record.ts, replay.ts; docs/ci.md
 * "Record and replay"): each frontend's run is recorded against the scripted model server, the
 * server is stopped, and the run is replayed offline — the same output (session and agent ids,
 * which are new per run, normalised), a diverging run fails naming the request and the field,
 * and no secret of the config or the environment is in the file.
 * @module
 */
import assert from "node:assert/strict";
import {
  childEnv,
  type CoyoteEnv,
  makeCoyoteEnv,
  parseJsonLines,
  runCoyote,
} from "./support/run_coyote.ts";
import {
  type RecordedRequest,
  type ScriptedReply,
  startModelServer,
} from "./support/model_server.ts";
import { finishAcp, startAcp } from "./support/acp_harness.ts";
import { Tmux } from "./support/tmux.ts";
import { coyoteCommand } from "./support/run_coyote.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const CONFIG_KEY = "sk-config-SECRET-0123456789abcdef";
const ENV_KEY = "sk-env-SECRET-fedcba9876543210";
const TOKEN = "ghp_TOKEN_SECRET_abcdefghijklmnop";

/** A workspace with a file, isolated dirs, a config holding a provider key. */
async function setup(): Promise<
  { ws: string; env: CoyoteEnv; tape: string; done(): Promise<void> }
> {
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir({ prefix: "coyote-rr-ws-" });
  await Deno.writeTextFile(`${ws}/notes.txt`, "alpha beta\n");
  await Deno.writeTextFile(
    `${env.configDir}/config.yaml`,
    `provider:\n  api_key: ${CONFIG_KEY}\n  max_retries: 1\n  headers:\n    X-Team-Token: ${TOKEN}\n`,
  );
  const tape = `${env.dataDir}/run.jsonl`;
  return {
    ws,
    env,
    tape,
    async done() {
      await env.cleanup();
      await Deno.remove(ws, { recursive: true }).catch(() => {});
    },
  };
}

/** The child's variables: the scripted provider (or a dead port), secret-looking variables. */
function vars(env: CoyoteEnv, baseURL: string): Record<string, string> {
  return childEnv(env, {
    baseURL,
    extra: { OPENAI_API_KEY: ENV_KEY, GITHUB_TOKEN: TOKEN },
  });
}

/** A base URL nothing listens on (the stopped server's): replay must not need it. */
const DEAD = "http://127.0.0.1:9/v1";

/**
 * What every run draws anew and no model request decides: session ids and the 8-hex tails of
 * agent ids, timestamps, durations, checkpoint commit ids.
 */
function normaliseIds(s: string): string {
  return s.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/(?<=[a-z0-9]-)[0-9a-f]{8}(?![0-9a-f-])/g, "<id>")
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, "<time>")
    .replace(/\b[0-9a-f]{40}\b/g, "<commit>")
    .replace(/"(duration_)?ms":\d+/g, '"$1ms":0')
    .replace(/\b\d+(?:\.\d+)?m?s\b/g, "<duration>");
}

function assertNoSecrets(file: string) {
  const text = Deno.readTextFileSync(file);
  for (const s of [CONFIG_KEY, ENV_KEY, TOKEN]) {
    assert.ok(!text.includes(s), `the recording holds the secret ${s}`);
  }
  assert.ok(!/authorization/i.test(text), "no request header is recorded");
}

const isLead = (req: RecordedRequest) =>
  String((req.body as Json).messages[0]?.content ?? "").startsWith("You are Sisyphus");
const task = (req: RecordedRequest) => String((req.body as Json).messages[1]?.content ?? "");

/**
 * Sisyphus reads notes.txt, spawns two explore children at once, collects them and answers;
 * each child answers from its task. Requests are told apart by conversation (lead or child,
 * first user message) and how many that conversation has made.
 */
function leadScript(requests: RecordedRequest[]) {
  return (req: RecordedRequest): ScriptedReply => {
    const mine = requests.filter((r) => isLead(r) === isLead(req) && task(r) === task(req))
      .length;
    if (!isLead(req)) return { text: `child found: ${task(req).slice(0, 30)}` };
    if (mine === 1) return { tool_calls: [{ name: "fs_read", arguments: { path: "notes.txt" } }] };
    if (mine === 2) {
      return {
        tool_calls: [
          { name: "agent__spawn", arguments: { agent: "explore", prompt: "where is alpha" } },
          { name: "agent__spawn", arguments: { agent: "explore", prompt: "where is beta" } },
        ],
      };
    }
    if (mine === 3) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
    return { text: "Both found. Done." };
  };
}

Deno.test("record/replay: headless stream-json with concurrent sub-agents replays offline with the same events; no secret in the file", async () => {
  const s = await setup();
  const requests: RecordedRequest[] = [];
  const server = await startModelServer({
    script: (r) => leadScript(requests)(r),
    onRequest: (r) => requests.push(r),
  });
  try {
    const args = ["--headless", "--output-format", "stream-json", "find alpha and beta"];
    const rec = await runCoyote([...args, "--record", s.tape], {
      cwd: s.ws,
      env: vars(s.env, server.baseURL),
    });
    assert.equal(rec.code, 0, rec.stderr);
    await server.close();
    const chats = requests.length;
    assert.equal(chats, 6, "lead 4 + two children");
    const header = JSON.parse(Deno.readTextFileSync(s.tape).split("\n")[0]);
    assert.equal(header.format, "coyote-record");
    assert.equal(header.version, 1);
    assertNoSecrets(s.tape);
    assert.ok(Deno.readTextFileSync(s.tape).includes("<coyote:cwd>"), "the workspace is marked");

    const rep = await runCoyote([...args, "--replay", s.tape], {
      cwd: s.ws,
      env: vars(s.env, DEAD),
    });
    assert.equal(rep.code, 0, rep.stderr);
    assert.equal(requests.length, chats, "the stopped server got nothing");
    // The lead's own events: the same lines in the same order; every child's events: the same
    // lines (two concurrent children interleave as they happen to run).
    const lines = (out: string) => parseJsonLines(out).map((l) => normaliseIds(JSON.stringify(l)));
    const root = (out: string) => lines(out).filter((l) => !l.includes('"parent_id"'));
    const kids = (out: string) => lines(out).filter((l) => l.includes('"parent_id"')).sort();
    assert.deepEqual(root(rep.stdout), root(rec.stdout));
    assert.deepEqual(kids(rep.stdout), kids(rec.stdout));
    assert.ok(kids(rec.stdout).length > 0, "the children's events are there");
    const result: Json = parseJsonLines(rep.stdout).at(-1);
    assert.equal(result.text, "Both found. Done.");
    assert.equal(result.agents.length, 2);
  } finally {
    await server.close();
    await s.done();
  }
});

Deno.test("record/replay: one-shot text output is byte-identical offline; a different prompt fails naming request and field", async () => {
  const s = await setup();
  const server = await startModelServer({
    script: [
      { tool_calls: [{ name: "fs_read", arguments: { path: "notes.txt" } }] },
      { text: "The notes say **alpha beta**.\n\n- one\n- two" },
    ],
  });
  try {
    const rec = await runCoyote(["--record", s.tape, "what do the notes say?"], {
      cwd: s.ws,
      env: vars(s.env, server.baseURL),
    });
    assert.equal(rec.code, 0, rec.stderr);
    await server.close();
    assertNoSecrets(s.tape);
    const rep = await runCoyote(["--replay", s.tape, "what do the notes say?"], {
      cwd: s.ws,
      env: vars(s.env, DEAD),
    });
    assert.equal(rep.code, 0, rep.stderr);
    assert.equal(rep.stdout, rec.stdout);
    assert.match(rep.stdout, /alpha beta/);

    // A run that stops early (one request allowed) says what it left unused, at exit.
    const short = await runCoyote(
      ["--replay", s.tape, "--max-turns", "1", "what do the notes say?"],
      { cwd: s.ws, env: vars(s.env, DEAD) },
    );
    assert.equal(short.code, 3, short.stderr);
    assert.match(short.stderr, /replay: 1 recorded model request was not asked for/);

    // A run that asks something else: exit 1, the request number and the first differing field.
    const other = await runCoyote(["--replay", s.tape, "what do the notes NOT say?"], {
      cwd: s.ws,
      env: vars(s.env, DEAD),
    });
    assert.equal(other.code, 1, other.stderr);
    assert.match(
      other.stderr,
      /replay: request 1 differs from recorded request 1 at messages\[1\]\.content: recorded …"o the notes say\?", got …"o the notes NOT say\?"/,
    );
    // A tool result that changed (the file was edited) diverges at the second request.
    await Deno.writeTextFile(`${s.ws}/notes.txt`, "gamma\n");
    const edited = await runCoyote(
      ["--headless", "--output-format", "json", "--replay", s.tape, "what do the notes say?"],
      { cwd: s.ws, env: vars(s.env, DEAD) },
    );
    assert.equal(edited.code, 1, edited.stderr);
    const res = JSON.parse(edited.stdout);
    assert.equal(res.error.code, "bad_request");
    assert.match(
      res.error.message,
      /replay: request 2 differs from recorded request 2 at messages\[3\]\.content/,
    );
  } finally {
    await server.close();
    await s.done();
  }
});

Deno.test("record/replay: a recorded 429 and its retry replay the same way; no provider configured is fine", async () => {
  const s = await setup();
  const server = await startModelServer({
    script: [
      { status: 429, headers: { "retry-after-ms": "10" } },
      { text: "after the retry" },
    ],
  });
  try {
    const args = ["--headless", "--output-format", "json", "hi"];
    const rec = await runCoyote([...args, "--record", s.tape], {
      cwd: s.ws,
      env: vars(s.env, server.baseURL),
    });
    assert.equal(rec.code, 0, rec.stderr);
    assert.match(rec.stderr, /rate limited/);
    await server.close();
    // No OPENAI_BASE_URL, key or model, no config: the recording's model and URL are used.
    await Deno.remove(`${s.env.configDir}/config.yaml`);
    const bare = childEnv(s.env);
    const rep = await runCoyote([...args, "--replay", s.tape], { cwd: s.ws, env: bare });
    assert.equal(rep.code, 0, rep.stderr);
    assert.match(rep.stderr, /rate limited/, "the retry notice comes again");
    assert.equal(JSON.parse(rep.stdout).text, "after the retry");
    assert.deepEqual(
      { ...JSON.parse(rep.stdout), session_id: 0 },
      { ...JSON.parse(rec.stdout), session_id: 0 },
    );
  } finally {
    await server.close();
    await s.done();
  }
});

Deno.test("record/replay: a file that is not a recording is a usage error naming file and line", async () => {
  const s = await setup();
  try {
    await Deno.writeTextFile(s.tape, '{"hello":1}\n');
    const env = vars(s.env, DEAD);
    const r = await runCoyote(["--headless", "--replay", s.tape, "hi"], { cwd: s.ws, env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`--replay ${s.tape}:1: not a Coyote recording`));
    assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
    await Deno.writeTextFile(
      s.tape,
      '{"format":"coyote-record","version":1,"created":"x"}\n{"type":"exchange","n":1,"kind":"chat","request":{"method":"POST","url":"u"},"response":{"status":200,"body":"nope","end":"done"}}\n',
    );
    const r2 = await runCoyote(["--headless", "--replay", s.tape, "hi"], { cwd: s.ws, env });
    assert.equal(r2.code, 2, r2.stderr);
    assert.match(r2.stderr, /:2: `response\.body` must be a list of strings/);
    const both = await runCoyote(["--headless", "--replay", s.tape, "--record", "x", "hi"], {
      cwd: s.ws,
      env,
    });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /either --record FILE or --replay FILE/);
    const sub = await runCoyote(["--replay", s.tape, "agents", "list"], { cwd: s.ws, env });
    assert.equal(sub.code, 2);
    assert.match(sub.stderr, /--replay does not apply to `coyote agents list`/);
    await Deno.writeTextFile(s.tape, '{"format":"coyote-record","version":7}\n');
    const r3 = await runCoyote(["--headless", "--replay", s.tape, "hi"], { cwd: s.ws, env });
    assert.equal(r3.code, 2);
    assert.match(r3.stderr, /version 7; this Coyote reads version 1/);
  } finally {
    await s.done();
  }
});

Deno.test("record/replay: an ACP session (official client) replays offline with the same session/update stream", async () => {
  const s = await setup();
  const server = await startModelServer({
    script: [
      { tool_calls: [{ name: "fs_read", arguments: { path: "notes.txt" } }] },
      { text: "ACP answer: alpha beta" },
    ],
  });
  const turn = async (args: string[], baseURL: string) => {
    const h = await startAcp({ env: vars(s.env, baseURL), args });
    const { sessionId } = await h.agent.request("session/new", { cwd: s.ws, mcpServers: [] });
    const before = h.updates.length;
    const res = await h.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "read the notes" }],
    });
    // The command list is sent beside the turn (its place among the updates varies).
    const updates = h.updates.slice(before).filter((u) =>
      u.update.sessionUpdate !== "available_commands_update"
    ).map((u) => normaliseIds(JSON.stringify(u.update)));
    await finishAcp(h);
    return { stopReason: res.stopReason, updates };
  };
  try {
    const rec = await turn(["--record", s.tape], server.baseURL);
    assert.equal(rec.stopReason, "end_turn");
    await server.close();
    assertNoSecrets(s.tape);
    const rep = await turn(["--replay", s.tape], DEAD);
    assert.equal(rep.stopReason, "end_turn");
    assert.deepEqual(rep.updates, rec.updates);
    const text = rep.updates.map((u) => JSON.parse(u)).filter((u) =>
      u.sessionUpdate === "agent_message_chunk"
    ).map((u) => u.content.text).join("");
    assert.equal(text, "ACP answer: alpha beta");
  } finally {
    await server.close();
    await s.done();
  }
});

Deno.test("record/replay: a REPL turn in a terminal (tmux) replays offline to the same screen", async () => {
  const s = await setup();
  const server = await startModelServer({ script: [{ text: "REPL-ANSWER from the model" }] });
  const screen = async (args: string[], baseURL: string) => {
    const t = new Tmux();
    const { cmd, args: full } = coyoteCommand(args);
    await t.start([cmd, ...full], { cwd: s.ws, env: vars(s.env, baseURL) });
    try {
      await t.waitFor(/› $/m);
      await t.type("say something");
      await t.keys("Enter");
      const out = await t.waitFor(/REPL-ANSWER[\s\S]*› $/m);
      return out.slice(out.indexOf("say something")).replace(/\s+$/, "");
    } finally {
      await t.kill();
    }
  };
  try {
    const rec = await screen(["--record", s.tape], server.baseURL);
    await server.close();
    assertNoSecrets(s.tape);
    const rep = await screen(["--replay", s.tape], DEAD);
    assert.equal(normaliseIds(rep), normaliseIds(rec));
  } finally {
    await server.close();
    await s.done();
  }
});
