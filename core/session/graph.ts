/**
 * The runner choice of a session: an agent whose definition has a `graph` runs with the graph
 * engine (core/graph/runner.ts) instead of the LLM engine (core/engine/), which stays for a
 * later switch to an LLM agent. The graph engine (and its yaml/zod/JSON-Schema modules) loads
 * only when a graph agent runs.
 *
 * Here the graph's runner is wired to its session: the directory its commands and reads work in
 * (`project_dir`) and the guard judging them there, the tools its scripts may call and the
 * permissions they are granted, and agent nodes running sub-agents as child sessions (opened
 * through the session's `open` callback, each holding a slot of the tree's live-agent budget).
 * @module
 */
import { resolve } from "../util/path.ts";
import { isInside } from "../policy/rules.ts";
import type { AgentOrigin, AgentSpec, AnyTool, EnvelopeSink } from "../protocol/types.ts";
import type { Engine, PolicyLike } from "../engine/mod.ts";
import type { GraphRunner } from "../graph/runner.ts";
import { scriptGrant } from "../graph/grant.ts";
import { sandboxGuard } from "../policy/sandbox/mod.ts";
import type { Policy } from "../policy/policy.ts";
import { ToolRegistry } from "../tools/registry.ts";
import type { PreparedAgent } from "../agents/prepare.ts";
import type { TranscriptWriter } from "../transcript/writer.ts";
import type { Workspace } from "./workspace.ts";
import type { AgentSession, SessionOptions } from "./types.ts";
import { childVariables, type Lineage } from "./lineage.ts";

/** The tools a graph's scripts may call (core/graph/script.ts `ctx.exec` / `read` / `write`). */
const SCRIPT_TOOLS = ["execute_command", "fs_read", "fs_write"];

/** The session a graph runner is made for: its state at open and its live parts. */
export interface GraphSession {
  ws: Workspace;
  init: SessionOptions;
  /** The sub-agent's parent, when the session is one. */
  parent?: AgentSession;
  /** The agent the session opened with, and the name it was opened with. */
  first: AgentSpec;
  agentName: string;
  id: string;
  origin: AgentOrigin;
  /** The session's LLM engine (its current model, permission resolver and host services). */
  engine: Engine;
  transcript: TranscriptWriter;
  line: Lineage;
  /** The session's tool list, and the parent's tool names a child never exceeds. */
  all: AnyTool[];
  ceiling: ReadonlySet<string> | null;
  /** The session's policy before narrowing to an agent's tools. */
  basePolicy: PolicyLike;
  toolsOf(p: PreparedAgent): AnyTool[];
  policyFor(r: ToolRegistry): PolicyLike;
  log(line: string): void;
  /** The session itself (the parent of agent nodes' children). */
  session(): AgentSession;
  /** The running turn's sink (agent nodes' children's events flow into it). */
  sink(): EnvelopeSink | null;
  /** Opens a child session (core/session/conversation.ts `openSession` on the workspace). */
  open(opts: SessionOptions): Promise<AgentSession>;
}

