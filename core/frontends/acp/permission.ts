/**
 * Guard `ask` → ACP `session/request_permission` (abandoned with `$/cancel_request` when
 * the turn is cancelled). A `cancelled` outcome cancels the turn; a failed request fails
 * closed (`reject_once`).
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { PermissionOutcome, PermissionResolver } from "../../protocol/types.ts";
import { type AcpPeer, clientToolCallId, errText, scopeMeta, type SessionHolder } from "./peer.ts";

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
    try {
      const child = req.scope && req.scope.depth > 0 ? req.scope : undefined;
      const res = await peer.client.request("session/request_permission", {
        sessionId: holder.get()?.session.id ?? req.sessionId,
        toolCall: {
          toolCallId: clientToolCallId(req.toolCallId, child),
          title: child ? `${child.agentId}: ${req.title}` : req.title,
          kind: req.kind,
          status: "pending",
          rawInput: req.rawInput as Record<string, unknown>,
        },
        options: PERMISSION_OPTIONS,
        ...(child ? { _meta: { coyote: scopeMeta(child) } } : {}),
      }, { cancellationSignal: signal, stopWaitingOnCancel: true });
      if (res.outcome.outcome !== "selected") {
        holder.get()?.turn?.ac.abort();
        return "cancelled";
      }
      const id = res.outcome.optionId;
      if (
        id === "allow_once" || id === "allow_always" || id === "reject_once" ||
        id === "reject_always"
      ) return id;
      return "reject_once";
    } catch (e) {
      if (signal.aborted) return "cancelled";
      console.error(`coyote: permission request failed, rejecting: ${errText(e)}`);
      return "reject_once";
    }
  };
}
