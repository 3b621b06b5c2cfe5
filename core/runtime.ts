/**
 * STUB CONTRACT (owner: engine helper replaces the bodies, keeps the signatures).
 * Wires an AgentSession from resolved options: provider, policy, tools
 * (first-party packs + plugin workers + MCP servers), instructions, store.
 * Frontends (headless, ACP, REPL) only talk to this module and core/types.ts.
 * @module
 */
import type { AppOptions } from "./app.ts";
import type { HostServices } from "../sdk/mod.ts";
import type {
  EngineEvent,
  EventSink,
  PermissionResolver,
  PromptInput,
  TurnResult,
} from "./types.ts";
import type { McpServerSpec } from "./mcp/mod.ts";

/** Options for one session (one workspace). */
export interface SessionInit {
  /** Absolute workspace root for this session (ACP `cwd`; CLI: process cwd). */
  cwd: string;
  /** Resolves guard `ask` decisions (headless: immediate reject). */
  permission: PermissionResolver;
  /** Client-side services (ACP fs / terminal, REPL askUser). */
  host?: HostServices;
  /** Extra MCP servers for this session (ACP `session/new` `mcpServers`), merged over discovered ones. */
  mcpServers?: Record<string, McpServerSpec>;
  /** Continue this stored session (its history is loaded; nothing is re-executed). */
  resumeId?: string;
  /** Override agent / model for this session. */
  agent?: string;
  model?: string;
}

/** A live session. `prompt` runs one turn; only one turn at a time. */
export interface AgentSession {
  readonly id: string;
  readonly cwd: string;
  /** Current model id. */
  model: string;
  /** Current agent name. */
  agent: string;
  /**
   * Runs one turn: streams events to `onEvent` (also appended to the transcript),
   * resolves when the turn ends. Never rejects for provider/tool faults: those end
   * the turn with `error` set. Rejects only if a turn is already running.
   */
  prompt(input: PromptInput, opts: { signal?: AbortSignal; onEvent: EventSink }): Promise<TurnResult>;
  /** Adds a policy rule for the rest of this session (ACP `allow_always`). */
  addRule(decision: "allow" | "deny", rule: string): void;
  /** Stored events of this session so far, in order (for ACP `session/load` replay). */
  history(): EngineEvent[];
  /** Closes MCP servers / plugin workers of this session. */
  close(): Promise<void>;
}

/** A stored session, as listed by `--list-sessions` and ACP `session/list`. */
export interface SessionInfo {
  sessionId: string;
  cwd: string;
  title: string;
  /** ISO-8601 time of the last write. */
  updatedAt: string;
  name?: string;
}

export function createSession(_app: AppOptions, _init: SessionInit): Promise<AgentSession> {
  throw new Error("not implemented");
}

export function listSessions(_app: AppOptions, _filter?: { cwd?: string }): Promise<SessionInfo[]> {
  throw new Error("not implemented");
}
