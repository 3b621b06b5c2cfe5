/**
 * A Session: one conversation on a {@link Workspace} — its agent, model, policy, tool set,
 * transcript and runner (the LLM engine). `prompt` runs one turn and delivers every event
 * wrapped in the {@link EventEnvelope} (`session_id`, `agent`, `agent_id`, `parent_id?`,
 * `seq`), the one stream headless, ACP and text mode render from.
 *
 * A sub-agent is a Session opened with `parent`: it shares the parent's workspace, its policy
 * is the parent's session policy narrowed to the child's tools (never widened: the child's
 * tools are its definition's tools intersected with the parent's), its permission requests and
 * questions go to the root frontend, and its events flow into the parent's stream with
 * `parent_id` set.
 * @module
 */
import { resolve } from "node:path";
import { isInside } from "../policy/rules.ts";
import type { HostServices } from "../../sdk/mod.ts";
import type {
  AgentOrigin,
  AgentSpec,
  AnyTool,
  EngineEvent,
  EnvelopeSink,
  EventEnvelope,
  HostFactory,
  PermissionResolver,
  PromptInput,
  SessionEvent,
  TurnEndedEvent,
  TurnResult,
} from "../protocol/types.ts";
import type { PlanItem } from "../../sdk/mod.ts";
import type { McpConnection, McpServerSpec } from "../extensions/mcp/mod.ts";
import { Engine, type PolicyLike } from "../engine/mod.ts";
import type { GraphRunner } from "../graph/runner.ts";
import { scriptGrant } from "../graph/grant.ts";
import type { Policy } from "../policy/policy.ts";
import { DEFAULT_MAX_BLOCKS, StopHookGate } from "../extensions/hooks/stop.ts";
import type { CompactionResult } from "../engine/compact.ts";
import type { SkillState } from "../extensions/skills/tools.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { selectTools } from "../agents/resolve.ts";
import { prepareAgent, type PreparedAgent } from "../agents/prepare.ts";
import { newSessionId, transcriptPath } from "../transcript/store.ts";
import { TranscriptWriter } from "../transcript/writer.ts";
import { loadSession } from "../transcript/load.ts";
import { UsageError, type Workspace } from "./workspace.ts";
import { DEFAULT_AGENT } from "../../agents/mod.ts";
import { addUsage, Supervisor } from "../supervisor/supervisor.ts";
import { supervisorTools } from "../supervisor/tools.ts";
import { escalatingHost, escalatingPermission } from "../supervisor/escalation.ts";
import { limitsOf } from "../supervisor/limits.ts";
import { LiveAgentBudget } from "../supervisor/tree.ts";
import {
  CommandSandbox,
  DEFAULT_SANDBOX,
  guardForcedAllow,
  sandboxGuard,
  type SandboxStatus,
} from "../policy/sandbox/mod.ts";
import { executeCommandTool, makeExecuteCommandTool } from "../../plugins/exec/mod.ts";
import { signalTree } from "../../plugins/exec/tree.ts";
import { modelInfo } from "../config/models.ts";
import { learnedWindow, learnServerWindows } from "../provider/model_metadata.ts";
import { capToolResults, toolOutputCap } from "../engine/context.ts";
import type { ChatMessage } from "../transcript/types.ts";

/** A loaded history with tool results capped for the model's window (core/engine/context.ts). */
function fitHistory(
  messages: ChatMessage[],
  info: { contextWindow: number; maxOutputTokens?: number },
): ChatMessage[] {
  return capToolResults(messages, toolOutputCap(info.contextWindow, info.maxOutputTokens));
}

/** Options for one session. */
export interface SessionOptions {
  /** Resolves guard `ask` decisions (headless: immediate reject). */
  permission: PermissionResolver;
  /** Client-side services (ACP fs / terminal, REPL askUser), or a factory binding them per call. */
  host?: HostServices | HostFactory;
  /** Extra MCP servers for this session (ACP `session/new` `mcpServers`). */
  mcpServers?: Record<string, McpServerSpec>;
  /** Continue this stored session (its history is loaded; nothing is re-executed). */
  resumeId?: string;
  /** Override agent / model for this session. */
  agent?: string;
  model?: string;
  /** Name for a new session (`--session NAME`); stored in the transcript header. */
  name?: string;
  /** Opens a sub-agent of this session (see the module doc). */
  parent?: { session: AgentSession; toolCallId: string; agentId?: string };
}

