/**
 * Files in the original Coyote's shapes (tests/fixtures/original/, written after shared
 * reference R2/R4) load and run: `coyote graph check` passes on them, a scripted headless run of
 * a step-runner-like graph drives a coder-like graph (agent node, `_next`-only scripts, a fix
 * loop, structured output, `fs_cat` and `ast_grep` called), and every key of theirs this Coyote does
 * not support gives a warning or an error naming the file and the key.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadAgentRegistry } from "../core/agents/registry.ts";
import { childEnv, makeCoyoteEnv, REPO_ROOT, runCoyote } from "./support/run_coyote.ts";
import { requestMessages, startModelServer } from "./support/model_server.ts";
import { astGrepDir } from "./support/ast_grep.ts";

const FIXTURES = join(REPO_ROOT, "tests/fixtures/original");

/** A config dir whose `agents/` holds the fixtures (user agents: always trusted). */
async function withAgents<T>(
  fn: (env: Awaited<ReturnType<typeof makeCoyoteEnv>>, cwd: string) => Promise<T>,
): Promise<T> {
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-orig-" });
  try {
    for (const a of ["coder-like", "step-like", "librarian-like", "demo", ".shared"]) {
      await Deno.mkdir(join(env.configDir, "agents"), { recursive: true });
      const cp = await new Deno.Command("cp", {
        args: ["-r", join(FIXTURES, a), join(env.configDir, "agents", a)],
      }).output();
      assert.equal(cp.code, 0);
    }
    return await fn(env, cwd);
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
}

Deno.test("original shapes: graph check passes, naming each unsupported key with its file", async () => {
  await withAgents(async (env, cwd) => {
    for (const a of ["coder-like", "step-like", "librarian-like"]) {
      const file = join(env.configDir, "agents", a, "graph.yaml");
      const r = await runCoyote(["graph", "check", join(env.configDir, "agents", a)], {
        cwd,
        env: childEnv(env),
      });
      assert.equal(r.code, 0, `${a}: ${r.stderr}`);
      assert.equal(r.stdout.trim().split(": ok (")[0], file);
      if (a !== "coder-like") continue;
      const warn = (key: string, what: RegExp) =>
        assert.match(
          r.stderr,
          new RegExp(`coyote: warning: ${file}: ${key.replace(/[.[\]]/g, "\\$&")}: ${what.source}`),
        );
      // fs_cat and ast_grep are tools here: no word about them.
      assert.doesNotMatch(r.stderr, /ast_grep|fs_cat/);
      warn(
        "skills_enabled/enabled_skills/inject_skill_instructions",
        /skills are not loaded into a graph's llm nodes/,
      );
      warn("nodes.implement.skills_enabled/enabled_skills", /skills are not loaded/);
      assert.match(
        r.stderr,
        new RegExp(
          `coyote: warning: agent file ${
            join(env.configDir, "agents/coder-like/tools.sh")
          }: agent-only functions are not supported.*plugin tool`,
        ),
      );
    }
  });
});

Deno.test("original shapes: a rag node, a .py script and a node id that differs from its key do not load", async () => {
  const env = await makeCoyoteEnv();
  try {
    const r = await runCoyote(["graph", "check", join(FIXTURES, "rag-like")], {
      cwd: FIXTURES,
      env: childEnv(env),
    });
    assert.equal(r.code, 2);
    const file = join(FIXTURES, "rag-like/graph.yaml");
    assert.match(r.stderr, new RegExp(`coyote: ${file}:`));
    assert.match(
      r.stderr,
      /nodes\.lookup\.type: "rag" nodes are not supported .*replace it with an llm node whose tools are fs_grep and fs_read/,
    );
    assert.match(r.stderr, /nodes\.answer\.id: "other_name" differs from its key "answer"/);
    assert.match(
      r.stderr,
      /nodes\.tidy\.script: "scripts\/tidy\.py": Python scripts are not run by this Coyote .*runs `python3 "\$\(dirname "\$0"\)\/tidy\.py"`/,
    );
    assert.doesNotMatch(r.stderr, /unknown node type/);
  } finally {
    await env.cleanup();
  }
});

Deno.test("original shapes: an unknown tool and an mcp: tool outside mcp_servers are errors naming the key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { parseGraphText } = await import("../core/graph/load.ts");
    const { validateGraph } = await import("../core/graph/validate.ts");
    const text = [
      "name: g",
      "global_tools: [web_lookup.sh]",
      "mcp_servers: [web-search]",
      "start: a",
      "nodes:",
      "  a: { id: a, type: llm, prompt: p, tools: ['mcp:web-search', 'mcp:code-search'], next: z }",
      "  z: { id: z, type: end }",
    ].join("\n");
    const spec = parseGraphText(text, "x/graph.yaml");
    assert.deepEqual(spec.tools, ["web_lookup"]);
    // The original's URL readers are web_fetch (one `url` argument, as theirs).
    const fetching = parseGraphText(
      text.replace("[web_lookup.sh]", "[fetch_url_via_curl.sh, fetch_url_via_jina.sh, fs_cat.sh]"),
      "x/graph.yaml",
    );
    assert.deepEqual(fetching.tools, ["web_fetch", "fs_cat"]);
    assert.throws(
      () => validateGraph(spec, "x/graph.yaml", { toolExists: (t) => t === "fs_read" }),
      (e: Error) => {
        assert.match(e.message, /^x\/graph\.yaml:/);
        assert.match(e.message, /tools: no tool "web_lookup" in this workspace .*plugin tool/);
        assert.match(
          e.message,
          /nodes\.a\.tools: "mcp:code-search" is not in the graph's tools or mcp_servers/,
        );
        assert.doesNotMatch(e.message, /"mcp:web-search"/);
        return true;
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("original shapes: a config agent's display name, fs_cat, ast_grep and tools.sh", async () => {
  await withAgents(async (env, cwd) => {
    const reg = await loadAgentRegistry({ configDir: env.configDir, cwd });
    const demo = reg.entry("demo")!;
    assert.equal(demo.error, undefined);
    assert.equal(demo.name, "demo");
    assert.equal(demo.displayName, "Demo");
    assert.deepEqual(reg.resolve("demo").tools, ["execute_command", "fs_cat", "ast_grep"]);
    assert.ok(!demo.warnings.some((w) => /ast_grep|fs_cat/.test(w)), demo.warnings.join("\n"));
    assert.ok(
      demo.warnings.some((w) =>
        w.startsWith(`agent file ${join(env.configDir, "agents/demo/tools.sh")}: agent-only`)
      ),
    );
    // Graph agents: the folder is the id, the name is shown.
    const lib = reg.resolve("librarian-like");
    assert.equal(lib.graph?.spec.name, "Librarian Like");
    assert.deepEqual(lib.mcp_servers, ["web-search", "code-search"]);
  });
});

Deno.test("original shapes: a scripted run of step-like drives coder-like through its fix loop", async () => {
  const call = (name: string, args: Record<string, unknown>) => ({
    tool_calls: [{ name, arguments: args }],
  });
  const submit = (args: Record<string, unknown>) => call("submit_result", args);
  const write = (content: string) => call("fs_write", { path: "ok.txt", content });
  const server = await startModelServer({
    script: [
      call("fs_cat", { path: "src/app.ts" }), // step-like orient reads the whole file
      submit({ implementation_brief: "Write ok.txt holding the line ok." }),
      submit({ plan_summary: "write ok.txt", target_file: "ok.txt" }), // coder-like plan
      call("ast_grep", { pattern: "greet($X)", language: "typescript" }), // implement, first try
      write("not yet\n"),
      { text: "written" },
      write("ok\n"), // implement again, after the fix gate
      { text: "fixed" },
    ],
  });
  try {
    await withAgents(async (env, cwd) => {
      await Deno.mkdir(join(cwd, "src"));
      const app =
        'import { greet } from "./greet.ts";\ngreet(\n  "world",\n);\n// greet(x) in a comment\n';
      await Deno.writeTextFile(join(cwd, "src/app.ts"), app);
      // The real ast-grep program on PATH; ast_grep runs it inside the OS sandbox.
      const path = `${await astGrepDir()}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`;
      const r = await runCoyote(
        ["-a", "step-like", "--headless", "--output-format", "json", "run the next step"],
        { cwd, env: childEnv(env, { baseURL: server.baseURL, extra: { PATH: path } }) },
      );
      assert.equal(r.code, 0, r.stderr);
      const text = String(JSON.parse(r.stdout).text);
      assert.equal(text.trim(), "STEP_COMPLETE\nStep 1 (Write ok.txt) done.");
      assert.equal(await Deno.readTextFile(join(cwd, "ok.txt")), "ok\n");
      assert.equal(server.requests.length, 8);
      const tools = (i: number) =>
        ((server.requests[i].body as { tools?: { function: { name: string } }[] }).tools ?? [])
          .map((t) => t.function.name).sort();
      assert.deepEqual(tools(0), ["fs_cat", "fs_ls", "submit_result"]);
      assert.deepEqual(tools(3), ["ast_grep", "fs_cat", "fs_write"]);
      // fs_cat gave the file as it is; ast_grep matched the call over three lines, not the comment.
      const result = (i: number) => {
        const msgs = requestMessages(server.requests[i]) as { role: string; content: unknown }[];
        return String(msgs.filter((m) => m.role === "tool").at(-1)?.content);
      };
      assert.equal(result(1), app);
      assert.equal(result(4), "src/app.ts:2:greet( (+2 lines)");
      // The fix gate's instructions reached the second implement turn.
      const second = JSON.stringify(requestMessages(server.requests[6]));
      assert.match(second, /Fix: expected the line ok in ok\.txt/);
      assert.doesNotMatch(JSON.stringify(requestMessages(server.requests[3])), /Fix:/);
    });
  } finally {
    await server.close();
  }
});

Deno.test("original shapes: agents show names a function-script tool and shows the display name", async () => {
  await withAgents(async (env, cwd) => {
    const dir = join(env.configDir, "agents", "finder");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(
      join(dir, "config.yaml"),
      "description: finds\nglobal_tools: [fs_read.sh, web_lookup.sh]\ninstructions: find\n",
    );
    const finder = await runCoyote(["agents", "show", "finder"], { cwd, env: childEnv(env) });
    assert.equal(finder.code, 0, finder.stderr);
    assert.match(
      finder.stderr,
      new RegExp(
        `coyote: warning: agent file ${
          join(dir, "config.yaml")
        }: tools/global_tools: "web_lookup" is no built-in tool.*plugin tool`,
      ),
    );
    assert.doesNotMatch(finder.stderr, /"fs_read" is no built-in tool/);
    const demo = await runCoyote(["agents", "show", "demo"], { cwd, env: childEnv(env) });
    assert.equal(demo.code, 0, demo.stderr);
    assert.match(demo.stdout, /^# demo \(Demo\): llm agent from user /);
  });
});
