/**
 * The shapes of a live MCP connection: the options of `connectMcpServers` (./mod.ts), the status
 * of one server, the changes a connection reports, the prompts and resources it lists, and
 * {@link McpConnection} itself (implemented by ./client.ts, combined by ./mod.ts `combineMcp`).
 * Times are in ms; tool names follow `mcp__<server>__<tool>`.
 * @module
 */
import type { AnyTool } from "../../protocol/types.ts";

/** Options for `connectMcpServers` (./mod.ts). */
export interface ConnectOptions {
  /** Session workspace: default cwd of stdio servers; relative `cwd` values resolve against it. */
  cwd: string;
  /** Where OAuth credentials of remote servers are kept (`mcp-oauth/`); default: Coyote's data dir. */
  dataDir?: string;
  /** Start-up timeout per server in ms (connect + lists); default `MCP_TIMEOUT` env or 30 000. */
  timeoutMs?: number;
  /** Timeout of one `tools/call` in ms; default `MCP_TOOL_TIMEOUT` env or 600 000 (reset on progress). */
  toolTimeoutMs?: number;
  /** Receives server failures (start-up, crash, dropped tools). Default: `console.warn`. */
  onWarning?: (message: string) => void;
  /**
   * Serves a server's `sampling/createMessage` (params as sent; resolves the `CreateMessageResult`,
   * rejects with `{code, message}` for a JSON-RPC error). When absent the `sampling` client
   * capability is not offered. core/session/mcp_requests.ts.
   */
  onSampling?: (
    server: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ) => Promise<unknown>;
  /** Serves `elicitation/create` (form mode) like {@link onSampling}; absent: not offered. */
  onElicitation?: (
    server: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ) => Promise<unknown>;
  /** Receives one line per server when it is ready, renamed tools, list changes. Default: dropped. */
  onInfo?: (message: string) => void;
  /**
   * Return at once and start the servers in the background (`ready` settles when every server
   * connected or failed). Default false: resolve after `ready` (`coyote mcp list`, tests).
   */
  background?: boolean;
}

/** Status of one server. */
export interface McpServerStatus {
  name: string;
  source: string;
  type: "stdio" | "http" | "sse";
  /** `unchecked`: listed without starting it (`coyote mcp list --no-connect`). */
  status: "starting" | "connected" | "failed" | "timeout" | "closed" | "unchecked";
  tools: number;
  error?: string;
  /** `serverInfo` from the MCP `initialize` result. */
  serverInfo?: { name: string; version: string };
}

/** What changed on a connection: a server settled (`ready`/`failed`), stopped, or re-listed. */
export interface McpChange {
  server: string;
  kind: "ready" | "failed" | "closed" | "tools" | "prompts" | "resources";
}

/** An MCP prompt (`prompts/list`), offered as the slash command `/<server>:<name>`. */
export interface McpPromptInfo {
  server: string;
  name: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

/** An MCP resource (`resources/list`), attachable to a prompt (ACP `resource_link`). */
export interface McpResourceInfo {
  server: string;
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

/** The servers of a session: live tools, prompts, resources, and a way to close them. */
export interface McpConnection {
  /** Current tools named `mcp__<server>__<tool>` (sanitised to `[a-zA-Z0-9_-]`, at most 64 chars). */
  readonly tools: AnyTool[];
  /** One line per server that failed to start, timed out or stopped, and per dropped tool. */
  warnings: string[];
  /** Per-server status (for `coyote mcp list`, `/mcp`). */
  readonly servers: McpServerStatus[];
  /** Settles when every server has connected or failed (never rejects). */
  ready: Promise<void>;
  /**
   * Settles when no re-listing after a `notifications/{tools,…}/list_changed` is in flight (its
   * change has been reported through `onChange`); never rejects.
   */
  settled?(): Promise<void>;
  /** Calls `listener` on every {@link McpChange}; returns an unsubscribe function. */
  onChange(listener: (change: McpChange) => void): () => void;
  /** Prompts of the running servers. */
  prompts(): McpPromptInfo[];
  /** `prompts/get`: the prompt's messages (MCP `PromptMessage[]`). */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
  ): Promise<{ role: string; content: Record<string, unknown> }[]>;
  /** Resources of the running servers. */
  resources(): McpResourceInfo[];
  /**
   * `resources/read` on the server that lists `uri` (`server`: that one, when several do); null
   * when no running server lists it.
   */
  readResource(
    uri: string,
    server?: string,
  ): Promise<{ uri: string; mimeType?: string; text?: string; blob?: string }[] | null>;
  /** Closes every client and ends every server's process tree (SIGTERM, then SIGKILL). Idempotent. */
  close(): Promise<void>;
}
