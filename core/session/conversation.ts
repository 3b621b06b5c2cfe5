/**
 * A Session: one conversation on a {@link Workspace} — its agent, model, policy, tool set,
 * transcript and runner (the LLM engine). `prompt` runs one turn and delivers every event
 * wrapped in the {@link EventEnvelope} (`session_id`, `agent`, `agent_id`, `parent_id?`,
 * `seq`), the one stream headless, ACP and text mode render from.
 *
 * A sub-agent is a Session opened with `parent`: it shares the parent's workspace (or, with `cwd`,
 * works in its own git worktree: child_dir.ts), its policy is the parent's narrowed to its tools
 * (never widened: its definition's tools ∩ the parent's), its permission requests and questions go
 * to the root frontend, and its events flow into the parent's stream with `parent_id` set.
 *
 * This module holds {@link openSession} (the session's state, its agent switch, its turns and
 * its close). Its parts live beside it in core/session/: the shapes (types.ts), resuming a
 * stored session (resume.ts), the OS sandbox (sandbox.ts), tool narrowing (tool_set.ts), the
 * sub-agent wiring and supervisor (lineage.ts), the graph runner of a graph agent (graph.ts),
 * stop hooks (stop_hooks.ts), envelope stamping (envelope.ts) and bounded waits (wait.ts).
 * @module
 */
import type {
  AgentSpec,
  AnyTool,
  EngineEvent,
  EnvelopeSink,
  PromptInput,
  TurnEndedEvent,
  TurnResult,
} from "../protocol/types.ts";
import type { PlanItem } from "../../sdk/mod.ts";
import { Engine, type PolicyLike } from "../engine/mod.ts";
import type { GraphRunner } from "../graph/runner.ts";
import type { Policy } from "../policy/policy.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { prepareAgent, type PreparedAgent } from "../agents/prepare.ts";
import { newSessionId, transcriptPath } from "../transcript/store.ts";
import { TranscriptWriter } from "../transcript/writer.ts";
import { UsageError, type Workspace } from "./workspace.ts";
import { DEFAULT_AGENT } from "../../agents/mod.ts";
import { type Supervisor, withChildRuns } from "../supervisor/supervisor.ts";
import { lazySupervisorTools } from "../supervisor/tool_stubs.ts";
import { limitsOf, maxTurnsOf } from "../supervisor/limits.ts";
import type { CommandSandbox } from "../policy/sandbox/mod.ts";
import { modelInfo } from "../config/models.ts";
import { learnedWindow, learnServerWindows } from "../provider/model_metadata.ts";
import type { AgentSession, SessionOptions, TurnOverrides } from "./types.ts";
import { narrowPolicy } from "./tool_set.ts";
import { rootSandbox, withSandboxExec } from "./sandbox.ts";
import {
  checkChildDepth,
  childDirOf,
  idTail,
  lineageOf,
  newLineage,
  originOf,
  setLineage,
  superviseSession,
} from "./lineage.ts";
import { graphRunnerFactory } from "./graph.ts";
import { envelopeStamper } from "./envelope.ts";
import { sessionStopHooks } from "./stop_hooks.ts";
import { sessionHooks } from "./hooks.ts";
import { fitHistory, loadToResume } from "./resume.ts";
import { untilAborted, within } from "./wait.ts";
import { mcpAtTurnStart } from "./mcp_startup.ts";
import { mcpRequestHandler } from "./mcp_requests.ts";
import type { TurnCheckpointer } from "./checkpoints/turns.ts";

/** How long a turn waits for its cancelled sub-agents to end before it ends itself (ms). */
export const CHILD_SETTLE_MS = 10_000;

/**
 * Opens a session on a workspace (the caller owns the workspace's retain/release).
 * @throws UsageError for an unknown agent or stored session.
 */
