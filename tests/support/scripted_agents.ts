/**
 * Helpers for tests that drive sub-agents with the scripted model server
 * (tests/support/model_server.ts): which agent a recorded request came from (the first word of its
 * system prompt, e.g. `LEAD`, `KID`), its messages and tool results, how many requests one
 * conversation has made, `agent__spawn` / `agent__collect` calls, and minimal agent definitions.
 * @module
 */
import type { RecordedRequest, ScriptedToolCall } from "./model_server.ts";
import type { AgentSpec } from "../../core/types.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;

/** The agent a request comes from: the first word of its system prompt. */
export function agentOf(req: RecordedRequest): string {
  const sys = (req.body as Json).messages[0]?.content ?? "";
  return String(sys).split(/\s/)[0];
}

/** The request's `messages`. */
export function messages(req: RecordedRequest): Json[] {
  return (req.body as Json).messages;
}

/** Every tool result in a request, oldest first. */
export function toolResults(req: RecordedRequest): string[] {
  return messages(req).filter((m) => m.role === "tool").map((m) => String(m.content));
}

/** The tool results that answer the last assistant message's calls. */
export function lastToolResults(req: RecordedRequest): string[] {
  const ms = messages(req);
  const out: string[] = [];
  for (let i = ms.length - 1; i >= 0 && ms[i].role === "tool"; i--) {
    out.unshift(String(ms[i].content));
  }
  return out;
}

/** Model requests of one conversation so far (same agent, same first user message), `req` included. */
export function nth(reqs: RecordedRequest[], req: RecordedRequest): number {
  const first = JSON.stringify(messages(req)[1]);
  return reqs.filter((r) => agentOf(r) === agentOf(req) && JSON.stringify(messages(r)[1]) === first)
    .length;
}

/** An `agent__spawn` call. */
export const spawn = (agent: string, prompt: string): ScriptedToolCall => ({
  name: "agent__spawn",
  arguments: { agent, prompt },
});

/** `agent__collect` of every uncollected child. */
export const collectAll: ScriptedToolCall = { name: "agent__collect", arguments: {} };

/** A minimal agent definition: `NAME test agent`, instructions starting with NAME. */
export function agent(name: string, extra: Partial<AgentSpec> = {}): AgentSpec {
  return {
    name: name.toLowerCase(),
    description: `${name} test agent`,
    instructions: `${name} agent for tests.`,
    ...extra,
  };
}