/** A live session. `prompt` runs one turn; only one turn at a time. */
export interface AgentSession {
  readonly id: string;
  readonly cwd: string;
  readonly workspace: Workspace;
  /** This agent instance (`<agent>-<8 hex>`), `agent_id` of its envelopes. */
  readonly agentId: string;
  /** Where this session sits in the agent tree. */
  readonly origin: AgentOrigin;
  /** Current model id. */
  model: string;
  /** Current agent name. */
  agent: string;
  /** The current agent's definition. */
  readonly definition: AgentSpec;
  /** The session's policy (children: the parent's, narrowed). */
  readonly policy: PolicyLike;
  /** The OS sandbox `execute_command` runs in (children share the root's; core/policy/sandbox/). */
  readonly commandSandbox?: CommandSandbox;
  /** Its status (stream-json `init`, docs/permissions.md "The OS sandbox"). */
  readonly sandbox?: SandboxStatus;
  /** Names of the tools this session may call (a child's are a subset of its parent's). */
  toolNames(): string[];
  /** The session's MCP servers (tools, prompts, resources, status), when it has any. */
  readonly mcp?: McpConnection;
  /**
   * Runs one turn: streams envelopes to `onEvent` (the session's own events and those of its
   * sub-agents), resolves when the turn ends. Never rejects for provider/tool faults: those
   * end the turn with `error` set. Rejects only if a turn is already running.
   */
  prompt(input: PromptInput, opts: { signal?: AbortSignal; onEvent: EnvelopeSink }): Promise<
    TurnResult
  >;
  /**
   * Summarises the older turns now, keeping the last ones and the todo list verbatim
   * (`/compact [focus]`, core/engine/compact.ts). Rejects while a turn runs.
   */
  compact(
    opts?: { focus?: string; signal?: AbortSignal; keep?: number },
  ): Promise<CompactionResult>;
  /** The current agent's live skill state (`/skill load|unload`; core/extensions/skills/tools.ts). */
  readonly skills: SkillState;
  /** Adds a policy rule for the rest of this session (ACP `allow_always`). */
  addRule(decision: "allow" | "deny", rule: string): void;
  /** Stored events of this session so far, in order (for ACP `session/load` replay). */
  history(): EngineEvent[];
  /** Ends the session: closes its transcript; the workspace is released by its owner. */
  close(): Promise<void>;
}

/** The tools a graph's scripts may call (core/graph/script.ts `ctx.exec` / `read` / `write`). */
const SCRIPT_TOOLS = ["execute_command", "fs_read", "fs_write"];

/** How long a turn waits for its cancelled sub-agents to end before it ends itself (ms). */
export const CHILD_SETTLE_MS = 10_000;

/** What a child session inherits from its parent beyond the public interface. */
interface Lineage {
  /** The root frontend's permission resolver and host services. */
  rootPermission: PermissionResolver;
  rootHost?: HostServices | HostFactory;
  /** Min of the ancestors' (and own) `max_agent_depth`. */
  depthCap: number;
  /** Min of the ancestors' `max_concurrent_agents` (the root: Infinity). */
  concurrencyCap: number;
  /** The tree's live-agent budget (the root's `max_live_agents`; core/supervisor/tree.ts). */
  tree: LiveAgentBudget;
  /**
   * The session's tool list (kept current as MCP servers change) and MCP connection: a
   * sub-agent uses its parent's as they are, so opening one waits on nothing.
   */
  tools: AnyTool[];
  mcp: McpConnection | null;
  /** The root session's policy object (its "always" answers add rules to it). */
  guard: Policy;
}
const lineage = new WeakMap<AgentSession, Lineage>();

/** The 8 hex digits of a root agent id: the random tail of its session id (stable on resume). */
function idTail(id: string): string {
  const hex = id.replace(/[^0-9a-f]/gi, "").toLowerCase();
  return hex.length >= 8 ? hex.slice(-8) : crypto.randomUUID().replace(/-/g, "").slice(0, 8);
}

/**
 * A policy narrowed to a tool set: tool accesses of tools outside the set are denied;
 * everything else is decided by the parent policy (its rules, including session rules).
 */
