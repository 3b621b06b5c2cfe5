/**
 * `coyote --acp-server`: Coyote as an Agent Client Protocol agent over stdio (ACP v1,
 * JSON-RPC 2.0, one message per line), built on `npm:@agentclientprotocol/sdk`'s
 * `agent()` builder and `ndJsonStream`. See docs/acp.md for the method table.
 *
 * This module is the dispatch: the session table, `session/*` handlers, turn forwarding and
 * cancel ordering. Helpers: `./permission.ts` (guard asks), `./questions.ts` (`user__*`),
 * `./client_host.ts` (client fs / terminals), `./config_options.ts`, `./errors.ts`,
 * `./input.ts` (oversized lines), `./replay.ts` (load replay), `./commands.ts` (slash
 * commands), `./stdio.ts` (stdout purity).
 *
 * - stdout purity: {@link takeStdoutForProtocol} runs first; the SDK and the runtime are
 *   loaded afterwards with literal dynamic imports (the runtime is preloaded in the
 *   background so `initialize` is answered at once).
 * - Several sessions per process, each rooted at its own `cwd`.
 * - The process ends when stdin closes: running turns are aborted (killing their child
 *   processes), sessions are closed (stopping their MCP servers), then this resolves 0.
 * - Sessions on one `cwd` share one Workspace (core/session/workspace.ts): one set of MCP servers
 *   and plugin workers, closed with the last of those sessions.
 * - Turns render from the session's event envelopes: the root agent's events become
 *   `session/update`s; a sub-agent's progress becomes `tool_call_update` content on the root's
 *   `agent__spawn` call that started it (`forwardChild`); the response comes from the
 *   `turn_ended` event.
 * - Permission requests, questions and terminals are tied to the tool call that asked
 *   (`CallScope`), so parallel calls — also of several sub-agents — are attributed right; a
 *   sub-agent's request names the sub-agent.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AppOptions } from "../../config/app_options.ts";
import type {
  EngineEvent,
  EventEnvelope,
  TurnEndedEvent,
  TurnResult,
} from "../../protocol/types.ts";
import { takeStdoutForProtocol } from "./stdio.ts";
import { type AcpPeer, errText, type LiveSession, within } from "./peer.ts";
import { permissionResolver } from "./permission.ts";
import { hostServices } from "./client_host.ts";
import { applyConfigOption, configOptions } from "./config_options.ts";
import { configError, sessionOpenError } from "./errors.ts";
import { limitLines, MAX_MESSAGE_BYTES, oversizedError } from "./input.ts";
import { replayUpdates, titleOf } from "./replay.ts";
import { availableCommands, runSlashCommand } from "./commands.ts";
import { attachMcpResources, mcpStatusUpdate, watchMcp } from "./mcp_bridge.ts";
import { limitUpdate } from "./output_limit.ts";
import denoJson from "../../../deno.json" with { type: "json" };
import { configuredModel, modelInfo } from "../../config/models.ts";

export { PERMISSION_OPTIONS } from "./permission.ts";
export type { LiveSession } from "./peer.ts";

/** ACP protocol version spoken (answered even when the client asks for a higher one). */
export const ACP_PROTOCOL_VERSION = 1;

type Runtime = typeof import("../../session/runtime.ts");
type AcpModule = typeof import("@agentclientprotocol/sdk");

/** Progress lines kept per sub-agent on its spawn call (the oldest are dropped). */
const CHILD_LINES = 12;

/** One line of at most 160 characters. */
function oneLine(s: string): string {
  const l = (s.split("\n").find((x) => x.trim()) ?? "").trim();
  return l.length > 160 ? l.slice(0, 159) + "…" : l;
}

function isAbsolute(p: string): boolean {
  return p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p);
}

/** Start-up problems reported later, from `session/new` (docs/acp.md "Bad input"). */
export interface AcpStartOptions {
  /** A `config.yaml` error: `initialize` is answered, every `session/new` answers it. */
  configError?: string;
}

/**
 * Runs the ACP server on stdin/stdout until stdin closes. Returns the process exit code
 * (0 after a clean shutdown).
 */
