/**
 * Shared contracts between the engine and its frontends (headless printer,
 * ACP server, REPL) and between the engine and the guard / plugin host / MCP
 * client. Type-only: importing this module costs nothing at run time.
 *
 * The event model is ACP's `session/update` payload (`SessionUpdate`, ACP v1
 * schema): every frontend is a thin view of the same stream.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentDefinition, HostServices, ToolAccess, ToolDefinition } from "../../sdk/mod.ts";

/** One engine event: exactly ACP's `SessionUpdate` (discriminated by `sessionUpdate`). */
export type EngineEvent = acp.SessionUpdate;
/**
 * ACP stop reasons (`end_turn`, `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`) plus
 * Coyote's `max_budget`: the run's token or USD budget was reached (issue 18; `--max-budget-*`,
 * config `budget:`). ACP has no such value: `session/prompt` answers it as `max_turn_requests`.
 */
export type StopReason = acp.StopReason | "max_budget";
/**
 * ACP tool-call status: `pending` → `in_progress` → `completed` | `failed`; a call the guard or the
 * user refuses never runs and goes `pending` → `failed`.
 */
export type ToolCallStatus = acp.ToolCallStatus;

/**
 * Start of a turn (Coyote extension beside ACP's `SessionUpdate`, same `sessionUpdate`
 * discriminator). Emitted first in every turn, before any other event of it.
 */
export interface TurnStartedEvent {
  sessionUpdate: "turn_started";
  /** The prompt's text (blocks joined), as the agent received it. */
  prompt: string;
  /**
   * Start-up problems the user should see (lenient `SKILL.md` front matter, ignored agent keys,
   * skipped skills); only on a root session's first turn, and only when there are any.
   */
  warnings?: string[];
}

/**
 * End of a turn: emitted last in every turn, also on cancellation and faults. Frontends build
 * their result from it (headless `result`, ACP `PromptResponse`). `usage` includes the usage of
 * every sub-agent the turn ran (rolled up); `agents` lists them.
 */
export interface TurnEndedEvent {
  sessionUpdate: "turn_ended";
  stopReason: StopReason;
  usage: TurnUsage;
  denied: DeniedAction[];
  /** Final assistant text of the turn. */
  text: string;
  /** Set when the turn ended on a runtime fault (see {@link TurnResult.error}). */
  error?: { code: string; message: string };
  /** Sub-agents that ran in this turn (direct children; their usage is already in `usage`). */
  agents?: AgentRunSummary[];
  /** Checkpoints taken in this turn (see {@link CheckpointEvent}); absent when none. */
  checkpoints?: string[];
  /** A coordinator's gates at the end of the turn (see {@link GateOutcome}); absent elsewhere. */
  gates?: GateOutcome;
}

/**
 * Whether a coordinator's request ended complete under its gates (core/supervisor/gate_keeper.ts,
 * docs/subagents.md "Gates"): `complete` is false while a gate stands that no override lifts —
 * required reviewers not run, a DIVERGES/UNMET adversary verdict, a security FAIL, a Critical
 * finding, a child's worktree patch not applied (a conflict); `open` lists them (`gate` is the
 * `_meta.coyote.gate` of their events), `overrides` the gates the user's `gates.allow_*`
 * settings let the request end on.
 */
export interface GateOutcome {
  complete: boolean;
  open: { gate: string; reason: string }[];
  overrides: { gate: string; reason: string }[];
}

/**
 * The workspace was checkpointed before the turn's first change (issue 18; Coyote extension,
 * core/session/checkpoints/, docs/modes.md): `checkpointId` is what `coyote rewind --to` takes.
 * A checkpoint that could not be taken (a tree past the size limit, no git) carries `skipped`
 * (why) instead. `ms`: how long it took. Not sent over ACP (the ids are in the prompt
 * response's `_meta.coyote.checkpoints`).
 */
export interface CheckpointEvent {
  sessionUpdate: "checkpoint";
  checkpointId?: string;
  skipped?: string;
  ms: number;
}

/**
 * One lifecycle hook's run and what it decided (Coyote extension beside ACP's `SessionUpdate`;
 * docs/hooks.md). Emitted by the session into the running turn's stream (a `SessionStart` hook's
 * at the start of the first turn); not stored in the transcript. ACP clients get it as an
 * `agent_thought_chunk` with `_meta.coyote.event: "hook"`.
 */
