/**
 * Exit codes and error shape of flags that name something and of the `check`/`show`/`list`
 * subcommands (README "Exit codes"), as real subprocesses of main.ts: a `--plugin` or `--add-dir`
 * naming something missing is a usage error (2) in every frontend, before any model request; an
 * invalid graph, agent or plugin definition is a configuration error (2); errors are one
 * `coyote: …` line naming the thing, never a stack trace.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { Tmux } from "./support/tmux.ts";

const GOOD_PLUGIN = new URL("./fixtures/plugins/good/kitchen.ts", import.meta.url).pathname;
const GOOD_GRAPH = new URL("./fixtures/graphs/shell", import.meta.url).pathname;

/** No JavaScript stack frame in `text`. */
function noStack(text: string) {
  assert.doesNotMatch(text, /^\s+at /m, `no stack trace:\n${text}`);
  assert.doesNotMatch(text, /internal error/, text);
}

/** The lines of stderr that are not Deno's own download/compile notes. */
function lines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.length);
}

Deno.test("--plugin / --add-dir naming something missing: exit 2, one line naming it, no model request", async () => {
  const server = await startModelServer({ script: [] });
  // The passing run at the end goes to its own server (the first must see no request at all).
  const okServer = await startModelServer({ script: [{ text: "done" }] });
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(ws, "empty-folder"));
    await Deno.writeTextFile(join(ws, "notes.txt"), "not a plugin\n");
    const e = childEnv(env, { baseURL: server.baseURL });
    const cases: [string[], RegExp][] = [
      [
        ["--headless", "--plugin", "./missing.ts", "hi"],
        /^coyote: --plugin \.\/missing\.ts \(\/.*\/missing\.ts\): no such file or folder$/,
      ],
      [
        ["--plugin", "missing.ts", "hi"], // one-shot, not headless
        /^coyote: --plugin missing\.ts \(.*\): no such file or folder$/,
      ],
      [
        ["--headless", "--plugin", "empty-folder", "hi"],
        /^coyote: --plugin empty-folder \(.*\): folder has no mod\.ts \/ plugin\.ts/,
      ],
      [
        ["--headless", "--plugin", "notes.txt", "hi"],
        /^coyote: --plugin notes\.txt \(.*\): not a plugin module \(expected \.ts/,
      ],
      // A good plugin first does not hide a missing second one.
      [
        ["--headless", "--plugin", GOOD_PLUGIN, "--plugin", "/no/such/plugin.ts", "hi"],
        /^coyote: --plugin \/no\/such\/plugin\.ts: no such file or folder$/,
      ],
      [
        ["--headless", "--add-dir", "no-such-dir", "hi"],
        /^coyote: --add-dir no-such-dir \(.*\): no such directory$/,
      ],
      [
        ["--headless", "--add-dir", "notes.txt", "hi"],
        /^coyote: --add-dir notes\.txt \(.*\): not a directory$/,
      ],
      // Subcommands take the global flags too: `plugins list` would list without it.
      [
        ["--plugin", "./missing.ts", "plugins", "list"],
        /^coyote: --plugin \.\/missing\.ts .*: no such file or folder$/,
      ],
      [
        ["--plugin", "./missing.ts", "agents", "list"],
        /^coyote: --plugin \.\/missing\.ts .*: no such file or folder$/,
      ],
      // ACP: refused at start, before any protocol traffic (stdout stays empty).
      [
        ["--acp-server", "--plugin", "./missing.ts"],
        /^coyote: --plugin \.\/missing\.ts .*: no such file or folder$/,
      ],
      [
        ["--acp-server", "--add-dir", "no-such-dir"],
        /^coyote: --add-dir no-such-dir .*: no such directory$/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = await runCoyote(args, { cwd: ws, env: e, stdin: "" });
      const what = `${args.join(" ")}: ${r.stderr}`;
      assert.equal(r.code, 2, what);
      assert.equal(lines(r.stderr).length, 1, what);
      assert.match(lines(r.stderr)[0], re, what);
      assert.equal(r.stdout, "", what);
      noStack(r.stderr);
    }
    // json output: the usage `result` object names the path too.
    const json = await runCoyote(
      ["--output-format", "json", "--plugin", "./missing.ts", "hi"],
      { cwd: ws, env: e },
    );
    assert.equal(json.code, 2, json.stderr);
    const result = JSON.parse(json.stdout);
    assert.equal(result.error.code, "usage");
    assert.match(result.error.message, /--plugin \.\/missing\.ts .*no such file or folder/);
    assert.equal(server.requests.length, 0, "no request reached the model");

    // The checks pass for what exists: a real plugin, a relative --add-dir (taken from the
    // directory the command runs in) whose skill is then offered.
    await Deno.mkdir(join(ws, "extra", ".claude", "skills", "tidy"), { recursive: true });
    await Deno.writeTextFile(
      join(ws, "extra", ".claude", "skills", "tidy", "SKILL.md"),
      "---\nname: tidy\ndescription: Tidies up EXTRA-SKILL-MARK\n---\nBody.\n",
    );
    const ok = await runCoyote([
      "--headless",
      "--plugin",
      GOOD_PLUGIN,
      "--add-dir",
      "extra",
      "-a",
      "coyote",
      "hi",
    ], { cwd: ws, env: childEnv(env, { baseURL: okServer.baseURL }) });
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(okServer.requests.length, 1);
    // deno-lint-ignore no-explicit-any
    const system = (okServer.requests[0].body as any).messages[0];
    assert.equal(system.role, "system");
    assert.match(system.content, /EXTRA-SKILL-MARK/);
  } finally {
    await server.close();
    await okServer.close();
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("REPL start with a missing --plugin: exit 2 with the one line, no REPL, no request", async () => {
  const server = await startModelServer({ script: [] });
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir();
  const t = new Tmux();
  try {
    const { cmd, args } = coyoteCommand(["--plugin", "./missing.ts"]);
    await t.start([cmd, ...args], { cwd: ws, env: childEnv(env, { baseURL: server.baseURL }) });
    const screen = await t.waitFor(/\[exited \d+\]/);
    assert.match(screen, /coyote: --plugin \.\/missing\.ts .*: no such file or folder/);
    assert.match(screen, /\[exited 2\]/);
    assert.doesNotMatch(screen, /Ctrl\+D exits/, "the REPL never started");
    assert.equal(server.requests.length, 0);
  } finally {
    await t.kill();
    await server.close();
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("--acp-server refuses --session, --continue and -f (the editor opens sessions)", async () => {
  const env = await makeCoyoteEnv();
  try {
    for (const extra of [["--session", "x"], ["--continue"], ["-f", "a.txt"]]) {
      const r = await runCoyote(["--acp-server", ...extra], {
        cwd: env.dataDir,
        env: childEnv(env),
        stdin: "",
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`^coyote: ${extra[0]}.* not apply to --acp-server`));
      assert.equal(r.stdout, "");
      noStack(r.stderr);
    }
  } finally {
    await env.cleanup();
  }
});

Deno.test("graph check: 0 for a valid graph, 2 (configuration error) for an invalid one or no graph", async () => {
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir();
  try {
    const opts = { cwd: ws, env: childEnv(env) };
    const ok = await runCoyote(["graph", "check", GOOD_GRAPH], opts);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /graph\.yaml: ok \(\d+ nodes\)\n$/);
    const builtin = await runCoyote(["graph", "check", "adversary"], opts);
    assert.equal(builtin.code, 0, builtin.stderr);

    await Deno.mkdir(join(ws, "bad"));
    await Deno.writeTextFile(
      join(ws, "bad", "graph.yaml"),
      "name: bad\nstart: a\nnodes:\n  a:\n    type: script\n    script: nope.ts\n    next: end\n  end:\n    type: end\n",
    );
    const bad = await runCoyote(["graph", "check", "bad"], opts);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /^coyote: .*bad\/graph\.yaml: nodes\.a\.script: no file "nope\.ts"/);
    assert.equal(bad.stdout, "");
    noStack(bad.stderr);

    await Deno.writeTextFile(join(ws, "bad", "graph.yaml"), "name: [\n");
    const yaml = await runCoyote(["graph", "check", "bad/graph.yaml"], opts);
    assert.equal(yaml.code, 2, yaml.stderr);
    assert.match(yaml.stderr, /YAML syntax error/);

    await Deno.mkdir(join(ws, "empty"));
    await Deno.writeTextFile(join(ws, "notes.txt"), "x\n");
    for (
      const [arg, re] of [
        ["empty", /^coyote: graph check: empty holds no graph\.yaml$/],
        ["notes.txt", /^coyote: graph check: notes\.txt is neither a graph\.yaml nor a folder/],
        ["no-such", /^coyote: graph check: no file, folder or graph agent "no-such"$/],
        ["explore", /^coyote: graph check: "explore" is an llm agent, not a graph agent/],
      ] as const
    ) {
      const r = await runCoyote(["graph", "check", arg], opts);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(lines(r.stderr).length, 1, r.stderr);
      assert.match(lines(r.stderr)[0], re);
    }
  } finally {
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("plugins check/list: a path holding no plugin is one line (2); a broken plugin makes list exit 2", async () => {
  const env = await makeCoyoteEnv();
  const ws = await Deno.makeTempDir();
  try {
    const opts = { cwd: ws, env: childEnv(env) };
    const missing = await runCoyote(["plugins", "check", "./nope.ts"], opts);
    assert.equal(missing.code, 2, missing.stderr);
    assert.deepEqual(lines(missing.stderr).length, 1, missing.stderr);
    assert.match(missing.stderr, /^coyote: plugins check: \.\/nope\.ts \(.*\): no such file/);
    assert.equal(missing.stdout, "");

    const good = await runCoyote(["--plugin", GOOD_PLUGIN, "plugins", "list"], opts);
    assert.equal(good.code, 0, good.stderr);
    assert.match(good.stdout, /\[loaded\]/);

    await Deno.writeTextFile(
      join(ws, "boom.ts"),
      `throw new Error("boom");\nexport default { name: "boom", tools: [] };\n`,
    );
    const broken = await runCoyote(
      ["--plugin", GOOD_PLUGIN, "--plugin", "boom.ts", "plugins", "list"],
      opts,
    );
    assert.equal(broken.code, 2, broken.stderr);
    assert.match(broken.stdout, /\[loaded\]/, "the good plugin is still listed");
    assert.match(broken.stdout, /\[error\]/);
    assert.match(broken.stderr, /^coyote: warning: plugin .*boom/m);
    noStack(broken.stderr);
  } finally {
    await env.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("subcommand errors are one `coyote: …` line: trust --list with DIR, mcp list --timeout", async () => {
  const env = await makeCoyoteEnv();
  try {
    const opts = { cwd: env.dataDir, env: childEnv(env) };
    const trust = await runCoyote(["trust", "--list", "somewhere"], opts);
    assert.equal(trust.code, 2, trust.stderr);
    assert.match(trust.stderr, /^coyote: trust --list takes no DIR/);
    assert.equal(trust.stdout, "");
    const mcp = await runCoyote(["mcp", "list", "--timeout", "soon"], opts);
    assert.equal(mcp.code, 2, mcp.stderr);
    assert.match(mcp.stderr, /^coyote: mcp list: --timeout needs a positive number/);
    const rm = await runCoyote(["sessions", "rm", "nothing-like-this"], opts);
    assert.equal(rm.code, 2, rm.stderr);
    assert.match(rm.stderr, /^coyote: no stored session matches nothing-like-this$/m);
    const show = await runCoyote(["agents", "show", "no-such-agent"], opts);
    assert.equal(show.code, 2, show.stderr);
    assert.match(show.stderr, /^coyote: unknown agent "no-such-agent"/);
    for (const r of [trust, mcp, rm, show]) noStack(r.stderr);
  } finally {
    await env.cleanup();
  }
});

Deno.test("subcommands refuse run-only flags they would ignore; run settings an alias passes are fine", async () => {
  const env = await makeCoyoteEnv();
  try {
    const opts = { cwd: env.dataDir, env: childEnv(env) };
    for (
      const [args, re] of [
        [
          ["-f", "notes.txt", "agents", "list"],
          /^coyote: -f\/--file does not apply to `coyote agents list`$/,
        ],
        [
          ["--acp-server", "sessions", "list"],
          /^coyote: --acp-server does not apply to `coyote sessions list`$/,
        ],
        [
          ["--skill", "x", "--session", "y", "graph", "check", "z"],
          /^coyote: --session, --skill do not apply to `coyote graph check`$/,
        ],
        [
          ["--agent-variable", "a", "b", "policy", "show"],
          /^coyote: --agent-variable does not apply/,
        ],
        [["--list-sessions", "plugins", "list"], /^coyote: --list-sessions does not apply/],
      ] as const
    ) {
      const r = await runCoyote([...args], opts);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(lines(r.stderr)[0], re);
      assert.equal(r.stdout, "");
    }
    const ok = await runCoyote(
      [
        "-m",
        "some-model",
        "--headless",
        "-a",
        "coyote",
        "--max-turns",
        "3",
        "agents",
        "show",
        "coyote",
      ],
      opts,
    );
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^# coyote: llm agent from builtin/m);
  } finally {
    await env.cleanup();
  }
});
