/**
 * Real MCP servers from npm used by the tests, pinned, run with Deno (`deno run -A npm:…`)
 * so no wrapper process (npx → sh → node) can be orphaned. A test that starts them calls
 * {@link warmMcpServers} first (fetches them into Deno's cache once, see ./warm_cache.ts). Also
 * the path of the crash fixture (tests/fixtures/mcp/crash_server.ts).
 * @module
 */
import { warmNpm } from "./warm_cache.ts";

export const EVERYTHING_PKG = "npm:@modelcontextprotocol/server-everything@2026.8.31";
export const FILESYSTEM_PKG = "npm:@modelcontextprotocol/server-filesystem@2026.8.31";
export const CRASH_SERVER = new URL("../fixtures/mcp/crash_server.ts", import.meta.url).pathname;
export const NOISY_SERVER = new URL("../fixtures/mcp/noisy_server.ts", import.meta.url).pathname;
export const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

/**
 * Fetches {@link EVERYTHING_PKG} and {@link FILESYSTEM_PKG} into Deno's cache (once per test
 * process), so a server's start-up timeout is never spent downloading.
 * @throws Error naming the packages when the npm registry is unreachable.
 */
export function warmMcpServers(): Promise<void> {
  return warmNpm(EVERYTHING_PKG, FILESYSTEM_PKG);
}

/** stdio spec of `server-everything`. */
export function everythingSpec(): { command: string; args: string[] } {
  return { command: "deno", args: ["run", "-A", "--no-config", EVERYTHING_PKG, "stdio"] };
}

/** stdio spec of `server-filesystem` allowing `dir`. */
export function filesystemSpec(dir: string): { command: string; args: string[] } {
  return { command: "deno", args: ["run", "-A", "--no-config", FILESYSTEM_PKG, dir] };
}

/** stdio spec of the crash fixture (uses the project import map for the MCP SDK). */
export function crashSpec(): { command: string; args: string[] } {
  return { command: "deno", args: ["run", "-A", "--config", DENO_JSON, CRASH_SERVER] };
}

/** stdio spec of the noisy fixture (junk on its stdout and stderr; tool `noise`). */
export function noisySpec(): { command: string; args: string[] } {
  return { command: "deno", args: ["run", "-A", "--config", DENO_JSON, NOISY_SERVER] };
}

export const ODD_SERVER = new URL("../fixtures/mcp/odd_server.ts", import.meta.url).pathname;

/**
 * stdio spec of the odd-schema fixture (tests/fixtures/mcp/odd_server.ts); with `waitFor`, the
 * server answers nothing until that file exists.
 */
export function oddSpec(waitFor?: string): { command: string; args: string[] } {
  return {
    command: "deno",
    args: [
      "run",
      "-A",
      "--config",
      DENO_JSON,
      ODD_SERVER,
      ...(waitFor ? ["--wait-for", waitFor] : []),
    ],
  };
}

export const ASK_SERVER = new URL("../fixtures/mcp/ask_server.ts", import.meta.url).pathname;

/** stdio spec of the asking fixture (tests/fixtures/mcp/ask_server.ts: sampling, elicitation). */
export function askSpec(): { command: string; args: string[] } {
  return { command: "deno", args: ["run", "-A", "--config", DENO_JSON, ASK_SERVER] };
}