export interface HookEvent {
  sessionUpdate: "hook";
  /** Claude Code's event name: `PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`, … */
  hookEventName: string;
  /** The matcher of the group the hook belongs to, when it has one. */
  matcher?: string;
  /** The hook's command. */
  command: string;
  /** Where it was configured: `config` (config.yaml), a workspace file's path, `plugin NAME`. */
  source: string;
  /**
   * - `allow` / `deny` / `ask`: a `PreToolUse` permission decision (exit 2 is `deny`);
   * - `block`: the prompt, the result or the stop was blocked (`decision: "block"` or exit 2);
   * - `context`: it added context for the model; `stop`: it asked to end the turn (`continue: false`);
   * - `none`: it ran and decided nothing; `error`: it failed, timed out or printed junk (the run
   *   goes on as if it had decided nothing; `reason` says what happened).
   */
  decision: "allow" | "deny" | "ask" | "block" | "context" | "stop" | "none" | "error";
  /** The reason (a block's or deny's, what went wrong) or the context added. */
  reason?: string;
  /** Its `systemMessage` for the user, if any. */
  systemMessage?: string;
  /** The tool call it was about (`PreToolUse`, `PostToolUse`). */
  toolCallId?: string;
  /** The tool's Coyote name (`execute_command`). */
  toolName?: string;
  /** `PreToolUse`: it rewrote the call's input (`updatedInput`). */
  updatedInput?: boolean;
  /** The hook's exit code (absent when it did not run to an exit, e.g. a timeout). */
  exitCode?: number;
}

/** Everything a session emits: ACP `SessionUpdate`s plus the turn lifecycle and hook events. */
export type SessionEvent = EngineEvent | TurnStartedEvent | TurnEndedEvent | HookEvent;

/** Receives events in order. Must not throw; must be cheap (called per chunk). */
export type EventSink = (event: SessionEvent) => void;

/**
 * The event envelope: every event a session emits reaches its frontend wrapped in one.
 * Headless (`stream-json` lines carry these fields), ACP (`session/update`, child events as
 * content of the parent's `agent__spawn` call) and text mode all render from this stream.
 *
 * - `session_id`: the session that emitted the event (a sub-agent has its own session and
 *   transcript).
 * - `agent`: the agent's name (`coyote`, `explore`, …).
 * - `agent_id`: this agent instance: `<agent>-<8 hex>` (the root's hex is the tail of its
 *   session id, so it is stable across resumes; a child's is random, e.g. `explore-3f2a9c1d`).
 * - `parent_id`: the `agent_id` of the agent that spawned this one; absent at the root.
 * - `parent_tool_call_id`: for a child, the parent's tool call that started its current run: its
 *   `agent__spawn`, or the `agent__send` that resumed it.
 * - `seq`: 1, 2, 3, … per `session_id` within one process (gapless; order of emission).
 * - `update`: the event.
 */
export interface EventEnvelope {
  session_id: string;
  agent: string;
  agent_id: string;
  parent_id?: string;
  parent_tool_call_id?: string;
  seq: number;
  /** The event; a session's own {@link CheckpointEvent}s travel in envelopes only. */
  update: SessionEvent | CheckpointEvent;
}

/** Receives envelopes in order (the root's and every descendant's). Must not throw. */
export type EnvelopeSink = (envelope: EventEnvelope) => void;

/** Where an agent instance sits in the agent tree. */
export interface AgentOrigin {
  agent: string;
  agentId: string;
  /** Parent's `agentId` (children only). */
  parentId?: string;
  /** The root session's id (equal to the session's own id at the root). */
  rootSessionId: string;
  /**
   * For a child: the root session's tool call (its `agent__spawn`, or the `agent__send` that
   * resumed a child of the root) the child's current run descends from. Frontends attach the
   * child's permission requests, questions and terminals to it.
   */
  rootToolCallId?: string;
  /** 0 at the root, parent's depth + 1 for a child. */
  depth: number;
}

/**
 * The tool call a permission request or a host service call belongs to. Each tool call gets its
 * own scope, so parallel calls (also of several children) are attributed right.
 */
export interface CallScope extends AgentOrigin {
  sessionId: string;
  toolCallId: string;
  toolName: string;
}

/** Host services bound to one tool call (ACP: fs / terminal / questions of that call). */
export type HostFactory = (scope: CallScope) => HostServices;

/** Guard decision for one access (deny > ask > allow). */
export type Decision = "allow" | "ask" | "deny";

/** Why the guard decided what it did; `rule` is the rule text that matched, if any. */
export interface GuardVerdict {
  decision: Decision;
  /** Human-readable reason, e.g. `rule Execute(rm *) denies "rm -rf /"`. */
  reason: string;
  rule?: string;
  access: ToolAccess;
}

/** The options offered when the guard asks (ACP `PermissionOptionKind`). */
export type PermissionOutcome =
  | "allow_once"
  | "allow_always"
  | "reject_once"
  | "reject_always"
  | "cancelled"
  /** Nobody answered within the agent's `escalation_timeout`: proceed on its own judgement. */
  | "timed_out";

/** A request for the frontend to resolve a guard `ask`. */
export interface PermissionRequest {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  title: string;
  kind: acp.ToolKind;
  rawInput: unknown;
  /** The verdicts that asked (at least one). */
  verdicts: GuardVerdict[];
  /** The asking tool call and its agent (a sub-agent's request bubbles up to the root). */
  scope?: CallScope;
}

/**
 * Resolves a guard `ask`: a terminal prompt (REPL), an ACP
 * `session/request_permission`, or an immediate `reject_once` (headless).
 * `allow_always` makes the engine add an allow rule to the session's policy.
 */
