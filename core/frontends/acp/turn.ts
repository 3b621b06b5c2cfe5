/**
 * One `session/prompt` turn as the client sees it (ACP v1 "Prompt Turn"; docs/acp.md "Methods"):
 * the session's event envelopes become `session/update`s — the root agent's events unchanged
 * (the user echo dropped; an embedded client terminal kept), a sub-agent's progress as
 * `tool_call_update` content on the root's `agent__spawn` call that started it — every update
 * of the turn before its response, which comes from the `turn_ended` event: `{stopReason}` with
 * `_meta.coyote.usage`, `cancelled` (every unfinished tool call then ends `failed`), or `-32603`
 * for a runtime fault. Then the session's new title, if any (`session_info_update`). Admission
 * and cancel ordering stay in `./server.ts`, which calls {@link runTurn}.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type {
  EngineEvent,
  EventEnvelope,
  HookEvent,
  TurnEndedEvent,
  TurnResult,
} from "../../protocol/types.ts";
import { type AcpPeer, errText, finishChildCall, type LiveSession } from "./peer.ts";
import { titleOf } from "./replay.ts";
import type { TurnOverrides } from "../../session/types.ts";

/** Progress lines kept per sub-agent on its spawn call (the oldest are dropped). */
const CHILD_LINES = 12;

/** One line of at most 160 characters. */
function oneLine(s: string): string {
  const l = (s.split("\n").find((x) => x.trim()) ?? "").trim();
  return l.length > 160 ? l.slice(0, 159) + "…" : l;
}

/** Runs one prompt turn of `live` and answers it (see the module doc). */
export async function runTurn(
  peer: AcpPeer,
  live: LiveSession,
  params: acp.PromptRequest,
  ac: AbortController,
  overrides?: TurnOverrides,
): Promise<acp.PromptResponse> {
  const sessionId = live.session.id;
  live.calls.clear();
  live.children.clear();
  live.childCalls?.clear();
  // Every update of the turn precedes its response: a tool that outlives the turn (it
  // ignored the cancel past the engine's grace) cannot send updates afterwards.
  let turnOpen = true;
  let ended: TurnEndedEvent | null = null;
  const onEvent = (env: EventEnvelope) => {
    if (!turnOpen) return;
    if (env.session_id !== sessionId) return forwardChild(peer, live, env);
    if (env.update.sessionUpdate === "turn_ended") ended = env.update;
    else if (env.update.sessionUpdate === "hook") forward(peer, live, hookThought(env.update));
    // A checkpoint's id reaches the client in the response (`_meta.coyote.checkpoints`).
    else if (env.update.sessionUpdate === "checkpoint") return;
    else if (env.update.sessionUpdate !== "turn_started") forward(peer, live, env.update);
  };
  const running = live.session.prompt(params.prompt, { signal: ac.signal, onEvent, overrides });
  live.turn = { ac, done: running };
  let result: TurnResult;
  try {
    await running;
    if (!ended) throw new Error("the turn ended without a turn_ended event");
    result = ended;
  } catch (e) {
    if (ac.signal.aborted) result = { stopReason: "cancelled" } as TurnResult;
    else throw peer.sdk.RequestError.internalError(undefined, errText(e));
  } finally {
    live.turn = undefined;
    turnOpen = false;
  }
  // Announced sub-agent calls the turn ended before (a cancelled or collected-late child).
  for (const id of [...(live.childCalls ?? [])]) finishChildCall(peer, live, id, "failed");
  sendTitle(peer, live);
  if (result.usage) {
    const u = live.usage ??= { prompt_tokens: 0, completion_tokens: 0, requests: 0 };
    u.prompt_tokens += result.usage.prompt_tokens ?? 0;
    u.completion_tokens += result.usage.completion_tokens ?? 0;
    u.requests += result.usage.requests ?? 0;
  }
  const cancelled = ac.signal.aborted || result.stopReason === "cancelled";
  if (cancelled) {
    // Every tool call ends: finish stragglers the engine left open.
    for (const [toolCallId, status] of live.calls) {
      if (status !== "completed" && status !== "failed") {
        void peer.notify(sessionId, {
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: "failed",
        });
      }
    }
    live.calls.clear();
    return { stopReason: "cancelled" };
  }
  live.calls.clear();
  if (result.error) {
    // The editor's log (stderr) gets the failure too; the client gets it as the error below.
    console.error(`coyote: ${result.error.message}`);
    throw new peer.sdk.RequestError(-32603, `Internal error: ${result.error.message}`, {
      code: result.error.code,
      stopReason: result.stopReason,
    });
  }
  // ACP has no budget stop reason: `max_budget` (issue 18) is answered as `max_turn_requests`,
  // and `_meta.coyote.stopReason` keeps the exact one.
  const budget = result.stopReason === "max_budget";
  return {
    stopReason: result.stopReason === "max_budget" ? "max_turn_requests" : result.stopReason,
    _meta: {
      coyote: {
        usage: result.usage,
        denied: result.denied.length,
        ...(result.checkpoints?.length ? { checkpoints: result.checkpoints } : {}),
        ...(result.gates ? { gates: result.gates } : {}),
        ...(budget ? { stopReason: result.stopReason } : {}),
      },
    },
  };
}

