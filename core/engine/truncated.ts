/**
 * Tool calls of a response cut by the output token limit (`finish_reason: "length"`): their
 * arguments may parse and still be incomplete (a file's content cut short), so none of them runs.
 * Each is announced and failed (`tool_call`, status `failed`, ACP) so the user's view shows it,
 * answered in the history with a `tool` result telling the model why, and one warning line goes
 * to the log (stderr). Used by core/engine/loop.ts.
 * @module
 */
import type { ChatMessage } from "../transcript/types.ts";
import type { EngineEvent } from "../protocol/types.ts";

/** What the model is told in each refused call's `tool` result. */
export const CUT_CALL_RESULT = "error: not run — your output was cut off by the output token " +
  'limit (finish_reason "length") before this tool call was complete, so its arguments may be ' +
  "truncated. Send the call again with smaller arguments (e.g. write a large file in parts).";

/** Refuses `calls` (see the module doc); `push` adds a message to the history. */
export function refuseCutCalls(
  calls: readonly { id: string; name: string; arguments: string }[],
  emit: (ev: EngineEvent) => void,
  push: (m: ChatMessage) => void,
  log: (line: string) => void,
): void {
  for (const c of calls) {
    emit({
      sessionUpdate: "tool_call",
      toolCallId: c.id,
      title: c.name || "tool call",
      kind: "other",
      status: "failed",
      rawInput: { arguments: c.arguments },
      content: [{ type: "content", content: { type: "text", text: CUT_CALL_RESULT } }],
    });
    push({ role: "tool", tool_call_id: c.id, content: CUT_CALL_RESULT });
  }
  log(
    `coyote: warning: the model's output hit its token limit (finish_reason "length"); ` +
      `${calls.length} cut tool call(s) not run: ${calls.map((c) => c.name).join(", ")}`,
  );
}
