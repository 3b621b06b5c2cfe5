/**
 * The shapes of a session (core/session/conversation.ts `openSession`): the options it is
 * opened with ({@link SessionOptions}: permission resolver, host services, MCP servers, resume
 * id, agent / model / name overrides, the parent of a sub-agent) and the live session
 * frontends drive ({@link AgentSession}). A sub-agent's parent is an `AgentSession` too; the
 * supervisor (core/supervisor/types.ts `SupervisedSession`) needs only a part of it.
 * @module
 */
import type { HostServices } from "../../sdk/mod.ts";
import type {
  AgentOrigin,
  AgentSpec,
  EngineEvent,
  EnvelopeSink,
  HostFactory,
  PermissionResolver,
  PromptInput,
  TurnResult,
} from "../protocol/types.ts";
import type { McpConnection, McpServerSpec } from "../extensions/mcp/mod.ts";
import type { PolicyLike } from "../engine/mod.ts";
import type { CompactionResult } from "../engine/compact.ts";
import type { SkillState } from "../extensions/skills/tools.ts";
import type { CommandSandbox, SandboxStatus } from "../policy/sandbox/mod.ts";
import type { PermissionMode } from "../policy/mode.ts";
import type { Workspace } from "./workspace.ts";
import type { RewindOutcome, RewindRequest } from "./checkpoints/rewind.ts";
import type { StoredTurn } from "../transcript/types.ts";

/** Options for one session. */
export interface SessionOptions {
  /** Resolves guard `ask` decisions (headless: immediate reject). */
  permission: PermissionResolver;
  /** Client-side services (ACP fs / terminal, REPL askUser), or a factory binding them per call. */
  host?: HostServices | HostFactory;
  /**
   * `false`: the agent's `auto_continue` (re-prompting itself while todo items are open) is off
   * for this session — ACP, where the client drives the turns (issue 17). Default: the agent's.
   */
  autoContinue?: boolean;
  /** Extra MCP servers for this session (ACP `session/new` `mcpServers`). */
  mcpServers?: Record<string, McpServerSpec>;
  /**
   * A turn that begins while MCP servers are still starting: `wait` for them (default; headless)
   * or start without their tools and say so (`background`: ACP, the REPL). core/session/mcp_startup.ts.
   */
  mcpStartup?: "wait" | "background";
  /** Continue this stored session (its history is loaded; nothing is re-executed). */
  resumeId?: string;
  /** Override agent / model for this session. */
  agent?: string;
  model?: string;
  /** Name for a new session (`--session NAME`); stored in the transcript header. */
  name?: string;
  /** Opens a sub-agent of this session (see core/session/conversation.ts). */
  parent?: { session: AgentSession; toolCallId: string; agentId?: string };
  /**
   * A sub-agent's own workspace root (its git worktree, core/supervisor/worktree.ts): its file
   * tools, guard and OS sandbox work there (core/session/child_dir.ts). Default the parent's.
   */
  cwd?: string;
  /**
   * A sub-agent's agent variables (its definition's `variables`; set by its parent's lineage,
   * core/session/lineage.ts: `security_posture` from `gates.posture`). Default: the definition's.
   */
  variables?: Record<string, string>;
}

/**
 * What one turn may change and the next turn gets back (a custom slash command's `model` and
 * `allowed-tools`, core/extensions/commands/load.ts). An LLM agent's turn only; a graph agent's
 * turn ignores them.
 */
export interface TurnOverrides {
  /** The model of this turn. */
  model?: string;
  /** Keeps only the tools this accepts (by name) for this turn: narrows, never widens. */
  tools?: (name: string) => boolean;
}

/** A live session. `prompt` runs one turn; only one turn at a time. */
export interface AgentSession {
  readonly id: string;
  readonly cwd: string;
  readonly workspace: Workspace;
  /** This agent instance (`<agent>-<8 hex>`), `agent_id` of its envelopes. */
  readonly agentId: string;
  /** Where this session sits in the agent tree. */
  readonly origin: AgentOrigin;
  /** Current model id. */
  model: string;
  /** Current agent name. */
  agent: string;
  /** The current agent's definition. */
  readonly definition: AgentSpec;
  /** The session's policy (children: the parent's, narrowed). */
  readonly policy: PolicyLike;
  /** The OS sandbox `execute_command` runs in (children share the root's; core/policy/sandbox/). */
  readonly commandSandbox?: CommandSandbox;
  /** Its status (stream-json `init`, docs/permissions.md "The OS sandbox"). */
  readonly sandbox?: SandboxStatus;
  /** Names of the tools this session may call (a child's are a subset of its parent's). */
  toolNames(): string[];
  /** The session's MCP servers (tools, prompts, resources, status), when it has any. */
  readonly mcp?: McpConnection;
  /**
   * Runs one turn: streams envelopes to `onEvent` (the session's own events and those of its
   * sub-agents), resolves when the turn ends. Never rejects for provider/tool faults: those
   * end the turn with `error` set. Rejects only if a turn is already running.
   */
  prompt(
    input: PromptInput,
    opts: { signal?: AbortSignal; onEvent: EnvelopeSink; overrides?: TurnOverrides },
  ): Promise<TurnResult>;
  /**
   * Summarises the older turns now, keeping the last ones and the todo list verbatim
   * (`/compact [focus]`, core/engine/compact.ts). `onStart` is called once the turns to summarise
   * are known (`before`: estimated tokens), before the summary request. Rejects while a turn runs.
   */
  compact(
    opts?: {
      focus?: string;
      signal?: AbortSignal;
      keep?: number;
      onStart?: (info: { turns: number; before: number }) => void;
    },
  ): Promise<CompactionResult>;
  /**
   * `/rewind` (issue 18, core/session/checkpoints/rewind.ts): back to before a turn — files,
   * conversation or both; `list: true` only reads the turns. A root session's; rejects while a
   * turn runs.
   */
  rewind?(
    r: RewindRequest & { list?: boolean },
  ): Promise<RewindOutcome & { turns: StoredTurn[] }>;
  /** The current agent's live skill state (`/skill load|unload`; core/extensions/skills/tools.ts). */
  readonly skills: SkillState;
  /**
   * The permission mode of the session's tree (core/policy/mode.ts; a sub-agent's is its root's:
   * an agent cannot widen it). `setMode` switches it for the rest of the session (REPL Shift+Tab
   * and `/mode`, ACP `session/set_mode`); the next access, command and sandbox profile follow it.
   */
  readonly mode: PermissionMode;
  setMode(mode: PermissionMode): void;
  /** Adds a policy rule for the rest of this session (ACP `allow_always`). */
  addRule(decision: "allow" | "deny", rule: string): void;
  /** Stored events of this session so far, in order (for ACP `session/load` replay). */
  history(): EngineEvent[];
  /** Ends the session: closes its transcript; the workspace is released by its owner. */
  close(): Promise<void>;
}
