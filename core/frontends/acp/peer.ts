/**
 * What the ACP helper modules (permission, client host, config options) need from the
 * server: the client connection, the client's capabilities and the live session of a
 * handler. Kept as a small interface so those modules do not depend on `server.ts`.
 * @module
 */
import type { CustomCommand } from "../../extensions/commands/load.ts";
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentSession } from "../../session/runtime.ts";
import type { CallScope } from "../../protocol/types.ts";

/** One session of the ACP server, as the helper modules see it. */
export interface LiveSession {
  session: AgentSession;
  turn?: { ac: AbortController; done: Promise<unknown> };
  /** Last known status per tool call of the running turn (to finish stragglers as `failed`). */
  calls: Map<string, acp.ToolCallStatus | undefined>;
  /** Tool calls whose command runs in a client terminal → terminal id. */
  terminalCalls: Map<string, string>;
  /**
   * Sub-agents of the running turn: agent id → the root's tool call (`agent__spawn`) it
   * descends from and the progress lines shown on that call.
   */
  children: Map<string, { rootCallId: string; lines: string[] }>;
  /**
   * Sub-agents' tool calls announced to the client (a `tool_call` sent before their permission
   * request or question, {@link announceChildCall}) and not finished yet, by client id.
   */
  childCalls?: Set<string>;
  /** Title last sent as `session_info_update`. */
  titleSent?: string;
  /** MCP changes are being forwarded (see `./mcp_bridge.ts`). */
  mcpWatched?: boolean;
  /** The workspace's custom slash commands (core/frontends/slash/custom.ts), loaded at open. */
  custom?: CustomCommand[];
  /** Token usage of this connection's turns in the session (for `/cost`). */
  usage?: { prompt_tokens: number; completion_tokens: number; requests: number };
}

/** Resolves the live session a host service or resolver belongs to (set once it is open). */
export interface SessionHolder {
  get(): LiveSession | undefined;
}

/** The server side the helper modules talk through. */
export interface AcpPeer {
  readonly sdk: typeof import("@agentclientprotocol/sdk");
  /** The client's capabilities from `initialize`. */
  readonly clientCaps: acp.ClientCapabilities;
  /** The client connection (throws when it is not open). */
  readonly client: acp.AgentContext;
  /** Sends one `session/update`; never throws. */
  notify(sessionId: string, update: acp.SessionUpdate): Promise<void>;
}

/**
 * The `toolCallId` a permission request or question carries in the root session. A root call's
 * own id; a sub-agent's call is not a tool call of the root session (its progress is content
 * of the `agent__spawn` call), and its model-chosen id may equal one of the root's (servers that
 * number calls per response send `call_0` in every session), so it is prefixed with the
 * sub-agent's id (`explore-3f2a9c1d/call_0`); the bare id stays in `_meta.coyote.tool_call_id`.
 */
export function clientToolCallId(toolCallId: string, scope?: CallScope): string {
  return scope && scope.depth > 0 ? `${scope.agentId}/${toolCallId}` : toolCallId;
}

/**
 * `_meta.coyote` of a sub-agent's permission request or question: who asks, from which
 * call, under which root tool call.
 */
export function scopeMeta(scope: CallScope): Record<string, unknown> {
  return {
    agent: scope.agent,
    agent_id: scope.agentId,
    parent_id: scope.parentId,
    session_id: scope.sessionId,
    tool_call_id: scope.toolCallId,
    parent_tool_call_id: scope.rootToolCallId,
  };
}

/**
 * Announces a sub-agent's tool call to the client as a `tool_call` (status `pending`) under its
 * client id ({@link clientToolCallId}), once, before a `session/request_permission` or question
 * names it: an editor draws a card for the id a permission request carries, and that card then
 * gets its final status — from the sub-agent's own `tool_call_update` (`./turn.ts`
 * `forwardChild`), or `failed` when the turn ends first. `_meta.coyote` names the sub-agent
 * and the root's `agent__spawn` call. A no-op for a root call (the engine announced it).
 * Returns the client id.
 */
export async function announceChildCall(
  peer: AcpPeer,
  live: LiveSession | undefined,
  scope: CallScope | undefined,
  call: { toolCallId: string; title: string; kind?: acp.ToolKind; rawInput?: unknown },
): Promise<string> {
  const id = clientToolCallId(call.toolCallId, scope);
  if (!live || !scope || scope.depth === 0) return id;
  const open = live.childCalls ??= new Set();
  if (open.has(id) || live.calls.has(id)) return id;
  open.add(id);
  live.calls.set(id, "pending");
  await peer.notify(live.session.id, {
    sessionUpdate: "tool_call",
    toolCallId: id,
    title: `${scope.agentId}: ${call.title}`,
    ...(call.kind ? { kind: call.kind } : {}),
    status: "pending",
    ...(call.rawInput !== undefined ? { rawInput: call.rawInput as Record<string, unknown> } : {}),
    _meta: { coyote: scopeMeta(scope) },
  });
  return id;
}

/**
 * Sends the final `tool_call_update` of an announced sub-agent call (see
 * {@link announceChildCall}); a no-op for any other id or a call already finished.
 */
export function finishChildCall(
  peer: AcpPeer,
  live: LiveSession,
  id: string,
  status: "completed" | "failed",
): void {
  if (!live.childCalls?.delete(id)) return;
  live.calls.set(id, status);
  void peer.notify(live.session.id, { sessionUpdate: "tool_call_update", toolCallId: id, status });
}

/** Message of any thrown value. */
export function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Waits for `p` at most `ms` (the timer is cleared either way). */
export async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let t: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => (t = setTimeout(r, ms)))]);
  clearTimeout(t);
}
