/**
 * Guard `ask` → ACP `session/request_permission` (abandoned with `$/cancel_request` when
 * the turn is cancelled). A `cancelled` outcome cancels the turn; a failed request fails
 * closed (`reject_once`). A sub-agent's call is announced as a `tool_call` before its request
 * and finished (`failed` when rejected; else with the sub-agent's own final status), see
 * `./peer.ts` `announceChildCall`.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { PermissionOutcome, PermissionResolver } from "../../protocol/types.ts";
import {
  type AcpPeer,
  announceChildCall,
  errText,
  finishChildCall,
  scopeMeta,
  type SessionHolder,
} from "./peer.ts";

/** Options of the permission request, ACP `PermissionOptionKind` ids. */
export const PERMISSION_OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

/**
 * The permission resolver of one session. A sub-agent's request (its `scope.depth` > 0) is
 * sent in the root session, titled `<agent_id>: <title>`, with `_meta.coyote` naming the
 * sub-agent, its own tool call and the root's `agent__spawn` call.
 */
export function permissionResolver(peer: AcpPeer, holder: SessionHolder): PermissionResolver {
  return async (req, signal): Promise<PermissionOutcome> => {
    if (signal.aborted) return "cancelled";
    const child = req.scope && req.scope.depth > 0 ? req.scope : undefined;
    const live = holder.get();
    // A sub-agent's call is not one of the root's tool calls: announce it first, so the card the
    // request names exists and gets a final status.
    const toolCallId = await announceChildCall(peer, live, child, {
      toolCallId: req.toolCallId,
      title: req.title,
      kind: req.kind,
      rawInput: req.rawInput,
    });
    const rejected = () => live && finishChildCall(peer, live, toolCallId, "failed");
    try {
      const res = await peer.client.request("session/request_permission", {
        sessionId: live?.session.id ?? req.sessionId,
        toolCall: {
          toolCallId,
          title: child ? `${child.agentId}: ${req.title}` : req.title,
          kind: req.kind,
          status: "pending",
          rawInput: req.rawInput as Record<string, unknown>,
        },
        options: PERMISSION_OPTIONS,
        ...(child ? { _meta: { coyote: scopeMeta(child) } } : {}),
      }, { cancellationSignal: signal, stopWaitingOnCancel: true });
      if (res.outcome.outcome !== "selected") {
        rejected();
        holder.get()?.turn?.ac.abort();
        return "cancelled";
      }
      const id = res.outcome.optionId;
      if (id === "allow_once" || id === "allow_always") return id;
      rejected();
      return id === "reject_always" ? id : "reject_once";
    } catch (e) {
      rejected();
      if (signal.aborted) return "cancelled";
      console.error(`coyote: permission request failed, rejecting: ${errText(e)}`);
      return "reject_once";
    }
  };
}
