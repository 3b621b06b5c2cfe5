/**
 * What the supervisor (core/supervisor/supervisor.ts) needs of a session, declared in its own
 * room so that it imports nothing of the session layer above it:
 *
 * - {@link SupervisedSession}: the members it reads of its owner and of the children it opens
 *   (ids, place in the tree, agent and definition, the workspace's agents / trust / data
 *   directory, `prompt` and `close`). The session layer's `AgentSession`
 *   (core/session/types.ts) satisfies it structurally.
 * - {@link ChildSessionOptions}: what it opens a child with, through the `open` callback the
 *   owning session passes (core/session/conversation.ts `openSession` on the owner's
 *   workspace).
 * @module
 */
import type { HostServices } from "../../sdk/mod.ts";
import type {
  AgentOrigin,
  AgentSpec,
  EnvelopeSink,
  HostFactory,
  PermissionResolver,
  PromptInput,
  TurnResult,
} from "../protocol/types.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import type { GatesConfig } from "./gates.ts";

/** The workspace members the supervisor reads: its data directory, its trust, its agents. */
export interface SupervisedWorkspace {
  /** Where transcripts are kept (a child's full answer is in its transcript there). */
  readonly app: { readonly dataDir: string; readonly config?: { readonly gates?: GatesConfig } };
  /** The workspace folder (the gates read its changed paths). */
  readonly cwd?: string;
  /** The directory's trust (core/config/trust.ts): decides which agents are spawnable. */
  readonly trust: { readonly trusted: boolean };
  readonly agents: AgentRegistry;
}

/** The members of a session the supervisor uses (its owner's and its children's). */
export interface SupervisedSession {
  readonly id: string;
  readonly workspace: SupervisedWorkspace;
  /** This agent instance (`<agent>-<8 hex>`), `agent_id` of its envelopes. */
  readonly agentId: string;
  /** Where this session sits in the agent tree. */
  readonly origin: AgentOrigin;
  /** Current agent name. */
  readonly agent: string;
  /** The current agent's definition. */
  readonly definition: AgentSpec;
  /** Runs one turn, streaming envelopes to `onEvent`; resolves when the turn ends. */
  prompt(input: PromptInput, opts: { signal?: AbortSignal; onEvent: EnvelopeSink }): Promise<
    TurnResult
  >;
  /** Ends the session. */
  close(): Promise<void>;
}

/** What a child session is opened with: the owner's session type `S` is its parent. */
export interface ChildSessionOptions<S> {
  /** Resolves the child's guard `ask` decisions (the root's, escalating). */
  permission: PermissionResolver;
  /** The child's host services (the root's, escalating), or a factory binding them per call. */
  host?: HostServices | HostFactory;
  /** The child's agent. */
  agent: string;
  /** The owner, the `agent__spawn` call that spawned the child and the child's agent id. */
  parent: { session: S; toolCallId: string; agentId?: string };
  /** The child's own workspace root (its git worktree, ./worktree.ts); default the owner's. */
  cwd?: string;
  /** The child's agent variables (the `security_posture` of `gates.posture`); default its own. */
  variables?: Record<string, string>;
}
