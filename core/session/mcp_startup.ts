/**
 * MCP servers still starting when a root session's turn begins (issue 21; docs/mcp.md
 * "Start-up"). Servers start in the background; what a turn does about one still `starting`
 * depends on the session's `mcpStartup`:
 * - `background` (ACP, the REPL: a person can prompt again): the turn starts at once without
 *   that server's tools, which join the next model request once it is ready (the session's
 *   MCP change listener rebuilds the registry; a server's `notifications/tools/list_changed`
 *   too). The user is told with a standard ACP update, an `agent_thought_chunk` right after
 *   `turn_started` ("MCP server X is still starting …"), and another when each such server
 *   settles during the turn (ready with N tools / failed), each with
 *   `_meta.coyote {notice: "mcp_starting" | "mcp_ready" | "mcp_failed", servers}`. These chunks
 *   are notices, not model output: they reach the frontends, never the transcript or the model.
 *   A server that already failed because it needs an OAuth login (`needs OAuth …: run \`coyote
 *   mcp login X\``) gets one `mcp_failed` notice per session, at its first turn.
 * - `wait` (default: a headless run has no later prompt, so its only turn waits): one stderr
 *   line names the servers, then the turn waits for them (each bounded by its start-up timeout,
 *   `MCP_TIMEOUT`); a cancel stops the wait.
 * @module
 */
import type { EngineEvent } from "../protocol/types.ts";
import type { McpConnection } from "../extensions/mcp/mod.ts";
import { untilAborted } from "./wait.ts";

/** The notices of one `background` turn: call `start` after `turn_started`, `stop` at its end. */
export interface McpStartNotices {
  start(emit: (ev: EngineEvent) => void): void;
  stop(): void;
}

/** An `agent_thought_chunk` notice (see the module doc). */
function notice(
  text: string,
  kind: "mcp_starting" | "mcp_ready" | "mcp_failed",
  servers: unknown[],
): EngineEvent {
  return {
    sessionUpdate: "agent_thought_chunk",
    content: { type: "text", text },
    _meta: { coyote: { notice: kind, servers } },
  };
}

/** Per session view: the servers whose OAuth-login notice was sent. */
const authTold = new WeakMap<McpConnection, Set<string>>();

/** The error of a server that needs `coyote mcp login` (core/extensions/mcp/oauth/provider.ts). */
function isAuthError(error: string | undefined): boolean {
  return !!error && /^needs OAuth\b/.test(error);
}

/**
 * Handles the servers of `mcp` still starting at the start of a turn (see the module doc):
 * waits for them (`wait`), or returns the notices to send (`background`); null when none is
 * starting or there is nothing to send.
 */
export async function mcpAtTurnStart(
  mcp: McpConnection | null | undefined,
  o: { mode: "wait" | "background"; signal: AbortSignal; log: (line: string) => void },
): Promise<McpStartNotices | null> {
  if (!mcp) return null;
  const starting = mcp.servers.filter((s) => s.status === "starting").map((s) => s.name);
  // A server that needs an OAuth login (core/extensions/mcp/oauth/) fails fast, often before the
  // turn: told once per session in `background` mode too.
  const told = authTold.get(mcp) ?? new Set<string>();
  authTold.set(mcp, told);
  const needsLogin = o.mode === "background"
    ? mcp.servers.filter((s) => s.status === "failed" && isAuthError(s.error) && !told.has(s.name))
    : [];
  if (!starting.length && !needsLogin.length) return null;
  if (o.mode === "wait") {
    o.log(
      `coyote: waiting for MCP server${starting.length > 1 ? "s" : ""} ${
        starting.join(", ")
      } to start (bounded by MCP_TIMEOUT)`,
    );
    await untilAborted(mcp.ready, o.signal);
    return null;
  }
  const pending = new Set(starting);
  let off: (() => void) | null = null;
  return {
    start(emit) {
      for (const s of needsLogin) {
        told.add(s.name);
        emit(notice(`MCP server ${s.name} ${s.error}`, "mcp_failed", [
          { name: s.name, status: s.status, tools: 0, error: s.error },
        ]));
      }
      if (!pending.size) return;
      const list = [...pending].join(", ");
      emit(notice(
        `MCP server${
          pending.size > 1 ? "s" : ""
        } ${list} still starting: this turn begins without ${
          pending.size > 1 ? "their" : "its"
        } tools; they join the next model request once ready.`,
        "mcp_starting",
        [...pending].map((name) => ({ name, status: "starting" })),
      ));
      off = mcp.onChange((c) => {
        if (!pending.has(c.server) || (c.kind !== "ready" && c.kind !== "failed")) return;
        pending.delete(c.server);
        const s = mcp.servers.find((x) => x.name === c.server);
        if (isAuthError(s?.error)) told.add(c.server);
        const status = { name: c.server, status: s?.status ?? c.kind, tools: s?.tools ?? 0 };
        emit(
          c.kind === "ready"
            ? notice(
              `MCP server ${c.server} is ready: ${status.tools} tool(s) from the next model request.`,
              "mcp_ready",
              [status],
            )
            : notice(
              `MCP server ${c.server} failed to start: ${s?.error ?? "unknown error"}`,
              "mcp_failed",
              [{ ...status, ...(s?.error ? { error: s.error } : {}) }],
            ),
        );
      });
    },
    stop() {
      off?.();
      off = null;
    },
  };
}
