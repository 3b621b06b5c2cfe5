/**
 * Switching the agent of a running session (REPL `/agent`, ACP's `agent` config option): the
 * user's `--agent-variable` values belong to the agent the session started with — switching back
 * to it keeps them (it used to fail with "needs variable …; pass --agent-variable", which a REPL
 * user cannot do) — and never to another agent: a workspace graph switched to later cannot pass
 * its own `project_dir` default off as the user's and move the guard out of the workspace.
 * In process (core/session/conversation.ts `openSession`) against the scripted model server.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { acquireWorkspace } from "../core/session/workspace.ts";
import { openSession } from "../core/session/conversation.ts";
import type { EventEnvelope } from "../core/protocol/types.ts";
import { startModelServer } from "./support/model_server.ts";
import { testApp } from "./support/fixtures.ts";

async function files(root: string, map: Record<string, string>) {
  for (const [path, text] of Object.entries(map)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
}

Deno.test("agent switch: back to the first agent keeps the user's variables; another graph's project_dir default stays a default", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "coyote-switch-" }));
  const cwd = join(root, "ws");
  const outside = join(root, "outside");
  await Deno.mkdir(join(cwd, "sub"), { recursive: true });
  await Deno.mkdir(outside);
  await new Deno.Command("git", { args: ["init", "-q", cwd] }).output();
  const graph = (name: string, dir: string) =>
    `name: ${name}\ndescription: g\ntools: [fs_read, fs_write]\n` +
    `variables:\n  - {name: project_dir, default: "${dir}"}\n` +
    `start: a\nnodes:\n  a: {type: script, script: a.ts, next: done}\n  done: {type: end, output: "{{w}}"}\n`;
  const script = (target: string) =>
    `export default async (state, ctx) => {
  try { await ctx.write(${JSON.stringify(target)}, "x"); return { w: "written" }; }
  catch (e) { return { w: "refused: " + e.message }; }
};
`;
  await files(cwd, {
    ".coyote/agents/checker/config.yaml":
      "description: c\nvariables:\n  - {name: target}\ninstructions: CHECK {{target}}\n",
    ".coyote/agents/mine/graph.yaml": graph("mine", "."),
    ".coyote/agents/mine/a.ts": script(join(cwd, "sub", "mine.txt")),
    ".coyote/agents/helper/graph.yaml": graph("helper", "/"),
    ".coyote/agents/helper/a.ts": script(join(outside, "helper.txt")),
  });
  const server = await startModelServer({ script: [{ text: "one" }, { text: "two" }] });
  const open = async (agent: string, vars: Record<string, string>) => {
    const app = testApp({ cwd, configDir: join(root, "config"), dataDir: join(root, "data") }, {
      baseURL: server.baseURL,
      apiKey: "k",
      model: "scripted",
      agent,
      agentVariables: vars,
    });
    const ws = await acquireWorkspace(app, { cwd, log: () => {} });
    const s = await openSession(ws, { permission: () => Promise.resolve("reject_once") });
    return { ws, s };
  };
  const run = async (s: Awaited<ReturnType<typeof open>>["s"], prompt: string) => {
    const events: EventEnvelope[] = [];
    return await s.prompt(prompt, { onEvent: (e) => events.push(e) });
  };
  try {
    // 1. checker (target given) → coyote → checker: the variable is still there.
    const a = await open("checker", { target: "src/net.ts" });
    try {
      a.s.agent = "coyote";
      a.s.agent = "checker";
      await run(a.s, "go");
      const sys = JSON.stringify(server.requests.at(-1)!.body);
      assert.match(sys, /CHECK src\/net\.ts/);
    } finally {
      await a.s.close();
      await a.ws.release();
    }

    // 2. Started as graph `mine` with the user's project_dir; switched to `helper`, whose
    // project_dir default is "/": its write outside the workspace is judged against the
    // workspace (asks → refused here), not allowed as if the user had moved it.
    const b = await open("mine", { project_dir: "sub" });
    try {
      b.s.agent = "helper";
      const r = await run(b.s, "go");
      assert.match(r.text, /refused/, r.text);
      await assert.rejects(Deno.lstat(join(outside, "helper.txt")));
    } finally {
      await b.s.close();
      await b.ws.release();
    }
  } finally {
    await server.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
