/**
 * `coyote --acp-server`: Coyote as an Agent Client Protocol agent over stdio (ACP v1,
 * JSON-RPC 2.0, one message per line), built on `npm:@agentclientprotocol/sdk`'s
 * `agent()` builder and `ndJsonStream`. See docs/acp.md for the method table.
 *
 * This module is the dispatch: the handler table, `initialize`, config options, prompt
 * admission and cancel ordering. The session table and the `session/new`, `load`, `resume`,
 * `list`, `close` handlers are in `./sessions.ts`, a prompt turn's forwarding in `./turn.ts`.
 * Helpers: `./permission.ts` (guard asks), `./questions.ts` (`user__*`),
 * `./client_host.ts` (client fs / terminals), `./config_options.ts`, `./errors.ts`,
 * `./input.ts` (oversized lines), `./replay.ts` (load replay), `./commands.ts` (slash
 * commands), `./stdio.ts` (stdout purity).
 *
 * - stdout purity: {@link takeStdoutForProtocol} runs first; the SDK and the runtime are
 *   loaded afterwards with literal dynamic imports (the runtime is preloaded in the
 *   background so `initialize` is answered at once). A plain first `initialize` and
 *   `session/new` are answered before the SDK loads (`earlyHandshake`, issue 22), which then
 *   takes over the connection.
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
import { takeStdoutForProtocol } from "./stdio.ts";
import type { AcpPeer, LiveSession } from "./peer.ts";
import { applyConfigOption, configOptions } from "./config_options.ts";
import { limitLines, MAX_MESSAGE_BYTES, oversizedError } from "./input.ts";
import { runSlashCommand } from "./commands.ts";
import { isPermissionMode, switchMode } from "./modes.ts";
import type { TurnOverrides } from "../../session/types.ts";
import { attachMcpResources } from "./mcp_bridge.ts";
import { limitUpdate } from "./output_limit.ts";
import {
  type AcpStartOptions,
  closeAllSessions,
  closeSession,
  deleteSession,
  listSessions,
  loadSession,
  newSession,
  requireSession,
  type SessionServer,
} from "./sessions.ts";
import { runTurn } from "./turn.ts";
import denoJson from "../../../deno.json" with { type: "json" };
import { configuredModel, modelInfo } from "../../config/models.ts";

export { PERMISSION_OPTIONS } from "./permission.ts";
export type { LiveSession } from "./peer.ts";
export type { AcpStartOptions } from "./sessions.ts";

/** ACP protocol version spoken (answered even when the client asks for a higher one). */
export const ACP_PROTOCOL_VERSION = 1;

type Runtime = typeof import("../../session/runtime.ts");
type AcpModule = typeof import("@agentclientprotocol/sdk");

/**
 * Runs the ACP server on stdin/stdout until stdin closes. Returns the process exit code
 * (0 after a clean shutdown).
 */
export async function runAcpServer(app: AppOptions, start: AcpStartOptions = {}): Promise<number> {
  const output = takeStdoutForProtocol();
  const runtimeP: Promise<Runtime> = import("../../session/runtime.ts");
  runtimeP.catch(() => {});
  // One writer for fd 1, shared by the SDK and the oversized-line answers (whole lines each).
  const writer = output.getWriter();
  let chain: Promise<void> = Promise.resolve();
  const send = (bytes: Uint8Array) => (chain = chain.then(() => writer.write(bytes)));
  const enc = new TextEncoder();
  const input = limitLines(Deno.stdin.readable, MAX_MESSAGE_BYTES, (line) => {
    console.error(
      `coyote: refused an ACP message of ${line.bytes} bytes (limit ${MAX_MESSAGE_BYTES}), id ${
        JSON.stringify(line.id)
      }`,
    );
    void send(enc.encode(oversizedError(line, MAX_MESSAGE_BYTES))).catch(() => {});
  });
  // `initialize` and `session/new` are answered before the SDK (and zod under it, ≈ 30 ms)
  // loads: see `earlyHandshake`.
  const server = new AcpServer(app, undefined as unknown as AcpModule, () => runtimeP, start);
  if (start.configError) console.error(`coyote: ${start.configError}`);
  const early = await earlyHandshake(server, input, send);
  const sdk: AcpModule = await import("@agentclientprotocol/sdk");
  (server as { sdk: AcpModule }).sdk = sdk;
  const shared = new WritableStream<Uint8Array>({
    write: (chunk) => early.dropReplayAnswer(chunk) ? undefined : send(chunk),
  });
  const rest = early.rest;
  const raw = sdk.ndJsonStream(shared, rest, { maxMessageBytes: MAX_MESSAGE_BYTES + 1024 });
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
  early.flush();

  const stop = () => conn.close();
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT", "SIGHUP"];
  for (const s of signals) {
    try {
      Deno.addSignalListener(s, stop);
    } catch { /* unsupported signal on this platform */ }
  }
  await conn.closed;
  await closeAllSessions(server);
  await chain.catch(() => {});
  for (const s of signals) {
    try {
      Deno.removeSignalListener(s, stop);
    } catch { /* ignore */ }
  }
  return 0;
}

