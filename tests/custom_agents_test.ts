/**
 * Coordinators delegate to custom agents (`spawn_custom_agents`, core/supervisor/spawnable.ts),
 * in process against the scripted model server: the built-in `sisyphus` lists and spawns a
 * `.claude/agents/reviewer.md` agent of a trusted workspace; the same file in an untrusted
 * workspace is refused with the reason and `coyote trust`, while the user's own agents stay
 * spawnable; a plugin's agent must be named; a graph agent of the workspace runs too; a custom
 * child never gets more tools or policy than its parent.
 * @module
 */
import assert from "node:assert/strict";
import { loadAgentRegistry } from "../core/agents/registry.ts";
import type { RecordedRequest } from "./support/model_server.ts";
import {
  agent,
  agentEnv,
  agentOf,
  collectAll,
  type Json,
  messages,
  nth,
  spawn,
  toolResults,
} from "./support/scripted_agents.ts";

const REVIEWER = "---\nname: reviewer\ndescription: Reviews the staged change for bugs\n" +
  "tools: Read, Grep, Glob, Bash\nmodel: inherit\n---\n\nREVIEWER agent from .claude/agents.\n";
const HELPER = "---\nname: helper\ndescription: The user's own release-notes writer\n---\n" +
  "HELPER agent from the user's config dir.\n";
const TALLY_GRAPH =
  "name: tally\ndescription: counts the prompt\nstart: s\nnodes:\n  s: { type: script, script: scripts/s.ts, outputs: [n], next: z }\n  z: { type: end, output: 'tally says {{n}}' }\n";
const TALLY_SCRIPT = "export default (state) => ({ n: state.initial_prompt.length });\n";

const FILES = {
  ".claude/agents/reviewer.md": REVIEWER,
  ".coyote/agents/tally/graph.yaml": TALLY_GRAPH,
  ".coyote/agents/tally/scripts/s.ts": TALLY_SCRIPT,
};

/** Tool results the request answers, counted over the whole conversation. */
const toolCount = (req: RecordedRequest) => messages(req).filter((m) => m.role === "tool").length;

function toolNames(req: RecordedRequest): string[] {
  return ((req.body as Json).tools ?? []).map((t: Json) => t.function.name);
}

Deno.test("custom agents: sisyphus lists and spawns a .claude/agents reviewer of a trusted workspace", async () => {
  const e = await agentEnv([], (req) => {
    if (agentOf(req) === "REVIEWER") return { text: "REVIEW_COMPLETE: looks fine" };
    switch (toolCount(req)) {
      case 0:
        return { tool_calls: [{ name: "agent__list", arguments: {} }] };
      case 1:
        return { tool_calls: [spawn("reviewer", "review the staged change")] };
      case 2:
        return { tool_calls: [collectAll] };
      default:
        return { text: "done" };
    }
  }, { files: FILES, trusted: true, prefix: "coyote-custom-" });
  try {
    assert.equal(e.ws.agents.get("sisyphus")?.spawn_custom_agents, true);
    const s = await e.open("sisyphus");
    const { ended } = await e.run(s, "review my change");
    const lead = e.requests.filter((r) => agentOf(r) !== "REVIEWER");
    const [list] = toolResults(lead[1]);
    assert.match(list, /^- reviewer \(custom\): Reviews the staged change for bugs$/m);
    assert.match(list, /^- tally \(custom\): counts the prompt$/m);
    assert.match(list, /^- explore: /m, "the built-in specialists are still listed");
    assert.doesNotMatch(list, /Not spawnable/);
    assert.match(toolResults(lead[2]).at(-1)!, /"status":"running"/);
    assert.match(toolResults(lead[3]).at(-1)!, /completed:\nREVIEW_COMPLETE: looks fine/);
    assert.deepEqual(ended.agents?.map((a) => [a.agent, a.status]), [["reviewer", "completed"]]);
  } finally {
    await e.close();
  }
});

