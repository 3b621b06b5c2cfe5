/**
 * MCP client, heavy half: connects servers with `npm:@modelcontextprotocol/sdk` and wraps
 * their tools as Coyote tools. Loaded lazily by `connectMcpServers` in `./mod.ts`.
 *
 * - stdio servers run through `./stdio_transport.ts` (own process group + tree marker, so a
 *   `sh -c` wrapper's children end with the server; junk stdout lines are logged under
 *   `COYOTE_DEBUG`; environment: a safe base plus the entry's `env`, `mcpServerEnv` in
 *   ./config.ts); their stderr is kept (last 4 KiB) for error messages and copied to our
 *   stderr under `COYOTE_DEBUG`.
 * - `http` uses Streamable HTTP, `sse` the legacy SSE transport; `headers` go with every
 *   request. A server that answers the optional event-stream GET with anything but
 *   `text/event-stream` (e.g. a plain `200 application/json`) is treated as having no GET
 *   stream (as if it answered 405): the SDK would otherwise re-send the GET every second for
 *   the whole session. Live GET streams are re-opened at most {@link MAX_SSE_GETS} times.
 * - Servers start in the background: {@link connectAll} returns at once; `ready` settles when
 *   every server has connected or failed; `onChange` reports each server as it settles and
 *   every `notifications/{tools,prompts,resources}/list_changed`.
 * - `tools/list` is read without the SDK's strict result schema: one odd tool never removes a
 *   server's other tools. Each `inputSchema` is repaired by `./schema.ts`; a tool that cannot
 *   be repaired is dropped with one warning naming it. `tools/call` results are not validated
 *   against `outputSchema`, so an `isError: true` result shows the server's own message.
 * - A tool whose model-facing name differs from `mcp__<server>__<tool>` (characters replaced,
 *   cut to 64, or deduplicated) is logged once with both names.
 * - Prompts (`prompts/list`, `prompts/get`) and resources (`resources/list`, `resources/read`)
 *   are listed for servers that offer them (slash commands and attachable context).
 *
 * This module is the connection's lifecycle (transports, start-up, change notifications, close);
 * the tools' adaptation (names, `tools/call`, result text, paged lists) is in ./tools.ts, the
 * state of one server in ./server.ts, the shapes in ./types.ts and ./config.ts.
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  GetPromptResultSchema,
  PromptListChangedNotificationSchema,
  ReadResourceResultSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { AnyTool } from "../../protocol/types.ts";
import { DEFAULT_MCP_TIMEOUT_MS, type DiscoveredMcpServer, mcpServerEnv } from "./config.ts";
import type {
  ConnectOptions,
  McpChange,
  McpConnection,
  McpPromptInfo,
  McpResourceInfo,
  McpServerStatus,
} from "./types.ts";
import { sanitizeInputSchema } from "./schema.ts";
import { errMsg, type ServerState, withTail } from "./server.ts";
import { listAll, type McpTool, wrapTool } from "./tools.ts";
import { DenoStdioTransport } from "./stdio_transport.ts";

const VERSION = "0.1.0";
const STDERR_TAIL = 4096;
/** Event-stream GETs allowed per remote server before Coyote stops re-opening it. */
export const MAX_SSE_GETS = 5;

function envOf(specEnv?: Record<string, string>): Record<string, string> {
  return mcpServerEnv(specEnv);
}

function resolveCwd(base: string, p?: string): string {
  if (!p) return base;
  if (p.startsWith("/")) return p;
  if (p === "~" || p.startsWith("~/")) return (Deno.env.get("HOME") ?? "") + p.slice(1);
  return `${base.replace(/\/$/, "")}/${p}`;
}

/**
 * `fetch` for Streamable HTTP that turns an event-stream GET answered with anything but
 * `text/event-stream` into a 405 (the SDK then stops asking), and stops re-opening after
 * {@link MAX_SSE_GETS} GETs.
 */
