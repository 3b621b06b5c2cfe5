/**
 * The agent engine: one turn loop shared by every frontend.
 *
 * A turn streams assistant text (`agent_message_chunk`) and reasoning
 * (`agent_thought_chunk`), collects the model's `tool_calls`, checks each call
 * against the guard, runs it, feeds the results back as OpenAI `tool`
 * messages and asks the model again — until the model answers without tool
 * calls (`end_turn`), `maxTurns` model requests were made
 * (`max_turn_requests`), or the abort signal fires (`cancelled`).
 *
 * Events follow ACP `session/update` (schema v1): `tool_call` (status
 * `pending`) → `tool_call_update` `in_progress` → `completed` | `failed`.
 * Every announced tool call ends, also on cancellation.
 *
 * Bad model output never throws: invalid JSON, unknown tools, schema
 * violations and repeated identical calls go back to the model as tool errors.
 * A provider fault (retries exhausted, stream cut) ends the turn with
 * `stopReason: "end_turn"` and `error` set; the headless frontend maps `error`
 * to exit code 1. Partial text of a cut stream is kept (marked interrupted).
 * @module
 */
import { resolve } from "node:path";
import type { ToolCallContent as ToolContent } from "@agentclientprotocol/sdk";
import type { HostServices, ToolAccess, ToolResult } from "../sdk/mod.ts";
import type {
  AnyTool,
  DeniedAction,
  EngineEvent,
  EventSink,
  GuardVerdict,
  PermissionResolver,
  PromptInput,
  StopReason,
  TurnResult,
  TurnUsage,
} from "./types.ts";
import type { ChatMessage, TranscriptWriter } from "./sessions.ts";
import type { ToolRegistry } from "./tools.ts";
import type { ModelResponse } from "./provider.ts";

/** The streamed completion the provider returns. */
export type { ModelResponse };

/** The part of core/provider.ts the engine needs (structural, so tests can pass any client). */
export interface ModelClient {
  complete(
    req: { messages: ChatMessage[]; tools?: unknown[]; model?: string; temperature?: number },
    handlers: {
      onText?: (delta: string) => void;
      onReasoning?: (delta: string) => void;
      onToolCallDelta?: (...args: never[]) => void;
    },
    signal?: AbortSignal,
  ): Promise<ModelResponse>;
}

/** The part of the guard policy the engine needs (core/guard/policy.ts `Policy`). */
export interface PolicyLike {
  evaluate(access: ToolAccess): Promise<GuardVerdict>;
  addRule(decision: "allow" | "deny" | "ask", rule: string, source?: string): void;
}

export interface EngineOptions {
  sessionId: string;
  /** Absolute workspace root. */
  cwd: string;
  client: ModelClient;
  model: string;
  temperature?: number;
  registry: ToolRegistry;
  policy: PolicyLike;
  permission: PermissionResolver;
  host?: HostServices;
  systemPrompt: string;
  /** Model requests allowed per turn. */
  maxTurns: number;
  /** Context window size reported in `usage_update.size` (tokens). */
  contextWindow?: number;
  /** Prior model history (without the system message). */
  history?: ChatMessage[];
  /** Prior events (for `history()`). */
  updates?: EngineEvent[];
  transcript?: TranscriptWriter;
  /** Diagnostics sink (stderr by default); never stdout. */
  log?: (line: string) => void;
}

/** Longest tool output passed to the model (characters); the rest is cut with a marker. */
export const MAX_TOOL_OUTPUT = 100_000;
/** Identical consecutive calls (same name and arguments) allowed before the engine refuses. */
export const REPEAT_LIMIT = 3;
/**
 * After a cancel, how long a running tool may take to stop (kill its processes, release a
 * client terminal) before the turn ends without it (ms). ACP `session/cancel`: the agent
 * answers `cancelled` after its operations were aborted.
 */
export const CANCEL_GRACE_MS = 3_000;

