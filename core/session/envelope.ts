/**
 * The envelope stamping of a session: every event of its turns is delivered wrapped in the
 * {@link EventEnvelope} (core/protocol/) — `session_id`, `agent` (the current agent's name),
 * `agent_id`, `parent_id` and `parent_tool_call_id` for a sub-agent, `seq` (1, 2, … per
 * session) — the one stream headless, ACP and text mode render from.
 * @module
 */
import type {
  AgentOrigin,
  CheckpointEvent,
  EventEnvelope,
  SessionEvent,
} from "../protocol/types.ts";

/** Who stamps: the session, its agent instance and, for a sub-agent, the spawning call. */
export interface StampSource {
  sessionId: string;
  agentId: string;
  origin: AgentOrigin;
  /** The sub-agent's parent (its `agent__spawn` / graph node call), when the session is one. */
  parent?: { toolCallId: string };
  /** The current agent's name (it changes when the session switches agents). */
  agent(): string;
}

/** A stamp function with its own `seq` counter (see the module doc). */
export function envelopeStamper(
  s: StampSource,
): (update: SessionEvent | CheckpointEvent) => EventEnvelope {
  let seq = 0;
  return (update) => ({
    session_id: s.sessionId,
    agent: s.agent(),
    agent_id: s.agentId,
    ...(s.origin.parentId ? { parent_id: s.origin.parentId } : {}),
    ...(s.parent ? { parent_tool_call_id: s.parent.toolCallId } : {}),
    seq: ++seq,
    update,
  });
}
