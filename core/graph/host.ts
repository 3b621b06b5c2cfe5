/**
 * The graph executor's interface with the rest of Coyote: what it needs ({@link GraphHost}: model
 * conversations, sub-agents, scripts, questions to the human, schema checks; the real host is in
 * core/graph/runner.ts), what a run is given ({@link RunGraphOptions}) and what it returns
 * ({@link GraphResult}). The executor itself is run.ts.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { ScriptNode } from "../protocol/graph_spec.ts";

/** What one model exchange of an llm node returned. */
export interface LlmReply {
  text: string;
  /** Arguments of the model's `submit_result` call, when the node has an `output_schema`. */
  submitted?: unknown;
}

/** A fresh model conversation for one llm node (or one map branch). */
export interface LlmConversation {
  /** Sends a user message and runs the tool loop (at most `maxIterations` model requests). */
  send(prompt: string, signal: AbortSignal): Promise<LlmReply>;
}

/** What the executor needs from the rest of Coyote (a real host is in core/graph/runner.ts). */
export interface GraphHost {
  /** Opens a fresh conversation. Text it streams goes to `emit`. */
  llm(
    cfg: {
      node: string;
      instructions?: string;
      tools: string[];
      model?: string;
      temperature?: number;
      top_p?: number;
      reasoning_effort?: string;
      maxIterations: number;
      outputSchema?: Record<string, unknown>;
    },
    emit: (u: acp.SessionUpdate) => void,
  ): LlmConversation;
  /** Runs a sub-agent as a child session and waits for its final answer. */
  agent(
    req: { node: string; agent: string; prompt: string },
    signal: AbortSignal,
    emit: (u: acp.SessionUpdate) => void,
  ): Promise<string>;
  /** Runs a script with the state; returns the object it printed/returned. */
  script(
    req: {
      node: string;
      script: string;
      state: Record<string, unknown>;
      timeoutMs: number;
      permissions?: ScriptNode["permissions"];
    },
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /** Asks the human; `undefined` when nobody can answer (headless). */
  ask(
    q: {
      node: string;
      action: "select" | "input";
      question: string;
      options?: string[];
      default?: string;
    },
    signal: AbortSignal,
  ): Promise<string | undefined>;
  /** Validates a structured result; returns the error text or `undefined` when valid. */
  checkSchema(schema: Record<string, unknown>, value: unknown): string | undefined;
}

export interface RunGraphOptions {
  host: GraphHost;
  /** The user's request (`{{initial_prompt}}`). */
  prompt: string;
  /** Agent variables (`{{name}}`), after defaults were applied. */
  variables?: Record<string, unknown>;
  emit: (u: acp.SessionUpdate) => void;
  signal: AbortSignal;
  /** Called with the state after each node when snapshots are on (`--verbose`). */
  snapshot?: (node: string, state: Record<string, unknown>) => void;
}

export interface GraphResult {
  /** The `end` node's rendered output. */
  output: string;
  /** The id of the `end` node reached. */
  end: string;
  state: Record<string, unknown>;
  /** Nodes run, in order (a parallel step's nodes in list order). */
  trace: string[];
}
