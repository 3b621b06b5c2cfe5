/**
 * Helpers for tests that drive sub-agents with the scripted model server
 * (tests/support/model_server.ts): which agent a recorded request came from (the first word of its
 * system prompt, e.g. `LEAD`, `KID`), its messages and tool results, how many requests one
 * conversation has made, `agent__spawn` / `agent__collect` calls, minimal agent definitions, and
 * {@link agentEnv}: a real workspace with those agents on a scripted server.
 * @module
 */
import assert from "node:assert/strict";
import {
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedToolCall,
  startModelServer,
} from "./model_server.ts";
import { testApp } from "./fixtures.ts";
import { acquireWorkspace, type Workspace } from "../../core/session/workspace.ts";
import { openSession } from "../../core/session/conversation.ts";
import type { AgentSession } from "../../core/session/types.ts";
import type {
  AgentSpec,
  EventEnvelope,
  HostFactory,
  PermissionResolver,
  TurnEndedEvent,
} from "../../core/protocol/types.ts";

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

/** A workspace with registered test agents and a scripted model server (see {@link agentEnv}). */
export interface AgentTestEnv {
  ws: Workspace;
  /** Temp root: `ws/` is the workspace, `config/` and `data/` Coyote's dirs. */
  root: string;
  cwd: string;
  dataDir: string;
  requests: RecordedRequest[];
  /** Opens a root session of `name` (permission: reject unless given). */
  open(
    name: string,
    permission?: PermissionResolver,
    host?: HostFactory,
  ): Promise<AgentSession>;
  /** Runs one turn; asserts the root's `turn_ended` comes last and returns it with every event. */
  run(
    session: AgentSession,
    prompt: string,
    signal?: AbortSignal,
    onEvent?: (e: EventEnvelope) => void,
  ): Promise<{ events: EventEnvelope[]; ended: TurnEndedEvent }>;
  /** Closes the sessions, the workspace and the server; removes the temp root. */
  close(): Promise<void>;
}

/**
 * A real workspace in a temp dir (with `files` written into it, `userFiles` into its config dir) on a scripted model server whose
 * replies come from `script`, with `agents` registered as `source` (default `workspace`).
 */
export async function agentEnv(
  agents: AgentSpec[],
  script: (req: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>,
  opts: {
    files?: Record<string, string>;
    /** Files written into the user's config dir (`agents/x.md` is a user agent). */
    userFiles?: Record<string, string>;
    config?: Record<string, unknown>;
    trusted?: boolean;
    source?: "workspace" | "plugin";
    prefix?: string;
  } = {},
): Promise<AgentTestEnv> {
  const root = await Deno.makeTempDir({ prefix: opts.prefix ?? "coyote-agents-" });
  const cwd = `${root}/ws`;
  await Deno.mkdir(cwd, { recursive: true });
  for (const [path, text] of Object.entries(opts.files ?? {})) {
    await Deno.mkdir(`${cwd}/${path}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(`${cwd}/${path}`, text);
  }
  for (const [path, text] of Object.entries(opts.userFiles ?? {})) {
    await Deno.mkdir(`${root}/config/${path}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeTextFile(`${root}/config/${path}`, text);
  }
  const server = await startModelServer({ script: (req) => script(req) });
  const dataDir = `${root}/data`;
  const app = testApp({ cwd, configDir: `${root}/config`, dataDir }, {
    baseURL: server.baseURL,
    apiKey: "k",
    model: "scripted",
    ...(opts.trusted !== undefined ? { trustWorkspace: opts.trusted } : {}),
    config: opts.config ?? {},
  });
  const ws = await acquireWorkspace(app, { cwd, log: () => {} });
  for (const a of agents) ws.agents.register(a, opts.source ?? "workspace");
  const sessions: AgentSession[] = [];
  return {
    ws,
    root,
    cwd,
    dataDir,
    requests: server.requests,
    async open(name, permission, host) {
      const s = await openSession(ws, {
        agent: name,
        permission: permission ?? (() => Promise.resolve("reject_once")),
        ...(host ? { host } : {}),
      });
      sessions.push(s);
      return s;
    },
    async run(session, prompt, signal, onEvent) {
      const events: EventEnvelope[] = [];
      await session.prompt(prompt, {
        signal,
        onEvent: (e) => {
          events.push(e);
          onEvent?.(e);
        },
      });
      const last = events.at(-1)!;
      assert.equal(last.session_id, session.id, "the root's turn_ended comes last");
      assert.equal(last.update.sessionUpdate, "turn_ended");
      return { events, ended: last.update as TurnEndedEvent };
    },
    async close() {
      for (const s of sessions) await s.close();
      await ws.release();
      await server.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}