/** The ACP agent: session table and handlers. Exported for in-process tests and benchmarks. */
export class AcpServer implements AcpPeer, SessionServer {
  clientCaps: acp.ClientCapabilities = {};
  /** What `initialize` advertised; a prompt with a content kind not in it is refused. */
  promptCaps?: acp.PromptCapabilities;
  /** Arrival number of the last message, of pending prompts (by request id) and of cancels. */
  private seq = 0;
  private promptSeq = new Map<unknown, number>();
  private cancelSeq = new Map<string, number>();
  sessions = new Map<string, LiveSession>();
  opening = new Map<string, Promise<LiveSession>>();
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
      .onRequest(methods.agent.session.new, ({ params }) => newSession(this, params))
      .onRequest(methods.agent.session.load, ({ params }) => loadSession(this, params, true))
      .onRequest(methods.agent.session.resume, ({ params }) => loadSession(this, params, false))
      .onRequest(methods.agent.session.list, ({ params }) => listSessions(this, params))
      .onRequest(methods.agent.session.close, ({ params }) => closeSession(this, params.sessionId))
      .onRequest(methods.agent.session.delete, ({ params }) => deleteSession(this, params))
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
  /** Updates sent before the SDK connection is open (`earlyHandshake`); sent once it is. */
  earlyNotify?: [string, acp.SessionUpdate][];
  notify(sessionId: string, update: acp.SessionUpdate): Promise<void> {
    if (this.earlyNotify) {
      this.earlyNotify.push([sessionId, update]);
      return Promise.resolve();
    }
    if (!this.conn) return Promise.resolve();
    return this.client.notify("session/update", { sessionId, update: limitUpdate(update) })
      .catch(() => {});
  }

  initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.clientCaps = params.clientCapabilities ?? {};
    this.promptCaps = promptCapabilities(this.app);
    return {
      protocolVersion: ACP_PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: this.promptCaps,
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {} },
      },
      authMethods: [],
      agentInfo: { name: "coyote", title: "Coyote", version: String(denoJson.version ?? "0.0.0") },
    };
  }

  async setConfigOption(
    params: acp.SetSessionConfigOptionRequest,
  ): Promise<acp.SetSessionConfigOptionResponse> {
    const live = requireSession(this, params.sessionId);
    applyConfigOption(this.sdk, live.session, params);
    return { configOptions: configOptions(await this.runtime(), this.app, live.session) };
  }

  /**
   * `session/set_mode`: a permission mode (./modes.ts; a `current_mode_update` follows), or — as
   * before modes existed — an agent name, as the `agent` config option.
   */
  async setMode(params: acp.SetSessionModeRequest): Promise<acp.SetSessionModeResponse> {
    if (isPermissionMode(params.modeId)) {
      const live = requireSession(this, params.sessionId);
      await switchMode((sid, u) => this.notify(sid, u), live.session, params.modeId);
      return {};
    }
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
   * order before the response). A second prompt while a turn runs is rejected with `-32600`;
   * one that arrives after a `session/cancel` of the running turn waits for it to end, then runs.
   * `session/cancel` and `$/cancel_request` for this request both end it with `cancelled`.
   */
  async prompt(
    params: acp.PromptRequest,
    requestId?: unknown,
    requestSignal?: AbortSignal,
  ): Promise<acp.PromptResponse> {
    const arrived = this.promptSeq.get(requestId) ?? this.seq;
    this.promptSeq.delete(requestId);
    const live = requireSession(this, params.sessionId);
    refuseUnadvertised(this.sdk, params.prompt, this.promptCaps ?? promptCapabilities(this.app));
    // A turn cancelled before this prompt arrived (`session/cancel` + `session/prompt` in one
    // write) is still winding down: wait for it to end (bounded by the engine's cancel grace).
    while (live.turn?.ac.signal.aborted) await live.turn.done.catch(() => {});
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
      const turn: { overrides?: TurnOverrides } = {};
      const local = await runSlashCommand(this, live, params.prompt, ac.signal, turn);
      if (local) return local;
      await attachMcpResources(live, params.prompt);
      return await runTurn(this, live, params, ac, turn.overrides);
    } finally {
      requestSignal?.removeEventListener("abort", onRequestCancel);
    }
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

const isObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === "object" && !Array.isArray(v);

const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
const pairs = (v: unknown) =>
  Array.isArray(v) &&
  v.every((p) =>
    isObject(p) && typeof p.name === "string" && typeof p.value === "string" &&
    Object.keys(p).length === 2
  );
const onlyKeys = (o: Record<string, unknown>, keys: string[]) =>
  Object.keys(o).every((k) => keys.includes(k));

/**
 * An `mcpServers` entry that the ACP v1 schema takes as it is (nothing defaulted, nothing
 * stripped): `{type: "http"|"sse", name, url, headers: [{name, value}]}` or
 * `{name, command, args: string[], env: [{name, value}]}`. Any other entry leaves the
 * `session/new` to the SDK.
 */
function plainMcpServer(s: unknown): boolean {
  if (!isObject(s) || typeof s.name !== "string") return false;
  if (s.type === "http" || s.type === "sse") {
    return typeof s.url === "string" && pairs(s.headers) &&
      onlyKeys(s, ["type", "name", "url", "headers"]);
  }
  return typeof s.command === "string" && strings(s.args) && pairs(s.env) &&
    onlyKeys(s, ["name", "command", "args", "env"]);
}

/**
 * Answers the first messages without the SDK (issue 22: the SDK and zod are ≈ 30 ms of a
 * ≈ 100 ms handshake): a first line that is an `initialize` request whose params have the
 * schema's `protocolVersion` (an integer 0–65535, the one field whose failure the SDK's schema
 * does not default away) and an object (or no) `clientCapabilities`, then a second line that is
 * a `session/new` request whose params are a string `cwd` and an `mcpServers` array of
 * {@link plainMcpServer} entries alone. The SDK then parses the replayed `initialize` and calls
 * `initialize` again, so the client capabilities kept are the schema's, before any later
 * message is dispatched. Each answer is the line the SDK writes
 * (`{"jsonrpc":"2.0","id":…,"result":…}` + `\n`). Anything else — another method, other
 * params, a line that does not parse, an error while opening the session — stops the early
 * phase, and that line goes to the SDK as it came, so every error stays the SDK's JSON-RPC
 * error.
 *
 * Returns what the SDK connection is built on: `rest`, the input from the SDK's point of view —
 * the answered `initialize` again (so the SDK's connection is initialized; its answer is
 * dropped by `dropReplayAnswer`, and no further line is read before it is written, since the SDK
 * refuses a request that arrives before `initialize` is done), the unanswered line, then stdin
 * in order; `flush` sends the `session/update`s a session queued meanwhile (after the
 * `session/new` response, as the SDK path does).
 */
