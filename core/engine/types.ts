/**
 * Shared shapes of the engine modules: options, the model client and policy it needs, the
 * per-turn context the scheduling / gate / execution modules work on, and the engine limits.
 * @module
 */
import type { HostServices, ToolAccess } from "../../sdk/mod.ts";
import type {
  AgentOrigin,
  AnyTool,
  DeniedAction,
  EngineEvent,
  GuardVerdict,
  HostFactory,
  PermissionResolver,
} from "../protocol/types.ts";
import type { ChatMessage } from "../transcript/types.ts";
import type { TranscriptWriter } from "../transcript/writer.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { ModelResponse } from "../provider/types.ts";
import type { ModelPrice } from "../config/models.ts";

/** The streamed completion the provider returns. */
export type { ModelResponse };

/** The part of core/provider/provider.ts the engine needs (structural, so tests can pass any client). */
export interface ModelClient {
  complete(
    req: {
      messages: ChatMessage[];
      tools?: unknown[];
      model?: string;
      temperature?: number;
      top_p?: number;
      reasoning_effort?: string;
    },
    handlers: {
      onText?: (delta: string) => void;
      onReasoning?: (delta: string) => void;
      onToolCallDelta?: (...args: never[]) => void;
    },
    signal?: AbortSignal,
  ): Promise<ModelResponse>;
}

/** The part of the guard policy the engine needs (core/policy/policy.ts `Policy`). */
export interface PolicyLike {
  evaluate(access: ToolAccess): Promise<GuardVerdict>;
  addRule(decision: "allow" | "deny" | "ask", rule: string, source?: string): void;
}

/** What an engine adds its usage to and reads its budget from (core/supervisor/budget.ts). */
export interface BudgetMeter {
  add(
    usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number },
    price?: ModelPrice,
  ): void;
  tokens(): number;
  usd(): number;
}

/**
 * Called when the model answered without tool calls, before the turn ends. Returning text
 * continues the turn with that text as a new user message (sub-agent reminders,
 * `auto_continue`); returning null ends it. Called again after each continuation.
 */
export type BeforeTurnEnd = (state: { text: string; signal: AbortSignal }) => Promise<
  string | null
>;

export interface EngineOptions {
  sessionId: string;
  /** Absolute workspace root. */
  cwd: string;
  client: ModelClient;
  model: string;
  temperature?: number;
  /** The agent's `top_p` and `reasoning_effort`, sent when set. */
  top_p?: number;
  reasoning_effort?: string;
  registry: ToolRegistry;
  policy: PolicyLike;
  permission: PermissionResolver;
  /** Host services for every call, or a factory binding them to each call (ACP). */
  host?: HostServices | HostFactory;
  systemPrompt: string;
  /** Model requests allowed per turn. */
  maxTurns: number;
  /**
   * The turn's budget (issue 18): before each model request, a turn whose `usage.total_tokens`
   * reached `tokens`, or whose cost at `price()` (USD per million tokens, core/config/models.ts)
   * reached `usd`, ends with stop reason `max_budget`. Without a price `usd` cannot be checked.
   */
  budget?: {
    tokens?: number;
    usd?: number;
    price?: () => ModelPrice | undefined;
    /**
     * The agent tree's meter (core/supervisor/budget.ts): each response's usage is added to it
     * and the caps are checked against its totals, so sub-agents spend from the root's budget.
     */
    tree?: BudgetMeter;
  };
  /**
   * Context window (tokens): reported in `usage_update.size`, sizes tool results
   * (core/engine/context.ts). Replaced each turn by `modelInfo(model)` when that is given.
   */
  contextWindow?: number;
  /** Tokens reserved for the answer out of the window. */
  maxOutputTokens?: number;
  /** Image input: false replaces prompt images by a note; undefined sends them. */
  images?: boolean;
  /** The capabilities of a model by name (core/config/models.ts `modelInfo`), read at each turn start. */
  modelInfo?: (
    model: string,
  ) => { contextWindow: number; images?: boolean; maxOutputTokens?: number };
  /** Prior model history (without the system message). */
  history?: ChatMessage[];
  /** Prior events (for `history()`). */
  updates?: EngineEvent[];
  transcript?: TranscriptWriter;
  /** Diagnostics sink (stderr by default); never stdout. */
  log?: (line: string) => void;
  /** Who runs this engine in the agent tree (default: a root agent named `agent`). */
  origin?: AgentOrigin;
  beforeTurnEnd?: BeforeTurnEnd;
  /** Lifecycle hooks (PreToolUse, PostToolUse, UserPromptSubmit, PreCompact). */
  hooks?: EngineHooks;
  /**
   * Awaited before each model request (bounded by the caller): the session lets an MCP tool-list
   * change that is still landing (a server just ready, `notifications/tools/list_changed`) reach
   * `registry`, so the request's tool list is current. Must not throw.
   */
  beforeRequest?: () => Promise<void>;
  /**
   * Awaited before a tool call that may change the workspace runs (a tool not marked
   * `readOnly`): the session checkpoints the workspace before its turn's first change there
   * (issue 18, core/session/checkpoints/). Must not throw.
   */
  beforeChange?: (toolName: string) => Promise<void>;
  /**
   * Checked after each batch of tool calls: true ends the turn (`end_turn`) without another
   * model request (a graph llm node whose `submit_result` call has delivered its result).
   */
  endTurnAfterTools?: () => boolean;
}

