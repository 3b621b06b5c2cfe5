/**
 * Tool scheduling: the calls of one model response run in order, except that consecutive
 * calls whose tool may run beside others (`concurrency: "parallel"`; default: read-only
 * tools) run as one concurrent batch. Each call is prepared (validated, guarded) before its
 * batch starts; a batch's results enter the history in call order.
 * @module
 */
import type { AnyTool } from "../protocol/types.ts";
import type { ChatMessage } from "../transcript/types.ts";
import { executeCall } from "./execute.ts";
import { prepareCall } from "./prepare.ts";
import { Cancelled, type ModelToolCall, type PreparedCall, type TurnContext } from "./types.ts";

/**
 * True when the tool may run concurrently with other such calls: its `concurrency` flag, or
 * (SDK 1.0 tools without it) `readOnly`.
 */
export function runsInParallel(tool: AnyTool | undefined): boolean {
  if (!tool) return false;
  if (tool.concurrency) return tool.concurrency === "parallel";
  return tool.readOnly === true;
}

/** Runs one response's tool calls (see the module doc); every call is answered in the history. */
export async function runCalls(t: TurnContext, calls: ModelToolCall[]): Promise<void> {
  // A user message of a call (a result's images, core/engine/execute.ts) waits until every call
  // of the response has its tool result: tool messages must follow their assistant message.
  // (`t` itself, not a copy: preparing calls updates its state, e.g. `t.repeat`.)
  const held: ChatMessage[] = [];
  const push = t.pushMessage;
  t.pushMessage = (m, interrupted) =>
    m.role === "user" ? void held.push(m) : push.call(t, m, interrupted);
  try {
    await runAll(t, calls);
  } finally {
    t.pushMessage = push;
  }
  for (const m of held) push.call(t, m);
}

async function runAll(t: TurnContext, calls: ModelToolCall[]): Promise<void> {
  let i = 0;
  while (i < calls.length) {
    if (t.signal.aborted) throw new Cancelled();
    const first = await prepareCall(t, calls[i]);
    if (!runsInParallel(first.tool) || first.refusal) {
      await executeCall(t, first);
      i++;
      continue;
    }
    const batch = [first];
    i++;
    while (i < calls.length && runsInParallel(t.opts.registry.get(calls[i].name))) {
      if (t.signal.aborted) break;
      batch.push(await prepareCall(t, calls[i]));
      i++;
    }
    await runBatch(t, batch);
  }
}

/**
 * Runs a batch concurrently; their `tool` messages enter the history in call order (not in
 * completion order), also when the batch ends early on a cancel.
 */
async function runBatch(t: TurnContext, batch: PreparedCall[]): Promise<void> {
  const slots: { m: ChatMessage; interrupted?: boolean }[][] = batch.map(() => []);
  const runs = batch.map((p, i) =>
    executeCall({ ...t, pushMessage: (m, interrupted) => slots[i].push({ m, interrupted }) }, p)
  );
  const settled = await Promise.allSettled(runs);
  for (const slot of slots) for (const { m, interrupted } of slot) t.pushMessage(m, interrupted);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}
