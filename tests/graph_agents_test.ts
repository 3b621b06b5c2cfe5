/**
 * Graph agents as agents: a plugin contributes one through the SDK (`graph_yaml` +
 * `graph_files`); the step-runner resolves steps of a real `plans/` folder (no plan, all steps
 * complete, dependencies not met) as a headless subprocess; `--verbose` records the graph state
 * after each node in the transcript.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadAgentRegistry } from "../core/agents/registry.ts";
import { childEnv, makeCoyoteEnv, runCoyote } from "./support/run_coyote.ts";
import { startModelServer } from "./support/model_server.ts";

Deno.test("graph agents: a plugin contributes a graph agent through the SDK", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const reg = await loadAgentRegistry({
      configDir: join(dir, "cfg"),
      cwd: dir,
      pluginAgents: [{
        plugin: "flows",
        agent: {
          name: "tally",
          description: "counts",
          instructions: "",
          graph_yaml:
            "name: tally\ndescription: counts things\nstart: s\nnodes:\n  s: { type: script, script: scripts/s.ts, outputs: [n], next: z }\n  z: { type: end, output: '{{n}}' }\n",
          graph_files: { "scripts/s.ts": "export default () => ({ n: 1 });" },
        },
      }, {
        plugin: "flows",
        agent: {
          name: "broken-flow",
          description: "",
          instructions: "",
          graph_yaml:
            "name: broken-flow\nstart: s\nnodes:\n  s: { type: script, script: scripts/missing.ts, next: z }\n  z: { type: end }\n",
        },
      }],
    });
    const t = reg.resolve("tally");
    assert.equal(t.graph?.spec.start, "s");
    assert.equal(reg.entry("tally")!.kind, "graph");
    assert.equal(reg.entry("tally")!.source, "plugin");
    assert.match(
      reg.entry("broken-flow")!.error!,
      /nodes\.s\.script: no file "scripts\/missing\.ts" beside graph\.yaml/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function stepRunner(files: Record<string, string>) {
  const server = await startModelServer({ script: [] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-steps-" });
  try {
    for (const [p, text] of Object.entries(files)) {
      await Deno.mkdir(join(dir, p, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, p), text);
    }
    const r = await runCoyote([
      "-a",
      "step-runner",
      "--headless",
      "--output-format",
      "json",
      "next step",
    ], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.length, 0, "resolution needs no model");
    return String(JSON.parse(r.stdout).text);
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
}

const step = (n: number, status: string, deps = "[]") =>
  `---\nstep: ${n}\ntitle: Step ${n}\ndepends_on: ${deps}\nstatus: ${status}\n---\n## Objective\nx\n`;
const handoff = (n: number, result: string) =>
  `---\nstep: ${n}\ntitle: Step ${n}\nresult: ${result}\n---\n`;

Deno.test("step-runner: no plan, every step complete, and unmet dependencies end without the model", async () => {
  assert.match(
    await stepRunner({ "README.md": "no plans here" }),
    /^STEP_FAILED\n.*No plan repository: \.\/plans\/steps\/ does not exist\./s,
  );
  assert.equal(
    (await stepRunner({
      "plans/plan.md": "# plan",
      "plans/steps/01-a.md": step(1, "complete"),
      "plans/handoffs/01-a.md": handoff(1, "complete"),
    })).trim(),
    "STEP_COMPLETE\nAll 1 steps of ./plans are complete.",
  );
  assert.match(
    await stepRunner({
      "plans/plan.md": "# plan",
      "plans/steps/01-a.md": step(1, "complete"),
      "plans/handoffs/01-a.md": handoff(1, "partial"),
      "plans/steps/02-b.md": step(2, "pending", "[1]"),
    }),
    /^STEP_BLOCKED\nNo step can start: step 2 waits for 1 \(a dependency needs a handoff with result: complete\)\./,
  );
});

Deno.test("graph agents: --verbose records the state after each node in the transcript", async () => {
  const server = await startModelServer({ script: [] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir();
  try {
    const r = await runCoyote([
      "-a",
      "step-runner",
      "--headless",
      "--verbose",
      "--output-format",
      "json",
      "go",
    ], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const id = JSON.parse(r.stdout).session_id;
    const lines = (await Deno.readTextFile(join(env.dataDir, "sessions", `${id}.jsonl`))).trim()
      .split("\n");
    const snaps = lines.map((l) => JSON.parse(l)).filter((l) => l.type === "graph_state");
    assert.ok(snaps.length >= 2, `snapshots: ${snaps.length}`);
    assert.ok(JSON.stringify(snaps[0]).includes('"node":"resolve_step"'));
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("graph agents: agent__spawn runs a graph agent as a child and collects its answer", async () => {
  const server = await startModelServer({
    script: (req) => {
      const msgs = (req.body as { messages: { role: string; content: string | null }[] }).messages;
      const tools = msgs.filter((m) => m.role === "tool").length;
      if (tools === 0) {
        return {
          tool_calls: [{ name: "agent__spawn", arguments: { agent: "tally", prompt: "count it" } }],
        };
      }
      if (tools === 1) return { tool_calls: [{ name: "agent__collect", arguments: {} }] };
      const last = msgs.filter((m) => m.role === "tool").at(-1)!.content ?? "";
      return {
        text: `boss saw: ${last.includes("tally says 3") ? "tally says 3" : last.slice(0, 200)}`,
      };
    },
  });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-graph-spawn-" });
  try {
    await Deno.mkdir(join(dir, ".coyote/agents/tally/scripts"), { recursive: true });
    await Deno.mkdir(join(dir, ".coyote/agents/boss"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, ".coyote/agents/tally/graph.yaml"),
      "name: tally\ndescription: counts\nstart: s\nnodes:\n  s: { type: script, script: scripts/s.ts, outputs: [n], next: z }\n  z: { type: end, output: 'tally says {{n}}' }\n",
    );
    await Deno.writeTextFile(
      join(dir, ".coyote/agents/tally/scripts/s.ts"),
      "export default (state) => ({ n: state.initial_prompt.length - 5 });\n",
    );
    await Deno.writeTextFile(
      join(dir, ".coyote/agents/boss/config.yaml"),
      "name: boss\ndescription: spawns\ninstructions: delegate\ncan_spawn_agents: true\nspawnable_agents: [tally]\n",
    );
    const r = await runCoyote(["-a", "boss", "--headless", "--output-format", "json", "go"], {
      cwd: dir,
      env: childEnv(env, { baseURL: server.baseURL }),
    });
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.text, "boss saw: tally says 3");
    assert.equal(server.requests.length, 3, "the graph child made no model request");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("graph agents: an untrusted repository's graph scripts get none of the permissions they declare", async () => {
  const server = await startModelServer({ script: [] });
  const env = await makeCoyoteEnv();
  const dir = await Deno.makeTempDir({ prefix: "coyote-graph-trust-" });
  try {
    await Deno.mkdir(join(dir, ".coyote/agents/peek/scripts"), { recursive: true });
    await Deno.writeTextFile(join(dir, "note.txt"), "workspace note");
    await Deno.writeTextFile(
      join(dir, ".coyote/agents/peek/graph.yaml"),
      "name: peek\nstart: s\nnodes:\n  s: { type: script, script: scripts/s.ts, permissions: { read: ['.'] }, outputs: [t], next: z, fallback: no }\n  z: { type: end, output: 'read: {{t}}' }\n  no: { type: end, output: 'refused' }\n",
    );
    await Deno.writeTextFile(
      join(dir, ".coyote/agents/peek/scripts/s.ts"),
      `export default () => ({ t: Deno.readTextFileSync(${
        JSON.stringify(join(dir, "note.txt"))
      }) });\n`,
    );
    const run = async (...extra: string[]) => {
      const r = await runCoyote([
        "-a",
        "peek",
        "--headless",
        "--output-format",
        "json",
        ...extra,
        "go",
      ], {
        cwd: dir,
        env: childEnv(env, { baseURL: server.baseURL }),
      });
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout).text;
    };
    assert.equal(await run(), "refused");
    assert.equal(await run("--trust-workspace"), "read: workspace note");
  } finally {
    await server.close();
    await env.cleanup();
    await Deno.remove(dir, { recursive: true });
  }
});
