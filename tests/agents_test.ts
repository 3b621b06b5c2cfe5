/**
 * Agent definitions: the `config.yaml` and Markdown forms (errors naming file and field, with
 * did-you-mean), shadowing across sources, template variables (required and defaulted),
 * `coyote agents list|show`, Claude Code's `.claude/agents/*.md`, the built-in suite, and the
 * size of the built-ins' first request (a snapshot of what the model is sent).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseAgentConfig, parseAgentMarkdown } from "../core/agents/definition.ts";
import { loadAgentRegistry } from "../core/agents/registry.ts";
import { renderInstructions, resolveVariables, selectTools } from "../core/agents/resolve.ts";
import { builtinAgentFiles, DEFAULT_AGENT } from "../agents/mod.ts";
import { startModelServer } from "./support/model_server.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function write(path: string, text: string) {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

const F = "/w/.coyote/agents/x/config.yaml";

Deno.test("parseAgentConfig: every key of the folder form maps onto the SDK definition", async () => {
  const yaml = `
name: x
description: An agent
version: 2.1
model: m1
temperature: 0.2
top_p: 0.9
reasoning_effort: high
variables:
  - {name: target, description: what to check}
  - {name: tone, default: terse}
tools: [fs_read, "fs_*", "mcp:github"]
global_tools: [execute_command.sh]
mcp_servers: [search]
enabled_skills: [code-review]
can_spawn_agents: true
spawnable_agents: [explore]
max_concurrent_agents: 3
max_agent_depth: 2
summarization_threshold: 4000
escalation_timeout: 60
auto_continue: true
max_auto_continues: 5
conversation_starters: [Hello]
agent_session: temp
instructions: Check {{target}}.
`;
  const { definition: d, warnings } = await parseAgentConfig(yaml, F, "x");
  assert.deepEqual(d, {
    name: "x",
    description: "An agent",
    instructions: "Check {{target}}.",
    tools: ["fs_read", "fs_*", "mcp:github", "execute_command"],
    model: "m1",
    temperature: 0.2,
    version: "2.1",
    top_p: 0.9,
    reasoning_effort: "high",
    variables: [{ name: "target", description: "what to check" }, {
      name: "tone",
      default: "terse",
    }],
    mcp_servers: ["search"],
    enabled_skills: ["code-review"],
    can_spawn_agents: true,
    spawnable_agents: ["explore"],
    max_concurrent_agents: 3,
    max_agent_depth: 2,
    summarization_threshold: 4000,
    escalation_timeout: 60,
    auto_continue: true,
    max_auto_continues: 5,
    conversation_starters: ["Hello"],
  });
  assert.deepEqual(warnings, [
    `agent file ${F}: agent_session: not supported by this Coyote; ignored`,
  ]);
});

Deno.test("parseAgentConfig: errors name the file and the field", async () => {
  const bad = async (yaml: string, re: RegExp) => {
    await assert.rejects(parseAgentConfig(yaml, F, "x"), (e: Error) => {
      assert.ok(e.message.startsWith(`agent file ${F}: `), e.message);
      assert.match(e.message, re);
      assert.equal(e.name, "ConfigError");
      return true;
    });
  };
  const base = "description: d\ninstructions: i\n";
  await bad(base + "temprature: 0.3\n", /temprature: unknown key \(did you mean `temperature`\?\)/);
  await bad(base + "max_agent_depth: deep\n", /max_agent_depth: expected a positive integer/);
  await bad(base + "top_p: 3\n", /top_p: expected a number from 0 to 1/);
  await bad(
    base + "variables: [{name: a, defualt: b}]\n",
    /variables\[0\]\.defualt: unknown key \(did you mean `default`\?\)/,
  );
  await bad("instructions: i\n", /description: required$/);
  await bad("description: d\n", /instructions: required$/);
  await bad(base + "name: y\n", /name: "y" does not match its folder "x"/);
  await bad(base + "tools: [a\n", /line \d+, column \d+: YAML syntax error/);
  await bad(
    base + "variables: [{name: a}, {name: a}]\n",
    /variables\[1\]\.name: "a" is declared twice/,
  );
});

Deno.test("parseAgentMarkdown: Claude Code's .claude/agents/*.md form", async () => {
  const md = "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep, Bash\n" +
    "model: sonnet\ncolor: blue\n---\n\nYou review code.\n";
  const { definition } = await parseAgentMarkdown(md, "/w/.claude/agents/r.md", "r");
  assert.deepEqual(definition, {
    name: "reviewer",
    description: "Reviews code",
    instructions: "You review code.",
    tools: ["fs_read", "fs_grep", "execute_command"],
  });
  await assert.rejects(
    parseAgentMarkdown("---\ndescription: d\ntoools: Read\n---\nbody", "/w/a.md", "a"),
    /agent file \/w\/a\.md: toools: unknown key \(did you mean `tools`\?\)/,
  );
  await assert.rejects(
    parseAgentMarkdown("---\ndescription: d\n---\n", "/w/a.md", "a"),
    /agent file \/w\/a\.md: the body .* is empty/,
  );
});

Deno.test("variables: required and defaulted; templates fill builtins and variables", () => {
  const def = {
    name: "v",
    description: "",
    instructions:
      "{{ target }} {{tone}} {{__os__}} {{__cwd__}} {{__tools__}} {{__now__}} {{other}}",
    variables: [{ name: "target", description: "what to check" }, {
      name: "tone",
      default: "terse",
    }],
  };
  assert.throws(
    () => resolveVariables(def, {}),
    /agent "v" needs variable target \(what to check\); pass --agent-variable NAME VALUE/,
  );
  assert.throws(
    () => resolveVariables(def, { target: "a", tnoe: "x" }),
    /no variable "tnoe" \(did you mean "tone"\?\)/,
  );
  const vars = resolveVariables(def, { target: "src/" });
  assert.deepEqual(vars, { target: "src/", tone: "terse" });
  const text = renderInstructions(def.instructions, {
    cwd: "/w",
    tools: ["fs_read", "fs_ls"],
    vars,
    os: "linux",
    now: new Date("2026-01-02T03:04:05Z"),
  });
  assert.equal(text, "src/ terse linux /w fs_read, fs_ls 2026-01-02T03:04:05.000Z {{other}}");
});

Deno.test("selectTools: names, globs, mcp:<server> and mcp_servers", () => {
  const all = ["fs_read", "fs_write", "execute_command", "mcp__gh__issue", "mcp__search__q"].map(
    (name) => ({ name }),
  );
  const pick = (d: Record<string, unknown>) =>
    selectTools(all, { name: "a", description: "", instructions: "", ...d }).map((t) => t.name);
  assert.deepEqual(pick({}), all.map((t) => t.name));
  assert.deepEqual(pick({ tools: ["fs_*", "mcp:gh"] }), ["fs_read", "fs_write", "mcp__gh__issue"]);
  assert.deepEqual(pick({ tools: ["fs_read"], mcp_servers: ["search"] }), [
    "fs_read",
    "mcp__search__q",
  ]);
  assert.deepEqual(pick({ mcp_servers: ["search"] }), [
    "fs_read",
    "fs_write",
    "execute_command",
    "mcp__search__q",
  ]);
});

Deno.test("registry: later sources shadow earlier ones (built-in < plugin < user < workspace)", async () => {
  const root = await Deno.makeTempDir({ prefix: "coyote-agents-" });
  const cfg = join(root, "cfg");
  const repo = join(root, "repo");
  const cwd = join(repo, "sub");
  const agent = (desc: string) => `description: ${desc}\ninstructions: i\n`;
  try {
    await Deno.mkdir(join(repo, ".git"), { recursive: true });
    await Deno.mkdir(cwd, { recursive: true });
    // explore: built-in < user < repo root .claude (md) < repo root .coyote < cwd .claude
    await write(join(cfg, "agents/explore/config.yaml"), agent("user explore"));
    await write(join(repo, ".claude/agents/explore.md"), "---\ndescription: md explore\n---\nbody");
    await write(join(repo, ".coyote/agents/explore/config.yaml"), agent("root explore"));
    await write(join(cwd, ".claude/agents/explore.md"), "---\ndescription: nearest\n---\nbody");
    // oracle: only the user dir shadows the built-in; plugin agent "helper" is shadowed by the user.
    await write(join(cfg, "agents/oracle/config.yaml"), agent("user oracle"));
    await write(join(cfg, "agents/helper/config.yaml"), agent("user helper"));
    await write(
      join(cfg, "agents/flow/graph.yaml"),
      "name: flow\ndescription: a graph\nstart: a\nnodes:\n  a: { type: end, output: done }\n",
    );
    await write(join(cfg, "agents/README.md/x"), ""); // a folder named *.md without agent files
    await write(join(cfg, "agents/notes/README.md"), "not an agent");
    const reg = await loadAgentRegistry({
      configDir: cfg,
      cwd,
      pluginAgents: [
        { agent: { name: "helper", description: "plugin helper", instructions: "p" } },
        {
          agent: { name: "plugged", description: "plugin only", instructions: "p" },
        },
      ],
    });
    const e = reg.entry("explore")!;
    assert.equal(e.description, "nearest");
    assert.equal(e.source, "workspace");
    assert.deepEqual(e.shadows, [
      "builtin:agents/explore/config.yaml",
      join(cfg, "agents/explore/config.yaml"),
      join(repo, ".claude/agents/explore.md"),
      join(repo, ".coyote/agents/explore/config.yaml"),
    ]);
    assert.deepEqual(reg.warnings(), [
      `agent "explore" is defined by ${
        join(cwd, ".claude/agents/explore.md")
      }, replacing the built-in one`,
    ]);
    assert.equal(reg.entry("oracle")!.source, "user");
    assert.equal(reg.entry("helper")!.description, "user helper");
    assert.deepEqual(
      reg.entry("helper")!.shadows,
      ["plugin:helper", join(cfg, "agents/helper/config.yaml")].slice(0, 1),
    );
    assert.equal(reg.entry("plugged")!.source, "plugin");
    assert.equal(reg.entry("flow")!.kind, "graph");
    assert.equal(reg.entry("flow")!.description, "a graph");
    assert.equal(reg.entry("notes"), undefined);
    assert.equal(reg.resolve("flow").graph?.spec.start, "a");
    assert.throws(
      () => reg.resolve("explroe"),
      /unknown agent "explroe" \(did you mean "explore"\?\)/,
    );
    assert.equal(reg.resolve("sisyphus").can_spawn_agents, true);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("built-in agents: all parse strictly; sisyphus is the default and coyote stays", async () => {
  assert.equal(DEFAULT_AGENT, "sisyphus");
  const reg = await loadAgentRegistry({ configDir: "/nonexistent", cwd: "/nonexistent" });
  assert.deepEqual(reg.entries().map((e) => `${e.name}:${e.kind}`), [
    "adversary:graph",
    "code-reviewer:llm",
    "coder:graph",
    "coyote:llm",
    "explore:llm",
    "librarian:llm",
    "oracle:llm",
    "security-reviewer:llm",
    "sisyphus:llm",
    "step-runner:graph",
  ]);
  for (const g of ["adversary", "coder", "step-runner"]) assert.ok(reg.entry(g)!.description, g);
  for (const e of reg.entries()) {
    assert.equal(e.error, undefined, e.name);
    assert.deepEqual(e.warnings, [], e.name);
  }
  assert.equal(builtinAgentFiles.length, reg.entries().length);
  assert.match(reg.resolve("explore").instructions, /EXPLORE_COMPLETE/);
  assert.match(reg.resolve("oracle").instructions, /PLAN_REVIEW: OKAY/);
  assert.match(reg.resolve("security-reviewer").instructions, /SECURITY_REVIEW: FAIL/);
  assert.deepEqual(reg.resolve("security-reviewer").variables, [{
    name: "security_posture",
    description: "how strict the verdict is: prototype, standard or hardened",
    default: "standard",
  }]);
  const s = reg.resolve("sisyphus");
  assert.deepEqual(s.spawnable_agents, [
    "explore",
    "librarian",
    "oracle",
    "coder",
    "code-reviewer",
    "adversary",
    "security-reviewer",
    "step-runner",
  ]);
  for (
    const word of [
      "Intent:",
      "explore",
      "librarian",
      "oracle",
      "coder",
      "step-runner",
      "code-reviewer",
      "adversary",
      "security-reviewer",
      "Verification Log",
      "PASSED|FAILED|PARTIAL",
      "Key Decisions",
      "Risks & Mitigations",
    ]
  ) {
    assert.ok(s.instructions.includes(word), word);
  }
  assert.deepEqual(reg.resolve("explore").tools, ["fs_read", "fs_ls", "fs_glob", "fs_grep"]);
});

Deno.test("cli: agents list/show, a broken agent file, -a with variables, .claude/agents md", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-agents-cli-" });
  await write(
    join(cwd, ".coyote/agents/broken/config.yaml"),
    "description: d\ninstructions: i\nmax_turns: many\n",
  );
  await write(
    join(cwd, ".coyote/agents/checker/config.yaml"),
    [
      "description: Checks a target",
      "top_p: 0.5",
      "reasoning_effort: low",
      "tools: [fs_read, fs_grep]",
      "enabled_skills: []",
      "variables:",
      "  - {name: target, description: what to check}",
      "  - {name: tone, default: terse}",
      "instructions: 'Check {{target}} in a {{tone}} voice.'",
    ].join("\n"),
  );
  await write(
    join(cwd, ".claude/agents/md-reviewer.md"),
    "---\nname: md-reviewer\ndescription: From Claude Code\ntools: Read, Glob\nmodel: inherit\n---\nMD-BODY-3\n",
  );
  const server = await startModelServer({
    script: [{ text: "one" }, { text: "two" }, { text: "three" }],
  });
  const e = childEnv(env, { baseURL: server.baseURL });
  try {
    const list = await runCoyote(["agents", "list", "--json"], { cwd, env: e });
    assert.equal(list.code, 2, "a broken file makes list exit 2 (a configuration error)");
    const rows = JSON.parse(list.stdout) as Json[];
    const row = (n: string) => rows.find((r) => r.name === n);
    assert.deepEqual(
      { ...row("checker"), path: undefined },
      {
        name: "checker",
        kind: "llm",
        source: "workspace",
        path: undefined,
        description: "Checks a target",
        shadows: [],
        warnings: [],
      },
    );
    assert.equal(row("sisyphus").source, "builtin");
    assert.equal(row("md-reviewer").source, "workspace");
    const brokenFile = join(cwd, ".coyote/agents/broken/config.yaml");
    assert.equal(
      row("broken").error,
      `agent file ${brokenFile}: max_turns: expected a positive integer`,
    );
    assert.match(list.stderr, /broken\/config\.yaml: max_turns: expected a positive integer/);
    const text = await runCoyote(["agents", "list"], { cwd, env: e });
    assert.match(text.stdout, /^NAME +KIND +SOURCE +DESCRIPTION$/m);
    assert.match(text.stdout, /^explore +llm +builtin +Read-only codebase search/m);

    const show = await runCoyote(["agents", "show", "checker"], { cwd, env: e });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^# checker: llm agent from workspace \(.*checker\/config\.yaml\)$/m);
    assert.match(show.stdout, /^instructions: Check \{\{target\}\} in a \{\{tone\}\} voice\.$/m);
    const showBroken = await runCoyote(["agents", "show", "broken"], { cwd, env: e });
    assert.equal(showBroken.code, 2);
    assert.match(showBroken.stderr, /broken\/config\.yaml: max_turns: expected a positive integer/);

    // A broken agent file chosen with -a: exit 2, the error names file and field.
    const runBroken = await runCoyote(["--headless", "-a", "broken", "hi"], { cwd, env: e });
    assert.equal(runBroken.code, 2);
    assert.match(
      runBroken.stderr,
      /agent file .*broken\/config\.yaml: max_turns: expected a positive integer/,
    );

    // A required variable missing: usage error before any request.
    const missing = await runCoyote(["--headless", "-a", "checker", "hi"], { cwd, env: e });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /agent "checker" needs variable target \(what to check\)/);
    assert.equal(server.requests.length, 0);

    const ok = await runCoyote(
      ["--headless", "--agent", "checker", "--agent-variable", "target", "src/", "hi"],
      { cwd, env: e },
    );
    assert.equal(ok.code, 0, ok.stderr);
    const body = server.requests[0].body as Json;
    assert.match(body.messages[0].content, /^Check src\/ in a terse voice\./);
    assert.deepEqual(body.tools.map((t: Json) => t.function.name), ["fs_read", "fs_grep"]);
    assert.equal(body.top_p, 0.5);
    assert.equal(body.reasoning_effort, "low");
    const set = await runCoyote(
      [
        "--headless",
        "-a",
        "checker",
        "--agent-variable",
        "target=lib",
        "--agent-variable",
        "tone",
        "formal",
        "hi",
      ],
      { cwd, env: e },
    );
    assert.equal(set.code, 0, set.stderr);
    assert.match(
      (server.requests[1].body as Json).messages[0].content,
      /^Check lib in a formal voice\./,
    );

    const md = await runCoyote(["--headless", "-a", "md-reviewer", "hi"], { cwd, env: e });
    assert.equal(md.code, 0, md.stderr);
    const mdBody = server.requests[2].body as Json;
    assert.match(mdBody.messages[0].content, /^MD-BODY-3/);
    assert.equal(mdBody.model, "scripted", "model: inherit keeps the session's model");
    assert.deepEqual(
      mdBody.tools.map((t: Json) => t.function.name).filter((n: string) =>
        !n.startsWith("skill__")
      ),
      ["fs_read", "fs_glob"],
    );
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

/** Tokens as the benchmarks count them: characters of system prompt + tool schemas, / 4. */
function firstRequestTokens(body: Json): number {
  const system = body.messages.find((m: Json) => m.role === "system")?.content ?? "";
  return (JSON.stringify(system).length + JSON.stringify(body.tools ?? []).length) / 4;
}

