/**
 * One MCP server inside a connection: its live state ({@link ServerState}: the discovered
 * entry, the SDK client and transport, whether it is alive and why not, the last 4 KiB of its
 * stderr, its status and what it lists), read by the connection's lifecycle (./client.ts) and
 * by its wrapped tools at call time (./tools.ts), and the text both use in messages
 * ({@link errMsg}; {@link withTail}, the stderr tail).
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { AnyTool } from "../../protocol/types.ts";
import type { DiscoveredMcpServer } from "./config.ts";
import type { McpPromptInfo, McpResourceInfo, McpServerStatus } from "./types.ts";

/** The message of a thrown value. */
export function errMsg(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** The state of one server of a connection. */
export interface ServerState {
  d: DiscoveredMcpServer;
  client?: Client;
  transport?: Transport;
  alive: boolean;
  deadReason?: string;
  stderrTail: string;
  status: McpServerStatus;
  closing: boolean;
  tools: AnyTool[];
  prompts: McpPromptInfo[];
  resources: McpResourceInfo[];
}

/** `msg` with the last lines of the server's stderr appended, if it wrote any. */
export function withTail(msg: string, st: ServerState): string {
  const tail = st.stderrTail.trim().split("\n").slice(-3).join(" | ").slice(-400);
  return tail ? `${msg} (stderr: ${tail})` : msg;
}
