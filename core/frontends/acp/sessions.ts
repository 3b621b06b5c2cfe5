/**
 * The ACP server's session table and its handlers (ACP v1 "Session Setup": `session/new`,
 * `session/load`; and the `sessionCapabilities` `list`, `resume`, `close`, `delete`; docs/acp.md
 * "Methods"): opening a session rooted at an absolute `cwd` (a config error or a bad `cwd`
 * refuses it; the runtime's `createSession` wires the guard's asks, the client host and the
 * client's MCP servers), replaying a loaded one (`./replay.ts`), listing stored sessions (no
 * sub-agents), closing one or all (a running turn is aborted first), and what follows a
 * `session/new` / `load` response (`available_commands_update`, the stored title, the MCP status).
 * The server (`./server.ts`) dispatches to these; each takes it as a {@link SessionServer}.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AppOptions } from "../../config/app_options.ts";
import { type AcpPeer, type LiveSession, within } from "./peer.ts";
import { permissionResolver } from "./permission.ts";
import { hostServices } from "./client_host.ts";
import { configOptions } from "./config_options.ts";
import { sessionModes } from "./modes.ts";
import { configError, sessionOpenError } from "./errors.ts";
import { replayUpdates, titleOf } from "./replay.ts";
import { availableCommands } from "./commands.ts";
import { mcpStatusUpdate, watchMcp } from "./mcp_bridge.ts";

type Runtime = typeof import("../../session/runtime.ts");

/** Start-up problems reported later, from `session/new` (docs/acp.md "Bad input"). */
export interface AcpStartOptions {
  /** A `config.yaml` error: `initialize` is answered, every `session/new` answers it. */
  configError?: string;
}

/** The server as the session handlers use it: its peer side, options, runtime and session table. */
export interface SessionServer extends AcpPeer {
  readonly app: AppOptions;
  readonly runtime: () => Promise<Runtime>;
  readonly start: AcpStartOptions;
  readonly sessions: Map<string, LiveSession>;
  /**
   * `session/load` / `resume` still opening, by session id: a second load of the same id joins
   * it, and `session/close` / `delete` wait for it (one engine session, one set of MCP servers).
   */
  readonly opening: Map<string, Promise<LiveSession>>;
}

function isAbsolute(p: string): boolean {
  return p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p);
}

/** The live session `sessionId`; `-32002` (session not found) when it is not open. */
export function requireSession(server: SessionServer, sessionId: string): LiveSession {
  const live = server.sessions.get(sessionId);
  if (!live) throw server.sdk.RequestError.sessionNotFound(sessionId);
  return live;
}

function checkCwd(server: SessionServer, cwd: string): void {
  if (!isAbsolute(cwd)) {
    throw server.sdk.RequestError.invalidParams(
      { cwd },
      `"cwd" must be an absolute path, got ${JSON.stringify(cwd)}`,
    );
  }
  let ok = false;
  try {
    ok = Deno.statSync(cwd).isDirectory;
  } catch { /* missing */ }
  if (!ok) throw server.sdk.RequestError.invalidParams({ cwd }, `"cwd" is not a directory: ${cwd}`);
}

/** Creates (or resumes) an engine session wired to this connection. */
async function openSession(
  server: SessionServer,
  cwd: string,
  mcpServers: acp.McpServer[] | undefined,
  resumeId?: string,
): Promise<LiveSession> {
  if (server.start.configError) throw configError(server.sdk, server.start.configError);
  checkCwd(server, cwd);
  const rt = await server.runtime();
  const { mcpServersFromAcp } = await import("../../extensions/mcp/mod.ts");
  const slot: { live?: LiveSession } = {};
  const holder = { get: () => slot.live };
  let session;
  try {
    session = await rt.createSession(server.app, {
      cwd,
      permission: permissionResolver(server, holder),
      host: (scope) => hostServices(server, holder, scope),
      mcpServers: mcpServersFromAcp(mcpServers ?? []),
      // The client drives the turns: an agent's auto_continue does not re-prompt by itself.
      autoContinue: false,
      // A prompt does not wait for MCP servers still starting (core/session/mcp_startup.ts).
      mcpStartup: "background",
      ...(resumeId ? { resumeId } : {}),
      log: (line) => console.error(line),
    });
  } catch (e) {
    throw sessionOpenError(server.sdk, e, resumeId);
  }
  const { customCommands } = await import("../slash/custom.ts");
  const live: LiveSession = {
    session,
    calls: new Map(),
    terminalCalls: new Map(),
    children: new Map(),
    // Listed in `available_commands_update`; a file's problems go to stderr once.
    custom: await customCommands(session.workspace.app, session, (l) => console.error(l)),
  };
  slot.live = live;
  server.sessions.set(session.id, live);
  return live;
}

/** `session/new`: a session rooted at `cwd`; `available_commands_update` follows the response. */
export async function newSession(
  server: SessionServer,
  params: acp.NewSessionRequest,
): Promise<acp.NewSessionResponse> {
  const live = await openSession(server, params.cwd, params.mcpServers);
  const options = configOptions(await server.runtime(), server.app, live.session);
  afterResponse(server, live);
  return { sessionId: live.session.id, configOptions: options, modes: sessionModes(live.session) };
}

