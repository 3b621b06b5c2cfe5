/**
 * How failures become JSON-RPC errors in the ACP server (codes from JSON-RPC 2.0 and ACP):
 * unknown stored session `-32002`; `UsageError` (unknown agent, bad `cwd`) `-32602`;
 * `ConfigError` (no provider, bad `config.yaml`) `-32603` "Configuration error: …";
 * anything else `-32603` with the message (never a stack trace).
 * @module
 */
import { errText } from "./peer.ts";

/** Maps an error of `createSession` to the `RequestError` the client sees. */
export function sessionOpenError(
  sdk: typeof import("@agentclientprotocol/sdk"),
  e: unknown,
  resumeId?: string,
): Error {
  if (resumeId && /no stored session|not found/i.test(errText(e))) {
    return sdk.RequestError.sessionNotFound(resumeId);
  }
  if (e instanceof Error && e.name === "UsageError") {
    return sdk.RequestError.invalidParams(undefined, e.message);
  }
  if (e instanceof Error && e.name === "ConfigError") return configError(sdk, e.message);
  return sdk.RequestError.internalError(undefined, errText(e));
}

/** `-32603` "Configuration error: …" (the message says what to fix). */
export function configError(
  sdk: typeof import("@agentclientprotocol/sdk"),
  message: string,
): Error {
  return new sdk.RequestError(-32603, `Configuration error: ${message}`);
}
