/**
 * `coyote --acp-server`: Coyote as an Agent Client Protocol agent over stdio (ACP v1,
 * JSON-RPC 2.0, one message per line), built on `npm:@agentclientprotocol/sdk`'s
 * `agent()` builder and `ndJsonStream`. See docs/acp.md for the method table.
 *
 * - stdout purity: {@link takeStdoutForProtocol} runs first; the SDK and the runtime are
 *   loaded afterwards with literal dynamic imports (the runtime is preloaded in the
 *   background so `initialize` is answered at once).
 * - Several sessions per process, each rooted at its own `cwd`.
 * - The process ends when stdin closes: running turns are aborted (killing their child
 *   processes), sessions are closed (stopping their MCP servers), then this resolves 0.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AppOptions } from "../app.ts";
import type { EngineEvent, PermissionOutcome, PermissionResolver, TurnResult } from "../types.ts";
import type { HostServices, UserQuestion } from "../../sdk/mod.ts";

/** The SDK's client-terminal host service (`HostServices.runInTerminal`). */
type RunInTerminal = NonNullable<HostServices["runInTerminal"]>;
import type { AgentSession } from "../runtime.ts";
import { takeStdoutForProtocol } from "./stdio.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** ACP protocol version spoken (answered even when the client asks for a higher one). */
export const ACP_PROTOCOL_VERSION = 1;

type Runtime = typeof import("../runtime.ts");
type AcpModule = typeof import("@agentclientprotocol/sdk");

interface Turn {
  ac: AbortController;
  done: Promise<unknown>;
}

interface LiveSession {
  session: AgentSession;
  turn?: Turn;
  /** Last known status per tool call of the running turn (to finish stragglers as `failed`). */
  calls: Map<string, acp.ToolCallStatus | undefined>;
  /** Tool calls whose command runs in a client terminal → terminal id. */
  terminalCalls: Map<string, string>;
  /** Most recent `tool_call` id (fallback owner for terminals / questions). */
  lastToolCallId?: string;
  lastExecuteCallId?: string;
}

/** Options of the permission request, ACP `PermissionOptionKind` ids. */
export const PERMISSION_OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

function isAbsolute(p: string): boolean {
  return p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p);
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Runs the ACP server on stdin/stdout until stdin closes. Returns the process exit code
 * (0 after a clean shutdown).
 */
export async function runAcpServer(app: AppOptions): Promise<number> {
  const output = takeStdoutForProtocol();
  const runtimeP: Promise<Runtime> = import("../runtime.ts");
  runtimeP.catch(() => {});
  const sdk: AcpModule = await import("@agentclientprotocol/sdk");
  const server = new AcpServer(app, sdk, () => runtimeP);
  const raw = sdk.ndJsonStream(output, Deno.stdin.readable);
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
  for (const s of signals) {
    try {
      Deno.removeSignalListener(s, stop);
    } catch { /* ignore */ }
  }
  return 0;
}

