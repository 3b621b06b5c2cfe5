/**
 * The `agent__*` tools of an agent with `can_spawn_agents` (issue 7 §3):
 * `agent__spawn {agent, prompt, worktree?}` → `{id}` at once (`worktree`: the child works in its
 * own git worktree, core/supervisor/worktree.ts); `agent__check {id}`;
 * `agent__collect {id?, timeout_ms?}` (one, or every uncollected child); `agent__cancel {id}`
 * (cascades); `agent__send {agent_id, message}` (a follow-up to an ended child, in its same
 * session: core/supervisor/supervisor.ts `send`); `agent__list` (this turn's children and the
 * agents that may be spawned, each with its description, custom ones marked —
 * core/supervisor/spawnable.ts).
 * A refused spawn or an unknown id is a tool error that says why.
 * @module
 */
import { builtinInputs } from "../tools/lazy.ts";
import type { SUPERVISOR_INPUTS } from "./inputs.ts";
import { defineTool } from "../../sdk/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import { type ChildRun, SpawnRefused, type Supervisor } from "./supervisor.ts";
import { DEFAULT_COLLECT_TIMEOUT_MS } from "./limits.ts";
import { isCustom, spawnableAgents } from "./spawnable.ts";

/** Names of the supervisor tools. */
export const SUPERVISOR_TOOLS = [
  "agent__spawn",
  "agent__check",
  "agent__collect",
  "agent__cancel",
  "agent__send",
  "agent__list",
] as const;

/** The generated JSON Schemas of the tools (core/tools/lazy.ts), typed by ./inputs.ts. */
const agentInput = builtinInputs<typeof SUPERVISOR_INPUTS>("supervisor");

function refused(e: unknown) {
  if (e instanceof SpawnRefused) return { content: `error: ${e.message}`, isError: true };
  throw e;
}

function rawRun(s: Supervisor, r: ChildRun) {
  return { ...s.summary(r), collected: r.collected };
}

/** The tools, bound to one session's supervisor. */
export function supervisorTools(sup: () => Supervisor): AnyTool[] {
  const spawn = defineTool({
    name: "agent__spawn",
    description:
      "Start a sub-agent on a task. Returns its id at once; it runs in parallel with you and with other sub-agents. Give it a complete, self-contained prompt. Collect its result with agent__collect before you answer.",
    input: agentInput("agent__spawn"),
    kind: "other",
    concurrency: "parallel",
    title: (i) => `Spawn ${i.agent}: ${i.prompt.split("\n")[0].slice(0, 80)}`,
    async run(i, ctx) {
      try {
        const s = sup();
        const gate = await s.gateSpawn(i.agent);
        if (gate) return { content: `error: ${gate}`, isError: true };
        const r = s.spawn(i.agent, i.prompt, ctx.toolCallId, i.worktree);
        s.gateSpawned(r);
        return {
          content: JSON.stringify({ id: r.id, status: r.status }),
          rawOutput: { id: r.id, agent: r.agent, status: r.status },
        };
      } catch (e) {
        return refused(e);
      }
    },
  });
  const check = defineTool({
    name: "agent__check",
    description:
      "Status of a sub-agent (queued, running, completed, failed, cancelled); its result when it has ended.",
    input: agentInput("agent__check"),
    kind: "read",
    readOnly: true,
    title: (i) => `Check ${i.id}`,
    run(i) {
      try {
        const s = sup();
        const r = s.check(i.id);
        return { content: s.resultText(r), rawOutput: rawRun(s, r) };
      } catch (e) {
        return refused(e);
      }
    },
  });
  const collect = defineTool({
    name: "agent__collect",
    description:
      "Wait for a sub-agent's result (with id), or for every sub-agent not yet collected (without id). Returns when they ended or after timeout_ms.",
    input: agentInput("agent__collect"),
    kind: "other",
    concurrency: "serial",
    title: (i) => (i.id ? `Collect ${i.id}` : "Collect sub-agents"),
    async run(i, ctx) {
      try {
        const s = sup();
        const runs = await s.collect(i.id, i.timeout_ms ?? DEFAULT_COLLECT_TIMEOUT_MS, ctx.signal);
        if (!runs.length) return { content: "no sub-agents to collect" };
        const notes = await s.gateCollected(runs);
        return {
          content: runs.map((r) => s.resultText(r)).join("\n\n---\n\n") + notes,
          rawOutput: { agents: runs.map((r) => rawRun(s, r)) },
        };
      } catch (e) {
        return refused(e);
      }
    },
  });
  const cancel = defineTool({
    name: "agent__cancel",
    description: "Cancel a sub-agent (and the sub-agents it started).",
    input: agentInput("agent__cancel"),
    kind: "other",
    concurrency: "serial",
    title: (i) => `Cancel ${i.id}`,
    async run(i) {
      try {
        const s = sup();
        const r = await s.cancel(i.id);
        return { content: `${r.id}: ${r.status}`, rawOutput: rawRun(s, r) };
      } catch (e) {
        return refused(e);
      }
    },
  });
  const send = defineTool({
    name: "agent__send",
    description:
      "Send a follow-up message to a sub-agent that has ended (completed or failed): it continues in the same conversation, with everything it did and said so far, e.g. to fix what a reviewer found. Returns at once; collect its new result with agent__collect.",
    input: agentInput("agent__send"),
    kind: "other",
    concurrency: "serial",
    title: (i) => `Send to ${i.agent_id}: ${i.message.split("\n")[0].slice(0, 80)}`,
    run(i, ctx) {
      try {
        const s = sup();
        const r = s.send(i.agent_id, i.message, ctx.toolCallId);
        return {
          content: JSON.stringify({ id: r.id, status: r.status }),
          rawOutput: { id: r.id, agent: r.agent, status: r.status },
        };
      } catch (e) {
        return refused(e);
      }
    },
  });
  const list = defineTool({
    name: "agent__list",
    description: "Sub-agents of this turn with their status, and the agents you may spawn.",
    input: agentInput("agent__list"),
    kind: "read",
    readOnly: true,
    title: () => "List sub-agents",
    run() {
      const s = sup();
      const owner = s.host.owner();
      const { spawnable: agents, untrusted } = spawnableAgents(
        { ...owner.definition, name: owner.agent },
        owner.workspace.agents,
        owner.workspace.trust.trusted,
      );
      const runs = [...s.runs.values()];
      const lines = [
        runs.length ? "Sub-agents:" : "No sub-agents spawned in this turn.",
        ...runs.map((r) =>
          `- ${r.id} (${r.agent}): ${r.status}${r.collected ? ", collected" : ""}${
            r.activity && r.status === "running" ? ` — ${r.activity}` : ""
          }`
        ),
        "Agents you may spawn:",
        ...agents.map((a) =>
          `- ${a.name}${isCustom(a.source) ? " (custom)" : ""}: ${a.description}`
        ),
        ...(untrusted.length
          ? [
            `Not spawnable until the user trusts this workspace (coyote trust): ${
              untrusted.map((a) => a.name).join(", ")
            }`,
          ]
          : []),
      ];
      return {
        content: lines.join("\n"),
        rawOutput: {
          running: runs.map((r) => rawRun(s, r)),
          available: agents.map((a) => a.name),
          ...(untrusted.length ? { untrusted: untrusted.map((a) => a.name) } : {}),
        },
      };
    },
  });
  return [spawn, check, collect, cancel, send, list];
}