export function narrowPolicy(parent: PolicyLike, allowed: ReadonlySet<string>): PolicyLike {
  return {
    evaluate(access) {
      if (access.type === "tool" && !allowed.has(access.name)) {
        return Promise.resolve({
          decision: "deny",
          reason: `tool ${access.name} is not among this agent's tools`,
          access,
        });
      }
      return parent.evaluate(access);
    },
    addRule: (decision, rule, source) => parent.addRule(decision, rule, source),
  };
}

/**
 * The tools an agent may use: its `tools` (names, globs, `mcp:<server>`) and `mcp_servers` over
 * the workspace's tools (core/agents/resolve.ts `selectTools`).
 */
export function toolsForAgent(all: AnyTool[], agent: AgentSpec): AnyTool[] {
  return selectTools(all, agent);
}

/**
 * Opens a session on a workspace (the caller owns the workspace's retain/release).
 * @throws UsageError for an unknown agent or stored session.
 */
export async function openSession(ws: Workspace, init: SessionOptions): Promise<AgentSession> {
  const app = ws.app;
  const cwd = ws.cwd;
  const log = (l: string) => ws.log(l);
  const parent = init.parent?.session;
  const resumed = init.resumeId ? await loadSession(app.dataDir, init.resumeId) : null;
  if (init.resumeId && !resumed) throw new UsageError(`no stored session with id ${init.resumeId}`);
  if (resumed && !parent && resumed.header.cwd !== cwd) {
    log(
      `coyote: note: session ${resumed.header.id} was started in ${resumed.header.cwd}; ` +
        `continuing it in ${cwd}`,
    );
  }
  if (resumed?.skipped) {
    log(`coyote: skipped ${resumed.skipped} unreadable line(s) of session ${init.resumeId}`);
  }
  const agentName = init.agent ?? resumed?.header.agent ?? app.agent ?? DEFAULT_AGENT;
  const first = ws.agents.get(agentName);
  if (!first) {
    const e = new UsageError(ws.agents.unknown(agentName));
    // A broken agent file is a configuration error naming the file and the field.
    if (ws.agents.entry(agentName)?.error) e.name = "ConfigError";
    throw e;
  }
  // Every way a child opens (`agent__spawn`, a graph's agent nodes) stops at the depth cap: a
  // graph whose agent node runs itself must not recurse without end.
  if (parent) {
    const cap = lineage.get(parent)?.depthCap ?? 0;
    if (parent.origin.depth + 1 > cap) {
      throw new Error(
        `max_agent_depth ${cap} reached: ${parent.agentId} is at depth ${parent.origin.depth}, a child would be at depth ${
          parent.origin.depth + 1
        }`,
      );
    }
  }

  // The OS sandbox of this session's commands: a root session derives it from its own policy
  // (session rules included); a sub-agent shares its root's.
  let sandbox: CommandSandbox;
  let rootPolicy: PolicyLike | undefined;
  let rootGuard: Policy | undefined;
  if (parent?.commandSandbox) sandbox = parent.commandSandbox;
  else {
    const policy = rootGuard = ws.newPolicy();
    sandbox = await CommandSandbox.create(policy, app.sandbox ?? DEFAULT_SANDBOX, {
      secrets: ws.secrets,
      log,
      killTree: (t) => signalTree(t, "SIGKILL"),
    });
    rootPolicy = sandboxGuard(policy, sandbox.status);
    if (guardForcedAllow()) {
      log("coyote: warning: TEST MODE: the guard allows every access (COYOTE_TEST_GUARD=allow)");
    }
  }
  const ownsSandbox = sandbox !== parent?.commandSandbox;
  const parentLine = parent ? lineage.get(parent) : undefined;
  // A sub-agent shares its parent's tool list and MCP connection (see Lineage).
  const inherits = !!parentLine && !init.mcpServers;
  const withExec = (list: AnyTool[]) => {
    const execTool = ws.protectTool(
      makeExecuteCommandTool(
        sandbox,
        sandbox.status.active ? sandbox.modelNote() : undefined,
      ) as AnyTool,
    );
    const isCoreExec = (t: AnyTool) =>
      t.name === executeCommandTool.name && t.description === executeCommandTool.description;
    return list.map((t) => isCoreExec(t) ? execTool : t);
  };
  // Updated in place when MCP servers become ready or change their tools (see below).
  const all = inherits ? parentLine!.tools : withExec(await ws.tools(init.mcpServers));
  const mcp = inherits ? parentLine!.mcp : await ws.mcp(init.mcpServers);
  // A child never gets a tool its parent lacks.
  const ceiling = parent ? new Set(parent.toolNames()) : null;
  const line: Lineage = {
    rootPermission: parentLine?.rootPermission ?? init.permission,
    rootHost: parentLine ? parentLine.rootHost : init.host,
    depthCap: Math.min(parentLine?.depthCap ?? Infinity, limitsOf(first).maxDepth),
    concurrencyCap: parent
      ? Math.min(
        parentLine?.concurrencyCap ?? Infinity,
        limitsOf(parent.definition).maxConcurrent,
      )
      : Infinity,
    tree: parentLine?.tree ?? new LiveAgentBudget(
      () => limitsOf(session.definition).maxLiveAgents,
      () => `${session.agent} (session ${session.id})`,
    ),
    tools: all,
    mcp,
    guard: parentLine?.guard ?? rootGuard ?? ws.newPolicy(),
  };
  let supervisor: Supervisor | null = null;
  const agentTools = supervisorTools(() => supervisor!);
  // An agent's tools, system prompt and skills (core/agents/prepare.ts). `--agent-variable` and
  // `--skill` apply to the root session's first agent (also when switched back to); children
  // and other agents use defaults.
  const prepare = (a: AgentSpec, variables?: Record<string, string>, preload?: string[]) => {
    const p: PreparedAgent = prepareAgent({
      definition: a,
      variables,
      allTools: all,
      skills: ws.skills,
      preloadSkills: preload,
      cwd,
      workspace: ws.instructions,
      onChange: () => {
        // A skill loaded or unloaded: the next request carries its body and tools.
        if (prepared !== p || !live.engine) return;
        registry = new ToolRegistry(toolsOf(p));
        live.engine.opts.registry = registry;
        live.engine.opts.policy = policyFor(registry);
        live.engine.opts.systemPrompt = p.systemPrompt();
      },
    });
    return p;
  };
  // A child never gets a tool its parent lacks; spawning needs `can_spawn_agents` (and, for a
  // child, a parent that may spawn too).
  const toolsOf = (p: PreparedAgent) => {
    const own = ceiling ? p.tools().filter((t) => ceiling.has(t.name)) : p.tools();
    const spawns = (p.definition as AgentSpec).can_spawn_agents === true &&
      (!ceiling || ceiling.has("agent__spawn"));
    return spawns ? [...own, ...agentTools] : own;
  };
  const live: { engine?: Engine } = {};
  let prepared = parent
    ? prepare(first)
    : prepare(first, agentName === first.name ? app.agentVariables : undefined, app.skills);

  const explicitModel = init.model ?? app.model;
  const model = explicitModel ?? first.model ?? ws.defaultModel;
  const id = resumed ? resumed.header.id : newSessionId();
  const agentId = init.parent?.agentId ?? `${first.name}-${idTail(id)}`;
  const origin: AgentOrigin = parent
    ? {
      agent: first.name,
      agentId,
      parentId: parent.agentId,
      rootSessionId: parent.origin.rootSessionId,
      rootToolCallId: parent.origin.depth === 0
        ? init.parent!.toolCallId
        : parent.origin.rootToolCallId,
      depth: parent.origin.depth + 1,
    }
    : { agent: first.name, agentId, rootSessionId: id, depth: 0 };

  let registry = new ToolRegistry(toolsOf(prepared));
  for (const w of registry.warnings) log(`coyote: warning: ${w}`);
  const basePolicy: PolicyLike = parent ? parent.policy : rootPolicy!;
  const policyFor = (r: ToolRegistry) =>
    parent ? narrowPolicy(basePolicy, new Set(r.names())) : basePolicy;

  const transcript = resumed
    ? TranscriptWriter.open(transcriptPath(app.dataDir, id))
    : TranscriptWriter.createAsync(app.dataDir, {
      id,
      cwd,
      created: new Date().toISOString(),
      model,
      agent: first.name,
      ...(init.name ? { name: init.name } : {}),
      ...(parent ? { parent: parent.id, agent_id: agentId, parent_agent_id: parent.agentId } : {}),
    });

  const engine = new Engine({
    sessionId: id,
    cwd,
    client: ws.client,
    model,
    temperature: first.temperature,
    top_p: first.top_p,
    reasoning_effort: first.reasoning_effort,
    registry,
    policy: policyFor(registry),
    permission: init.permission,
    host: init.host,
    systemPrompt: prepared.systemPrompt(),
    maxTurns: app.maxTurns > 0 ? app.maxTurns : first.maxTurns ?? 50,
    // An old transcript's tool results are cut to this model's window (`--continue` recovers).
    history: resumed ? fitHistory(resumed.messages, modelInfo(app.config, model)) : undefined,
    modelInfo: (m) => {
      // Not in `models:`: the window the server's model list states, else the default.
      const info = modelInfo(app.config, m);
      const w = info.known ? undefined : learnedWindow(ws.providerConfig.baseURL, m);
      return w ? { ...info, contextWindow: w } : info;
    },
    updates: resumed?.updates,
    transcript,
    log,
    origin,
  });
  live.engine = engine;

  // A model missing from `models:`: its window from the server's model list
  // (core/provider/model_metadata.ts), looked up once by a root session. A fresh session's first request
  // does not wait for it (the lookup starts once that request is on its way); a turn with
  // history to fit waits for it (bounded).
  let metadataWanted = !parent && !modelInfo(app.config, model).known;
  let metadata: Promise<void> | null = null;
  const lookupMetadata = () => (metadata ??= learnServerWindows(ws.providerConfig));
  // A graph agent runs with the graph engine (core/graph/); the LLM engine above stays for a
  // later switch to an LLM agent. Agent nodes run sub-agents as child sessions of this one.
  let turnSink: EnvelopeSink | null = null;
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
      if (line.guard.rules().length !== seen) {
        seen = line.guard.rules().length;
        moved = line.guard.forWorkspace(dir);
      }
      return moved;
    };
    return {
      evaluate: (access) => at().evaluate(access),
      addRule: (d, r, src) => line.guard.addRule(d, r, src),
    };
  };
  // The graph engine (and its yaml/zod/JSON-Schema modules) loads only when a graph agent runs.
  const graphRunner = async (a: AgentSpec, p: PreparedAgent): Promise<GraphRunner | null> =>
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
            child = await openSession(ws, {
              permission: init.permission,
              host: init.host,
              agent: req.agent,
              parent: { session, toolCallId: req.toolCallId },
            });
          } catch (e) {
            slot.release();
            throw e;
          }
          try {
            const r = await child.prompt(req.prompt, {
              signal,
              onEvent: (env) => turnSink?.(env),
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
  let graph: GraphRunner | null = null;
  /** The agent (and its preparation) whose graph runner `graph` is, or must become. */
  let graphFor: { a: AgentSpec; p: PreparedAgent } | null = first.graph
    ? { a: first, p: prepared }
    : null;

  // Stop hooks of config.yaml (core/extensions/hooks/stop.ts) run last when the agent is about to end its turn:
  // after the supervisor's reminders and todo auto-continuation had nothing to add. Like Claude
  // Code's `Stop` (not `SubagentStop`) they are the root agent's: a hook that asks for a commit
  // must not send twenty read-only explore children back to work.
  const stopHooks = new StopHookGate(
    parent ? [] : [
      ...(app.config?.hooks?.stop ?? []),
      // A plugin's hook runs inside the session's OS sandbox, never with Coyote's own rights.
      ...ws.pluginStopHooks.map((h) => ({
        ...h,
        source: `plugin ${h.plugin}`,
        launch: (c: string) => sandbox.prepare(c, cwd, "bash"),
      })),
    ],
    app.config?.hooks?.max_stop_blocks ?? DEFAULT_MAX_BLOCKS,
  );
  /** Emits an event into the running turn's stream (stamped like the engine's own). */
  let turnEmit: ((ev: EngineEvent) => void) | null = null;
  const stopHookStep = (signal: AbortSignal) =>
    stopHooks.check(
      {
        session_id: id,
        agent: current.name,
        cwd,
        transcript_path: transcriptPath(app.dataDir, id),
      },
      signal,
      (e) =>
        turnEmit?.({
          sessionUpdate: "agent_thought_chunk",
          content: { type: "text", text: `stop hook: ${e.reason}\n` },
          _meta: { coyote: { event: "stop_hook", ...e } },
        }),
      log,
    );

  let seq = 0;
  let busy = false;
  /** The running turn (see `prompt` and `close`). */
  let activeTurn: { ctrl: AbortController; done: Promise<unknown> } | null = null;
  // The workspace's start-up warnings reach the event stream once, on the first turn_started of
  // a root session (they are also on stderr).
  let pendingWarnings = parent ? [] : ws.warnings;
  let closed = false;
  let current = first;
  let plan: PlanItem[] = [];
  let autoContinues = 0;
  engine.opts.beforeTurnEnd = async ({ signal }) => {
    const remind = supervisor ? await supervisor.beforeTurnEnd() : null;
    if (remind) return remind;
    const lim = limitsOf(current);
    const open = plan.filter((p) => p.status !== "completed");
    if (lim.autoContinue && open.length && autoContinues < lim.maxAutoContinues) {
      autoContinues++;
      return `<system-reminder>Your todo list still has ${open.length} open item(s): ${
        open.map((p) => `"${p.content}" (${p.status})`).join(", ")
      }. Continue working on them now; if they are done or no longer needed, update the list with todo__write. (Automatic continuation ${autoContinues} of ${lim.maxAutoContinues}.)</system-reminder>`;
    }
    return await stopHookStep(signal);
  };
  const stamp = (update: SessionEvent): EventEnvelope => ({
    session_id: id,
    agent: current.name,
    agent_id: agentId,
    ...(origin.parentId ? { parent_id: origin.parentId } : {}),
    ...(init.parent ? { parent_tool_call_id: init.parent.toolCallId } : {}),
    seq: ++seq,
    update,
  });

  // MCP servers start in the background and may change their tools: the next model request
  // sees the current set (prompts and resources need no new registry).
  const offMcp = inherits ? undefined : mcp?.onChange((c) => {
    if (c.kind === "prompts" || c.kind === "resources" || closed) return;
    void ws.tools(init.mcpServers).then((next) => {
      all.splice(0, all.length, ...withExec(next));
      registry = new ToolRegistry(toolsOf(prepared));
      engine.opts.registry = registry;
      engine.opts.policy = policyFor(registry);
    });
  });
  const session: AgentSession = {
    ...(mcp ? { mcp } : {}),
    id,
    cwd,
    workspace: ws,
    agentId,
    origin,
    get model() {
      return engine.opts.model;
    },
    set model(m: string) {
      engine.opts.model = m;
    },
    get agent() {
      return current.name;
    },
    /** Switching the agent swaps instructions, tool set and temperature for the next turn. */
    set agent(name: string) {
      const next = ws.agents.get(name);
      if (!next) throw new UsageError(ws.agents.unknown(name));
      // Switching back to the agent the session started with keeps the user's
      // `--agent-variable` values (they were checked against it); any other gets its defaults.
      const p = prepare(next, !parent && next.name === first.name ? app.agentVariables : undefined);
      prepared = p;
      current = next;
      graph = null;
      graphFor = next.graph ? { a: next, p } : null;
      registry = new ToolRegistry(toolsOf(p));
      engine.opts.systemPrompt = p.systemPrompt();
      engine.opts.registry = registry;
      engine.opts.policy = policyFor(registry);
      engine.opts.temperature = next.temperature;
      engine.opts.top_p = next.top_p;
      engine.opts.reasoning_effort = next.reasoning_effort;
      if (!explicitModel && next.model) engine.opts.model = next.model;
    },
    get definition() {
      return current;
    },
    get policy() {
      return engine.opts.policy;
    },
    commandSandbox: sandbox,
    sandbox: sandbox.status,
    toolNames: () => registry.names(),
    async prompt(input, opts) {
      if (closed) throw new Error("session is closed");
      if (busy || engine.running || graph?.running) {
        throw new Error("a turn is already running in this session");
      }
      busy = true;
      // The turn runs on its own signal, aborted by the caller's or by `close()`.
      const ctrl = new AbortController();
      const outer = opts.signal;
      const onOuter = () => ctrl.abort(outer?.reason);
      if (outer?.aborted) onOuter();
      else outer?.addEventListener("abort", onOuter, { once: true });
      const done = turn(input, { ...opts, signal: ctrl.signal });
      activeTurn = { ctrl, done };
      try {
        return await done;
      } finally {
        busy = false;
        activeTurn = null;
        outer?.removeEventListener("abort", onOuter);
      }
    },
    compact: (opts) => engine.compact(opts),
    get skills() {
      return prepared.skills;
    },
    addRule(decision, rule) {
      engine.opts.policy.addRule(decision, rule, "session");
    },
    history() {
      return (graph ?? engine).history();
    },
    async close() {
      if (closed) return;
      closed = true;
      // A turn still running is cancelled and ends first (its sub-agents with it, each
      // bounded by CHILD_SETTLE_MS), so its transcript and theirs end with their turn ends.
      const running = activeTurn;
      if (running) {
        running.ctrl.abort(new Error("the session was closed"));
        await within(running.done, CHILD_SETTLE_MS + 5_000);
      }
      supervisor?.cancelAll("the session was closed");
      await supervisor?.settle(CHILD_SETTLE_MS);
      offMcp?.();
      transcript.close();
      if (ownsSandbox) sandbox.close();
      await transcript.ready;
    },
  };
  /** One turn of {@link AgentSession.prompt} (see there). */
  async function turn(
    input: PromptInput,
    opts: { signal?: AbortSignal; onEvent: EnvelopeSink },
  ): Promise<TurnResult> {
    const sink = opts.onEvent;
    const signal = opts.signal ?? new AbortController().signal;
    // Servers still starting: the turn waits for them (each bounded by its start-up
    // timeout) so the model sees their tools; a cancel stops the wait.
    if (mcp) await untilAborted(mcp.ready, signal);
    // The window matters once there is history to fit; a fresh session's first request does not
    // wait for the model list (it arrives during the turn, on a slow server too).
    if (metadataWanted) {
      if (engine.messages.length > 0) {
        metadataWanted = false;
        await untilAborted(lookupMetadata(), signal);
      } else setTimeout(lookupMetadata, 0);
    }
    autoContinues = 0;
    turnSink = sink;
    stopHooks.reset();
    turnEmit = (ev) => sink(stamp(ev));
    supervisor?.beginTurn(sink, signal);
    // The turn's own `turn_ended` is held until its sub-agents have ended, so it comes last
    // and carries their usage.
    let ended: TurnEndedEvent | null = null;
    let result: TurnResult;
    try {
      if (graphFor && !graph) graph = await graphRunner(graphFor.a, graphFor.p);
      result = await (graph ?? engine).prompt(input, {
        signal,
        onEvent: (ev) => {
          if (ev.sessionUpdate === "turn_started" && pendingWarnings.length) {
            ev = { ...ev, warnings: pendingWarnings };
            pendingWarnings = [];
          }
          if (ev.sessionUpdate === "plan") plan = ev.entries as PlanItem[];
          if (ev.sessionUpdate === "turn_ended") ended = ev;
          else sink(stamp(ev));
        },
      });
    } finally {
      prepared.skills.endTurn();
      if (supervisor) {
        supervisor.cancelAll("the parent's turn ended");
        await supervisor.settle(CHILD_SETTLE_MS);
      }
    }
    if (supervisor) {
      const kids = supervisor.endTurn();
      if (kids.agents.length) {
        const usage = { ...result.usage };
        addUsage(usage, kids.usage);
        result = {
          ...result,
          usage,
          denied: [...result.denied, ...kids.denied],
          agents: kids.agents,
        };
      }
    }
    const final: TurnEndedEvent = { ...(ended ?? { sessionUpdate: "turn_ended" }), ...result };
    sink(stamp(final));
    return result;
  }
  lineage.set(session, line);
  supervisor = new Supervisor({
    owner: () => session,
    open: (o) => openSession(ws, o),
    childWiring: (def) => {
      const ms = limitsOf(def).escalationTimeoutMs;
      return {
        permission: escalatingPermission(line.rootPermission, ms),
        host: escalatingHost(line.rootHost, ms),
      };
    },
    depthCap: line.depthCap,
    concurrencyCap: line.concurrencyCap,
    tree: line.tree,
    log,
  });
  return session;
}

/** Resolves when `p` settles or `ms` passed, whichever is first. */
function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.then(() => {}, () => {}),
    new Promise<void>((r) => (timer = setTimeout(r, ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Resolves when `p` settles or `signal` aborts, whichever is first. */
function untilAborted(p: Promise<unknown>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p.then(() => {}, () => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    p.then(done, done);
  });
}
