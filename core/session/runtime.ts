/**
 * What frontends (headless, ACP, REPL) call: open a session on the shared
 * {@link Workspace} of a directory, list stored sessions, list agents.
 *
 * `createSession` = {@link acquireWorkspace} (once per process and directory: provider,
 * policy, plugin host, MCP connections, skills, agent registry — core/session/workspace.ts) +
 * {@link openSession} (one conversation: transcript and engine — core/session/conversation.ts). Closing
 * the session releases the workspace; the last session of a workspace closes it. {@link closeRun}
 * closes a CLI run's session, leaving no stored session when the model never answered.
 * @module
 */
import type { AppOptions } from "../config/app_options.ts";
import type { AgentDefinition } from "../../sdk/mod.ts";
import type { McpServerSpec } from "../extensions/mcp/mod.ts";
import { listStoredSessions, removeUnanswered } from "../transcript/store.ts";
import { acquireWorkspace, UsageError } from "./workspace.ts";
import { openSession } from "./conversation.ts";
import type { AgentSession, SessionOptions } from "./types.ts";

export { UsageError };
export type { AgentSession };

/**
 * Options for one root session (one workspace): a {@link SessionOptions} without `parent` (a
 * sub-agent is opened by its parent's supervisor, never by a frontend), plus where it works and
 * where its diagnostics go.
 */
export interface SessionInit extends Omit<SessionOptions, "parent"> {
  /** Absolute workspace root for this session (ACP `cwd`; CLI: process cwd). */
  cwd: string;
  /** Extra MCP servers for this session (ACP `session/new` `mcpServers`), merged over discovered ones. */
  mcpServers?: Record<string, McpServerSpec>;
  /** Diagnostics (warnings) sink; stderr by default. Never stdout. */
  log?: (line: string) => void;
}

/** A stored session, as listed by `--list-sessions` and ACP `session/list`. */
export interface SessionInfo {
  sessionId: string;
  cwd: string;
  title: string;
  /** ISO-8601 time of the last write. */
  updatedAt: string;
  name?: string;
  /** For a sub-agent's transcript: the parent session's id and the agent instance id. */
  parentId?: string;
  agentId?: string;
  agent?: string;
}

/**
 * The LLM agents `cwd` can run: built-ins and the user's and the workspace's agent files, later
 * sources shadowing earlier ones (core/agents/registry.ts; plugins' agents need a workspace).
 */
export async function availableAgents(
  app: Pick<AppOptions, "configDir">,
  cwd: string,
): Promise<AgentDefinition[]> {
  const { loadAgentRegistry } = await import("../agents/registry.ts");
  return (await loadAgentRegistry({ configDir: app.configDir, cwd })).list();
}

/**
 * Opens a root session on the shared workspace of `init.cwd`; `close()` also releases the
 * workspace. @throws UsageError / ConfigError / PolicyError for bad input or configuration.
 */
export async function createSession(app: AppOptions, init: SessionInit): Promise<AgentSession> {
  // Someone answers questions (REPL, ACP): MCP servers may elicit (core/session/mcp_requests.ts).
  const ws = await acquireWorkspace(app, {
    cwd: init.cwd,
    log: init.log,
    canAsk: init.host !== undefined,
  });
  // The session's own MCP servers (ACP `mcpServers`) are counted per session: the last session
  // naming one stops it, also while the workspace stays open for others.
  const releaseMcp = ws.retainMcp(init.mcpServers);
  let session: AgentSession;
  try {
    session = await openSession(ws, init);
  } catch (e) {
    await releaseMcp();
    await ws.release();
    throw e;
  }
  const close = session.close.bind(session);
  let released = false;
  return Object.assign(session, {
    async close() {
      await close();
      if (!released) {
        released = true;
        await releaseMcp();
        await ws.release();
      }
    },
  });
}

/**
 * Closes the root session of a CLI run (one-shot, headless, REPL) and says whether its stored
 * session stays: a fresh one that never got a model reply (core/transcript/store.ts
 * `removeUnanswered`: the server was never reached, or answered with errors only) is removed, so
 * nothing offers to continue it; a resumed one (`resumed`) is always kept. ACP does not call
 * this: its client was given the session id. Never throws (a failed close keeps the file).
 */
export async function closeRun(
  app: Pick<AppOptions, "dataDir">,
  session: AgentSession,
  resumed: boolean,
): Promise<boolean> {
  try {
    await session.close();
  } catch {
    return true;
  }
  if (resumed) return true;
  return !(await removeUnanswered(app.dataDir, session.id).catch(() => false));
}

export async function listSessions(
  app: AppOptions,
  filter?: { cwd?: string },
): Promise<SessionInfo[]> {
  const list = await listStoredSessions(app.dataDir, { cwd: filter?.cwd });
  return list.map((s) => ({
    sessionId: s.id,
    cwd: s.cwd,
    title: s.title,
    updatedAt: s.updated,
    ...(s.name ? { name: s.name } : {}),
    ...(s.parent ? { parentId: s.parent } : {}),
    ...(s.agent_id ? { agentId: s.agent_id } : {}),
    ...(s.agent ? { agent: s.agent } : {}),
  }));
}