/**
 * `session/load` (replay = true) and `session/resume` (no replay). The replay finishes
 * every tool call the transcript left open (a crash mid-call) as `failed`.
 */
export async function loadSession(
  server: SessionServer,
  params: acp.LoadSessionRequest | acp.ResumeSessionRequest,
  replay: boolean,
): Promise<acp.LoadSessionResponse> {
  let live = server.sessions.get(params.sessionId);
  if (live) {
    if (live.turn) {
      throw server.sdk.RequestError.invalidRequest(
        { sessionId: params.sessionId },
        "a prompt turn is running in this session",
      );
    }
  } else {
    // Concurrent loads of one id share one open (else the second would replace the first in
    // the table, and the first — with its workspace and MCP servers — would never be closed).
    let opening = server.opening.get(params.sessionId);
    if (!opening) {
      opening = openSession(server, params.cwd, params.mcpServers ?? [], params.sessionId);
      const p = opening;
      server.opening.set(params.sessionId, p);
      p.then(
        () => server.opening.get(params.sessionId) === p && server.opening.delete(params.sessionId),
        () => server.opening.get(params.sessionId) === p && server.opening.delete(params.sessionId),
      );
    }
    live = await opening;
    if (server.sessions.get(params.sessionId) !== live) {
      // Closed (or deleted) while it was opening.
      throw server.sdk.RequestError.sessionNotFound(params.sessionId);
    }
  }
  const history = live.session.history();
  if (replay) {
    for (const update of replayUpdates(history)) await server.notify(live.session.id, update);
  }
  const title = titleOf(history);
  if (title) live.titleSent = title;
  const options = configOptions(await server.runtime(), server.app, live.session);
  afterResponse(server, live, title);
  return { configOptions: options, modes: sessionModes(live.session) };
}

export async function listSessions(
  server: SessionServer,
  params: acp.ListSessionsRequest,
): Promise<acp.ListSessionsResponse> {
  const rt = await server.runtime();
  const list = await rt.listSessions(server.app, params.cwd ? { cwd: params.cwd } : {});
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

/**
 * `session/close`: ends the session's turn (aborted), its sub-agents and its MCP servers (the
 * last session naming a server stops it). A `session/load` of it still opening is waited for
 * first. `-32002` when it is neither open nor opening.
 */
export async function closeSession(
  server: SessionServer,
  sessionId: string,
): Promise<acp.CloseSessionResponse> {
  const opening = server.opening.get(sessionId);
  if (opening) await opening.catch(() => {});
  const live = requireSession(server, sessionId);
  server.sessions.delete(sessionId);
  await stopSession(live);
  return {};
}

/**
 * `session/delete` (ACP v1 `sessionCapabilities.delete`): closes the session when it is open
 * here (as `session/close`), then removes its stored transcript and its sub-agents'
 * transcripts, so it leaves `session/list`. `-32002` when there is neither a live session nor
 * a stored transcript of that id.
 */
export async function deleteSession(
  server: SessionServer,
  params: acp.DeleteSessionRequest,
): Promise<acp.DeleteSessionResponse> {
  const { sessionId } = params;
  const opening = server.opening.get(sessionId);
  if (opening) await opening.catch(() => {});
  const live = server.sessions.get(sessionId);
  if (live) {
    server.sessions.delete(sessionId);
    await stopSession(live);
  }
  const store = await import("../../transcript/store.ts");
  const dataDir = server.app.dataDir;
  const stored = await store.listStoredSessions(dataDir);
  const removed = await store.removeSession(dataDir, sessionId);
  if (!removed && !live) throw server.sdk.RequestError.sessionNotFound(sessionId);
  // Its sub-agents' transcripts go with it (and theirs), as `coyote sessions rm` does.
  const gone = new Set([sessionId]);
  for (let grew = true; grew;) {
    grew = false;
    for (const c of stored) {
      if (c.parent && gone.has(c.parent) && !gone.has(c.id)) {
        gone.add(c.id);
        grew = true;
        await store.removeSession(dataDir, c.id).catch(() => false);
      }
    }
  }
  return {};
}

async function stopSession(live: LiveSession): Promise<void> {
  if (live.turn) {
    live.turn.ac.abort();
    await within(live.turn.done.catch(() => {}), 5000);
  }
  await within(live.session.close().catch(() => {}), 8000);
}

/** Closes every session (aborting turns first). Called when stdin closes. */
export async function closeAllSessions(server: SessionServer): Promise<void> {
  await Promise.all([...server.opening.values()].map((p) => p.catch(() => {})));
  const all = [...server.sessions.values()];
  server.sessions.clear();
  await Promise.all(all.map((l) => stopSession(l)));
}

/**
 * Sends `available_commands_update` (and the stored title as `session_info_update`) after
 * the current response has been queued: call it last in a handler, right before returning
 * (the SDK queues the response in the same microtask run; this timer fires after it).
 */
function afterResponse(server: SessionServer, live: LiveSession, title?: string): void {
  setTimeout(() => {
    void server.notify(live.session.id, {
      sessionUpdate: "available_commands_update",
      availableCommands: availableCommands(live),
    });
    if (title) {
      void server.notify(live.session.id, { sessionUpdate: "session_info_update", title });
    }
    const status = mcpStatusUpdate(live);
    if (status) void server.notify(live.session.id, status);
    watchMcp(server, live);
  }, 0);
}
