/**
 * Custom slash commands (issue 19; core/extensions/commands/load.ts, core/frontends/slash/):
 * Markdown prompt files from the user's config dir and, in trusted workspaces only,
 * `.claude/commands/` and `.coyote/commands/`; subfolders as `:` namespaces; `$ARGUMENTS` and
 * `$1…$9`; front matter errors naming file and field; a built-in name is not shadowed. And a
 * real headless run: `coyote --headless "/fix-issue 42"` sends the expanded prompt to the
 * scripted model server, with the command's `model` and its `allowed-tools` as the request's
 * tools.
 */
import assert from "node:assert/strict";
import {
  argumentWords,
  expandCommand,
  loadCustomCommands,
  toolAllowed,
  toolPatterns,
} from "../core/extensions/commands/load.ts";
import { BUILTIN_COMMANDS, unknownCommandNote } from "../core/frontends/slash_commands.ts";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

async function write(path: string, text: string) {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

/** A git repository with command files in `.claude/commands/` and `.coyote/commands/`. */
async function repo(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-cmds-" }));
  await Deno.mkdir(`${dir}/.git`);
  await write(
    `${dir}/.claude/commands/fix-issue.md`,
    "---\ndescription: Fix a GitHub issue\nargument-hint: [issue-number] [priority]\n" +
      'allowed-tools: "Bash(gh issue view:*), Read, fs_grep"\nmodel: small-model\n---\n' +
      "Fix issue #$1 (priority $2). All arguments: $ARGUMENTS\n",
  );
  await write(`${dir}/.claude/commands/frontend/component.md`, "# Make a component\nBuild $1.\n");
  await write(`${dir}/.coyote/commands/plain.md`, "Just do it.\n");
  return dir;
}

Deno.test("custom commands: load from user and trusted workspace folders, namespaces, descriptions, hints", async () => {
  const cfg = await Deno.makeTempDir({ prefix: "coyote-cmds-cfg-" });
  const dir = await repo();
  try {
    await write(`${cfg}/commands/mine.md`, "---\ndescription: My own\n---\nHello $ARGUMENTS\n");
    // The workspace's plain.md shadows the user's (nearest last), with a warning.
    await write(`${cfg}/commands/plain.md`, "user version\n");
    const r = await loadCustomCommands({
      configDir: cfg,
      cwd: dir,
      trusted: true,
      reserved: BUILTIN_COMMANDS.map((c) => c.name),
    });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.commands.map((c) => c.name), [
      "fix-issue",
      "frontend:component",
      "mine",
      "plain",
    ]);
    const fix = r.commands.find((c) => c.name === "fix-issue")!;
    assert.equal(fix.description, "Fix a GitHub issue (project)");
    assert.equal(fix.hint, "[issue-number] [priority]");
    assert.deepEqual(fix.allowedTools, ["Bash(gh issue view:*)", "Read", "fs_grep"]);
    assert.equal(fix.model, "small-model");
    const comp = r.commands.find((c) => c.name === "frontend:component")!;
    assert.equal(comp.description, "Make a component (project:frontend)");
    assert.equal(comp.namespace, "frontend");
    assert.equal(r.commands.find((c) => c.name === "mine")!.description, "My own (user)");
    assert.equal(r.commands.find((c) => c.name === "plain")!.body, "Just do it.");
    assert.ok(r.warnings.some((w) => /plain\.md: \/plain shadows .*commands\/plain\.md/.test(w)));
  } finally {
    await Deno.remove(cfg, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("custom commands: an untrusted workspace's command files are not read; the user's are", async () => {
  const cfg = await Deno.makeTempDir({ prefix: "coyote-cmds-cfg-" });
  const dir = await repo();
  try {
    await write(`${cfg}/commands/mine.md`, "mine\n");
    const r = await loadCustomCommands({ configDir: cfg, cwd: dir, trusted: false });
    assert.deepEqual(r.commands.map((c) => c.name), ["mine"]);
    // In a subfolder, the repository root's folders are named (the untrusted note names only the
    // working directory's).
    await Deno.mkdir(`${dir}/sub`);
    const sub = await loadCustomCommands({ configDir: cfg, cwd: `${dir}/sub`, trusted: false });
    assert.deepEqual(sub.commands.map((c) => c.name), ["mine"]);
    assert.ok(sub.warnings.some((w) => w.includes(`${dir}/.claude/commands: not read`)));
    assert.ok(sub.warnings.some((w) => w.includes(`${dir}/.coyote/commands: not read`)));
  } finally {
    await Deno.remove(cfg, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("custom commands: malformed files are errors naming file and field; built-in names and symlinks out are refused", async () => {
  const cfg = await Deno.makeTempDir({ prefix: "coyote-cmds-cfg-" });
  const dir = await repo();
  const outside = await Deno.makeTempFile({ prefix: "coyote-secret-" });
  try {
    const c = `${dir}/.coyote/commands`;
    await write(`${c}/bad-model.md`, "---\nmodel: [a, b]\n---\nbody\n");
    await write(`${c}/bad-tools.md`, "---\nallowed-tools: {Read: true}\n---\nbody\n");
    await write(`${c}/bad-desc.md`, "---\ndescription: 42\n---\nbody\n");
    await write(`${c}/unclosed.md`, "---\ndescription: x\nbody without a closing line\n");
    await write(`${c}/extra-key.md`, "---\ncolour: blue\n---\nbody\n");
    await write(`${c}/help.md`, "shadow the built-in\n");
    await write(`${c}/bad name.md`, "spaces\n");
    await Deno.symlink(outside, `${c}/leak.md`);
    const r = await loadCustomCommands({
      configDir: cfg,
      cwd: dir,
      trusted: true,
      reserved: BUILTIN_COMMANDS.map((x) => x.name),
    });
    const names = r.commands.map((x) => x.name);
    for (const gone of ["bad-model", "bad-tools", "bad-desc", "unclosed", "help", "leak"]) {
      assert.ok(!names.includes(gone), `${gone} is not offered`);
    }
    assert.ok(names.includes("extra-key"), "an unknown key is a warning, not an error");
    const has = (list: string[], re: RegExp) => assert.ok(list.some((e) => re.test(e)), `${re}`);
    has(r.errors, /bad-model\.md: model: must be a model id \(a string\), not a list/);
    has(
      r.errors,
      /bad-tools\.md: allowed-tools: must be a string or a list of strings, not a mapping/,
    );
    has(r.errors, /bad-desc\.md: description: must be a string, not a number/);
    has(r.errors, /unclosed\.md: front matter: missing front matter/);
    has(r.errors, /bad name\.md: name: "bad name" is not a command name/);
    has(r.errors, /leak\.md: .*leads outside/);
    has(r.warnings, /extra-key\.md: colour: unknown front matter key/);
    has(r.warnings, /help\.md: \/help is a built-in command; this file is ignored/);
  } finally {
    await Deno.remove(cfg, { recursive: true });
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside);
  }
});

Deno.test("custom commands: $ARGUMENTS, $1…$9 with quotes, appended ARGUMENTS, tool patterns, did-you-mean", () => {
  const body = "Issue $1, priority $2, missing [$3]; all: $ARGUMENTS";
  assert.equal(
    expandCommand({ body }, '42 "very high"'),
    'Issue 42, priority very high, missing []; all: 42 "very high"',
  );
  assert.equal(
    expandCommand({ body: "No placeholders." }, "x y"),
    "No placeholders.\n\nARGUMENTS: x y",
  );
  assert.equal(expandCommand({ body: "No placeholders." }, ""), "No placeholders.");
  assert.equal(expandCommand({ body: "$10 is not $1" }, "a"), "$10 is not a");
  assert.deepEqual(argumentWords(`a 'b c' "d"`), ["a", "b c", "d"]);
  const p = toolPatterns(["Bash(git add:*)", "Read", "mcp__github__*", "Task"]);
  assert.deepEqual(p, ["execute_command", "fs_read", "mcp__github__*", "agent__*"]);
  assert.ok(toolAllowed("mcp__github__list_issues", p));
  assert.ok(toolAllowed("agent__spawn", p));
  assert.ok(!toolAllowed("fs_write", p));
  assert.equal(
    unknownCommandNote("stauts", ["status", "help"]),
    "unknown command /stauts (did you mean /status?); /help lists the commands",
  );
  assert.match(
    unknownCommandNote("component", ["frontend:component"]),
    /did you mean \/frontend:component/,
  );
});

Deno.test('custom commands: coyote --headless "/fix-issue 42" sends the expanded prompt, the command\'s model and only its allowed tools', async () => {
  const server = await startModelServer({ script: () => ({ text: "on it" }) });
  const env = await makeCoyoteEnv();
  const dir = await repo();
  try {
    const run = (prompt: string, extra: string[] = []) =>
      runCoyote(["--headless", "--output-format", "json", ...extra, prompt], {
        cwd: dir,
        env: childEnv(env, { baseURL: server.baseURL }),
      });
    const r = await run("/fix-issue 42 high", ["--trust-workspace"]);
    assert.equal(r.code, 0, r.stderr);
    // deno-lint-ignore no-explicit-any
    const body = server.requests.at(-1)!.body as any;
    const user = requestMessages(server.requests.at(-1)!).filter((m) => m.role === "user").at(-1)!;
    assert.equal(
      JSON.stringify(user.content).includes(
        "Fix issue #42 (priority high). All arguments: 42 high",
      ),
      true,
      JSON.stringify(user.content),
    );
    assert.equal(body.model, "small-model");
    const tools = (body.tools ?? []).map((t: { function: { name: string } }) => t.function.name)
      .sort();
    assert.deepEqual(tools, ["execute_command", "fs_grep", "fs_read"]);

    // The namespaced command by its full name and by its last segment.
    for (const p of ["/frontend:component Button", "/component Button"]) {
      const n = await run(p, ["--trust-workspace"]);
      assert.equal(n.code, 0, n.stderr);
      const last = requestMessages(server.requests.at(-1)!).filter((m) => m.role === "user").at(
        -1,
      )!;
      assert.match(JSON.stringify(last.content), /Build Button\./, p);
      // No allowed-tools: the agent's whole tool set; no model: the session's.
      // deno-lint-ignore no-explicit-any
      const b = server.requests.at(-1)!.body as any;
      assert.equal(b.model, "scripted");
      assert.ok(b.tools.length > 3);
    }

    // Untrusted: the workspace's file is not read, the text goes to the model as typed.
    const u = await run("/fix-issue 42");
    assert.equal(u.code, 0, u.stderr);
    assert.match(
      u.stderr,
      /is not trusted: ignoring .*\.claude\/commands\/, \.coyote\/commands\/ \(trust it/,
    );
    const raw = requestMessages(server.requests.at(-1)!).filter((m) => m.role === "user").at(-1)!;
    assert.match(JSON.stringify(raw.content), /\/fix-issue 42/);

    // A near miss goes to the model as typed, with a note on stderr.
    const miss = await run("/fix-isue 42", ["--trust-workspace"]);
    assert.equal(miss.code, 0, miss.stderr);
    assert.match(
      miss.stderr,
      /\/fix-isue is no command \(did you mean \/fix-issue\?\); sent to the model as text/,
    );
    assert.match(
      JSON.stringify(requestMessages(server.requests.at(-1)!).at(-1)!.content),
      /\/fix-isue 42/,
    );

    // A malformed file costs a message naming it, not the run.
    await write(`${dir}/.coyote/commands/broken.md`, "---\nmodel: 7\n---\nx\n");
    const b = await run("/plain", ["--trust-workspace"]);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stderr, /broken\.md: model: must be a model id/);
    assert.match(
      JSON.stringify(requestMessages(server.requests.at(-1)!).at(-1)!.content),
      /Just do it\./,
    );
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("built-in prompt commands headless: /init and /review send their prompts (the adversary when a plan file is named)", async () => {
  const server = await startModelServer({ script: () => ({ text: "done" }) });
  const env = await makeCoyoteEnv();
  const dir = await repo();
  try {
    const run = (prompt: string) =>
      runCoyote(["--headless", "--output-format", "json", prompt], {
        cwd: dir,
        env: childEnv(env, { baseURL: server.baseURL }),
      });
    const lastUser = () =>
      JSON.stringify(
        requestMessages(server.requests.at(-1)!).filter((m) => m.role === "user").at(-1)!.content,
      );
    assert.equal((await run("/init stress the test commands")).code, 0);
    assert.match(lastUser(), /Write or update the file AGENTS\.md at the root of this repository/);
    assert.match(lastUser(), /The user adds: stress the test commands/);

    assert.equal((await run("/review")).code, 0);
    assert.match(lastUser(), /Spawn the `code-reviewer` agent with agent__spawn/);
    assert.doesNotMatch(lastUser(), /adversary/);

    await Deno.writeTextFile(`${dir}/PLAN.md`, "## Acceptance criteria\n- C1: it works\n");
    assert.equal((await run("/review PLAN.md")).code, 0);
    assert.match(lastUser(), /also spawn the `adversary` agent[\s\S]*read them from PLAN\.md/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("/review headless: the agent spawns code-reviewer on the diff (the supervisor path) and reports its findings", async () => {
  const isReviewer = (r: { body: unknown }) =>
    JSON.stringify((r.body as { messages: { content: unknown }[] }).messages[0]?.content ?? "")
      .includes("You are code-reviewer");
  let root = 0;
  const server = await startModelServer({
    script: (req) => {
      if (isReviewer(req)) {
        return { text: "[minor] a.txt:1 — says hello — fine\napprove\nREVIEW_COMPLETE" };
      }
      root++;
      if (root === 1) {
        return {
          tool_calls: [{
            name: "agent__spawn",
            arguments: { agent: "code-reviewer", prompt: "review the current git diff HEAD" },
          }],
        };
      }
      if (root === 2) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      return { text: "REVIEW-REPORTED" };
    },
  });
  const env = await makeCoyoteEnv();
  const dir = await repo();
  try {
    const r = await runCoyote(["--headless", "--output-format", "json", "/review"], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const first = requestMessages(server.requests[0]).filter((m) => m.role === "user").at(-1)!;
    assert.match(JSON.stringify(first.content), /Spawn the `code-reviewer` agent/);
    assert.ok(server.requests.some(isReviewer), "code-reviewer ran as a sub-agent");
    const result = JSON.parse(r.stdout);
    assert.match(result.result ?? result.text ?? r.stdout, /REVIEW-REPORTED/);
    // The parent saw the reviewer's findings in agent__collect's result.
    assert.match(JSON.stringify(server.requests.at(-1)!.body), /REVIEW_COMPLETE/);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
