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
import type { ToolAccess, ToolDefinition } from "../sdk/mod.ts";

/** One engine event: exactly ACP's `SessionUpdate` (discriminated by `sessionUpdate`). */
export type EngineEvent = acp.SessionUpdate;
/** ACP stop reasons: `end_turn`, `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`. */
export type StopReason = acp.StopReason;
/**
 * ACP tool-call status: `pending` → `in_progress` → `completed` | `failed`; a call the guard or the
 * user refuses never runs and goes `pending` → `failed`.
 */
export type ToolCallStatus = acp.ToolCallStatus;

/** Receives engine events in order. Must not throw; must be cheap (called per chunk). */
export type EventSink = (event: EngineEvent) => void;

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
  | "cancelled";

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
}

/** Token usage of one turn (sum over its model requests), OpenAI `usage` field names. */
export interface TurnUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Number of model requests made in the turn. */
  requests: number;
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
}

/** Input to a turn: plain text or ACP content blocks (text, resource, resource_link, image). */
export type PromptInput = string | acp.ContentBlock[];

// deno-lint-ignore no-explicit-any
export type AnyTool = ToolDefinition<any>;