export async function runAcpServer(app: AppOptions, start: AcpStartOptions = {}): Promise<number> {
  const output = takeStdoutForProtocol();
  const runtimeP: Promise<Runtime> = import("../../session/runtime.ts");
  runtimeP.catch(() => {});
  const sdk: AcpModule = await import("@agentclientprotocol/sdk");
  const server = new AcpServer(app, sdk, () => runtimeP, start);
  if (start.configError) console.error(`coyote: ${start.configError}`);
  // One writer for fd 1, shared by the SDK and the oversized-line answers (whole lines each).
  const writer = output.getWriter();
  let chain: Promise<void> = Promise.resolve();
  const send = (bytes: Uint8Array) => (chain = chain.then(() => writer.write(bytes)));
  const shared = new WritableStream<Uint8Array>({ write: (chunk) => send(chunk) });
  const input = limitLines(Deno.stdin.readable, MAX_MESSAGE_BYTES, (line) => {
    console.error(
      `coyote: refused an ACP message of ${line.bytes} bytes (limit ${MAX_MESSAGE_BYTES}), id ${
        JSON.stringify(line.id)
      }`,
    );
    void send(new TextEncoder().encode(oversizedError(line, MAX_MESSAGE_BYTES))).catch(() => {});
  });
  // The SDK's own limit is never reached: limitLines already dropped longer lines.
  const raw = sdk.ndJsonStream(shared, input, { maxMessageBytes: MAX_MESSAGE_BYTES + 1024 });
  // Messages are observed in arrival order before the SDK dispatches them (see `observe`).
  const stream = {
    writable: raw.writable,
    readable: raw.readable.pipeThrough(
      new TransformStream({
        transform(msg, ctrl) {
          server.observe(msg);
          ctrl.enqueue(msg);
        },
      }),
    ),
  };
  const conn = server.build().connect(stream);
  server.conn = conn;

  const stop = () => conn.close();
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT", "SIGHUP"];
  for (const s of signals) {
    try {
      Deno.addSignalListener(s, stop);
    } catch { /* unsupported signal on this platform */ }
  }
  await conn.closed;
  await server.shutdown();
  await chain.catch(() => {});
  for (const s of signals) {
    try {
      Deno.removeSignalListener(s, stop);
    } catch { /* ignore */ }
  }
  return 0;
}

/** The ACP agent: session table and handlers. Exported for in-process tests and benchmarks. */
export class AcpServer implements AcpPeer {
  clientCaps: acp.ClientCapabilities = {};
  /** Arrival number of the last message, of pending prompts (by request id) and of cancels. */
  private seq = 0;
  private promptSeq = new Map<unknown, number>();
  private cancelSeq = new Map<string, number>();
  sessions = new Map<string, LiveSession>();
  conn?: acp.AgentConnection;

  constructor(
    readonly app: AppOptions,
    readonly sdk: AcpModule,
    readonly runtime: () => Promise<Runtime>,
    readonly start: AcpStartOptions = {},
  ) {}

  /** Builds the SDK agent app with every handler registered. */
  build(): acp.AgentApp {
    const { methods } = this.sdk;
    return this.sdk.agent({ name: "coyote" })
      // `session/cancel` acts in `observe`, in arrival order; the handler only lets the SDK
      // validate it.
      .onNotification(methods.agent.session.cancel, () => {})
      .onRequest(methods.agent.initialize, ({ params }) => this.initialize(params))
      .onRequest(methods.agent.session.new, ({ params }) => this.newSession(params))
      .onRequest(methods.agent.session.load, ({ params }) => this.loadSession(params, true))
      .onRequest(methods.agent.session.resume, ({ params }) => this.loadSession(params, false))
      .onRequest(methods.agent.session.list, ({ params }) => this.listSessions(params))
      .onRequest(methods.agent.session.close, ({ params }) => this.closeSession(params.sessionId))
      .onRequest(
        methods.agent.session.prompt,
        ({ params, requestId, signal }) => this.prompt(params, requestId, signal),
      )
      .onRequest(
        methods.agent.session.setConfigOption,
        ({ params }) => this.setConfigOption(params),
      )
      .onRequest(methods.agent.session.setMode, ({ params }) => this.setMode(params));
  }