/** The ACP agent: session table and handlers. Exported for in-process tests and benchmarks. */
export class AcpServer {
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
        ({ params, requestId }) => this.prompt(params, requestId),
      )
      .onRequest(
        methods.agent.session.setConfigOption,
        ({ params }) => this.setConfigOption(params),
      )
      .onRequest(methods.agent.session.setMode, ({ params }) => this.setMode(params));
  }

  private get client(): acp.AgentContext {
    if (!this.conn) throw new Error("ACP connection not open");
    return this.conn.client;
  }

  /** Sends one `session/update`; never throws (a closed connection drops it). */
  notify(sessionId: string, update: acp.SessionUpdate): Promise<void> {
    if (!this.conn) return Promise.resolve();
    return this.client.notify("session/update", { sessionId, update }).catch(() => {});
  }

  initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.clientCaps = params.clientCapabilities ?? {};
    return {
      protocolVersion: ACP_PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        // Images go to the model as OpenAI `image_url` parts (vision models).
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
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
    this.checkCwd(cwd);
    const rt = await this.runtime();
    const { mcpServersFromAcp } = await import("../mcp/mod.ts");
    const slot: { live?: LiveSession } = {};
    const holder = { get: () => slot.live };
    let session: AgentSession;
    try {
      session = await rt.createSession(this.app, {
        cwd,
        permission: this.permissionResolver(holder),
        host: this.hostServices(holder),
        mcpServers: mcpServersFromAcp(mcpServers ?? []),
        ...(resumeId ? { resumeId } : {}),
        log: (line) => console.error(line),
      });
    } catch (e) {
      if (resumeId && /no stored session|not found/i.test(errText(e))) {
        throw this.sdk.RequestError.sessionNotFound(resumeId);
      }
      if (e instanceof Error && e.name === "UsageError") {
        throw this.sdk.RequestError.invalidParams(undefined, e.message);
      }
      if (e instanceof Error && e.name === "ConfigError") {
        // No provider, bad config.yaml: the message says what to set, without a stack trace.
        throw new this.sdk.RequestError(-32603, `Configuration error: ${e.message}`);
      }
      throw this.sdk.RequestError.internalError(undefined, errText(e));
    }
    const live: LiveSession = { session, calls: new Map(), terminalCalls: new Map() };
    slot.live = live;
    this.sessions.set(session.id, live);
    return live;
  }

  /** `session/new`: a session rooted at `cwd`; `available_commands_update` follows the response. */
  async newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    const live = await this.open(params.cwd, params.mcpServers);
    const configOptions = await this.configOptions(live);
    this.afterResponse(live);
    return { sessionId: live.session.id, configOptions };
  }

  /** `session/load` (replay = true) and `session/resume` (no replay). */
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
    if (replay) {
      for (const update of live.session.history()) await this.notify(live.session.id, update);
    }
    const configOptions = await this.configOptions(live);
    this.afterResponse(live);
    return { configOptions };
  }

  async listSessions(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const rt = await this.runtime();
    const list = await rt.listSessions(this.app, params.cwd ? { cwd: params.cwd } : {});
    return {
      sessions: list.map((s) => ({
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
   * Sends `available_commands_update` after the current response has been queued: call it
   * last in a handler, right before returning (the SDK queues the response in the same
   * microtask run; this timer fires after it).
   */
  private afterResponse(live: LiveSession): void {
    setTimeout(() => {
      void this.notify(live.session.id, {
        sessionUpdate: "available_commands_update",
        availableCommands: [],
      });
    }, 0);
  }

  private async configOptions(live: LiveSession): Promise<acp.SessionConfigOption[]> {
    const rt = await this.runtime();
    const agents = (await rt.availableAgents(this.app, live.session.cwd)).map((a) => ({
      value: a.name,
      name: a.name,
      description: a.description,
    }));
    if (!agents.some((a) => a.value === live.session.agent)) {
      agents.push({ value: live.session.agent, name: live.session.agent, description: "" });
    }
    const models = [
      live.session.model,
      this.app.model,
      this.app.config?.model,
      this.app.config?.provider?.model,
    ]
      .filter((m): m is string => typeof m === "string" && m.length > 0);
    return [
      {
        id: "agent",
        name: "Agent",
        description: "The agent (instructions and tools) that answers prompts",
        category: "mode",
        type: "select",
        currentValue: live.session.agent,
        options: agents,
      },
      {
        id: "model",
        name: "Model",
        description: "The model used for the next turn",
        category: "model",
        type: "select",
        currentValue: live.session.model,
        options: [...new Set(models)].map((m) => ({ value: m, name: m })),
      },
    ];
  }

  async setConfigOption(
    params: acp.SetSessionConfigOptionRequest,
  ): Promise<acp.SetSessionConfigOptionResponse> {
    const live = this.requireSession(params.sessionId);
    const value = (params as { value: unknown }).value;
    if (typeof value !== "string" || !value) {
      throw this.sdk.RequestError.invalidParams(
        { configId: params.configId },
        "value must be a non-empty string",
      );
    }
    if (params.configId === "model") {
      live.session.model = value;
    } else if (params.configId === "agent") {
      try {
        live.session.agent = value; // the runtime validates (built-in and plugin agents)
      } catch (e) {
        throw this.sdk.RequestError.invalidParams({ value }, errText(e));
      }
      if (live.session.agent !== value) {
        throw this.sdk.RequestError.invalidParams({ value }, `unknown agent "${value}"`);
      }
    } else {
      throw this.sdk.RequestError.invalidParams(
        { configId: params.configId },
        `unknown config option "${params.configId}"`,
      );
    }
    return { configOptions: await this.configOptions(live) };
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
   */
  async prompt(params: acp.PromptRequest, requestId?: unknown): Promise<acp.PromptResponse> {
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
    if ((this.cancelSeq.get(sessionId) ?? 0) > arrived) {
      // Cancelled after it was sent but before it was dispatched: nothing runs.
      return { stopReason: "cancelled" };
    }
    live.calls.clear();
    // Every update of the turn precedes its response: a tool that outlives the turn (it
    // ignored the cancel past the engine's grace) cannot send updates afterwards.
    let turnOpen = true;
    const onEvent = (ev: EngineEvent) => {
      if (turnOpen) this.forward(live, ev);
    };
    const running = live.session.prompt(params.prompt, { signal: ac.signal, onEvent });
    live.turn = { ac, done: running };
    let result: TurnResult;
    try {
      result = await running;
    } catch (e) {
      if (ac.signal.aborted) result = { stopReason: "cancelled" } as TurnResult;
      else throw this.sdk.RequestError.internalError(undefined, errText(e));
    } finally {
      live.turn = undefined;
      turnOpen = false;
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

  /** Forwards one engine event of a live turn (user echo dropped; terminal embeds kept). */
  private forward(live: LiveSession, ev: EngineEvent): void {
    const id = live.session.id;
    switch (ev.sessionUpdate) {
      case "user_message_chunk":
        return; // the client already shows its own prompt
      case "tool_call":
        live.calls.set(ev.toolCallId, ev.status ?? "pending");
        live.lastToolCallId = ev.toolCallId;
        if (ev.kind === "execute") live.lastExecuteCallId = ev.toolCallId;
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

  /** Guard `ask` → `session/request_permission` (abandoned when the turn is cancelled). */
  private permissionResolver(holder: { get(): LiveSession | undefined }): PermissionResolver {
    return async (req, signal): Promise<PermissionOutcome> => {
      if (signal.aborted) return "cancelled";
      try {
        const res = await this.client.request("session/request_permission", {
          sessionId: req.sessionId,
          toolCall: {
            toolCallId: req.toolCallId,
            title: req.title,
            kind: req.kind,
            status: "pending",
            rawInput: req.rawInput as Record<string, unknown>,
          },
          options: PERMISSION_OPTIONS,
        }, { cancellationSignal: signal, stopWaitingOnCancel: true });
        if (res.outcome.outcome !== "selected") {
          holder.get()?.turn?.ac.abort();
          return "cancelled";
        }
        const id = res.outcome.optionId;
        if (
          id === "allow_once" || id === "allow_always" || id === "reject_once" ||
          id === "reject_always"
        ) return id;
        return "reject_once";
      } catch (e) {
        if (signal.aborted) return "cancelled";
        console.error(`coyote: permission request failed, rejecting: ${errText(e)}`);
        return "reject_once";
      }
    };
  }

  /** Client-side fs / terminal / questions, per the capabilities the client offered. */
  private hostServices(holder: { get(): LiveSession | undefined }): HostServices {
    const caps = this.clientCaps;
    const host: HostServices = {};
    const sid = () => {
      const l = holder.get();
      if (!l) throw new Error("session is not open");
      return l.session.id;
    };
    if (caps.fs?.readTextFile) {
      host.readTextFile = async (path) => {
        try {
          const r = await this.client.request("fs/read_text_file", { sessionId: sid(), path });
          return r.content;
        } catch (e) {
          const msg = errText(e);
          const code = (e as { code?: number }).code;
          if (code === -32002 || /not found|no such file|ENOENT|does not exist/i.test(msg)) {
            throw new Deno.errors.NotFound(`${path}: ${msg}`);
          }
          // Editors word "missing" differently (or not at all): a file absent from the disk
          // is not found, so fs_write can create it (its diff then has oldText null).
          if (await missingOnDisk(path)) throw new Deno.errors.NotFound(`${path}: ${msg}`);
          throw new Error(`${path}: the editor could not read the file: ${msg}`);
        }
      };
    }
    if (caps.fs?.writeTextFile) {
      host.writeTextFile = async (path, content) => {
        const dir = path.replace(/\/[^/]*$/, "");
        if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true }).catch(() => {});
        await this.client.request("fs/write_text_file", { sessionId: sid(), path, content });
      };
    }
    if (caps.terminal) {
      host.runInTerminal = (command, opts) => this.runInTerminal(holder, command, opts);
    }
    host.askUser = (q, signal) => this.askUser(holder, q, signal);
    return host;
  }

  private async runInTerminal(
    holder: { get(): LiveSession | undefined },
    command: string,
    opts: Parameters<RunInTerminal>[1],
  ): ReturnType<RunInTerminal> {
    const live = holder.get();
    if (!live) throw new Error("session is not open");
    const sessionId = live.session.id;
    const term = await this.client.createTerminal({
      sessionId,
      command: "/bin/sh",
      args: ["-c", command],
      cwd: opts.cwd,
      outputByteLimit: opts.outputByteLimit ?? 1_000_000,
    });
    try {
      const callId = opts.toolCallId ?? live.lastExecuteCallId ?? live.lastToolCallId;
      if (callId) {
        live.terminalCalls.set(callId, term.id);
        await this.notify(sessionId, {
          sessionUpdate: "tool_call_update",
          toolCallId: callId,
          content: [{ type: "terminal", terminalId: term.id }],
        });
      }
      let killed: string | null = null;
      const exit = term.waitForExit();
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort = () => {};
      const stopped = new Promise<"abort" | "timeout">((resolve) => {
        onAbort = () => resolve("abort");
        if (opts.signal.aborted) resolve("abort");
        opts.signal.addEventListener("abort", onAbort, { once: true });
        if (opts.timeoutMs && opts.timeoutMs > 0) {
          timer = setTimeout(() => resolve("timeout"), opts.timeoutMs);
        }
      });
      const first = await Promise.race([exit.then(() => "exit" as const), stopped]);
      clearTimeout(timer);
      opts.signal.removeEventListener("abort", onAbort);
      if (first !== "exit") {
        killed = first === "timeout" ? "SIGTERM (timeout)" : "SIGTERM (cancelled)";
        await term.kill().catch(() => {});
        await Promise.race([
          exit.catch(() => {}),
          // Short enough that the terminal is released within the engine's cancel grace.
          new Promise((r) => (timer = setTimeout(r, 1000))),
        ]);
        clearTimeout(timer);
      }
      const status = await Promise.race([
        exit,
        new Promise<null>((r) => setTimeout(() => r(null), 10)),
      ]).catch(() => null);
      const out = await term.currentOutput();
      const exitStatus = status ?? out.exitStatus ?? null;
      return {
        exitCode: exitStatus?.exitCode ?? null,
        signal: exitStatus?.signal ?? killed,
        output: out.output,
        truncated: out.truncated,
      };
    } finally {
      await term.release().catch(() => {});
    }
  }

  /**
   * `user__*` questions through `session/request_permission` (ACP has no free-form question
   * in v1 stable): `confirm` → Yes/No, `select` → one option per choice. `input` and
   * `checkbox` cannot be asked this way and throw (the tool reports it to the model).
   */
  private async askUser(
    holder: { get(): LiveSession | undefined },
    q: UserQuestion,
    signal: AbortSignal,
  ): Promise<string | string[] | boolean> {
    const live = holder.get();
    if (!live) throw new Error("session is not open");
    let options: acp.PermissionOption[];
    if (q.action === "confirm") {
      options = [
        { optionId: "yes", name: "Yes", kind: "allow_once" },
        { optionId: "no", name: "No", kind: "reject_once" },
      ];
    } else if (q.action === "select" && q.options?.length) {
      options = q.options.map((o, i) => ({ optionId: `option-${i}`, name: o, kind: "allow_once" }));
    } else {
      throw new Error(
        `this ACP client cannot answer a "${q.action}" question; decide without the user or explain what you need`,
      );
    }
    const res = await this.client.request("session/request_permission", {
      sessionId: live.session.id,
      toolCall: { toolCallId: live.lastToolCallId ?? "question", title: q.question },
      options,
    }, { cancellationSignal: signal, stopWaitingOnCancel: true });
    if (res.outcome.outcome !== "selected") throw new Error("the user dismissed the question");
    const picked = res.outcome.optionId;
    if (q.action === "confirm") return picked === "yes";
    const idx = Number(picked.replace("option-", ""));
    return q.options?.[idx] ?? picked;
  }
}

/** True when `path` does not exist on the local disk. */
async function missingOnDisk(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return false;
  } catch (e) {
    return e instanceof Deno.errors.NotFound;
  }
}

/** Waits for `p` at most `ms` (the timer is cleared either way). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let t: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => (t = setTimeout(r, ms)))]);
  clearTimeout(t);
}
