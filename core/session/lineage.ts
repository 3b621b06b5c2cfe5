/**
 * The child/sub-agent wiring of a session (core/session/conversation.ts): what a sub-agent
 * inherits from its parent beyond the public interface ({@link Lineage}, kept per session in a
 * weak map: the caps and budget of its tree, the root's resolvers and policy, the shared tools),
 * the agent id of a root session and a session's place in the tree ({@link AgentOrigin}), the
 * depth cap every child open stops at, and the session's {@link Supervisor} (core/supervisor/)
 * — it opens children through the `open` callback the session passes, their permission
 * requests and questions escalating to the root frontend (core/supervisor/escalation.ts).
 * @module
 */
import type { HostServices } from "../../sdk/mod.ts";
import type {
  AgentOrigin,
  AgentSpec,
  AnyTool,
  HostFactory,
  PermissionResolver,
} from "../protocol/types.ts";
import type { McpConnection } from "../extensions/mcp/mod.ts";
import type { Policy } from "../policy/policy.ts";
import { Supervisor } from "../supervisor/supervisor.ts";
import { escalatingHost, escalatingPermission } from "../supervisor/escalation.ts";
import { limitsOf } from "../supervisor/limits.ts";
import { LiveAgentBudget } from "../supervisor/tree.ts";
import { TreeBudget } from "../supervisor/budget.ts";
import type { Workspace } from "./workspace.ts";
import type { AgentSession, SessionOptions } from "./types.ts";
import type { ChildDir } from "./child_dir.ts";

/** What a child session inherits from its parent beyond the public interface. */
export interface Lineage {
  /** The root frontend's permission resolver and host services. */
  rootPermission: PermissionResolver;
  rootHost?: HostServices | HostFactory;
  /** Min of the ancestors' (and own) `max_agent_depth`. */
  depthCap: number;
  /** Min of the ancestors' `max_concurrent_agents` (the root: Infinity). */
  concurrencyCap: number;
  /** The tree's live-agent budget (the root's `max_live_agents`; core/supervisor/tree.ts). */
  tree: LiveAgentBudget;
  /**
   * The session's tool list (kept current as MCP servers change) and MCP connection: a
   * sub-agent uses its parent's as they are, so opening one waits on nothing.
   */
  tools: AnyTool[];
  mcp: McpConnection | null;
  /** The root session's policy object (its "always" answers add rules to it). */
  guard: Policy;
  /** What the tree spent in the root's turn, against `--max-budget-*` (core/supervisor/budget.ts). */
  spend: TreeBudget;
}
const lineage = new WeakMap<AgentSession, Lineage>();

/** The {@link Lineage} of a session (none for a session not opened by `openSession`). */
export function lineageOf(session: AgentSession): Lineage | undefined {
  return lineage.get(session);
}

/** Records the {@link Lineage} of a session (its children read it when they open). */
export function setLineage(session: AgentSession, line: Lineage): void {
  lineage.set(session, line);
}

/** The 8 hex digits of a root agent id: the random tail of its session id (stable on resume). */
export function idTail(id: string): string {
  const hex = id.replace(/[^0-9a-f]/gi, "").toLowerCase();
  return hex.length >= 8 ? hex.slice(-8) : crypto.randomUUID().replace(/-/g, "").slice(0, 8);
}

/**
 * The {@link Lineage} of a new session: a sub-agent's from its parent's (`parentLine`), a root's
 * from its own options; `owner` is the new session (the root of a new tree names it in refusals).
 */
export function newLineage(o: {
  ws: Workspace;
  init: SessionOptions;
  /** The session's first agent (its `max_agent_depth` lowers the depth cap). */
  first: AgentSpec;
  parentLine?: Lineage;
  owner: () => AgentSession;
  tools: AnyTool[];
  mcp: McpConnection | null;
  /** A root session's policy object, when it made one (for its OS sandbox). */
  rootGuard?: Policy;
}): Lineage {
  const { ws, init, first, parentLine, mcp, rootGuard } = o;
  const parent = init.parent?.session;
  return {
    rootPermission: parentLine?.rootPermission ?? init.permission,
    rootHost: parentLine ? parentLine.rootHost : init.host,
    depthCap: Math.min(parentLine?.depthCap ?? Infinity, limitsOf(first).maxDepth),
    concurrencyCap: parent
      ? Math.min(
        parentLine?.concurrencyCap ?? Infinity,
        limitsOf(parent.definition).maxConcurrent,
      )
      : Infinity,
    tree: parentLine?.tree ?? new LiveAgentBudget(
      () => limitsOf(o.owner().definition).maxLiveAgents,
      () => `${o.owner().agent} (session ${o.owner().id})`,
    ),
    tools: o.tools,
    mcp,
    guard: parentLine?.guard ?? rootGuard ?? ws.newPolicy(),
    spend: parentLine?.spend ?? new TreeBudget(),
  };
}