  get client(): acp.AgentContext {
    if (!this.conn) throw new Error("ACP connection not open");
    return this.conn.client;
  }

  /**
   * Sends one `session/update`; never throws (a closed connection drops it). An update over
   * the clients' message limit is sent reduced (`./output_limit.ts`).
   */
  notify(sessionId: string, update: acp.SessionUpdate): Promise<void> {
    if (!this.conn) return Promise.resolve();
    return this.client.notify("session/update", { sessionId, update: limitUpdate(update) })
      .catch(() => {});
  }

  initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.clientCaps = params.clientCapabilities ?? {};
    return {
      protocolVersion: ACP_PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        // Images go to the model as OpenAI `image_url` parts: advertised only when the
        // configured model is known to accept them (`models: {<name>: {images: true}}`).
        promptCapabilities: {
          image: acceptsImages(this.app),
          audio: false,
          embeddedContext: true,
        },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      authMethods: [],
      agentInfo: { name: "coyote", title: "Coyote", version: String(denoJson.version ?? "0.0.0") },
    };
  }

  private requireSession(sessionId: string): LiveSession {
    const live = this.sessions.get(sessionId);
    if (!live) throw this.sdk.RequestError.sessionNotFound(sessionId);
    return live;
  }

  private checkCwd(cwd: string): void {
    if (!isAbsolute(cwd)) {
      throw this.sdk.RequestError.invalidParams(
        { cwd },
        `"cwd" must be an absolute path, got ${JSON.stringify(cwd)}`,
      );
    }
    let ok = false;
    try {
      ok = Deno.statSync(cwd).isDirectory;
    } catch { /* missing */ }
    if (!ok) throw this.sdk.RequestError.invalidParams({ cwd }, `"cwd" is not a directory: ${cwd}`);
  }

  /** Creates (or resumes) an engine session wired to this connection. */
  private async open(
    cwd: string,
    mcpServers: acp.McpServer[] | undefined,
    resumeId?: string,
  ): Promise<LiveSession> {
    if (this.start.configError) throw configError(this.sdk, this.start.configError);
    this.checkCwd(cwd);
    const rt = await this.runtime();
    const { mcpServersFromAcp } = await import("../../extensions/mcp/mod.ts");
    const slot: { live?: LiveSession } = {};
    const holder = { get: () => slot.live };
    let session;
    try {
      session = await rt.createSession(this.app, {
        cwd,
        permission: permissionResolver(this, holder),
        host: (scope) => hostServices(this, holder, scope),
        mcpServers: mcpServersFromAcp(mcpServers ?? []),
        ...(resumeId ? { resumeId } : {}),
        log: (line) => console.error(line),
      });
    } catch (e) {
      throw sessionOpenError(this.sdk, e, resumeId);
    }
    const live: LiveSession = {
      session,
      calls: new Map(),
      terminalCalls: new Map(),
      children: new Map(),
    };
    slot.live = live;
    this.sessions.set(session.id, live);
    return live;
  }

  /** `session/new`: a session rooted at `cwd`; `available_commands_update` follows the response. */
  async newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    const live = await this.open(params.cwd, params.mcpServers);
    const options = configOptions(await this.runtime(), this.app, live.session);
    this.afterResponse(live);
    return { sessionId: live.session.id, configOptions: options };
  }

  /**
   * `session/load` (replay = true) and `session/resume` (no replay). The replay finishes
   * every tool call the transcript left open (a crash mid-call) as `failed`.
   */
  async loadSession(
    params: acp.LoadSessionRequest | acp.ResumeSessionRequest,
    replay: boolean,
  ): Promise<acp.LoadSessionResponse> {
    let live = this.sessions.get(params.sessionId);
    if (live) {
      if (live.turn) {
        throw this.sdk.RequestError.invalidRequest(
          { sessionId: params.sessionId },
          "a prompt turn is running in this session",
        );
      }
    } else {
      live = await this.open(params.cwd, params.mcpServers ?? [], params.sessionId);
    }
    const history = live.session.history();
    if (replay) {
      for (const update of replayUpdates(history)) await this.notify(live.session.id, update);
    }
    const title = titleOf(history);
    if (title) live.titleSent = title;
    const options = configOptions(await this.runtime(), this.app, live.session);
    this.afterResponse(live, title);
    return { configOptions: options };
  }

  async listSessions(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const rt = await this.runtime();
    const list = await rt.listSessions(this.app, params.cwd ? { cwd: params.cwd } : {});
    return {
      // Sub-agents' transcripts are not conversations of their own.
      sessions: list.filter((s) => !s.parentId).map((s) => ({
        sessionId: s.sessionId,
        cwd: s.cwd,
        title: s.title || s.name || null,
        updatedAt: s.updatedAt,
      })),
    };
  }

  async closeSession(sessionId: string): Promise<acp.CloseSessionResponse> {
    const live = this.requireSession(sessionId);
    this.sessions.delete(sessionId);
    await this.stopSession(live);
    return {};
  }

  private async stopSession(live: LiveSession): Promise<void> {
    if (live.turn) {
      live.turn.ac.abort();
      await within(live.turn.done.catch(() => {}), 5000);
    }
    await within(live.session.close().catch(() => {}), 8000);
  }

  /** Closes every session (aborting turns first). Called when stdin closes. */
  async shutdown(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((l) => this.stopSession(l)));
  }

  /**
   * Sends `available_commands_update` (and the stored title as `session_info_update`) after
   * the current response has been queued: call it last in a handler, right before returning
   * (the SDK queues the response in the same microtask run; this timer fires after it).
   */
  private afterResponse(live: LiveSession, title?: string): void {
    setTimeout(() => {
      void this.notify(live.session.id, {
        sessionUpdate: "available_commands_update",
        availableCommands: availableCommands(live),
      });
      if (title) {
        void this.notify(live.session.id, { sessionUpdate: "session_info_update", title });
      }
      const status = mcpStatusUpdate(live);
      if (status) void this.notify(live.session.id, status);
      watchMcp(this, live);
    }, 0);
  }

  async setConfigOption(
    params: acp.SetSessionConfigOptionRequest,
  ): Promise<acp.SetSessionConfigOptionResponse> {
    const live = this.requireSession(params.sessionId);
    applyConfigOption(this.sdk, live.session, params);
    return { configOptions: configOptions(await this.runtime(), this.app, live.session) };
  }

  /** `session/set_mode` (not advertised; accepted as an alias of the `agent` config option). */
  async setMode(params: acp.SetSessionModeRequest): Promise<acp.SetSessionModeResponse> {
    await this.setConfigOption(
      {
        sessionId: params.sessionId,
        configId: "agent",
        value: params.modeId,
      } as acp.SetSessionConfigOptionRequest,
    );
    return {};
  }

  /**
   * `session/prompt`: one turn. Engine events are forwarded as `session/update` (queued in
   * order before the response). A second prompt while a turn runs is rejected with `-32600`.
   * `session/cancel` and `$/cancel_request` for this request both end it with `cancelled`.
   */
  async prompt(
    params: acp.PromptRequest,
    requestId?: unknown,
    requestSignal?: AbortSignal,
  ): Promise<acp.PromptResponse> {
    const arrived = this.promptSeq.get(requestId) ?? this.seq;
    this.promptSeq.delete(requestId);
    const live = this.requireSession(params.sessionId);
    if (live.turn) {
      throw new this.sdk.RequestError(
        -32600,
        `Invalid request: a prompt turn is already running in session ${params.sessionId}; send session/cancel first`,
        { sessionId: params.sessionId },
      );
    }
    const ac = new AbortController();
    const sessionId = live.session.id;
    if ((this.cancelSeq.get(sessionId) ?? 0) > arrived || requestSignal?.aborted) {
      // Cancelled after it was sent but before it was dispatched: nothing runs.
      return { stopReason: "cancelled" };
    }
    const onRequestCancel = () => ac.abort();
    requestSignal?.addEventListener("abort", onRequestCancel, { once: true });
    try {
      const local = await runSlashCommand(this, live, params.prompt, ac.signal);
      if (local) return local;
      await attachMcpResources(live, params.prompt);
      return await this.runTurn(live, params, ac);
    } finally {
      requestSignal?.removeEventListener("abort", onRequestCancel);
    }
  }

  private async runTurn(
    live: LiveSession,
    params: acp.PromptRequest,
    ac: AbortController,
  ): Promise<acp.PromptResponse> {
    const sessionId = live.session.id;
    live.calls.clear();
    live.children.clear();
    // Every update of the turn precedes its response: a tool that outlives the turn (it
    // ignored the cancel past the engine's grace) cannot send updates afterwards.
    let turnOpen = true;
    let ended: TurnEndedEvent | null = null;
    const onEvent = (env: EventEnvelope) => {
      if (!turnOpen) return;
      if (env.session_id !== sessionId) return this.forwardChild(live, env);
      if (env.update.sessionUpdate === "turn_ended") ended = env.update;
      else if (env.update.sessionUpdate !== "turn_started") this.forward(live, env.update);
    };
    const running = live.session.prompt(params.prompt, { signal: ac.signal, onEvent });
    live.turn = { ac, done: running };
    let result: TurnResult;
    try {
      await running;
      if (!ended) throw new Error("the turn ended without a turn_ended event");
      result = ended;
    } catch (e) {
      if (ac.signal.aborted) result = { stopReason: "cancelled" } as TurnResult;
      else throw this.sdk.RequestError.internalError(undefined, errText(e));
    } finally {
      live.turn = undefined;
      turnOpen = false;
    }
    this.sendTitle(live);
    if (result.usage) {
      const u = live.usage ??= { prompt_tokens: 0, completion_tokens: 0, requests: 0 };
      u.prompt_tokens += result.usage.prompt_tokens ?? 0;
      u.completion_tokens += result.usage.completion_tokens ?? 0;
      u.requests += result.usage.requests ?? 0;
    }
    const cancelled = ac.signal.aborted || result.stopReason === "cancelled";
    if (cancelled) {
      // Every tool call ends: finish stragglers the engine left open.
      for (const [toolCallId, status] of live.calls) {
        if (status !== "completed" && status !== "failed") {
          void this.notify(sessionId, {
            sessionUpdate: "tool_call_update",
            toolCallId,
            status: "failed",
          });
        }
      }
      live.calls.clear();
      return { stopReason: "cancelled" };
    }
    live.calls.clear();
    if (result.error) {
      // The editor's log (stderr) gets the failure too; the client gets it as the error below.
      console.error(`coyote: ${result.error.message}`);
      throw new this.sdk.RequestError(-32603, `Internal error: ${result.error.message}`, {
        code: result.error.code,
        stopReason: result.stopReason,
      });
    }
    return {
      stopReason: result.stopReason,
      _meta: { coyote: { usage: result.usage, denied: result.denied.length } },
    };
  }

  /** `session_info_update {title}` once the session has a title the client has not seen. */
  private sendTitle(live: LiveSession): void {
    const title = titleOf(live.session.history());
    if (!title || title === live.titleSent) return;
    live.titleSent = title;
    void this.notify(live.session.id, {
      sessionUpdate: "session_info_update",
      title,
      updatedAt: new Date().toISOString(),
    });
  }

  /** Forwards one engine event of a live turn (user echo dropped; terminal embeds kept). */
  private forward(live: LiveSession, ev: EngineEvent): void {
    const id = live.session.id;
    switch (ev.sessionUpdate) {
      case "user_message_chunk":
        return; // the client already shows its own prompt
      case "tool_call":
        live.calls.set(ev.toolCallId, ev.status ?? "pending");
        break;
      case "tool_call_update": {
        if (ev.status) live.calls.set(ev.toolCallId, ev.status);
        if (live.terminalCalls.has(ev.toolCallId) && ev.content) {
          // The embedded terminal already shows the output: keep it instead of replacing it.
          const { content: _drop, ...rest } = ev;
          void this.notify(id, rest as acp.SessionUpdate);
          if (ev.status === "completed" || ev.status === "failed") {
            live.terminalCalls.delete(ev.toolCallId);
          }
          return;
        }
        break;
      }
    }
    void this.notify(id, ev);
  }

  /**
   * A sub-agent's event: shown as `tool_call_update` content on the root's `agent__spawn` call
   * the sub-agent descends from — one line per tool call it starts, per failure, and its end
   * (the last {@link CHILD_LINES} lines of each sub-agent). The full record is the
   * sub-agent's own transcript.
   */
  private forwardChild(live: LiveSession, env: EventEnvelope): void {
    let view = live.children.get(env.agent_id);
    if (!view) {
      const parent = env.parent_id ? live.children.get(env.parent_id) : undefined;
      const rootCallId = parent?.rootCallId ?? env.parent_tool_call_id;
      if (!rootCallId) return;
      view = { rootCallId, lines: [] };
      live.children.set(env.agent_id, view);
    }
    const ev = env.update;
    let line: string | null = null;
    if (ev.sessionUpdate === "turn_started") line = `started: ${oneLine(ev.prompt)}`;
    else if (ev.sessionUpdate === "tool_call") line = `• ${ev.title}`;
    else if (ev.sessionUpdate === "tool_call_update" && ev.status === "failed") {
      const c = ev.content?.[0];
      line = `  ✗ ${
        oneLine(c && c.type === "content" && c.content.type === "text" ? c.content.text : "failed")
      }`;
    } else if (ev.sessionUpdate === "turn_ended") {
      line = ev.error
        ? `failed: ${oneLine(ev.error.message)}`
        : `${ev.stopReason} (${ev.usage.requests} request(s), ${ev.usage.total_tokens} tokens)`;
    }
    if (line === null) return;
    view.lines.push(line);
    if (view.lines.length > CHILD_LINES) view.lines.splice(0, view.lines.length - CHILD_LINES);
    const rootCallId = view.rootCallId;
    const text = [...live.children.entries()]
      .filter(([, v]) => v.rootCallId === rootCallId)
      .map(([id, v]) => v.lines.map((l) => `[${id}] ${l}`).join("\n"))
      .join("\n");
    void this.notify(live.session.id, {
      sessionUpdate: "tool_call_update",
      toolCallId: rootCallId,
      content: [{ type: "content", content: { type: "text", text } }],
      _meta: { coyote: { agent_id: env.agent_id, parent_id: env.parent_id, seq: env.seq } },
    });
  }

  /**
   * Sees every incoming message in arrival order, before the SDK dispatches it (the SDK
   * dispatches concurrently, walking its handlers with an await each, so a handler alone
   * cannot tell whether a cancel came before or after a prompt). `session/cancel` acts here:
   * it aborts the running turn, and a prompt that arrived earlier but has not started yet
   * returns `cancelled`; a prompt that arrives after the cancel is not affected.
   */
  observe(msg: unknown): void {
    if (!msg || typeof msg !== "object" || Array.isArray(msg)) return;
    const m = msg as { id?: unknown; method?: unknown; params?: { sessionId?: unknown } };
    const seq = ++this.seq;
    if (m.method === "session/prompt" && "id" in m) this.promptSeq.set(m.id, seq);
    else if (
      m.method === "session/cancel" && !("id" in m) && typeof m.params?.sessionId === "string"
    ) {
      this.cancelSeq.set(m.params.sessionId, seq);
      this.cancel(m.params.sessionId);
    }
  }

  /** `session/cancel`: aborts the running turn; a no-op for idle or unknown sessions. */
  cancel(sessionId: string): void {
    this.sessions.get(sessionId)?.turn?.ac.abort();
  }
}

/** True when the model a new session would use has `images: true` in the `models:` table. */
function acceptsImages(app: AppOptions): boolean {
  try {
    const name = configuredModel(app.model, app.config);
    return !!name && modelInfo(app.config, name).images === true;
  } catch {
    return false;
  }
}