export function backoffFetch(log: (m: string) => void): typeof fetch {
  let gets = 0;
  let stopped = false;
  const noStream = () => new Response(null, { status: 405, statusText: "Method Not Allowed" });
  return async (input: string | URL | Request, init?: RequestInit) => {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET"))
      .toUpperCase();
    // Only the event-stream GET; OAuth discovery GETs (./oauth/) go through this fetch too.
    const accept = new Headers(init?.headers).get("accept") ?? "";
    if (method !== "GET" || !accept.includes("text/event-stream")) return await fetch(input, init);
    if (stopped) return noStream();
    if (++gets > MAX_SSE_GETS) {
      stopped = true;
      log(`stopped re-opening its event stream after ${MAX_SSE_GETS} GETs`);
      return noStream();
    }
    const res = await fetch(input, init);
    const type = res.headers.get("content-type") ?? "";
    if (res.ok && !type.includes("text/event-stream")) {
      await res.body?.cancel().catch(() => {});
      stopped = true;
      log(
        `its event-stream GET answered ${res.status} ${
          type || "without a content type"
        }; not polling it`,
      );
      return noStream();
    }
    return res;
  };
}

class TimeoutError extends Error {}

/** The live connection (see the module doc). */
class Connection implements McpConnection {
  warnings: string[] = [];
  ready: Promise<void>;
  private states: ServerState[];
  private listeners = new Set<(c: McpChange) => void>();
  private renamedLogged = new Set<string>();
  private closed?: Promise<void>;
  private toolCache?: AnyTool[];
  /** Re-listings in flight (`listenForChanges`), for {@link settled}. */
  private relisting = new Set<Promise<void>>();

  constructor(servers: DiscoveredMcpServer[], private opts: ConnectOptions) {
    this.states = servers.map((d) => ({
      d,
      alive: false,
      stderrTail: "",
      closing: false,
      tools: [],
      prompts: [],
      resources: [],
      status: {
        name: d.name,
        source: d.source,
        type: "url" in d.spec ? (d.spec.type === "sse" ? "sse" : "http") : "stdio",
        status: "starting",
        tools: 0,
      },
    }));
    const timeoutMs = opts.timeoutMs ??
      (Number(Deno.env.get("MCP_TIMEOUT")) || DEFAULT_MCP_TIMEOUT_MS);
    this.ready = Promise.all(this.states.map((st) => this.startOne(st, timeoutMs))).then(() => {});
  }

  get servers(): McpServerStatus[] {
    return this.states.map((s) => s.status);
  }

  /** Every live tool, names unique across servers (later duplicates get `_2`, `_3`, …). */
  get tools(): AnyTool[] {
    if (this.toolCache) return this.toolCache;
    const out: AnyTool[] = [];
    const seen = new Set<string>();
    for (const st of this.states) {
      for (const t of st.tools) {
        let n = t.name;
        for (let i = 2; seen.has(n); i++) n = `${t.name.slice(0, 60)}_${i}`;
        seen.add(n);
        out.push(n === t.name ? t : { ...t, name: n, access: () => [{ type: "tool", name: n }] });
      }
    }
    this.toolCache = out;
    return out;
  }

