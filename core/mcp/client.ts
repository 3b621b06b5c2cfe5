/**
 * MCP client, heavy half: connects servers with `npm:@modelcontextprotocol/sdk` and wraps
 * their tools as Coyote tools. Loaded lazily by `connectMcpServers` in `./mod.ts`.
 *
 * - stdio servers are child processes (`StdioClientTransport`), started with a safe base
 *   environment plus the entry's `env` (`mcpServerEnv` in ./mod.ts); their stderr is piped, never reaches our stdout, is
 *   kept (last 4 KiB) for error messages and copied to our stderr when `COYOTE_DEBUG` is set.
 * - `http` uses Streamable HTTP (`StreamableHTTPClientTransport`), `sse` the legacy SSE
 *   transport; `headers` are sent with every request.
 * - Every live child is killed (SIGTERM) when the process unloads, as a last resort.
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ToolContext, ToolKind, ToolResult } from "../../sdk/mod.ts";
import type { AnyTool } from "../types.ts";
import {
  type ConnectOptions,
  DEFAULT_MCP_TIMEOUT_MS,
  type DiscoveredMcpServer,
  type McpConnection,
  mcpServerEnv,
  type McpServerStatus,
} from "./mod.ts";

const VERSION = "0.1.0";
const DEFAULT_TOOL_TIMEOUT_MS = 600_000;
const STDERR_TAIL = 4096;

/** Live child pids, killed on unload so no MCP server outlives Coyote. */
const livePids = new Set<number>();
let unloadHooked = false;
function trackPid(pid: number | null | undefined) {
  if (!pid) return;
  livePids.add(pid);
  if (!unloadHooked) {
    unloadHooked = true;
    globalThis.addEventListener("unload", () => {
      for (const p of livePids) {
        try {
          Deno.kill(p, "SIGTERM");
        } catch { /* already gone */ }
      }
    });
  }
}

/**
 * Sanitises a name part to `[a-zA-Z0-9_-]` (other characters become `_`).
 */
export function sanitizeName(s: string): string {
  return s.replace(/[^a-zA-Z0-9_-]/g, "_");
}

/** Short stable hash (FNV-1a, base36) used to keep truncated names unique. */
function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

/**
 * The model-facing name of an MCP tool: `mcp__<server>__<tool>`, sanitised, at most 64
 * characters (OpenAI function-name rule); longer names are cut and get a hash suffix.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `mcp__${sanitizeName(server)}__${sanitizeName(tool)}`;
  if (full.length <= 64) return full;
  const suffix = "_" + shortHash(`${server}\u0000${tool}`);
  return full.slice(0, 64 - suffix.length) + suffix;
}

function envOf(specEnv?: Record<string, string>): Record<string, string> {
  return mcpServerEnv(specEnv);
}

function resolveCwd(base: string, p?: string): string {
  if (!p) return base;
  if (p.startsWith("/")) return p;
  if (p === "~" || p.startsWith("~/")) return (Deno.env.get("HOME") ?? "") + p.slice(1);
  return `${base.replace(/\/$/, "")}/${p}`;
}

function errMsg(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

interface ServerState {
  d: DiscoveredMcpServer;
  client?: Client;
  transport?: Transport;
  alive: boolean;
  deadReason?: string;
  stderrTail: string;
  status: McpServerStatus;
  closing: boolean;
  /** pid of a stdio server's child process. */
  pid?: number;
}

function withTail(msg: string, st: ServerState): string {
  const tail = st.stderrTail.trim().split("\n").slice(-3).join(" | ").slice(-400);
  return tail ? `${msg} (stderr: ${tail})` : msg;
}