/**
 * A sub-agent opened with `cwd` (its own git worktree, core/supervisor/worktree.ts): its workspace,
 * sandbox and base policy there (./child_dir.ts, loaded only then) and its parent's lineage with
 * the tool list (`execute_command` in that sandbox) and the guard moved there; null for any other
 * session.
 */
export async function childDirOf(
  ws: Workspace,
  init: SessionOptions,
): Promise<(ChildDir & { line: Lineage }) | null> {
  const parent = init.parent?.session;
  if (!init.cwd || !parent) return null;
  const line = lineage.get(parent);
  if (!line) {
    throw new Error(`${parent.agentId} is not a session of openSession: no cwd for a child`);
  }
  const moved = await (await import("./child_dir.ts")).childInDir(ws, init.cwd, parent, line.guard);
  return { ...moved, line: { ...line, tools: moved.tools(line.tools), guard: moved.guard } };
}

/**
 * Where a new session sits in the agent tree: a root at depth 0, a sub-agent one below its
 * parent, with the root session and the root's tool call that started its branch.
 */
export function originOf(
  agent: string,
  agentId: string,
  sessionId: string,
  spawn?: SessionOptions["parent"],
): AgentOrigin {
  const parent = spawn?.session;
  return parent
    ? {
      agent,
      agentId,
      parentId: parent.agentId,
      rootSessionId: parent.origin.rootSessionId,
      rootToolCallId: parent.origin.depth === 0 ? spawn!.toolCallId : parent.origin.rootToolCallId,
      depth: parent.origin.depth + 1,
    }
    : { agent, agentId, rootSessionId: sessionId, depth: 0 };
}

/**
 * Every way a child opens (`agent__spawn`, a graph's agent nodes) stops at the depth cap: a
 * graph whose agent node runs itself must not recurse without end.
 * @throws Error when a child of `parent` would be deeper than the cap.
 */
export function checkChildDepth(parent: AgentSession): void {
  const cap = lineage.get(parent)?.depthCap ?? 0;
  if (parent.origin.depth + 1 > cap) {
    throw new Error(
      `max_agent_depth ${cap} reached: ${parent.agentId} is at depth ${parent.origin.depth}, a child would be at depth ${
        parent.origin.depth + 1
      }`,
    );
  }
}

/**
 * The agent variables a parent sets on its child `def` (`agent__spawn`, a graph's `agent`/`map`
 * node): `gates.posture` as `security_posture` when the child declares that variable
 * (agents/security-reviewer), so it reviews under the posture its verdict is computed under
 * (core/supervisor/gate_keeper.ts), not its own default. `{}`: none (the child's defaults).
 */
export function childVariables(
  ws: Pick<Workspace, "app">,
  def: AgentSpec | undefined,
): { variables?: Record<string, string> } {
  const posture = ws.app.config?.gates?.posture;
  const declares = def?.variables?.some((v) => v.name === "security_posture");
  return posture && declares ? { variables: { security_posture: posture } } : {};
}

/**
 * The supervisor of a session: children open with `open`
 * (`openSession` on the session's workspace), their permission resolver and host services are
 * the root's, escalating (bounded by the child agent's `escalation_timeout`).
 */
export function superviseSession(
  session: AgentSession,
  line: Lineage,
  open: (opts: SessionOptions) => Promise<AgentSession>,
  log: (line: string) => void,
): Supervisor<AgentSession> {
  return new Supervisor({
    owner: () => session,
    open,
    childWiring: (def) => {
      const ms = limitsOf(def).escalationTimeoutMs;
      return {
        permission: escalatingPermission(line.rootPermission, ms),
        host: escalatingHost(line.rootHost, ms),
        ...childVariables(session.workspace, def),
      };
    },
    depthCap: line.depthCap,
    concurrencyCap: line.concurrencyCap,
    tree: line.tree,
    log,
  });
}