export async function openSession(ws: Workspace, init: SessionOptions): Promise<AgentSession> {
  const moved = await childDirOf(ws, init); // a sub-agent in its own worktree (lineage.ts)
  if (moved) ws = moved.ws;
  const app = ws.app;
  const cwd = ws.cwd;
  const log = (l: string) => ws.log(l);
  const parent = init.parent?.session;
  const resumed = init.resumeId ? await loadToResume(ws, init.resumeId, !!parent) : null;
  const agentName = init.agent ?? resumed?.header.agent ?? app.agent ?? DEFAULT_AGENT;
  const first = ws.agents.get(agentName);
  if (!first) {
    const e = new UsageError(ws.agents.unknown(agentName));
    // A broken agent file is a configuration error naming the file and the field.
    if (ws.agents.entry(agentName)?.error) e.name = "ConfigError";
    throw e;
  }
  // Every way a child opens stops at the depth cap (core/session/lineage.ts).
  if (parent) checkChildDepth(parent);

  // The OS sandbox of this session's commands: a root session derives it from its own policy
  // (session rules included); a sub-agent shares its root's (core/session/sandbox.ts).
  let sandbox: CommandSandbox;
  let rootPolicy: PolicyLike | undefined;
  let rootGuard: Policy | undefined;
  if (parent?.commandSandbox) sandbox = moved?.sandbox ?? parent.commandSandbox;
  else ({ sandbox, rootPolicy, rootGuard } = await rootSandbox(ws, log));
  const ownsSandbox = sandbox !== parent?.commandSandbox;
  const parentLine = parent ? moved?.line ?? lineageOf(parent) : undefined;
  // A sub-agent shares its parent's tool list and MCP connection (see Lineage, lineage.ts).
  const inherits = !!parentLine && !init.mcpServers;
  const withExec = (list: AnyTool[]) => withSandboxExec(ws, sandbox, list);
  // Updated in place when MCP servers become ready or change their tools (see below).
  const all = inherits ? parentLine!.tools : withExec(await ws.tools(init.mcpServers));
  const mcp = inherits ? parentLine!.mcp : await ws.mcp(init.mcpServers);
  // A child never gets a tool its parent lacks.
  const ceiling = parent ? new Set(parent.toolNames()) : null;
  const line = newLineage({
    ws,
    init,
    first,
    parentLine,
    owner: () => session,
    tools: all,
    mcp,
    rootGuard,
  });
  let supervisor: Supervisor<AgentSession> | null = null;
  const agentTools = lazySupervisorTools(() => supervisor!);
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
    ? prepare(first, init.variables)
    : prepare(first, agentName === first.name ? app.agentVariables : undefined, app.skills);

  const explicitModel = init.model ?? app.model;
  const model = explicitModel ?? first.model ?? ws.defaultModel;
  const id = resumed ? resumed.header.id : newSessionId();
  const agentId = init.parent?.agentId ?? `${first.name}-${idTail(id)}`;
  const origin = originOf(first.name, agentId, id, init.parent);

  let registry = new ToolRegistry(toolsOf(prepared));
  for (const w of registry.warnings) log(`coyote: warning: ${w}`);
  const basePolicy: PolicyLike = moved?.policy ?? (parent ? parent.policy : rootPolicy!);
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
    maxTurns: maxTurnsOf(first, app, !!parent),
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
  // Issue 18: each turn's budget; the price is the engine's current model's (`/model` may change it).
  if (app.maxBudgetUsd !== undefined || app.maxBudgetTokens !== undefined) {
    engine.opts.budget = {
      usd: app.maxBudgetUsd,
      tokens: app.maxBudgetTokens,
      price: () => modelInfo(app.config, engine.opts.model).price,
      // Sub-agents spend from the root's budget (core/supervisor/budget.ts).
      tree: line.spend,
    };
  }

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
  // The graph's runner of a graph agent (core/session/graph.ts).
  const graphRunner = graphRunnerFactory({
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
    session: () => session,
    sink: () => turnSink,
    open: (o) => openSession(ws, o),
  });
  let graph: GraphRunner | null = null;
  /** The agent (and its preparation) whose graph runner `graph` is, or must become. */
  let graphFor: { a: AgentSpec; p: PreparedAgent } | null = first.graph
    ? { a: first, p: prepared }
    : null;

  // Stop hooks run last when the agent is about to end its turn (core/session/stop_hooks.ts).
  /** Emits an event into the running turn's stream (stamped like the engine's own). */
  let turnEmit: ((ev: EngineEvent) => void) | null = null;
  // The session's permission mode for hook input (`session` is not there yet at SessionStart).
  const hookMode = () => {
    try {
      return (session as { mode?: string }).mode;
    } catch {
      return undefined;
    }
  };
  const { gate: stopHooks, step: stopHookStep } = sessionStopHooks({
    ws,
    child: !!parent,
    sandbox,
    sessionId: id,
    agent: () => current.name,
    emit: (ev) => turnEmit?.(ev),
    emitHook: (ev) => turnEmit?.(ev as unknown as EngineEvent),
    mode: hookMode,
    log,
  });
  // Claude Code's lifecycle hooks (core/session/hooks.ts): the engine's callbacks, Notification
  // on a permission question, SessionStart now and SessionEnd at close (root sessions).
  const hooks = sessionHooks({
    ws,
    child: !!parent,
    sandbox,
    sessionId: id,
    agent: () => current.name,
    mode: hookMode,
    emit: (ev) => turnEmit ? (turnEmit(ev as unknown as EngineEvent), true) : false,
    log,
  });
  if (hooks.engine) {
    engine.opts.hooks = hooks.engine;
    engine.opts.endTurnAfterTools = hooks.halted;
  }
  engine.opts.permission = hooks.permission(engine.opts.permission);

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
  let autoContinueStopped = false;
  /** The running turn's token total so far (its last `usage_update`). */
  let turnTokens = 0;
  engine.opts.beforeTurnEnd = async ({ signal }) => {
    const remind = supervisor ? await supervisor.beforeTurnEnd() : null;
    if (remind) return remind;
    const lim = limitsOf(current);
    const open = plan.filter((p) => p.status !== "completed");
    const autoContinue = lim.autoContinue && init.autoContinue !== false;
    // Bounded by requests and by tokens; the stream says which bound ended it (once a turn).
    const stop = !autoContinue || !open.length || autoContinueStopped
      ? null
      : autoContinues >= lim.maxAutoContinues
      ? { reason: "max_auto_continues", limit: lim.maxAutoContinues }
      : turnTokens >= lim.maxAutoContinueTokens
      ? { reason: "max_auto_continue_tokens", limit: lim.maxAutoContinueTokens }
      : null;
    if (stop) {
      autoContinueStopped = true;
      const data = { ...stop, continues: autoContinues, tokens: turnTokens, open: open.length };
      turnEmit?.({
        sessionUpdate: "agent_thought_chunk",
        content: { type: "text", text: `auto_continue_stopped: ${JSON.stringify(data)}\n` },
        _meta: { coyote: { event: "auto_continue_stopped", ...data } },
      } as EngineEvent);
    }
    if (autoContinue && open.length && !autoContinueStopped) {
      autoContinues++;
      return `<system-reminder>Your todo list still has ${open.length} open item(s): ${
        open.map((p) => `"${p.content}" (${p.status})`).join(", ")
      }. Continue working on them now; if they are done or no longer needed, update the list with todo__write. (Automatic continuation ${autoContinues} of ${lim.maxAutoContinues}.)</system-reminder>`;
    }
    return await stopHookStep(signal);
  };
  const stamp = envelopeStamper({
    sessionId: id,
    agentId,
    origin,
    parent: init.parent,
    agent: () => current.name,
  });
  // Issue 18: checkpoints before a turn's first change (checkpoints/, loaded then or at a rewind).
  let checkpointer: Promise<TurnCheckpointer> | null = null;
  const checkpoints = () =>
    checkpointer ??= import("./checkpoints/turns.ts").then((m) =>
      m.turnCheckpointer({
        dataDir: app.dataDir,
        cwd,
        sessionId: id,
        settings: app.config.checkpoints,
        transcript,
        emit: (ev) => turnSink?.(stamp(ev)),
        log,
      })
    );
  if (!parent) engine.opts.beforeChange = async () => await (await checkpoints()).beforeChange();

  // MCP servers start in the background and may change their tools: the next model request
  // sees the current set (prompts and resources need no new registry).
  let toolsLanding: Promise<void> = Promise.resolve();
  const offMcp = inherits ? undefined : mcp?.onChange((c) => {
    // Resources too: `mcp__list_resources` / `mcp__read_resource` come and go with them.
    if (c.kind === "prompts" || closed) return;
    toolsLanding = ws.tools(init.mcpServers).then((next) => {
      all.splice(0, all.length, ...withExec(next));
      registry = new ToolRegistry(toolsOf(prepared));
      engine.opts.registry = registry;
      engine.opts.policy = policyFor(registry);
    }, () => {});
  });
  // Each model request waits (at most 5 s) for a tool-list change still landing.
  if (mcp && !inherits) {
    engine.opts.beforeRequest = () =>
      within((mcp.settled?.() ?? Promise.resolve()).then(() => toolsLanding), 5_000);
  }
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
    rewind: async (r) => {
      if (busy) throw new UsageError("a turn is running; rewind after it ends");
      const store = async () => await (await checkpoints()).store();
      return (await import("./checkpoints/rewind.ts")).rewindLive({ transcript, engine, store }, r);
    },
    get skills() {
      return prepared.skills;
    },
    addRule(decision, rule) {
      engine.opts.policy.addRule(decision, rule, "session");
    },
    get mode() {
      return parent ? parent.mode : rootGuard!.mode;
    },
    setMode(mode) {
      if (parent) parent.setMode(mode);
      else rootGuard!.setMode(mode);
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
      await supervisor?.closeChildren();
      await hooks.end("other");
      offMcp?.();
      offMcpRequests?.();
      transcript.close();
      if (ownsSandbox) sandbox.close();
      if (checkpointer) await (await checkpointer).close();
      await transcript.ready;
    },
  };
  /** One turn of {@link AgentSession.prompt} (see there). */
  async function turn(
    input: PromptInput,
    opts: { signal?: AbortSignal; onEvent: EnvelopeSink; overrides?: TurnOverrides },
  ): Promise<TurnResult> {
    const sink = opts.onEvent;
    const signal = opts.signal ?? new AbortController().signal;
    // Servers still starting: a root turn waits for them, or (`mcpStartup: "background"`)
    // starts without their tools and says so (./mcp_startup.ts); a sub-agent never waits.
    const mcpNotices = parent
      ? null
      : await mcpAtTurnStart(mcp, { mode: init.mcpStartup ?? "wait", signal, log });
    // The window matters once there is history to fit; a fresh session's first request does not
    // wait for the model list (it arrives during the turn, on a slow server too).
    if (metadataWanted) {
      if (engine.messages.length > 0) {
        metadataWanted = false;
        await untilAborted(lookupMetadata(), signal);
      } else setTimeout(lookupMetadata, 0);
    }
    autoContinues = 0;
    autoContinueStopped = false;
    turnTokens = 0;
    turnSink = sink;
    stopHooks.reset();
    turnEmit = (ev) => sink(stamp(ev));
    // The gates' decisions go to the stream and, on record, to the transcript.
    supervisor?.beginTurn(sink, signal, (ev) => {
      const g = (ev as { _meta?: { coyote?: { event: string } } })._meta?.coyote;
      if (g) transcript.gate(g);
      turnEmit?.(ev);
    });
    if (!parent) line.spend.reset();
    // The turn's own `turn_ended` is held until its sub-agents have ended, so it comes last
    // and carries their usage.
    let ended: TurnEndedEvent | null = null;
    let result: TurnResult;
    // A custom command's `model` / `allowed-tools` hold for this turn only (types.ts).
    const over = opts.overrides;
    const restore = { model: engine.opts.model };
    if (over?.model) engine.opts.model = over.model;
    if (over?.tools) {
      const keep = over.tools;
      engine.opts.registry = new ToolRegistry(toolsOf(prepared).filter((t) => keep(t.name)));
    }
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
          supervisor?.observe(ev as EngineEvent);
          if (ev.sessionUpdate === "usage_update") {
            const turn = (ev as { _meta?: { turn?: { total_tokens?: number } } })._meta?.turn;
            if (typeof turn?.total_tokens === "number") turnTokens = turn.total_tokens;
          }
          if (ev.sessionUpdate === "turn_ended") ended = ev;
          else sink(stamp(ev));
          if (ev.sessionUpdate === "turn_started") mcpNotices?.start((n) => sink(stamp(n)));
        },
      });
    } finally {
      if (over?.model && engine.opts.model === over.model) engine.opts.model = restore.model;
      if (over?.tools) engine.opts.registry = registry;
      mcpNotices?.stop();
      prepared.skills.endTurn();
      if (supervisor) {
        supervisor.cancelAll("the parent's turn ended");
        await supervisor.settle(CHILD_SETTLE_MS);
      }
    }
    if (supervisor) {
      result = withChildRuns(result, supervisor.endTurn());
      const gates = await supervisor.gateOutcome();
      if (gates) result = { ...result, gates };
    }
    const cps = checkpointer ? (await checkpointer).endTurn() : [];
    if (cps.length) result = { ...result, checkpoints: cps };
    const final: TurnEndedEvent = { ...(ended ?? { sessionUpdate: "turn_ended" }), ...result };
    sink(stamp(final));
    return result;
  }
  // MCP servers' sampling and elicitation requests, served by a root session (./mcp_requests.ts).
  const offMcpRequests = parent ? undefined : ws.mcpRequests.register(mcpRequestHandler({
    sessionId: id,
    busy: () => busy,
    policy: () => engine.opts.policy,
    permission: init.permission,
    host: (toolCallId, toolName) =>
      typeof init.host === "function"
        ? init.host({ ...origin, sessionId: id, toolCallId, toolName })
        : init.host,
    client: engine.opts.client,
    model: () => engine.opts.model,
    emit: () => (busy ? turnEmit : null),
    log,
  }));
  setLineage(session, line);
  supervisor = superviseSession(session, line, (o) => openSession(ws, o), log);
  await hooks.start(resumed ? "resume" : "startup");
  return session;
}
