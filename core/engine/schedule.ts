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