  onChange(listener: (c: McpChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(c: McpChange): void {
    this.toolCache = undefined;
    this.logRenames();
    for (const l of this.listeners) {
      try {
        l(c);
      } catch { /* a listener's fault is its own */ }
    }
  }

  private warn(m: string): void {
    this.warnings.push(m);
    (this.opts.onWarning ?? ((x) => console.warn(`coyote: warning: ${x}`)))(m);
  }

  private info(m: string): void {
    (this.opts.onInfo ?? (() => {}))(m);
  }

  /** Logs each renamed tool once: `mcp__srv__a.b` → `mcp__srv__a_b`. */
  private logRenames(): void {
    for (const st of this.states) {
      for (const t of st.tools) {
        const original = (t as AnyTool & { mcpName?: string }).mcpName;
        if (!original) continue;
        const plain = `mcp__${st.d.name}__${original}`;
        const final = this.tools.find((x) => x.run === t.run)?.name ?? t.name;
        if (final === plain || this.renamedLogged.has(plain)) continue;
        this.renamedLogged.add(plain);
        this.info(
          `MCP server ${st.d.name}: tool "${original}" is offered to the model as ${final} (${plain} is not a valid function name)`,
        );
      }
    }
  }

  private async startOne(st: ServerState, timeoutMs: number): Promise<void> {
    const { d } = st;
    const spec = d.spec;
    const debug = !!Deno.env.get("COYOTE_DEBUG");
    let transport: Transport;
    if ("url" in spec) {
      const url = new URL(spec.url);
      const requestInit: RequestInit = spec.headers ? { headers: spec.headers } : {};
      // OAuth (./oauth/): unless the entry brings its own Authorization header.
      const authProvider = Object.keys(spec.headers ?? {}).some((k) =>
          k.toLowerCase() === "authorization"
        )
        ? undefined
        : await (await import("./oauth/provider.ts")).runAuthProvider({
          name: d.name,
          serverUrl: spec.url,
          dataDir: this.opts.dataDir,
        });
      transport = spec.type === "sse"
        ? new SSEClientTransport(url, {
          requestInit,
          authProvider,
          // The custom fetch carries the headers on the event-stream GET as well.
          fetch: (u: string | URL, init?: RequestInit) => {
            const h = new Headers(init?.headers);
            for (const [k, v] of Object.entries(spec.headers ?? {})) h.set(k, v);
            return fetch(u, { ...init, headers: h });
          },
        })
        : new StreamableHTTPClientTransport(url, {
          requestInit,
          authProvider,
          fetch: backoffFetch((m) => this.info(`MCP server ${d.name}: ${m}`)),
        });
    } else {
      transport = new DenoStdioTransport({
        command: spec.command,
        args: spec.args ?? [],
        env: envOf(spec.env),
        cwd: resolveCwd(this.opts.cwd, spec.cwd),
        onStderr: (s) => {
          st.stderrTail = (st.stderrTail + s).slice(-STDERR_TAIL);
          if (debug) {
            for (const line of s.split("\n")) if (line) console.error(`[mcp ${d.name}] ${line}`);
          }
        },
        onOversized: (chars) =>
          this.warn(
            `MCP server ${d.name} wrote a stdout line over ${chars} characters; it was dropped`,
          ),
        onJunk: (line) => {
          if (debug) {
            console.error(`[mcp ${d.name}] not JSON-RPC on stdout, skipped: ${line.slice(0, 500)}`);
          }
        },
      });
    }
    st.transport = transport;
    // `sampling` / `elicitation` are offered only when the owner serves them (./types.ts).
    const { onSampling, onElicitation } = this.opts;
    const client = new Client({ name: "coyote", version: VERSION }, {
      capabilities: {
        ...(onSampling ? { sampling: {} } : {}),
        ...(onElicitation ? { elicitation: { form: {} } } : {}),
      },
    });
    if (onSampling) {
      client.setRequestHandler(
        CreateMessageRequestSchema,
        (req: { params: Record<string, unknown> }, extra: { signal: AbortSignal }) =>
          onSampling(d.name, req.params, extra.signal) as never,
      );
    }
    if (onElicitation) {
      client.setRequestHandler(
        ElicitRequestSchema,
        (req: { params: Record<string, unknown> }, extra: { signal: AbortSignal }) =>
          onElicitation(d.name, req.params, extra.signal) as never,
      );
    }
    st.client = client;
    client.onclose = () => {
      if (st.alive && !st.closing) {
        st.alive = false;
        st.deadReason = withTail("the server closed the connection (process exited)", st);
        st.status.status = "closed";
        st.status.error = st.deadReason;
        this.warn(`MCP server ${d.name} stopped: ${st.deadReason}`);
        this.emit({ server: d.name, kind: "closed" });
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
        await this.refresh(st, { signal: ac.signal, timeout: timeoutMs });
      })();
      work.catch(() => {});
      await Promise.race([work, timeout]);
      st.alive = true;
      const info = client.getServerVersion();
      if (info) st.status.serverInfo = { name: info.name, version: info.version };
      st.status.status = "connected";
      this.listenForChanges(st, timeoutMs);
      this.info(
        `MCP server ${d.name}: ${st.tools.length} tool(s)${
          st.prompts.length ? `, ${st.prompts.length} prompt(s)` : ""
        }${st.resources.length ? `, ${st.resources.length} resource(s)` : ""}`,
      );
      this.emit({ server: d.name, kind: "ready" });
    } catch (e) {
      st.alive = false;
      const timedOut = e instanceof TimeoutError;
      st.status.status = timedOut ? "timeout" : "failed";
      const msg = withTail(errMsg(e), st);
      // OAuth needed (./oauth/provider.ts): the message names `coyote mcp login`.
      const auth = (e as Error)?.name === "McpAuthRequiredError";
      st.deadReason = timedOut
        ? `start-up timed out after ${timeoutMs} ms`
        : auth
        ? msg
        : `failed to start: ${msg}`;
      st.status.error = st.deadReason;
      st.tools = [];
      this.warn(
        `MCP server ${d.name} (${d.source}) ${timedOut || auth ? msg : `failed to start: ${msg}`}`,
      );
      st.closing = true;
      await closeState(st);
      this.emit({ server: d.name, kind: "failed" });
    } finally {
      clearTimeout(timer);
    }
  }

  /** (Re)reads a server's tools, prompts and resources (those its capabilities announce). */
  private async refresh(
    st: ServerState,
    req: { signal?: AbortSignal; timeout: number },
    only?: "tools" | "prompts" | "resources",
  ): Promise<void> {
    const client = st.client!;
    const caps = client.getServerCapabilities() ?? {};
    if (!only || only === "tools") {
      const raw = await listAll(client, "tools/list", "tools", req);
      const tools: AnyTool[] = [];
      for (const item of raw) {
        const t = item as McpTool;
        if (!t || typeof t !== "object" || typeof t.name !== "string" || !t.name) {
          this.warn(`MCP server ${st.d.name}: a tool without a name was dropped`);
          continue;
        }
        const s = sanitizeInputSchema(t.inputSchema);
        if (!s.ok) {
          this.warn(`MCP server ${st.d.name}: tool "${t.name}" dropped: ${s.error}`);
          continue;
        }
        const tool = wrapTool(st, t, s.schema, s.wrapped, this.opts) as AnyTool & {
          mcpName?: string;
        };
        if (tool.name !== `mcp__${st.d.name}__${t.name}`) tool.mcpName = t.name;
        tools.push(tool);
      }
      st.tools = tools;
      st.status.tools = tools.length;
    }
    if ((!only || only === "prompts") && caps.prompts) {
      const raw: unknown[] = await listAll(client, "prompts/list", "prompts", req).catch(() => []);
      st.prompts = raw.filter((p): p is Record<string, unknown> =>
        !!p && typeof (p as { name?: unknown }).name === "string"
      ).map((p) => ({
        server: st.d.name,
        name: String(p.name),
        description: typeof p.description === "string" ? p.description : undefined,
        arguments: Array.isArray(p.arguments)
          ? (p.arguments as Record<string, unknown>[]).map((a) => ({
            name: String(a.name),
            description: typeof a.description === "string" ? a.description : undefined,
            required: a.required === true,
          }))
          : [],
      }));
    }
    if ((!only || only === "resources") && caps.resources) {
      const raw: unknown[] = await listAll(client, "resources/list", "resources", req).catch(
        () => [],
      );
      st.resources = raw.filter((r): r is Record<string, unknown> =>
        !!r && typeof (r as { uri?: unknown }).uri === "string"
      ).map((r) => ({
        server: st.d.name,
        uri: String(r.uri),
        name: typeof r.name === "string" ? r.name : String(r.uri),
        description: typeof r.description === "string" ? r.description : undefined,
        mimeType: typeof r.mimeType === "string" ? r.mimeType : undefined,
      }));
    }
  }

  /** `notifications/{tools,prompts,resources}/list_changed` → re-list that kind. */
  private listenForChanges(st: ServerState, timeoutMs: number): void {
    const client = st.client!;
    const on = (kind: "tools" | "prompts" | "resources") => async () => {
      if (!st.alive) return;
      const work = (async () => {
        try {
          await this.refresh(st, { timeout: timeoutMs }, kind);
          this.info(`MCP server ${st.d.name}: ${kind} list changed`);
          this.emit({ server: st.d.name, kind });
        } catch (e) {
          this.warn(`MCP server ${st.d.name}: re-listing ${kind} failed: ${errMsg(e)}`);
        }
      })();
      this.relisting.add(work);
      await work;
      this.relisting.delete(work);
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, on("tools"));
    client.setNotificationHandler(PromptListChangedNotificationSchema, on("prompts"));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, on("resources"));
  }