export type PermissionResolver = (
  request: PermissionRequest,
  signal: AbortSignal,
) => Promise<PermissionOutcome>;

/** An action the guard (or the user) refused during a turn; reported in headless `result`. */
export interface DeniedAction {
  toolCallId: string;
  toolName: string;
  access: ToolAccess;
  decision: Decision;
  reason: string;
  /** Only on a sub-agent's denial rolled up into its ancestors' results: the agent that asked. */
  agent_id?: string;
}

/** Token usage of one turn (sum over its model requests), OpenAI `usage` field names. */
export interface TurnUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Number of model requests made in the turn. */
  requests: number;
}

/** One sub-agent run, as reported in `turn_ended.agents` and the headless `result.agents`. */
export interface AgentRunSummary {
  agent_id: string;
  agent: string;
  session_id: string;
  parent_id: string;
  /** `queued` → `running` → `completed` | `failed` | `cancelled`. */
  status: "queued" | "running" | "completed" | "failed" | "cancelled";
  stop_reason?: StopReason;
  /** The child's usage including its own descendants. */
  usage: TurnUsage;
  /** Wall time from start to end (ms). */
  duration_ms?: number;
}

/** The outcome of `AgentSession.prompt`. */
export interface TurnResult {
  stopReason: StopReason;
  usage: TurnUsage;
  denied: DeniedAction[];
  /** Final assistant text of the turn (concatenated message chunks of the last response). */
  text: string;
  /** Set when the turn ended on a runtime fault (provider exhausted retries, stream cut). */
  error?: { code: string; message: string };
  /** Sub-agents that ran in this turn (see {@link TurnEndedEvent.agents}). */
  agents?: AgentRunSummary[];
  /** Checkpoints taken in this turn (see {@link TurnEndedEvent.checkpoints}). */
  checkpoints?: string[];
  /** A coordinator's gates at the end of the turn (see {@link TurnEndedEvent.gates}). */
  gates?: GateOutcome;
}

/**
 * What runs a turn for an agent: the LLM loop (core/engine/) implements it, and so will the
 * graph engine. Contract: `prompt` emits `turn_started` first and `turn_ended` last (also on
 * cancellation and faults), resolves with the same result `turn_ended` carries, and never
 * rejects for provider or tool faults; it rejects only when a turn is already running.
 */
export interface AgentRunner {
  readonly running: boolean;
  prompt(
    input: PromptInput,
    opts: { signal?: AbortSignal; onEvent: EventSink },
  ): Promise<TurnResult>;
  /** Stored events so far (for ACP `session/load` replay), chunks coalesced. */
  history(): EngineEvent[];
}

/** Input to a turn: plain text or ACP content blocks (text, resource, resource_link, image). */
export type PromptInput = string | acp.ContentBlock[];

// deno-lint-ignore no-explicit-any
export type AnyTool = ToolDefinition<any>;

/**
 * An agent definition as the runtime uses it: the SDK's {@link AgentDefinition} plus the
 * supervisor keys of the agent `config.yaml` (snake_case, as written there). Every key is
 * optional; defaults are in core/supervisor/limits.ts.
 */
export interface AgentSpec extends AgentDefinition {
  /** May this agent use the `agent__*` tools? Default false. */
  can_spawn_agents?: boolean;
  /** Agents it may spawn (names); omitted: any registered agent. */
  spawnable_agents?: string[];
  /** Children running at once; further spawns queue. */
  max_concurrent_agents?: number;
  /** Deepest level of the agent tree below the root (root = 0) this agent's subtree may reach. */
  max_agent_depth?: number;
  /** Sub-agents this agent may spawn per turn (all statuses count); more are refused. Default 50. */
  max_spawns_per_turn?: number;
  /**
   * Live (queued + running) sub-agent sessions in the whole tree under a root session running
   * this agent; more are refused. Only the root's value counts. Default 64.
   */
  max_live_agents?: number;
  /** A child's final answer longer than this (characters) is condensed in its result. */
  summarization_threshold?: number;
  /** Seconds a child's bubbled-up question waits for the user before it proceeds alone. */
  escalation_timeout?: number;
  /** Re-prompt while the todo list has open items at the end of a turn. */
  auto_continue?: boolean;
  max_auto_continues?: number;
  /** Where the definition came from (built-in, plugin name, file path). */
  source?: string;
  /**
   * A graph agent (`<name>/graph.yaml`, issue 8): its validated spec, its folder (scripts resolve
   * against it) and, for a built-in, the embedded files by relative path. Sessions run it with
   * core/graph/runner.ts instead of the LLM loop.
   */
  graph?: GraphBinding;
}

/** A graph agent's spec and where its scripts come from (see {@link AgentSpec.graph}). */
export interface GraphBinding {
  spec: import("./graph_spec.ts").GraphSpec;
  /** The folder of graph.yaml (`builtin:agents/<name>` for a built-in). */
  dir: string;
  /** Embedded files of a built-in graph (`scripts/verdict.ts` → text). */
  files?: Record<string, string>;
}