/**
 * Claude Code's lifecycle hooks as the engine calls them (core/session/hooks.ts runs the
 * configured commands; docs/hooks.md). Each never throws; a hook's failure is "no decision".
 */
export interface EngineHooks {
  /**
   * `UserPromptSubmit`, right after `turn_started`: `block` ends the turn before any request (the
   * prompt does not enter the history); `context` follows the prompt as a user message.
   */
  userPromptSubmit?(
    prompt: string,
    signal: AbortSignal,
  ): Promise<{ block?: string; context?: string }>;
  /**
   * `PreToolUse`, after validation and before the guard: `deny` refuses the call (the reason
   * goes to the model), `ask` asks even where the policy allows, `allow` skips the policy's ask
   * (never its deny), `input` replaces the arguments (validated again), `context` is added to
   * the call's result for the model.
   */
  preToolUse?(
    call: { id: string; name: string; input: unknown },
    signal: AbortSignal,
  ): Promise<
    {
      deny?: string;
      ask?: string;
      allow?: boolean;
      input?: Record<string, unknown>;
      context?: string;
    }
  >;
  /** `PostToolUse`, after a call succeeded: text to add to its result for the model, if any. */
  postToolUse?(
    call: { id: string; name: string; input: unknown; output: string; rawOutput?: unknown },
    signal: AbortSignal,
  ): Promise<string | undefined>;
  /** `PreCompact`, before older turns are summarised (`manual`: `/compact`). */
  preCompact?(trigger: "manual" | "auto", focus?: string): Promise<void>;
}

/** Longest tool output passed to the model (characters), whatever the window (core/engine/context.ts). */
export { MAX_TOOL_OUTPUT } from "./context.ts";
/** Identical consecutive calls (same name and arguments) allowed before the engine refuses. */
export const REPEAT_LIMIT = 3;
/**
 * After a cancel, how long a running tool may take to stop (kill its processes, release a
 * client terminal) before the turn ends without it (ms). ACP `session/cancel`: the agent
 * answers `cancelled` after its operations were aborted.
 */
export const CANCEL_GRACE_MS = 3_000;

/** Thrown inside a turn when it is cancelled; the loop ends the turn `cancelled`. */
export class Cancelled extends Error {}

/** One tool call of a model response. */
export type ModelToolCall = ModelResponse["toolCalls"][number];

/** A call after validation and the guard: ready to run, or refused with a message. */
export interface PreparedCall {
  id: string;
  name: string;
  tool?: AnyTool;
  input?: unknown;
  /** Set when the call must not run: message for the model. */
  refusal?: string;
  denied?: boolean;
  locations?: { path: string; line?: number }[];
  /** A `PreToolUse` hook's context, added to the call's result for the model. */
  hookContext?: string;
}

/** What the scheduling, gate and execution modules share during one turn. */
export interface TurnContext {
  opts: EngineOptions;
  signal: AbortSignal;
  emit(ev: EngineEvent): void;
  pushMessage(m: ChatMessage, interrupted?: boolean): void;
  log(line: string): void;
  denied: DeniedAction[];
  /** Calls of the current response already answered in the history. */
  answered: Set<string>;
  /** Consecutive identical calls: last key and its count. */
  repeat: { key: string; count: number };
  origin: AgentOrigin;
}