async function earlyHandshake(
  server: AcpServer,
  input: ReadableStream<Uint8Array>,
  send: (bytes: Uint8Array) => Promise<void>,
): Promise<{
  rest: ReadableStream<Uint8Array>;
  dropReplayAnswer(chunk: Uint8Array): boolean;
  flush(): void;
}> {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const reader = input.getReader();
  let text = "";
  const replay: string[] = [];
  let initId: unknown = undefined;
  const nextLine = async (): Promise<string | undefined> => {
    for (;;) {
      const i = text.indexOf("\n");
      if (i >= 0) {
        const line = text.slice(0, i);
        text = text.slice(i + 1);
        return line;
      }
      const r = await reader.read();
      if (r.done) {
        text += dec.decode();
        return undefined;
      }
      text += dec.decode(r.value, { stream: true });
    }
  };
  const answer = (id: unknown, result: unknown) =>
    send(enc.encode(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n"));
  const requestId = (m: Record<string, unknown>) =>
    m.jsonrpc === "2.0" && (typeof m.id === "string" || typeof m.id === "number");
  server.earlyNotify = [];
  const first = await nextLine();
  let m: unknown;
  try {
    m = first === undefined ? undefined : JSON.parse(first);
  } catch { /* the SDK answers it */ }
  const p = isObject(m) ? m.params : undefined;
  if (
    isObject(m) && requestId(m) && m.method === "initialize" && isObject(p) &&
    Number.isInteger(p.protocolVersion) && (p.protocolVersion as number) >= 0 &&
    (p.protocolVersion as number) <= 65535 &&
    (p.clientCapabilities === undefined || isObject(p.clientCapabilities))
  ) {
    initId = m.id;
    await answer(m.id, server.initialize(p as unknown as acp.InitializeRequest));
    replay.push(first!);
    const second = await nextLine();
    let n: unknown;
    try {
      n = second === undefined ? undefined : JSON.parse(second);
    } catch { /* the SDK answers it */ }
    const q = isObject(n) ? n.params : undefined;
    let answered = false;
    if (
      isObject(n) && requestId(n) && n.method === "session/new" && isObject(q) &&
      typeof q.cwd === "string" && Array.isArray(q.mcpServers) &&
      q.mcpServers.every(plainMcpServer) &&
      Object.keys(q).every((k) => k === "cwd" || k === "mcpServers")
    ) {
      try {
        const result = await newSession(server, q as unknown as acp.NewSessionRequest);
        await answer(n.id, result);
        answered = true;
      } catch { /* the SDK runs it again and answers with its error */ }
    }
    if (second !== undefined && !answered) replay.push(second);
  } else if (first !== undefined) replay.push(first);
  let initDone: () => void = () => {};
  const initAnswered = new Promise<void>((r) => (initDone = r));
  let dropped = initId === undefined;
  if (dropped) initDone();
  const rest = new ReadableStream<Uint8Array>({
    start(ctrl) {
      // The replayed `initialize` alone: the SDK refuses a request that comes before it is done.
      if (initId !== undefined) ctrl.enqueue(enc.encode(replay.shift() + "\n"));
    },
    async pull(ctrl) {
      await initAnswered;
      const held = replay.splice(0).map((l) => l + "\n").join("") + text;
      text = "";
      if (held) return ctrl.enqueue(enc.encode(held));
      const r = await reader.read();
      if (r.done) ctrl.close();
      else ctrl.enqueue(r.value);
    },
    cancel: (why) => reader.cancel(why),
  });
  return {
    rest,
    dropReplayAnswer(chunk) {
      if (dropped) return false;
      let out: unknown;
      try {
        out = JSON.parse(dec.decode(chunk));
      } catch {
        return false;
      }
      if (isObject(out) && out.id === initId && !("method" in out)) {
        dropped = true;
        initDone();
        return true;
      }
      return false;
    },
    flush() {
      const queued = server.earlyNotify ?? [];
      server.earlyNotify = undefined;
      for (const [sid, u] of queued) void server.notify(sid, u);
    },
  };
}

/**
 * The `promptCapabilities` of `initialize`. Images go to the model as OpenAI `image_url`
 * parts: advertised only when the configured model is known to accept them (`models:
 * {<name>: {images: true}}`); audio never; embedded resources always (they become text).
 */
function promptCapabilities(app: AppOptions): acp.PromptCapabilities {
  return { image: acceptsImages(app), audio: false, embeddedContext: true };
}

/**
 * Refuses a prompt carrying a content kind `initialize` did not advertise (ACP v1 "Prompt
 * Capabilities": clients MUST restrict prompts to them): `-32602` invalid params naming the
 * block and the capability, before anything reaches the model or the transcript. `text` and
 * `resource_link` are the baseline and always accepted.
 */
function refuseUnadvertised(
  sdk: AcpModule,
  prompt: acp.ContentBlock[],
  caps: acp.PromptCapabilities,
): void {
  const need: Record<string, keyof acp.PromptCapabilities> = {
    image: "image",
    audio: "audio",
    resource: "embeddedContext",
  };
  prompt.forEach((b, i) => {
    const cap = need[b.type];
    if (cap && !caps[cap]) {
      throw sdk.RequestError.invalidParams(
        { index: i, type: b.type, capability: `promptCapabilities.${cap}` },
        `prompt[${i}] is a "${b.type}" block, but this agent advertised promptCapabilities.${cap}: false${
          b.type === "image"
            ? " (the model is not configured for images: models.<name>.images)"
            : ""
        }; send it as text or a resource_link instead`,
      );
    }
  });
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