/** `session_info_update {title}` once the session has a title the client has not seen. */
function sendTitle(peer: AcpPeer, live: LiveSession): void {
  const title = titleOf(live.session.history());
  if (!title || title === live.titleSent) return;
  live.titleSent = title;
  void peer.notify(live.session.id, {
    sessionUpdate: "session_info_update",
    title,
    updatedAt: new Date().toISOString(),
  });
}

/** Forwards one engine event of a live turn (user echo dropped; terminal embeds kept). */
function forward(peer: AcpPeer, live: LiveSession, ev: EngineEvent): void {
  const id = live.session.id;
  switch (ev.sessionUpdate) {
    case "user_message_chunk":
      return; // the client already shows its own prompt
    case "tool_call":
      live.calls.set(ev.toolCallId, ev.status ?? "pending");
      break;
    case "tool_call_update": {
      if (ev.status) live.calls.set(ev.toolCallId, ev.status);
      if (live.terminalCalls.has(ev.toolCallId) && ev.content) {
        // The embedded terminal already shows the output: keep it instead of replacing it.
        const { content: _drop, ...rest } = ev;
        void peer.notify(id, rest as acp.SessionUpdate);
        if (ev.status === "completed" || ev.status === "failed") {
          live.terminalCalls.delete(ev.toolCallId);
        }
        return;
      }
      break;
    }
  }
  void peer.notify(id, ev);
}

/**
 * A sub-agent's event: shown as `tool_call_update` content on the root's `agent__spawn` call
 * the sub-agent descends from (for a run resumed by `agent__send`, on that call: the envelope's
 * `parent_tool_call_id`) — one line per tool call it starts, per failure, and its end
 * (the last {@link CHILD_LINES} lines of each sub-agent). The full record is the
 * sub-agent's own transcript.
 */
function forwardChild(peer: AcpPeer, live: LiveSession, env: EventEnvelope): void {
  let view = live.children.get(env.agent_id);
  const parent = env.parent_id ? live.children.get(env.parent_id) : undefined;
  // A child of the root resumed by agent__send: its new run is shown on that call's card.
  const moved = view && !parent && env.parent_tool_call_id &&
    env.parent_tool_call_id !== view.rootCallId;
  if (!view || moved) {
    const rootCallId = parent?.rootCallId ?? env.parent_tool_call_id;
    if (!rootCallId) return;
    view = { rootCallId, lines: [] };
    live.children.set(env.agent_id, view);
  }
  const ev = env.update;
  if (
    ev.sessionUpdate === "tool_call_update" && (ev.status === "completed" || ev.status === "failed")
  ) {
    // A call announced for its permission request or question gets its final status.
    finishChildCall(peer, live, `${env.agent_id}/${ev.toolCallId}`, ev.status);
  }
  let line: string | null = null;
  if (ev.sessionUpdate === "turn_started") line = `started: ${oneLine(ev.prompt)}`;
  else if (ev.sessionUpdate === "tool_call") line = `• ${ev.title}`;
  else if (ev.sessionUpdate === "tool_call_update" && ev.status === "failed") {
    const c = ev.content?.[0];
    line = `  ✗ ${
      oneLine(c && c.type === "content" && c.content.type === "text" ? c.content.text : "failed")
    }`;
  } else if (ev.sessionUpdate === "turn_ended") {
    line = ev.error
      ? `failed: ${oneLine(ev.error.message)}`
      : `${ev.stopReason} (${ev.usage.requests} request(s), ${ev.usage.total_tokens} tokens)`;
  }
  if (line === null) return;
  view.lines.push(line);
  if (view.lines.length > CHILD_LINES) view.lines.splice(0, view.lines.length - CHILD_LINES);
  const rootCallId = view.rootCallId;
  const text = [...live.children.entries()]
    .filter(([, v]) => v.rootCallId === rootCallId)
    .map(([id, v]) => v.lines.map((l) => `[${id}] ${l}`).join("\n"))
    .join("\n");
  void peer.notify(live.session.id, {
    sessionUpdate: "tool_call_update",
    toolCallId: rootCallId,
    content: [{ type: "content", content: { type: "text", text } }],
    _meta: { coyote: { agent_id: env.agent_id, parent_id: env.parent_id, seq: env.seq } },
  });
}

/**
 * A lifecycle hook's event (core/protocol/types.ts `HookEvent`) as ACP has no such update: an
 * `agent_thought_chunk` line, the event itself in `_meta.coyote` (`event: "hook"`).
 */
function hookThought(h: HookEvent): acp.SessionUpdate {
  const { sessionUpdate: _, ...fields } = h;
  const what = h.reason ? `: ${oneLine(h.reason)}` : "";
  return {
    sessionUpdate: "agent_thought_chunk",
    content: { type: "text", text: `hook ${h.hookEventName} ${h.decision}${what}\n` },
    _meta: { coyote: { event: "hook", ...fields } },
  };
}
