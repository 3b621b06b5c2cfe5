/**
 * `session/load` replay and session titles.
 *
 * A transcript can hold a tool call that never ended (the process crashed or was killed
 * mid-call): replayed as is, the editor would show it running forever. {@link replayUpdates}
 * ends every such call with `tool_call_update {status: "failed"}` at the end of its turn.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { EngineEvent } from "../../protocol/types.ts";

/** Text shown on a replayed call that never finished. */
export const UNFINISHED_NOTE = "did not finish: the session ended while this tool call ran";

/** The stored updates, each turn's unfinished tool calls closed as `failed`. */
export function replayUpdates(history: EngineEvent[]): acp.SessionUpdate[] {
  const out: acp.SessionUpdate[] = [];
  const open = new Map<string, string>();
  const flush = () => {
    for (const toolCallId of open.keys()) {
      out.push({
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "failed",
        content: [{ type: "content", content: { type: "text", text: UNFINISHED_NOTE } }],
      });
    }
    open.clear();
  };
  for (const u of history as acp.SessionUpdate[]) {
    if (u.sessionUpdate === "user_message_chunk" && open.size) flush();
    if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") {
      const st = u.status ?? (u.sessionUpdate === "tool_call" ? "pending" : undefined);
      if (st === "completed" || st === "failed") open.delete(u.toolCallId);
      else if (st || u.sessionUpdate === "tool_call") open.set(u.toolCallId, st ?? "pending");
    }
    out.push(u);
  }
  flush();
  return out;
}

/**
 * The session title: the first user message's text, whitespace collapsed, at most 80
 * characters (the rule `--list-sessions` and `session/list` use).
 */
export function titleOf(history: EngineEvent[]): string {
  for (const u of history as acp.SessionUpdate[]) {
    if (u.sessionUpdate !== "user_message_chunk") continue;
    const c = u.content as { type: string; text?: string };
    if (c.type !== "text" || !c.text) continue;
    let t = c.text.replace(/\s+/g, " ").trim();
    if (t.length > 80) t = t.slice(0, 79) + "…";
    if (t) return t;
  }
  return "";
}