async function startOne(
  st: ServerState,
  opts: ConnectOptions,
  timeoutMs: number,
): Promise<AnyTool[]> {
  const { d } = st;
  const spec = d.spec;
  let transport: Transport;
  if ("url" in spec) {
    const url = new URL(spec.url);
    const requestInit: RequestInit = spec.headers ? { headers: spec.headers } : {};
    transport = spec.type === "sse"
      ? new SSEClientTransport(url, {
        requestInit,
        // The custom fetch carries the headers on the event-stream GET as well.
        fetch: (u: string | URL, init?: RequestInit) => {
          const h = new Headers(init?.headers);
          for (const [k, v] of Object.entries(spec.headers ?? {})) h.set(k, v);
          return fetch(u, { ...init, headers: h });
        },
      })
      : new StreamableHTTPClientTransport(url, { requestInit });
  } else {
    const t = new StdioClientTransport({
      command: spec.command,
      args: spec.args ?? [],
      env: envOf(spec.env),
      cwd: resolveCwd(opts.cwd, spec.cwd),
      stderr: "pipe",
    });
    const debug = !!Deno.env.get("COYOTE_DEBUG");
    t.stderr?.on("data", (chunk: Uint8Array | string) => {
      const s = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
      st.stderrTail = (st.stderrTail + s).slice(-STDERR_TAIL);
      if (debug) {
        for (const line of s.split("\n")) if (line) console.error(`[mcp ${d.name}] ${line}`);
      }
    });
    // Remember the child's pid as soon as it is spawned: Client.close() forgets it at once.
    const start = t.start.bind(t);
    t.start = async () => {
      await start();
      st.pid = t.pid ?? undefined;
      trackPid(st.pid);
    };
    transport = t;
  }
  st.transport = transport;
  const client = new Client({ name: "coyote", version: VERSION }, { capabilities: {} });
  st.client = client;
  client.onclose = () => {
    if (st.alive && !st.closing) {
      st.alive = false;
      st.deadReason = withTail("the server closed the connection (process exited)", st);
      st.status.status = "closed";
      st.status.error = st.deadReason;
      (opts.onWarning ?? ((m) => console.warn(`coyote: warning: ${m}`)))(
        `MCP server ${d.name} stopped: ${st.deadReason}`,
      );
    }
    st.alive = false;
  };
  client.onerror = () => {/* transport errors surface through requests and onclose */};

  const ac = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ac.abort();
      reject(new TimeoutError(`did not start within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const work = (async () => {
      await client.connect(transport, { signal: ac.signal, timeout: timeoutMs });
      const tools = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, {
          signal: ac.signal,
          timeout: timeoutMs,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && tools.length < 10_000);
      return tools;
    })();
    const list = await Promise.race([work, timeout]);
    work.catch(() => {});
    st.alive = true;
    const info = client.getServerVersion();
    if (info) st.status.serverInfo = { name: info.name, version: info.version };
    st.status.status = "connected";
    st.status.tools = list.length;
    return list.map((t) => wrapTool(st, t, opts));
  } finally {
    clearTimeout(timer);
  }
}

class TimeoutError extends Error {}

interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: "object"; [k: string]: unknown };
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    openWorldHint?: boolean;
  };
}

function toolKind(t: McpTool): ToolKind {
  return t.annotations?.readOnlyHint === true ? "read" : "other";
}

/** Turns MCP `CallToolResult.content` into the text the model sees. */
export function contentToText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const c of content) {
    if (!c || typeof c !== "object") continue;
    const b = c as Record<string, unknown>;
    switch (b.type) {
      case "text":
        parts.push(String(b.text ?? ""));
        break;
      case "image":
      case "audio": {
        const data = typeof b.data === "string" ? b.data : "";
        parts.push(
          `[${b.type}: ${b.mimeType ?? "unknown"}, ${Math.floor(data.length * 3 / 4)} bytes]`,
        );
        break;
      }
      case "resource": {
        const r = (b.resource ?? {}) as Record<string, unknown>;
        if (typeof r.text === "string") parts.push(`[resource ${r.uri}]\n${r.text}`);
        else parts.push(`[resource ${r.uri}: ${r.mimeType ?? "binary"}]`);
        break;
      }
      case "resource_link":
        parts.push(`[resource link ${b.uri}${b.name ? ` (${b.name})` : ""}]`);
        break;
      default:
        parts.push(JSON.stringify(b));
    }
  }
  return parts.join("\n");
}

function wrapTool(st: ServerState, t: McpTool, opts: ConnectOptions): AnyTool {
  const name = mcpToolName(st.d.name, t.name);
  const server = st.d.name;
  // The server's JSON Schema as is, minus `$schema` (some OpenAI-compatible servers reject it).
  const { $schema: _drop, ...rest } = t.inputSchema && typeof t.inputSchema === "object"
    ? t.inputSchema as Record<string, unknown>
    : {};
  const schema = { properties: {}, ...rest, type: "object" };
  const toolTimeout = opts.toolTimeoutMs ??
    (Number(Deno.env.get("MCP_TOOL_TIMEOUT")) || DEFAULT_TOOL_TIMEOUT_MS);
  return {
    name,
    description: `${t.description ?? t.title ?? t.name} (MCP server ${server}, tool ${t.name})`
      .slice(0, 4096),
    input: schema,
    kind: toolKind(t),
    readOnly: t.annotations?.readOnlyHint === true,
    title: () => t.annotations?.title ?? t.title ?? `${server}: ${t.name}`,
    access: () => [{ type: "tool", name }],
    async run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
      if (!st.alive || !st.client) {
        return {
          content: `MCP server ${server} is not running: ${st.deadReason ?? "not connected"}`,
          isError: true,
        };
      }
      try {
        const res = await st.client.callTool(
          { name: t.name, arguments: input ?? {} },
          undefined,
          { signal: ctx.signal, timeout: toolTimeout, resetTimeoutOnProgress: true },
        );
        const r = res as {
          content?: unknown;
          structuredContent?: unknown;
          isError?: boolean;
          toolResult?: unknown;
        };
        let text = r.content !== undefined
          ? contentToText(r.content)
          : JSON.stringify(r.toolResult ?? null);
        if (!text && r.structuredContent !== undefined) text = JSON.stringify(r.structuredContent);
        const out: ToolResult = { content: text, isError: r.isError === true };
        out.rawOutput = r.structuredContent !== undefined ? r.structuredContent : r.content;
        return out;
      } catch (e) {
        if (ctx.signal.aborted) return { content: "cancelled", isError: true };
        if (!st.alive) {
          return {
            content: `MCP server ${server} is not running: ${st.deadReason ?? errMsg(e)}`,
            isError: true,
          };
        }
        return {
          content: `MCP server ${server}, tool ${t.name} failed: ${errMsg(e)}`,
          isError: true,
        };
      }
    },
  };
}

/** Connects all servers in parallel (see `connectMcpServers`). */
export async function connectAll(
  servers: DiscoveredMcpServer[],
  opts: ConnectOptions,
): Promise<McpConnection> {
  const timeoutMs = opts.timeoutMs ??
    (Number(Deno.env.get("MCP_TIMEOUT")) || DEFAULT_MCP_TIMEOUT_MS);
  const states: ServerState[] = servers.map((d) => ({
    d,
    alive: false,
    stderrTail: "",
    closing: false,
    status: {
      name: d.name,
      source: d.source,
      type: "url" in d.spec ? (d.spec.type === "sse" ? "sse" : "http") : "stdio",
      status: "failed",
      tools: 0,
    },
  }));
  const warnings: string[] = [];
  const results = await Promise.all(states.map(async (st) => {
    try {
      return await startOne(st, opts, timeoutMs);
    } catch (e) {
      st.alive = false;
      const timedOut = e instanceof TimeoutError;
      st.status.status = timedOut ? "timeout" : "failed";
      const msg = withTail(errMsg(e), st);
      st.deadReason = timedOut
        ? `start-up timed out after ${timeoutMs} ms`
        : `failed to start: ${msg}`;
      st.status.error = st.deadReason;
      warnings.push(
        `MCP server ${st.d.name} (${st.d.source}) ${timedOut ? msg : `failed to start: ${msg}`}`,
      );
      st.closing = true;
      await closeState(st);
      return [];
    }
  }));
  const tools: AnyTool[] = [];
  const seen = new Set<string>();
  for (const list of results) {
    for (const t of list) {
      let n = t.name;
      for (let i = 2; seen.has(n); i++) n = `${t.name.slice(0, 60)}_${i}`;
      seen.add(n);
      tools.push(n === t.name ? t : { ...t, name: n, access: () => [{ type: "tool", name: n }] });
    }
  }
  let closed: Promise<void> | undefined;
  return {
    tools,
    warnings,
    servers: states.map((s) => s.status),
    close() {
      closed ??= Promise.all(states.map((st) => {
        st.closing = true;
        return closeState(st);
      })).then(() => {});
      return closed;
    },
  };
}

async function closeState(st: ServerState): Promise<void> {
  st.alive = false;
  const closing = (st.client ? st.client.close() : st.transport?.close() ?? Promise.resolve())
    .catch(() => {});
  // The SDK ends stdin, then waits 2 s before SIGTERM: give well-behaved servers a moment,
  // then make sure the child is gone.
  await within(closing, 1000);
  if (st.pid) {
    try {
      Deno.kill(st.pid, "SIGKILL");
    } catch { /* already exited */ }
    livePids.delete(st.pid);
    st.pid = undefined;
  }
  if (st.status.status === "connected") st.status.status = "closed";
}

/** Waits for `p` at most `ms` (the timer is cleared either way). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let t: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => (t = setTimeout(r, ms)))]);
  clearTimeout(t);
}