Deno.test("first request of the built-ins: tool set snapshot and size budget (sisyphus ≤ 6k, explore ≤ 3k tokens)", async () => {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-agents-size-" });
  const server = await startModelServer({ script: [{ text: "a" }, { text: "b" }] });
  const e = childEnv(env, { baseURL: server.baseURL });
  try {
    for (const agent of ["sisyphus", "explore"]) {
      const r = await runCoyote(["--headless", "-a", agent, "hi"], { cwd, env: e });
      assert.equal(r.code, 0, r.stderr);
    }
    const [sis, exp] = server.requests.map((r) => r.body as Json);
    const names = (b: Json) => b.tools.map((t: Json) => t.function.name);
    assert.deepEqual(names(exp), ["fs_read", "fs_ls", "fs_glob", "fs_grep"]);
    assert.doesNotMatch(exp.messages[0].content, /Skills \(/, "explore has no skill index");
    for (
      const n of [
        "fs_read",
        "fs_patch",
        "execute_command",
        "todo__write",
        "web_fetch",
        "skill__load",
      ]
    ) {
      assert.ok(names(sis).includes(n), n);
    }
    // Only names and descriptions of skills in the first request, never their bodies.
    assert.match(sis.messages[0].content, /- plan-review: Review a plan repo/);
    assert.doesNotMatch(sis.messages[0].content, /# Loaded skill/);
    assert.ok(firstRequestTokens(sis) <= 6000, `sisyphus ${firstRequestTokens(sis)}`);
    assert.ok(firstRequestTokens(exp) <= 3000, `explore ${firstRequestTokens(exp)}`);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("acp: the agent config option lists the workspace's agents; choosing one changes the next request", async () => {
  const { startAcp } = await import("./support/acp_harness.ts");
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-agents-acp-" });
  await write(
    join(cwd, ".claude/agents/doc-writer.md"),
    "---\ndescription: Writes docs\ntools: Read\n---\nDOC-WRITER-BODY\n",
  );
  await write(join(cwd, ".coyote/agents/broken/config.yaml"), "description: d\n");
  const server = await startModelServer({ script: [{ text: "one" }, { text: "two" }] });
  try {
    const h = await startAcp({ env: childEnv(env, { baseURL: server.baseURL }) });
    try {
      const { sessionId, configOptions } = await h.agent.request("session/new", {
        cwd,
        mcpServers: [],
      });
      const agent = configOptions?.find((o) => o.id === "agent") as Json;
      assert.equal(agent.currentValue, "sisyphus");
      const values = agent.options.map((o: Json) => o.value);
      for (const n of ["sisyphus", "coyote", "explore", "doc-writer"]) {
        assert.ok(values.includes(n), n);
      }
      assert.ok(!values.includes("broken"), "a broken file is not offered");
      assert.ok(values.includes("coder"), "graph agents are offered: they run");
      await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "a" }] });
      await assert.rejects(
        h.agent.request("session/set_config_option", {
          sessionId,
          configId: "agent",
          value: "broken",
        }),
        (err: { code?: number; message?: string }) => err.code === -32602,
      );
      await h.agent.request("session/set_config_option", {
        sessionId,
        configId: "agent",
        value: "doc-writer",
      });
      await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "b" }] });
      const [first, second] = server.requests.map((r) => r.body as Json);
      assert.match(first.messages[0].content, /^You are Sisyphus/);
      assert.match(second.messages[0].content, /^DOC-WRITER-BODY/);
      assert.equal(await h.close(), 0, h.stderr());
      h.assertStdoutPure();
    } finally {
      await h.close().catch(() => {});
    }
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("cli: plugin agents and skills join the registry; a workspace file shadows a plugin agent", async () => {
  const { REPO_ROOT } = await import("./support/run_coyote.ts");
  const plugin = `${REPO_ROOT}/tests/fixtures/plugins/good/kitchen.ts`;
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-agents-plugin-" });
  const server = await startModelServer({ script: [{ text: "ok" }] });
  const e = childEnv(env, { baseURL: server.baseURL });
  try {
    const list = await runCoyote(["agents", "list", "--json", "--plugin", plugin], { cwd, env: e });
    assert.equal(list.code, 0, list.stderr);
    const chef = (JSON.parse(list.stdout) as Json[]).find((r) => r.name === "kitchen-chef");
    assert.equal(chef.source, "plugin");
    assert.equal(chef.description, "Cooks.");

    await write(
      join(cwd, ".coyote/agents/kitchen-chef/config.yaml"),
      "description: Local chef\ninstructions: LOCAL-CHEF\ntools: [fs_read]\n",
    );
    // An untrusted repository may add agents but not replace one (a warning says so).
    const untrusted = await runCoyote(["agents", "list", "--json", "--plugin", plugin], {
      cwd,
      env: e,
    });
    const kept = (JSON.parse(untrusted.stdout) as Json[]).find((r) => r.name === "kitchen-chef");
    assert.equal(kept.source, "plugin");
    assert.match(
      untrusted.stderr,
      /would replace the plugin agent "kitchen-chef"; ignored in an untrusted workspace/,
    );
    const again = await runCoyote(
      ["agents", "list", "--json", "--trust-workspace", "--plugin", plugin],
      { cwd, env: e },
    );
    const local = (JSON.parse(again.stdout) as Json[]).find((r) => r.name === "kitchen-chef");
    assert.equal(local.source, "workspace");
    assert.deepEqual(local.shadows, ["plugin:kitchen-chef"]);

    const run = await runCoyote(
      ["--headless", "--trust-workspace", "--plugin", plugin, "-a", "kitchen-chef", "hi"],
      { cwd, env: e },
    );
    assert.equal(run.code, 0, run.stderr);
    const body = server.requests[0].body as Json;
    assert.match(body.messages[0].content, /^LOCAL-CHEF/);
    assert.match(
      body.messages[0].content,
      /- plating: How to plate\./,
      "the plugin's skill is indexed",
    );
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
});

Deno.test("built-ins: a stale generated module falls back to the data-dir cache; a broken cache file is parsed again; other builds' entries stay", async () => {
  const { loadBuiltins, parseBuiltins, KEEP } = await import("../core/agents/builtins.ts");
  const dir = await Deno.makeTempDir({ prefix: "coyote-builtin-cache-" });
  // A checkout whose agent files changed since `deno task gen`: the generated key differs.
  const stale = { key: "stale", agents: [], skills: [], warnings: [] };
  try {
    const fresh = await parseBuiltins();
    assert.deepEqual(fresh.warnings, []);
    await Deno.writeTextFile(join(dir, "0".repeat(64) + ".json"), "{}"); // another build's
    const first = await loadBuiltins(dir, stale);
    const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.equal(files.length, 2, "the other build's entry stays");
    const mine = files.find((f) => f !== "0".repeat(64) + ".json")!;
    assert.match(mine, /^[0-9a-f]{64}\.json$/);
    const second = await loadBuiltins(dir, stale);
    assert.deepEqual(second, first);
    assert.deepEqual(second, fresh, "the cached form equals a fresh parse");
    assert.ok(second.agents.find((e) => e.name === "coder")?.graphText?.includes("nodes:"));
    await Deno.writeTextFile(join(dir, mine), "{ not json");
    assert.deepEqual(await loadBuiltins(dir, stale), fresh);
    assert.deepEqual(JSON.parse(Deno.readTextFileSync(join(dir, mine))).agents.length, 10);
    // At most KEEP entries: the oldest go.
    for (let i = 1; i <= KEEP + 2; i++) {
      const f = join(dir, String(i).repeat(64).slice(0, 64) + ".json");
      await Deno.writeTextFile(f, "{}");
      await Deno.utime(f, 1000 + i, 1000 + i);
    }
    await Deno.remove(join(dir, mine));
    await loadBuiltins(dir, stale);
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.equal(left.length, KEEP);
    assert.ok(left.includes(mine), "this build's new entry is kept");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
