/**
 * The shapes of a session transcript (core/transcript/): the JSONL lines of
 * `<dataDir>/sessions/<id>.jsonl` and what loading and listing return.
 *
 * Line shapes (one JSON object per line, `type` discriminates):
 * - `{type:"session", id, cwd, created, model, agent, name?, parent?, agent_id?, parent_agent_id?}`
 *   — header, first line (`parent` = the parent session's id for a sub-agent's transcript).
 * - `{type:"message", message, interrupted?}` — one OpenAI chat message of the model history
 *   (`interrupted: true` when a stream was cut or cancelled mid-answer; the partial text is kept).
 * - `{type:"update", update}` — one engine event (ACP `SessionUpdate`) for replay; consecutive
 *   chunks of the same kind are coalesced before they are written.
 * - `{type:"turn_end", stopReason, usage, error?, rejected?}` — the end of a turn. `rejected: true`
 *   when the server refused the turn's request (HTTP 400 for an image to a text-only model, a
 *   prompt over the window): the turn's messages are then not part of the model history on load
 *   (the events stay for replay; the user can send the prompt again).
 * - `{type:"tool_result_update", tool_call_id, content}` — the new content of an earlier tool
 *   message (shrunk after a context overflow); applied on load.
 * - `{type:"checkpoint", id}` — the workspace was checkpointed before this turn's first change
 *   (core/session/checkpoints/); `id` names the checkpoint in the workspace's checkpoint store.
 * - `{type:"gate", event, gate?, decision?, reason?, …}` — a coordinator's gate decision
 *   (core/supervisor/gate_keeper.ts); ignored on load.
 * - `{type:"rewind", turn?, files?}` — `coyote rewind`, `/rewind`: with `turn`, the conversation
 *   from turn `turn` (1-based, of the conversation as loaded up to this line) on is gone on load —
 *   nothing is rewritten, the lines stay; `files` records a restore of the workspace
 *   (`restored`: the checkpoint restored, `undo`: the checkpoint of the state before it).
 *
 * Secrets (API keys, Authorization headers) are never part of any line.
 * @module
 */
import type { EngineEvent, StopReason, TurnUsage } from "../protocol/types.ts";

/** An OpenAI Chat Completions message as kept in the model history. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  // deno-lint-ignore no-explicit-any
  content: string | null | any[];
  tool_calls?: {
    id: string;
    type: "function";
    function: { name: string; arguments: string };
    /** Provider data sent back with the call (Gemini `thought_signature`). */
    extra_content?: Record<string, unknown>;
  }[];
  tool_call_id?: string;
  /** Reasoning of an assistant message, in the field the server sent it in (DeepSeek, vLLM). */
  reasoning_content?: string;
  /** Reasoning of an assistant message (OpenRouter, Ollama convention). */
  reasoning?: string;
  /** Structured reasoning blocks (OpenRouter `reasoning_details`), sent back unchanged. */
  reasoning_details?: Record<string, unknown>[];
}

export interface SessionHeader {
  type: "session";
  id: string;
  cwd: string;
  created: string;
  model: string;
  agent: string;
  name?: string;
  /** A sub-agent's transcript: the parent session's id, this agent's id, the parent's agent id. */
  parent?: string;
  agent_id?: string;
  parent_agent_id?: string;
}

export type TranscriptLine =
  | SessionHeader
  | { type: "message"; message: ChatMessage; interrupted?: boolean }
  | { type: "update"; update: EngineEvent }
  | {
    type: "turn_end";
    stopReason: StopReason;
    usage: TurnUsage;
    error?: { code: string; message: string };
    rejected?: boolean;
  }
  | { type: "tool_result_update"; tool_call_id: string; content: string }
  | { type: "checkpoint"; id: string }
  | { type: "rewind"; turn?: number; files?: { restored: string; undo: string } }
  /** A graph run's state after a node (`--verbose`; core/graph/runner.ts); ignored on load. */
  | { type: "graph_state"; node: string; state: unknown }
  /**
   * A coordinator's gate decision (core/supervisor/gate_keeper.ts; the `_meta.coyote` of its
   * `intent`/`gate` event: `gate`, `decision`, `reason`, …), so an override or an incomplete end
   * stays on record; ignored on load (the live events are not replayed).
   */
  | { type: "gate"; event: string; [k: string]: unknown }
  /**
   * Context compaction (core/engine/compact.ts): the model history from here on is `messages`;
   * `turn_start` is where the running turn's messages begin in it.
   */
  | { type: "compaction"; messages: ChatMessage[]; turn_start: number; summary: string };

/** A loaded transcript. */
export interface LoadedSession {
  header: SessionHeader;
  messages: ChatMessage[];
  updates: EngineEvent[];
  /** Lines that could not be parsed (a torn last line after a crash). */
  skipped: number;
  /** The conversation's turns in order (after rewinds): turn N is `turns[N - 1]`. */
  turns?: StoredTurn[];
}

/** One turn of a stored conversation (`coyote rewind`, `/rewind`). */
export interface StoredTurn {
  /** The prompt's text (its text blocks joined). */
  prompt: string;
  /** Checkpoints taken in this turn (the first is the workspace before the turn's changes). */
  checkpoints: string[];
}

/** Listing entry (see `SessionInfo` in core/session/runtime.ts). */
export interface StoredSessionInfo {
  id: string;
  cwd: string;
  name?: string;
  created: string;
  /** ISO-8601 mtime of the transcript. */
  updated: string;
  /** First user prompt (one line, ≤ 80 chars). */
  title: string;
  path: string;
  agent?: string;
  /** Sub-agent transcripts: the parent session's id and the agent instance id. */
  parent?: string;
  agent_id?: string;
}
