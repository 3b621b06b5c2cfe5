/**
 * Call ids of a graph's llm nodes (./runner.ts): a node's engine numbers its calls per response,
 * so its events carry them prefixed per conversation (`<node>#<n>/<id>`); its permission requests
 * and host services' scope name the calls the same way, so a frontend ties a request to the call
 * it shows (ACP: the card announced for a child's request gets that call's final status).
 * @module
 */
import type { HostServices } from "../../sdk/mod.ts";
import type { CallScope, HostFactory, PermissionResolver } from "../protocol/types.ts";

/** `<prefix>/<id>` in a call scope: the call's id, and the root's call at the root. */
function prefixScope<T extends CallScope>(prefix: string, scope: T): T {
  return {
    ...scope,
    toolCallId: `${prefix}/${scope.toolCallId}`,
    ...(scope.depth === 0 ? { rootToolCallId: `${prefix}/${scope.toolCallId}` } : {}),
  };
}

/** The permission requests of an llm node's engine, with its calls' ids as its events carry them. */
export function prefixedPermission(prefix: string, p: PermissionResolver): PermissionResolver {
  return (req, signal) =>
    p({
      ...req,
      toolCallId: `${prefix}/${req.toolCallId}`,
      ...(req.scope ? { scope: prefixScope(prefix, req.scope) } : {}),
    }, signal);
}

/** The host services of an llm node's engine, bound to its calls' ids as its events carry them. */
export function prefixedHost(
  prefix: string,
  host: HostServices | HostFactory | undefined,
): HostServices | HostFactory | undefined {
  return typeof host === "function" ? (scope) => host(prefixScope(prefix, scope)) : host;
}
