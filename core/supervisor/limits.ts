/**
 * Supervisor limits and their defaults (issue 7 §3; the agent `config.yaml` keys of the
 * Rust original): how many children an agent runs at once, how deep the tree may grow,
 * when a child's answer is condensed, how long a bubbled-up question waits, how often a
 * turn is re-prompted, how many children a turn may spawn and how many may be live in one tree.
 * @module
 */
import type { AgentSpec } from "../protocol/types.ts";

/** Children running at once per parent unless the agent says otherwise; further spawns queue. */
export const DEFAULT_MAX_CONCURRENT_AGENTS = 8;
/**
 * Sub-agents one session may spawn in one turn (queued, running and ended ones all count) unless
 * the agent says otherwise; further `agent__spawn` calls are refused. Peers bound total sub-agent
 * work per turn the same way (a looping model must not queue thousands of children).
 */
export const DEFAULT_MAX_SPAWNS_PER_TURN = 50;
/**
 * Live (queued + running) sub-agent sessions under one root session, graph `agent`/`map` nodes'
 * children included, unless the root's agent says otherwise: without it the tree could reach
 * `max_concurrent_agents ^ max_agent_depth` live sessions.
 */
export const DEFAULT_MAX_LIVE_AGENTS = 64;
/** Deepest level below the root (root = 0) unless the agent says otherwise. */
export const DEFAULT_MAX_AGENT_DEPTH = 3;
/** A child's final answer longer than this many characters is condensed in its result. */
export const DEFAULT_SUMMARIZATION_THRESHOLD = 8_000;
/** Seconds a child's bubbled-up permission request or question waits for the user. */
export const DEFAULT_ESCALATION_TIMEOUT_S = 300;
/** Re-prompts per turn while the todo list has open items (`auto_continue`). */
export const DEFAULT_MAX_AUTO_CONTINUES = 5;
/**
 * Tokens (prompt + completion of the turn so far) past which `auto_continue` stops re-prompting,
 * whatever `max_auto_continues` allows (issue 17: one unfinished plan cost ~127k tokens).
 */
export const DEFAULT_MAX_AUTO_CONTINUE_TOKENS = 100_000;
/** Reminders a turn gets for uncollected children before they are cancelled. */
export const MAX_PENDING_REMINDERS = 3;
/** `agent__collect` waits this long when no `timeout_ms` is given (ms). */
export const DEFAULT_COLLECT_TIMEOUT_MS = 600_000;

/** The effective limits of one agent (definition values over the defaults). */
export interface AgentLimits {
  maxConcurrent: number;
  maxDepth: number;
  maxSpawnsPerTurn: number;
  maxLiveAgents: number;
  summarizationThreshold: number;
  escalationTimeoutMs: number;
  autoContinue: boolean;
  maxAutoContinues: number;
  /** `max_auto_continue_tokens`: the turn's token total that ends self-continuation. */
  maxAutoContinueTokens: number;
}

function positive(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : fallback;
}

/** A whole number ≥ `min` from `v` (rounded up: a fractional limit never rounds to "none"). */
function whole(v: unknown, fallback: number, min: number): number {
  return typeof v === "number" && Number.isFinite(v) && v >= min ? Math.ceil(v) : fallback;
}

/** Longest delay a timer takes (ms): longer ones fire at once (the HTML timer spec's int32). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Limits of an agent definition. Values from any source (a plugin's definition is checked less
 * strictly than a file) come out usable: whole numbers, at least one child at once, and an
 * escalation timeout no timer overflows (it would fire at once).
 */
export function limitsOf(def: AgentSpec): AgentLimits {
  return {
    maxConcurrent: whole(def.max_concurrent_agents, DEFAULT_MAX_CONCURRENT_AGENTS, 1e-9),
    maxDepth: typeof def.max_agent_depth === "number" && def.max_agent_depth >= 0
      ? Math.floor(def.max_agent_depth)
      : DEFAULT_MAX_AGENT_DEPTH,
    maxSpawnsPerTurn: whole(def.max_spawns_per_turn, DEFAULT_MAX_SPAWNS_PER_TURN, 1e-9),
    maxLiveAgents: whole(def.max_live_agents, DEFAULT_MAX_LIVE_AGENTS, 1e-9),
    summarizationThreshold: positive(def.summarization_threshold, DEFAULT_SUMMARIZATION_THRESHOLD),
    escalationTimeoutMs: Math.min(
      positive(def.escalation_timeout, DEFAULT_ESCALATION_TIMEOUT_S) * 1000,
      MAX_TIMER_MS,
    ),
    autoContinue: def.auto_continue === true,
    maxAutoContinues: whole(def.max_auto_continues, DEFAULT_MAX_AUTO_CONTINUES, 0),
    maxAutoContinueTokens: whole(
      def.max_auto_continue_tokens,
      DEFAULT_MAX_AUTO_CONTINUE_TOKENS,
      1e-9,
    ),
  };
}

/**
 * A session's cap on model requests per turn (the engine's `maxTurns`; stop reason
 * `max_turn_requests`): for a root session the `--max-turns` flag, else its agent's own
 * `max_turns` (`maxTurns` in an `.md` file), else config `max_turns` (default 50); for a child its
 * agent's own `max_turns`, else the run's (docs/subagents.md). An `app` without workspace state
 * (an embedder's) counts its `maxTurns` as the flag.
 */
export function maxTurnsOf(
  def: { maxTurns?: number },
  app: { maxTurns: number; workspace?: { flags: { maxTurns?: number } } },
  child: boolean,
): number {
  const flag = child ? undefined : app.workspace ? app.workspace.flags.maxTurns : app.maxTurns;
  return flag || def.maxTurns || app.maxTurns || 50;
}