  settled(): Promise<void> {
    return Promise.all([...this.relisting]).then(() => {});
  }

  prompts(): McpPromptInfo[] {
    return this.states.flatMap((s) => (s.alive ? s.prompts : []));
  }

  resources(): McpResourceInfo[] {
    return this.states.flatMap((s) => (s.alive ? s.resources : []));
  }

  async getPrompt(
    server: string,
    name: string,
    args: Record<string, string>,
  ): Promise<{ role: string; content: Record<string, unknown> }[]> {
    const st = this.states.find((s) => s.d.name === server);
    if (!st?.alive || !st.client) throw new Error(`MCP server ${server} is not running`);
    const res = await st.client.request(
      { method: "prompts/get", params: { name, arguments: args } },
      GetPromptResultSchema,
      { timeout: 60_000 },
    );
    return res.messages as unknown as { role: string; content: Record<string, unknown> }[];
  }

  async readResource(
    uri: string,
    server?: string,
  ): Promise<{ uri: string; mimeType?: string; text?: string; blob?: string }[] | null> {
    const st = this.states.find((s) =>
      s.alive && (!server || s.d.name === server) && s.resources.some((r) => r.uri === uri)
    );
    if (!st?.client) return null;
    const res = await st.client.request(
      { method: "resources/read", params: { uri } },
      ReadResourceResultSchema,
      { timeout: 60_000 },
    );
    return res.contents as { uri: string; mimeType?: string; text?: string; blob?: string }[];
  }

  close(): Promise<void> {
    this.closed ??= Promise.all(this.states.map((st) => {
      st.closing = true;
      return closeState(st);
    })).then(() => {});
    return this.closed;
  }
}

/** Starts all servers in the background (see `connectMcpServers`). */
export function connectAll(
  servers: DiscoveredMcpServer[],
  opts: ConnectOptions,
): McpConnection {
  return new Connection(servers, opts);
}

async function closeState(st: ServerState): Promise<void> {
  st.alive = false;
  const t = st.transport;
  // The stdio transport ends the whole process tree itself; the client's close ends the rest.
  const closing = (st.client ? st.client.close() : t?.close() ?? Promise.resolve()).catch(() => {});
  await within(closing, 1500);
  if (t instanceof DenoStdioTransport) await within(t.close(), 1500);
  if (st.status.status === "connected") st.status.status = "closed";
}

/** Waits for `p` at most `ms` (the timer is cleared either way). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let t: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => (t = setTimeout(r, ms)))]);
  clearTimeout(t);
}
