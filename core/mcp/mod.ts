/**
 * STUB CONTRACT (owner: ACP/MCP helper replaces the bodies, keeps the signatures).
 * MCP client: connects `mcpServers` and exposes their tools as `mcp__<server>__<tool>`.
 * @module
 */
import type { AnyTool } from "../types.ts";
import type { AppOptions } from "../app.ts";

/** One MCP server, Claude Code / Cursor `mcpServers` entry shape. */
export type McpServerSpec =
  | { type?: "stdio"; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { type: "http" | "sse"; url: string; headers?: Record<string, string> };

/** A discovered server and the file it came from. */
export interface DiscoveredMcpServer {
  name: string;
  spec: McpServerSpec;
  /** Absolute path of the config file, or `acp` / `config.yaml`. */
  source: string;
}

/** Reads user and workspace MCP config files (see issue 4 for order). */
export function discoverMcpServers(_app: AppOptions, _cwd: string): Promise<DiscoveredMcpServer[]> {
  return Promise.resolve([]);
}

/** Connects servers in parallel; a failing server yields a warning, never a throw. */
export function connectMcpServers(
  _servers: DiscoveredMcpServer[],
  _opts: { cwd: string; timeoutMs?: number },
): Promise<{ tools: AnyTool[]; warnings: string[]; close(): Promise<void> }> {
  return Promise.resolve({ tools: [], warnings: [], close: () => Promise.resolve() });
}