/** A provider failure as thrown by core/provider.ts (`ProviderError`), matched structurally. */
interface ProviderFault {
  code: string;
  message: string;
  partial?: ModelResponse;
}
function asProviderFault(e: unknown): ProviderFault | null {
  if (e && typeof e === "object" && typeof (e as ProviderFault).code === "string") {
    return e as ProviderFault;
  }
  return null;
}

/**
 * The policy rule that `allow_always` / `reject_always` adds for an access.
 * Syntax of docs/permissions.md: `Execute(cmd)`, `Read(path)`, `Write(path)`, `Net(host)`, `Tool(name)`.
 */
export function ruleFor(access: ToolAccess): string {
  switch (access.type) {
    case "execute":
      return `Execute(${access.command})`;
    case "read":
      return `Read(${access.path})`;
    case "write":
      return `Write(${access.path})`;
    case "net":
      return `Net(${access.host})`;
    case "tool":
      return `Tool(${access.name})`;
  }
}

class Cancelled extends Error {}

interface PreparedCall {
  id: string;
  name: string;
  tool?: AnyTool;
  input?: unknown;
  /** Set when the call must not run: message for the model. */
  refusal?: string;
  denied?: boolean;
  locations?: { path: string; line?: number }[];
}

function emptyUsage(): TurnUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 0 };
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${
      Object.keys(v).sort().map((k) =>
        `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`
      )
        .join(",")
    }}`;
  }
  return JSON.stringify(v);
}

function absPath(cwd: string, p: string): string {
  return resolve(cwd, p);
}

/** Converts prompt input (text or ACP content blocks) to an OpenAI user message content. */
export function promptToContent(input: PromptInput): string | unknown[] {
  if (typeof input === "string") return input;
  const parts: unknown[] = [];
  let text = "";
  for (const b of input) {
    if (b.type === "text") text += (text ? "\n" : "") + b.text;
    else if (b.type === "resource") {
      const r = b.resource as { uri: string; text?: string; blob?: string };
      if (typeof r.text === "string") {
        text += `${text ? "\n" : ""}<file uri="${r.uri}">\n${r.text}\n</file>`;
      } else text += `${text ? "\n" : ""}[binary resource ${r.uri}]`;
    } else if (b.type === "resource_link") text += `${text ? "\n" : ""}[file: ${b.uri}]`;
    else if (b.type === "image") {
      if (text) parts.push({ type: "text", text }), text = "";
      parts.push({ type: "image_url", image_url: { url: `data:${b.mimeType};base64,${b.data}` } });
    }
  }
  if (!parts.length) return text;
  if (text) parts.push({ type: "text", text });
  return parts;
}

/** The prompt as ACP content blocks, for `user_message_chunk` history (empty text dropped). */
function promptBlocks(input: PromptInput): Exclude<PromptInput, string> {
  if (typeof input === "string") return [{ type: "text", text: input }];
  const blocks = input.filter((b) => b.type !== "text" || b.text);
  return blocks.length ? blocks : [{ type: "text", text: "" }];
}

/** One conversation with the model; `prompt` runs one turn at a time. */
export class Engine {
  readonly opts: EngineOptions;
  /** Model history without the system message. */
  readonly messages: ChatMessage[];
  readonly updates: EngineEvent[];
  #running = false;
  #lastCallKey = "";
  #lastCallCount = 0;

  constructor(opts: EngineOptions) {
    this.opts = opts;
    this.messages = opts.history ? [...opts.history] : [];
    this.updates = opts.updates ? [...opts.updates] : [];
  }

  get running(): boolean {
    return this.#running;
  }

  #log(line: string) {
    (this.opts.log ?? ((l: string) => console.error(l)))(line);
  }

  /** Records an event (transcript + in-memory history, chunks coalesced) and forwards it. */
  #record(ev: EngineEvent, sink: EventSink | null) {
    if (sink) {
      try {
        sink(ev);
      } catch (e) {
        this.#log(`coyote: event sink failed: ${(e as Error).message}`);
      }
    }
    this.opts.transcript?.update(ev);
    const last = this.updates[this.updates.length - 1];
    if (
      last &&
      (ev.sessionUpdate === "agent_message_chunk" || ev.sessionUpdate === "agent_thought_chunk") &&
      last.sessionUpdate === ev.sessionUpdate && last.content.type === "text" &&
      ev.content.type === "text"
    ) {
      this.updates[this.updates.length - 1] = {
        sessionUpdate: ev.sessionUpdate,
        content: { type: "text", text: last.content.text + ev.content.text },
      };
    } else {
      this.updates.push(ev);
    }
  }

  #pushMessage(m: ChatMessage, interrupted = false) {
    this.messages.push(m);
    this.opts.transcript?.message(m, interrupted);
  }

  /** Runs one turn. Resolves with the turn result; rejects only when a turn is already running. */
  async prompt(
    input: PromptInput,
    o: { signal?: AbortSignal; onEvent: EventSink },
  ): Promise<TurnResult> {
    if (this.#running) throw new Error("a turn is already running in this session");
    this.#running = true;
    try {
      return await this.#turn(input, o.signal ?? new AbortController().signal, o.onEvent);
    } finally {
      this.#running = false;
    }
  }

  async #turn(input: PromptInput, signal: AbortSignal, sink: EventSink): Promise<TurnResult> {
    const o = this.opts;
    const usage = emptyUsage();
    const denied: DeniedAction[] = [];
    let text = "";
    this.#lastCallKey = "";
    this.#lastCallCount = 0;
    // Announced tool calls that have not ended yet: every one must end, also on cancellation.
    const open = new Set<string>();
    const emit = (ev: EngineEvent) => {
      if (ev.sessionUpdate === "tool_call") open.add(ev.toolCallId);
      else if (
        ev.sessionUpdate === "tool_call_update" &&
        (ev.status === "completed" || ev.status === "failed")
      ) {
        open.delete(ev.toolCallId);
      }
      this.#record(ev, sink);
    };

    // The user's prompt is history (replayed by ACP session/load as the blocks the client
    // sent: text, resource links, embedded resources, images), not echoed live.
    for (const content of promptBlocks(input)) {
      this.#record({ sessionUpdate: "user_message_chunk", content }, null);
    }
    this.#pushMessage({ role: "user", content: promptToContent(input) as ChatMessage["content"] });

    const finish = (
      stopReason: StopReason,
      error?: { code: string; message: string },
    ): TurnResult => {
      for (const id of [...open]) {
        emit({
          sessionUpdate: "tool_call_update",
          toolCallId: id,
          status: "failed",
          content: [{
            type: "content",
            content: { type: "text", text: "error: cancelled before this tool ran" },
          }],
        });
      }
      o.transcript?.turnEnd(stopReason, usage, error);
      return error
        ? { stopReason, usage, denied, text, error }
        : { stopReason, usage, denied, text };
    };

    while (true) {
      if (signal.aborted) return finish("cancelled");
      if (usage.requests >= o.maxTurns) return finish("max_turn_requests");
      usage.requests++;
      // Read per request: a tool call (skill__load) may change the tool set and system prompt.
      const tools = o.registry.openAITools();
      let streamed = "";
      let res: ModelResponse;
      try {
        res = await o.client.complete(
          {
            messages: [{ role: "system", content: o.systemPrompt }, ...this.messages],
            tools: tools.length ? tools : undefined,
            model: o.model,
            temperature: o.temperature,
          },
          {
            onText: (d) => {
              if (!d) return;
              streamed += d;
              emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: d } });
            },
            onReasoning: (d) => {
              if (d) {
                emit({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: d } });
              }
            },
          },
          signal,
        );
      } catch (e) {
        const f = asProviderFault(e);
        const partial = f?.partial?.text ?? streamed;
        if (f?.partial?.usage) this.#addUsage(usage, f.partial.usage, emit);
        if (partial) {
          text = partial;
          const note = signal.aborted ? "[interrupted: cancelled]" : "[interrupted: stream cut]";
          this.#pushMessage({ role: "assistant", content: `${partial}\n\n${note}` }, true);
        }
        if (signal.aborted || f?.code === "cancelled") return finish("cancelled");
        const msg = (e as Error)?.message ?? String(e);
        this.#log(`coyote: model request failed: ${msg}`);
        return finish("end_turn", { code: f?.code ?? "internal", message: msg });
      }
      if (res.usage) this.#addUsage(usage, res.usage, emit);
      // Some servers send text without streaming it (non-streaming fallback): surface it once.
      if (res.text && !streamed) {
        emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: res.text } });
      }
      text = res.text ?? streamed;
      const calls = res.toolCalls ?? [];
      const assistant: ChatMessage = { role: "assistant", content: text || null };
      if (calls.length) {
        // Tool call ids must be unique within the session (ACP `toolCallId`; the history
        // pairs results by id); some servers send none, some repeat them every response.
        const seen = new Set<string>(
          this.messages.flatMap((m) =>
            m.role === "assistant" ? (m.tool_calls ?? []).map((t) => t.id) : []
          ),
        );
        for (let i = 0; i < calls.length; i++) {
          if (!calls[i].id || seen.has(calls[i].id)) {
            calls[i] = {
              ...calls[i],
              id: `call_${usage.requests}_${i}_${crypto.randomUUID().slice(0, 8)}`,
            };
          }
          seen.add(calls[i].id);
        }
        assistant.tool_calls = calls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments ?? "" },
        }));
      }
      this.#pushMessage(assistant);
      if (signal.aborted) {
        this.#answerUnanswered(calls.map((c) => c.id), new Set());
        return finish("cancelled");
      }
      if (!calls.length) {
        const fr = res.finishReason;
        return finish(
          fr === "length" ? "max_tokens" : fr === "content_filter" ? "refusal" : "end_turn",
        );
      }
      const answered = new Set<string>();
      try {
        await this.#runCalls(calls, signal, emit, denied, answered);
      } catch (e) {
        this.#answerUnanswered(calls.map((c) => c.id), answered);
        if (e instanceof Cancelled || signal.aborted) return finish("cancelled");
        // An engine fault: end the turn cleanly (transcript closed off) instead of throwing.
        const msg = (e as Error)?.message ?? String(e);
        this.#log(`coyote: internal error while running tools: ${(e as Error)?.stack ?? msg}`);
        return finish("end_turn", { code: "internal", message: msg });
      }
      if (signal.aborted) return finish("cancelled");
    }
  }

  #addUsage(u: TurnUsage, r: NonNullable<ModelResponse["usage"]>, emit: (ev: EngineEvent) => void) {
    u.prompt_tokens += r.prompt_tokens ?? 0;
    u.completion_tokens += r.completion_tokens ?? 0;
    u.total_tokens += r.total_tokens ?? (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0);
    emit({
      sessionUpdate: "usage_update",
      used: (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0),
      size: this.opts.contextWindow ?? 128_000,
      _meta: { usage: { ...r }, turn: { ...u } },
    });
  }

  #answerUnanswered(ids: string[], answered: Set<string>) {
    for (const id of ids) {
      if (answered.has(id)) continue;
      answered.add(id);
      this.#pushMessage({
        role: "tool",
        tool_call_id: id,
        content: "error: cancelled by the user before this tool ran",
      });
    }
  }

  /** Runs one response's tool calls: consecutive read-only calls concurrently, the rest in order. */
  async #runCalls(
    calls: ModelResponse["toolCalls"],
    signal: AbortSignal,
    emit: (ev: EngineEvent) => void,
    denied: DeniedAction[],
    answered: Set<string>,
  ) {
    let i = 0;
    while (i < calls.length) {
      if (signal.aborted) throw new Cancelled();
      const first = await this.#prepare(calls[i], signal, emit, denied);
      if (!first.tool?.readOnly || first.refusal) {
        await this.#execute(first, signal, emit, answered);
        i++;
        continue;
      }
      // Gather following read-only calls into one concurrent batch.
      const batch = [first];
      i++;
      while (i < calls.length && this.opts.registry.get(calls[i].name)?.readOnly) {
        if (signal.aborted) break;
        batch.push(await this.#prepare(calls[i], signal, emit, denied));
        i++;
      }
      await Promise.all(batch.map((p) => this.#execute(p, signal, emit, answered)));
    }
  }

  /** Announces the call (`tool_call` pending), validates it, and asks the guard. */
  async #prepare(
    call: ModelResponse["toolCalls"][number],
    signal: AbortSignal,
    emit: (ev: EngineEvent) => void,
    denied: DeniedAction[],
  ): Promise<PreparedCall> {
    const o = this.opts;
    const tool = o.registry.get(call.name);
    const p: PreparedCall = { id: call.id, name: call.name, tool };
    let rawInput: unknown = call.arguments;
    let parsed: unknown;
    let parseError = "";
    const raw = (call.arguments ?? "").trim();
    try {
      parsed = raw === "" ? {} : JSON.parse(raw);
      rawInput = parsed;
    } catch (e) {
      parseError = (e as Error).message;
    }
    let title = call.name;
    let accesses: ToolAccess[] = [];
    if (tool && !parseError) {
      const v = await o.registry.validate(call.name, parsed);
      if (v.ok) {
        p.input = v.value;
        try {
          title = tool.title?.(v.value) ?? call.name;
        } catch { /* a title is cosmetic */ }
        try {
          accesses = tool.access?.(v.value, o.cwd) ?? [{ type: "tool", name: call.name }];
        } catch (e) {
          p.refusal = `error: could not check arguments of ${call.name}: ${(e as Error).message}`;
        }
        p.locations = accesses.flatMap((a) =>
          a.type === "read" || a.type === "write" ? [{ path: absPath(o.cwd, a.path) }] : []
        );
      } else {
        p.refusal =
          `error: invalid arguments for ${call.name}: ${v.message}. Call it again with arguments matching its schema.`;
      }
    }
    emit({
      sessionUpdate: "tool_call",
      toolCallId: call.id,
      title,
      kind: tool?.kind ?? "other",
      status: "pending",
      rawInput,
      ...(p.locations?.length ? { locations: p.locations } : {}),
    });
    if (!tool) {
      const names = o.registry.names();
      const near = names.filter((n) => n.includes(call.name.split("_")[0] ?? "") && call.name)
        .slice(0, 5);
      const show = [...new Set([...near, ...names])].slice(0, 8);
      p.refusal = `error: unknown tool "${call.name}". ` +
        (show.length
          ? `Available tools include: ${show.join(", ")}${
            names.length > show.length ? `, … (${names.length} in all)` : ""
          }.`
          : "No tools are available in this session; answer without tools.");
      return p;
    }
    if (parseError) {
      p.refusal =
        `error: the arguments of ${call.name} are not valid JSON (${parseError}). Send a single JSON object matching the tool's schema.`;
      return p;
    }
    if (p.refusal) return p;

    // Repeated identical calls: the third one in a row is refused.
    const key = `${call.name}\u0000${canonical(p.input)}`;
    if (key === this.#lastCallKey) this.#lastCallCount++;
    else {
      this.#lastCallKey = key;
      this.#lastCallCount = 1;
    }
    if (this.#lastCallCount >= REPEAT_LIMIT) {
      p.refusal = `error: this exact ${call.name} call was already made ${
        this.#lastCallCount - 1
      } times in a row with the same arguments; its result will not change. Use the earlier result or try a different approach.`;
      return p;
    }

    // Guard: deny > ask > allow over every access the call needs.
    // The guard fails closed: an evaluation error is a deny.
    const verdicts = await Promise.all(
      accesses.map((a) =>
        o.policy.evaluate(a).catch((e): GuardVerdict => ({
          decision: "deny",
          reason: `the guard could not evaluate this access (${(e as Error)?.message ?? e})`,
          access: a,
        }))
      ),
    );
    const deny = verdicts.find((v) => v.decision === "deny");
    if (deny) {
      denied.push({
        toolCallId: call.id,
        toolName: call.name,
        access: deny.access,
        decision: "deny",
        reason: deny.reason,
      });
      p.refusal = `error: denied by policy: ${deny.reason}`;
      p.denied = true;
      return p;
    }
    const asks = verdicts.filter((v) => v.decision === "ask");
    if (asks.length) {
      let outcome;
      try {
        outcome = await o.permission({
          sessionId: o.sessionId,
          toolCallId: call.id,
          toolName: call.name,
          title,
          kind: tool.kind ?? "other",
          rawInput,
          verdicts: asks,
        }, signal);
      } catch (e) {
        if (signal.aborted) outcome = "cancelled" as const;
        else {
          this.#log(`coyote: permission request failed: ${(e as Error).message}`);
          outcome = "reject_once" as const;
        }
      }
      if (outcome === "cancelled" || signal.aborted) {
        p.refusal = "error: cancelled while waiting for permission";
        emit({
          sessionUpdate: "tool_call_update",
          toolCallId: call.id,
          status: "failed",
          content: [{ type: "content", content: { type: "text", text: p.refusal } }],
        });
        throw new Cancelled();
      }
      const remember = (decision: "allow" | "deny") => {
        for (const v of asks) {
          try {
            o.policy.addRule(decision, ruleFor(v.access), "session");
          } catch (e) {
            this.#log(
              `coyote: could not remember the ${decision} rule ${ruleFor(v.access)}: ${
                (e as Error).message
              }`,
            );
          }
        }
      };
      if (outcome === "allow_always") {
        remember("allow");
      } else if (outcome !== "allow_once") {
        if (outcome === "reject_always") remember("deny");
        for (const v of asks) {
          denied.push({
            toolCallId: call.id,
            toolName: call.name,
            access: v.access,
            decision: "ask",
            reason: v.reason,
          });
        }
        p.refusal = `error: denied: ${
          asks.map((v) => v.reason).join("; ")
        } — the user (or headless mode) did not approve this action. Do not retry it; continue without it or explain what is needed.`;
        p.denied = true;
      }
    }
    return p;
  }

  /** Runs a prepared call (or reports its refusal) and answers it in the history. */
  async #execute(
    p: PreparedCall,
    signal: AbortSignal,
    emit: (ev: EngineEvent) => void,
    answered: Set<string>,
  ) {
    const o = this.opts;
    const fail = (text: string, rawOutput?: unknown) => {
      emit({
        sessionUpdate: "tool_call_update",
        toolCallId: p.id,
        status: "failed",
        content: [{ type: "content", content: { type: "text", text } }],
        ...(rawOutput !== undefined ? { rawOutput } : {}),
      });
      answered.add(p.id);
      this.#pushMessage({ role: "tool", tool_call_id: p.id, content: text });
    };
    if (p.refusal || !p.tool) {
      fail(p.refusal ?? "error: tool unavailable", p.denied ? { denied: true } : undefined);
      return;
    }
    if (signal.aborted) {
      fail("error: cancelled");
      throw new Cancelled();
    }
    emit({ sessionUpdate: "tool_call_update", toolCallId: p.id, status: "in_progress" });
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const progress: ToolContent[] = [];
    const name = p.name;
    const ctx = {
      cwd: o.cwd,
      signal: ctrl.signal,
      toolCallId: p.id,
      host: o.host,
      log: {
        debug: (m: string) => Deno.env.get("COYOTE_DEBUG") && this.#log(`[${name}] ${m}`),
        info: (m: string) => Deno.env.get("COYOTE_DEBUG") && this.#log(`[${name}] ${m}`),
        warn: (m: string) => this.#log(`[${name}] warning: ${m}`),
        error: (m: string) => this.#log(`[${name}] error: ${m}`),
      },
      progress: (
        u: { message?: string; title?: string; locations?: { path: string; line?: number }[] },
      ) => {
        if (u.message) {
          progress.push({ type: "content", content: { type: "text", text: u.message } });
        }
        emit({
          sessionUpdate: "tool_call_update",
          toolCallId: p.id,
          ...(u.message ? { content: [...progress] } : {}),
          ...(u.title ? { title: u.title } : {}),
          ...(u.locations ? { locations: u.locations } : {}),
        });
      },
      requestPermission: async (q: { title: string; detail?: string }) => {
        const out = await o.permission({
          sessionId: o.sessionId,
          toolCallId: p.id,
          toolName: name,
          title: q.title,
          kind: p.tool?.kind ?? "other",
          rawInput: p.input,
          verdicts: [{
            decision: "ask",
            reason: q.detail ? `${q.title}: ${q.detail}` : q.title,
            access: { type: "tool", name },
          }],
        }, ctrl.signal).catch(() => "reject_once" as const);
        return out === "allow_once" || out === "allow_always";
      },
    };
    let result: ToolResult;
    try {
      const running = Promise.resolve().then(() => p.tool!.run(p.input, ctx));
      // On cancel, wait (bounded) for the tool to stop before ending the turn.
      const aborted = new Promise<never>((_, rej) => {
        const stop = () => {
          let t: ReturnType<typeof setTimeout> | undefined;
          void Promise.race([
            running.then(() => {}, () => {}),
            new Promise((r) => (t = setTimeout(r, CANCEL_GRACE_MS))),
          ]).then(() => {
            clearTimeout(t);
            rej(new Cancelled());
          });
        };
        if (ctrl.signal.aborted) stop();
        else ctrl.signal.addEventListener("abort", stop, { once: true });
      });
      aborted.catch(() => {});
      const r = await Promise.race([running, aborted]);
      if (ctrl.signal.aborted) throw new Cancelled();
      result = typeof r === "string" ? { content: r } : r ?? { content: "" };
    } catch (e) {
      signal.removeEventListener("abort", onAbort);
      if (e instanceof Cancelled || signal.aborted) {
        fail("error: cancelled by the user");
        throw new Cancelled();
      }
      fail(`error: ${name} failed: ${(e as Error)?.message ?? String(e)}`);
      return;
    }
    signal.removeEventListener("abort", onAbort);
    let content = typeof result.content === "string"
      ? result.content
      : JSON.stringify(result.content);
    if (content.length > MAX_TOOL_OUTPUT) {
      content = content.slice(0, MAX_TOOL_OUTPUT) +
        `\n[truncated: ${content.length - MAX_TOOL_OUTPUT} more characters]`;
    }
    if (result.plan) {
      emit({ sessionUpdate: "plan", entries: result.plan.map((e) => ({ ...e })) });
    }
    const items: ToolContent[] = [{ type: "content", content: { type: "text", text: content } }];
    for (const d of result.diffs ?? []) {
      items.push({
        type: "diff",
        path: absPath(o.cwd, d.path),
        oldText: d.oldText,
        newText: d.newText,
      });
    }
    const locations = result.locations?.map((l) => ({ ...l, path: absPath(o.cwd, l.path) })) ??
      p.locations;
    let rawOutput = result.rawOutput;
    if (rawOutput !== undefined) {
      try {
        JSON.stringify(rawOutput);
      } catch {
        rawOutput = undefined;
      }
    }
    emit({
      sessionUpdate: "tool_call_update",
      toolCallId: p.id,
      status: result.isError ? "failed" : "completed",
      content: items,
      ...(locations?.length ? { locations } : {}),
      ...(rawOutput !== undefined ? { rawOutput } : {}),
    });
    answered.add(p.id);
    const forModel = result.isError && !/^error\b/i.test(content) ? `error: ${content}` : content;
    this.#pushMessage({ role: "tool", tool_call_id: p.id, content: forModel });
  }
}
