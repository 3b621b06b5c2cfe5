/**
 * The shared ground of the MCP client: the shape of one `mcpServers` entry (Claude Code / Cursor
 * convention: stdio `{command, args?, env?, cwd?}` or remote `{type: "http" | "sse", url,
 * headers?}`, see ./mod.ts for the files it is read from), a discovered server, the default
 * timeouts (ms; env `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT` override them) and the environment a
 * stdio server gets ({@link mcpServerEnv}: a safe base plus what its entry names, issue 11 §3).
 * Imported by the light half (./mod.ts, discovery) and the heavy half (./client.ts, connecting);
 * imports nothing.
 * @module
 */

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

/** Default time allowed for one server to start and list its tools (ms); env `MCP_TIMEOUT` overrides. */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

/** Default time allowed for one `tools/call` (ms, reset on progress); env `MCP_TOOL_TIMEOUT`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 600_000;

/**
 * Variables a stdio server inherits besides those its entry's `env` names: the MCP SDK's
 * `getDefaultEnvironment()` list (POSIX, after sudo's defaults) plus locale and temp dir, and
 * where package runners keep their caches (`DENO_DIR`, `XDG_CACHE_HOME`, `npm_config_cache`):
 * paths, not secrets, and without them a server started as `deno run npm:…` or `npx …` under a
 * moved cache downloads its packages again and spends its start-up timeout doing it (issue 20).
 */
export const MCP_BASE_ENV = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "npm_config_cache",
] as const;

/**
 * The environment of a stdio MCP server: {@link MCP_BASE_ENV} from `get` (values that start with
 * `()`, shell functions, skipped as the SDK does) overlaid by the entry's own `env` — never the
 * whole environment, so provider keys and tokens reach a server only when its config names them
 * (`"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}`). Issue 11 §3.
 */
export function mcpServerEnv(
  specEnv: Record<string, string> | undefined,
  get: (name: string) => string | undefined = (n) => Deno.env.get(n),
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of MCP_BASE_ENV) {
    const v = get(k);
    if (v !== undefined && !v.startsWith("()")) env[k] = v;
  }
  return { ...env, ...(specEnv ?? {}) };
}
