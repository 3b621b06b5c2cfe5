/**
 * The guard gate: every access a tool call needs is evaluated by the policy (deny > ask >
 * allow; an evaluation error is a deny — the guard fails closed); an `ask` goes to the
 * permission resolver with the call's {@link CallScope} (so a sub-agent's request bubbles up
 * to the root frontend attributed to the right call); `allow_always` / `reject_always` add a
 * session rule. A `PreToolUse` hook's `allow` skips the asks (never a deny) and its `ask` adds one.
 * @module
 */
import type { ToolAccess } from "../../sdk/mod.ts";
import type { CallScope, GuardVerdict, PermissionOutcome } from "../protocol/types.ts";
import { Cancelled, type PreparedCall, type TurnContext } from "./types.ts";

/**
 * The policy rule that `allow_always` / `reject_always` adds for an access.
 * Syntax of docs/permissions.md: `Execute(cmd)`, `Read(path)`, `Write(path)`, `Net(host)`, `Tool(name)`.
 */
export function ruleFor(access: ToolAccess): string {
  switch (access.type) {
    case "execute":
      return `Execute(${access.command})`;
    case "read":
      return `Read(${access.path})`;
    case "write":
      return `Write(${access.path})`;
    case "net":
      return `Net(${access.host})`;
    case "tool":
      return `Tool(${access.name})`;
  }
}

/** The scope of one tool call of this turn's agent. */
export function callScope(t: TurnContext, toolCallId: string, toolName: string): CallScope {
  return {
    ...t.origin,
    rootToolCallId: t.origin.depth === 0 ? toolCallId : t.origin.rootToolCallId,
    sessionId: t.opts.sessionId,
    toolCallId,
    toolName,
  };
}

/**
 * Gates a validated call: sets `p.refusal` (and `p.denied`) when the policy or the user
 * refuses. Throws {@link Cancelled} when the turn was cancelled while asking.
 */
export async function gateCall(
  t: TurnContext,
  p: PreparedCall,
  accesses: ToolAccess[],
  info: { title: string; rawInput: unknown; ask?: string; allow?: boolean },
): Promise<void> {
  const o = t.opts;
  const verdicts = await Promise.all(
    accesses.map((a) =>
      o.policy.evaluate(a).catch((e): GuardVerdict => ({
        decision: "deny",
        reason: `the guard could not evaluate this access (${(e as Error)?.message ?? e})`,
        access: a,
      }))
    ),
  );
  const deny = verdicts.find((v) => v.decision === "deny");
  if (deny) {
    t.denied.push({
      toolCallId: p.id,
      toolName: p.name,
      access: deny.access,
      decision: "deny",
      reason: deny.reason,
    });
    p.refusal = `error: denied by policy: ${deny.reason}`;
    p.denied = true;
    return;
  }
  // A `PreToolUse` hook's `allow` answers the policy's asks; its `ask` asks where it allows.
  const asks = info.allow ? [] : verdicts.filter((v) => v.decision === "ask");
  if (info.ask !== undefined) {
    asks.push({
      decision: "ask",
      reason: `a PreToolUse hook asks${info.ask ? `: ${info.ask}` : ""}`,
      access: { type: "tool", name: p.name },
    });
  }
  if (!asks.length) return;
  let outcome: PermissionOutcome;
  try {
    outcome = await o.permission({
      sessionId: o.sessionId,
      toolCallId: p.id,
      toolName: p.name,
      title: info.title,
      kind: p.tool?.kind ?? "other",
      rawInput: info.rawInput,
      verdicts: asks,
      scope: callScope(t, p.id, p.name),
    }, t.signal);
  } catch (e) {
    if (t.signal.aborted) outcome = "cancelled";
    else {
      t.log(`coyote: permission request failed: ${(e as Error).message}`);
      outcome = "reject_once";
    }
  }
  if (outcome === "cancelled" || t.signal.aborted) {
    p.refusal = "error: cancelled while waiting for permission";
    t.emit({
      sessionUpdate: "tool_call_update",
      toolCallId: p.id,
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: p.refusal } }],
    });
    throw new Cancelled();
  }
  const remember = (decision: "allow" | "deny") => {
    for (const v of asks) {
      try {
        o.policy.addRule(decision, ruleFor(v.access), "session");
      } catch (e) {
        t.log(
          `coyote: could not remember the ${decision} rule ${ruleFor(v.access)}: ${
            (e as Error).message
          }`,
        );
      }
    }
  };
  if (outcome === "allow_always") return remember("allow");
  if (outcome === "allow_once") return;
  if (outcome === "reject_always") remember("deny");
  for (const v of asks) {
    t.denied.push({
      toolCallId: p.id,
      toolName: p.name,
      access: v.access,
      decision: "ask",
      reason: v.reason,
    });
  }
  const why = asks.map((v) => v.reason).join("; ");
  p.refusal = outcome === "timed_out"
    ? `error: not approved: ${why} — nobody answered the permission request in time, so this action was not performed. Proceed on your own judgement without it.`
    : `error: denied: ${why} — the user (or headless mode) did not approve this action. Do not retry it; continue without it or explain what is needed.`;
  p.denied = true;
}