Deno.test("custom agents: a custom child is narrowed to its parent's tools and policy; a workspace graph agent runs; a plugin agent must be named", async () => {
  const e = await agentEnv([
    agent("LEAD", {
      can_spawn_agents: true,
      spawnable_agents: ["explore"],
      spawn_custom_agents: true,
      tools: ["fs_read", "fs_grep"],
    }),
    agent("NAMER", { can_spawn_agents: true, spawnable_agents: ["plug"] }),
  ], (req) => {
    const who = agentOf(req);
    if (who === "REVIEWER") {
      if (nth(e.requests, req) === 1) {
        return {
          tool_calls: [
            { name: "execute_command", arguments: { command: "echo widened" } },
            { name: "fs_read", arguments: { path: "secret.txt" } },
          ],
        };
      }
      return { text: toolResults(req).join(" | ") };
    }
    if (who === "PLUG") return { text: "plug ran" };
    if (who === "NAMER") {
      if (toolCount(req) === 0) return { tool_calls: [spawn("plug", "x")] };
      if (toolCount(req) === 1) return { tool_calls: [collectAll] };
      return { text: "namer done" };
    }
    switch (toolCount(req)) {
      case 0:
        return {
          tool_calls: [
            spawn("reviewer", "review"),
            spawn("tally", "12345"),
            spawn("plug", "not named"),
          ],
        };
      case 3:
        return { tool_calls: [collectAll] };
      default:
        return { text: "ok" };
    }
  }, { files: FILES, trusted: true, prefix: "coyote-custom-" });
  try {
    e.ws.agents.register(agent("PLUG"), "plugin");
    await Deno.writeTextFile(`${e.cwd}/secret.txt`, "SECRET");
    const lead = await e.open("lead");
    lead.addRule("deny", "Read(secret.txt)");
    const { ended } = await e.run(lead, "go");
    const leadReqs = e.requests.filter((r) => agentOf(r) === "LEAD");
    const spawned = toolResults(leadReqs[1]);
    assert.match(spawned[0], /"status":"running"/);
    assert.match(spawned[1], /"status":"running"/);
    assert.match(
      spawned[2],
      /^error: agent lead may not spawn "plug"; spawnable_agents: explore, plus the user's and the workspace's own agents \(a plugin's agent must be named\)/,
    );
    const collected = toolResults(leadReqs[2]).at(-1)!;
    // The reviewer asked for Bash: its parent has no execute_command, and the parent's deny rule
    // holds for it.
    const reviewerTools = toolNames(e.requests.find((r) => agentOf(r) === "REVIEWER")!);
    const leadTools = toolNames(leadReqs[0]);
    assert.ok(reviewerTools.every((t) => leadTools.includes(t)), `${reviewerTools} ⊄ ${leadTools}`);
    assert.ok(reviewerTools.includes("fs_read") && reviewerTools.includes("fs_grep"));
    assert.ok(!reviewerTools.includes("execute_command") && !reviewerTools.includes("fs_glob"));
    assert.match(collected, /unknown tool "execute_command"/);
    assert.match(collected, /denied by policy/);
    assert.doesNotMatch(collected, /SECRET|widened/);
    assert.match(collected, /tally-[0-9a-f]{8} completed:\ntally says 5/);
    assert.deepEqual(
      ended.agents?.map((a) => [a.agent, a.status]).sort(),
      [["reviewer", "completed"], ["tally", "completed"]],
    );
    // Named in spawnable_agents, the plugin's agent runs.
    const namer = await e.open("namer");
    const r2 = await e.run(namer, "go");
    assert.deepEqual(r2.ended.agents?.map((a) => [a.agent, a.status]), [["plug", "completed"]]);
  } finally {
    await e.close();
  }
});

Deno.test("custom agents: an untrusted workspace's agents are refused with the reason; the user's own agents are spawnable", async () => {
  const e = await agentEnv([], (req) => {
    if (agentOf(req) === "HELPER") return { text: "helper wrote the notes" };
    switch (toolCount(req)) {
      case 0:
        return {
          tool_calls: [
            { name: "agent__list", arguments: {} },
            spawn("reviewer", "review"),
            spawn("tally", "count"),
            spawn("helper", "write notes"),
          ],
        };
      case 4:
        return { tool_calls: [collectAll] };
      default:
        return { text: "done" };
    }
  }, {
    files: FILES,
    userFiles: { "agents/helper.md": HELPER },
    trusted: false,
    prefix: "coyote-custom-",
  });
  try {
    assert.equal(e.ws.trust.trusted, false);
    assert.ok(e.ws.agents.get("reviewer"), "the file is loaded (listed), only not spawnable");
    const s = await e.open("sisyphus");
    const { ended } = await e.run(s, "review and write notes");
    const lead = e.requests.filter((r) => agentOf(r) !== "HELPER");
    const [list, reviewer, tally, helper] = toolResults(lead[1]);
    assert.match(list, /^- helper \(custom\): The user's own release-notes writer$/m);
    assert.doesNotMatch(list, /^- (reviewer|tally)/m);
    assert.match(
      list,
      /^Not spawnable until the user trusts this workspace \(coyote trust\): reviewer, tally$/m,
    );
    assert.match(
      reviewer,
      /^error: agent sisyphus may not spawn "reviewer": it is defined by this workspace \(.*\.claude\/agents\/reviewer\.md\), which is not trusted, and a repository's agent files are not run automatically; the user can trust the workspace with `coyote trust`/,
    );
    assert.match(tally, /^error: .*"tally": it is defined by this workspace .*graph\.yaml/);
    assert.match(helper, /"status":"running"/);
    assert.match(toolResults(lead[2]).at(-1)!, /helper wrote the notes/);
    assert.deepEqual(ended.agents?.map((a) => [a.agent, a.status]), [["helper", "completed"]]);
    assert.ok(!e.requests.some((r) => agentOf(r) === "REVIEWER"), "the reviewer never ran");
  } finally {
    await e.close();
  }
});

Deno.test("custom agents: spawn_custom_agents is validated with the file and the field", async () => {
  const e = await agentEnv([], () => ({ text: "" }), {
    files: {
      ".coyote/agents/bad/config.yaml":
        "description: d\ninstructions: i\ncan_spawn_agents: true\nspawn_custom_agents: yes please\n",
    },
    prefix: "coyote-custom-",
  });
  try {
    assert.match(
      e.ws.agents.entry("bad")!.error!,
      /agent file .*\.coyote\/agents\/bad\/config\.yaml: spawn_custom_agents: expected true or false/,
    );
  } finally {
    await e.close();
  }
});

Deno.test("custom agents: a plugin's spawn_custom_agents must be true or false", async () => {
  const dir = await Deno.makeTempDir({ prefix: "coyote-custom-" });
  try {
    const reg = await loadAgentRegistry({
      configDir: `${dir}/cfg`,
      cwd: dir,
      pluginAgents: [{
        plugin: "p",
        agent: {
          name: "boss",
          description: "d",
          instructions: "i",
          spawn_custom_agents: "yes" as unknown as boolean,
        },
      }, {
        plugin: "p",
        agent: { name: "ok", description: "d", instructions: "i", spawn_custom_agents: true },
      }],
    });
    assert.equal(
      reg.entry("boss")!.error,
      "agent file plugin:p: spawn_custom_agents: expected true or false",
    );
    assert.equal(reg.get("ok")?.spawn_custom_agents, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("custom agents: without a spawnable_agents list an untrusted workspace's agents are refused too; a list that names one allows it", async () => {
  const e = await agentEnv([
    agent("ANY", { can_spawn_agents: true }),
    agent("NAMER", { can_spawn_agents: true, spawnable_agents: ["reviewer"] }),
  ], (req) => {
    if (agentOf(req) === "REVIEWER") return { text: "reviewed" };
    switch (toolCount(req)) {
      case 0:
        return { tool_calls: [spawn("reviewer", "review")] };
      case 1:
        return { tool_calls: [collectAll] };
      default:
        return { text: "done" };
    }
  }, { files: FILES, trusted: false, source: "plugin", prefix: "coyote-custom-" });
  try {
    const any = await e.open("any");
    await e.run(any, "review it");
    const anyReqs = e.requests.filter((r) => agentOf(r) === "ANY");
    assert.match(
      toolResults(anyReqs[1])[0],
      /^error: agent any may not spawn "reviewer": it is defined by this workspace .*which is not trusted/,
    );
    assert.ok(!e.requests.some((r) => agentOf(r) === "REVIEWER"), "the reviewer never ran");

    const namer = await e.open("namer");
    const { ended } = await e.run(namer, "review it");
    assert.deepEqual(ended.agents?.map((a) => [a.agent, a.status]), [["reviewer", "completed"]]);
  } finally {
    await e.close();
  }
});