/** The session's graph runner factory: a runner for a graph agent, null for any other. */
export function graphRunnerFactory(
  c: GraphSession,
): (a: AgentSpec, p: PreparedAgent) => Promise<GraphRunner | null> {
  const {
    ws,
    init,
    parent,
    first,
    agentName,
    id,
    origin,
    engine,
    transcript,
    line,
    all,
    ceiling,
    basePolicy,
    toolsOf,
    policyFor,
    log,
  } = c;
  const app = ws.app;
  const cwd = ws.cwd;
  // A graph's `project_dir` variable (`--agent-variable project_dir DIR`, like `-C DIR`) is the
  // directory its commands and reads work in; the guard judges them against that directory.
  const graphCwd = (p: PreparedAgent) => {
    const d = p.variables.project_dir;
    return d && d !== "." ? resolve(cwd, d) : cwd;
  };
  // Only the user's own `--agent-variable project_dir` moves the guard's workspace (like `-C`);
  // a definition's default (a cloned repository's graph may declare `default: "/"` or a symlink
  // leading out) may only narrow it to a folder inside the workspace, judged by real paths.
  const graphPolicy = (p: PreparedAgent, own: PolicyLike): PolicyLike => {
    const dir = graphCwd(p);
    if (dir === cwd || parent) return own;
    // The user's values belong to the agent they started with: after a switch to another graph
    // agent its own project_dir default is a definition's, not the user's.
    const fromUser = p.definition.name === first.name && agentName === first.name &&
      app.agentVariables?.project_dir !== undefined;
    if (!fromUser) {
      const realOf = (x: string) => {
        try {
          return Deno.realPathSync(x);
        } catch {
          return undefined;
        }
      };
      const [d, w] = [realOf(dir), realOf(cwd)];
      if (!d || !w || !isInside(d, w)) return own;
    }
    // The session's own rules (added during the session) apply there too.
    let seen = -1;
    let moved: Policy;
    const at = () => {
      if (line.guard.rules().length !== seen || moved.mode !== line.guard.mode) {
        seen = line.guard.rules().length;
        moved = line.guard.forWorkspace(dir);
      }
      return moved;
    };
    const inDir: PolicyLike = {
      evaluate: (access) => at().evaluate(access),
      addRule: (d, r, src) => line.guard.addRule(d, r, src),
    };
    // One rule for every path that runs a command: with the OS sandbox on, a default `ask` for a
    // command is auto-allowed here as for the session's own commands (a graph's declared checks,
    // e.g. the adversary's verification commands; issue 17).
    const status = c.session().commandSandbox?.status;
    return status ? sandboxGuard(inDir, status, () => line.guard.mode) : inDir;
  };
  return async (a: AgentSpec, p: PreparedAgent): Promise<GraphRunner | null> =>
    a.graph
      ? new (await import("../graph/runner.ts")).GraphRunner({
        spec: a.graph.spec,
        dir: a.graph.dir,
        files: a.graph.files,
        sessionId: id,
        cwd: graphCwd(p),
        client: ws.client,
        model: a.graph.spec.model ?? engine.opts.model,
        tools: toolsOf(p),
        policy: graphPolicy(p, policyFor(new ToolRegistry(toolsOf(p)))),
        scriptTools: all.filter((t) =>
          SCRIPT_TOOLS.includes(t.name) && (!ceiling || ceiling.has(t.name))
        ),
        scriptPolicy: graphPolicy(p, basePolicy),
        permission: engine.opts.permission,
        host: engine.opts.host,
        origin,
        variables: { ...p.variables, ...(p.variables.project_dir ? { project_dir: "." } : {}) },
        transcript,
        log,
        snapshots: app.verbose,
        // The session's checkpoint before the turn's first change (core/session/checkpoints/).
        beforeChange: async (name) => await engine.opts.beforeChange?.(name),
        // Permissions a script declares are granted (∩ policy) only to graphs a user installed
        // or a trusted workspace ships; an untrusted repository's scripts get none.
        // A sub-agent graph's scripts also get no permission of a kind its parent's tools cannot
        // exercise (a child is never wider than its parent): read needs fs_read, write fs_write,
        // net web_fetch, run and env execute_command.
        scriptGrant: (declared) => {
          if (a.source === "workspace" && !ws.trust.trusted) return "none";
          let bounded = declared;
          if (ceiling && declared) {
            const needs = {
              read: "fs_read",
              write: "fs_write",
              net: "web_fetch",
              run: "execute_command",
              env: "execute_command",
            } as const;
            bounded = Object.fromEntries(
              Object.entries(declared).filter(([k]) =>
                ceiling.has(needs[k as keyof typeof needs] ?? "")
              ),
            );
          }
          // Declared ∩ the configured policy ∩ the session's (its rules only narrow).
          return scriptGrant(ws.newPolicy(), line.guard, bounded, `graph ${a.name}`);
        },
        spawn: async (req, signal) => {
          // A node's child holds a slot of the tree's live-agent budget like a spawned one.
          const slot = line.tree.acquire();
          if ("refused" in slot) throw new Error(slot.refused);
          let child: AgentSession;
          try {
            child = await c.open({
              permission: init.permission,
              host: init.host,
              agent: req.agent,
              parent: { session: c.session(), toolCallId: req.toolCallId },
              ...childVariables(ws, ws.agents.get(req.agent)),
            });
          } catch (e) {
            slot.release();
            throw e;
          }
          try {
            const r = await child.prompt(req.prompt, {
              signal,
              onEvent: (env) => c.sink()?.(env),
            });
            if (r.error) throw new Error(`agent ${req.agent} failed: ${r.error.message}`);
            if (r.stopReason === "cancelled") throw signal.reason ?? new Error("cancelled");
            return r.text;
          } finally {
            await child.close();
            slot.release();
          }
        },
      })
      : null;
}
