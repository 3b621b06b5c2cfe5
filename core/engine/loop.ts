/**
 * The turn loop: the LLM {@link AgentRunner}.
 *
 * A turn emits `turn_started`, streams assistant text (`agent_message_chunk`) and reasoning
 * (`agent_thought_chunk`), collects the model's `tool_calls`, runs them (core/engine/schedule.ts:
 * prepare → guard gate → execute), feeds the results back as OpenAI `tool` messages and asks the
 * model again — until the model answers without tool calls and `beforeTurnEnd` has nothing to
 * add (`end_turn`), `maxTurns` model requests were made (`max_turn_requests`), or the abort
 * signal fires (`cancelled`). It ends with `turn_ended` (stop reason, usage, denied actions,
 * error).
 *
 * Events follow ACP `session/update` (schema v1): `tool_call` (status `pending`) →
 * `tool_call_update` `in_progress` → `completed` | `failed`. Every announced tool call ends,
 * also on cancellation.
 *
 * A provider fault (retries exhausted, stream cut) ends the turn with `stopReason: "end_turn"`
 * and `error` set; the headless frontend maps `error` to exit code 1. Partial text of a cut
 * stream is kept (marked interrupted).
 * @module
 */
import { safeText } from "../util/terminal_safe.ts";
import { costUsd } from "../config/models.ts";
import { refuseCutCalls } from "./truncated.ts";
import type {
  AgentOrigin,
  AgentRunner,
  DeniedAction,
  EngineEvent,
  EventSink,
  PromptInput,
  SessionEvent,
  StopReason,
  TurnResult,
  TurnUsage,
} from "../protocol/types.ts";
import type { ChatMessage } from "../transcript/types.ts";
import { promptBlocks, promptText, promptToContent, requestMessages } from "./prompt.ts";
import { runCalls } from "./schedule.ts";
import { shrinkForOverflow } from "./context.ts";
import { type CompactionResult, compactThreshold, estimateTokens, summarise } from "./compact.ts";
import { Cancelled, type EngineOptions, type ModelResponse, type TurnContext } from "./types.ts";

/** A provider failure as thrown by core/provider/provider.ts (`ProviderError`), matched structurally. */
interface ProviderFault {
  code: string;
  message: string;
  partial?: ModelResponse;
  /** The window a `context_overflow` error named (tokens). */
  contextWindow?: number;
  /** The HTTP status the server answered (none: no answer, or a failure of our own). */
  status?: number;
}
function asProviderFault(e: unknown): ProviderFault | null {
  if (e && typeof e === "object" && typeof (e as ProviderFault).code === "string") {
    return e as ProviderFault;
  }
  return null;
}

/** A zero usage record. */
export function emptyUsage(): TurnUsage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, requests: 0 };
}

/** One conversation with the model; `prompt` runs one turn at a time. */
export class Engine implements AgentRunner {
  readonly opts: EngineOptions;
  /** Model history without the system message. */
  readonly messages: ChatMessage[];
  readonly updates: EngineEvent[];
  #running = false;
  /** A window (tokens) an overflow error named for a model; smaller than configured. */
  #learnedWindow?: { model: string; tokens: number };

  constructor(opts: EngineOptions) {
    this.opts = opts;
    this.messages = opts.history ? [...opts.history] : [];
    this.updates = opts.updates ? [...opts.updates] : [];
  }

  get running(): boolean {
    return this.#running;
  }

  history(): EngineEvent[] {
    return [...this.updates];
  }

  get origin(): AgentOrigin {
    return this.opts.origin ??
      { agent: "agent", agentId: "agent", rootSessionId: this.opts.sessionId, depth: 0 };
  }

  #log(line: string) {
    (this.opts.log ?? ((l: string) => console.error(safeText(l))))(line);
  }

  /**
   * Records an event (transcript + in-memory history, chunks coalesced) and forwards it.
   * Lifecycle events go to the sink only (the transcript's `turn_end` line is written by the
   * loop with the turn's own usage).
   */
  #record(ev: SessionEvent, sink: EventSink | null) {
    if (sink) {
      try {
        sink(ev);
      } catch (e) {
        this.#log(`coyote: event sink failed: ${(e as Error).message}`);
      }
    }
    if (
      ev.sessionUpdate === "turn_started" || ev.sessionUpdate === "turn_ended" ||
      ev.sessionUpdate === "hook"
    ) return;
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
    const t: TurnContext = {
      opts: o,
      signal,
      emit,
      pushMessage: (m, interrupted) => this.#pushMessage(m, interrupted),
      log: (l) => this.#log(l),
      denied,
      answered: new Set(),
      repeat: { key: "", count: 0 },
      origin: this.origin,
    };

    const finish = (
      stopReason: StopReason,
      error?: { code: string; message: string },
      rejected = false,
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
      o.transcript?.turnEnd(stopReason, usage, error, rejected);
      const result: TurnResult = error
        ? { stopReason, usage, denied, text, error }
        : { stopReason, usage, denied, text };
      this.#record({ sessionUpdate: "turn_ended", ...result }, sink);
      return result;
    };

    this.#record({ sessionUpdate: "turn_started", prompt: promptText(input) }, sink);
    // `UserPromptSubmit` hooks may block the prompt (it never enters the history) or add context.
    const submitted: { block?: string; context?: string } = o.hooks?.userPromptSubmit
      ? await o.hooks.userPromptSubmit(promptText(input), signal).catch(() => ({}))
      : {};
    if (submitted.block !== undefined) return finish("end_turn");
    // The user's prompt is history (replayed by ACP session/load as the blocks the client
    // sent: text, resource links, embedded resources, images), not echoed live.
    for (const content of promptBlocks(input)) {
      this.#record({ sessionUpdate: "user_message_chunk", content }, null);
    }
    this.#fitModel();
    // Near the window: older turns are summarised first (core/engine/compact.ts).
    if (this.#estimate() > compactThreshold(o.contextWindow ?? 128_000, o.maxOutputTokens)) {
      await this.#compact({ signal, usage, emit, why: "auto" });
    }
    // Where this turn's messages start: a turn the server rejects is cut off here.
    let turnStart = this.messages.length;
    let shrunk = false;
    let compacted = false;
    let cutResponses = 0; // responses whose tool calls the token limit cut (core/engine/truncated.ts)
    this.#pushMessage({
      role: "user",
      content: promptToContent(input, { images: o.images }) as ChatMessage["content"],
    });
    if (submitted.context) {
      this.#pushMessage({ role: "user", content: submitted.context });
    }

    while (true) {
      if (signal.aborted) return finish("cancelled");
      if (usage.requests >= o.maxTurns) return finish("max_turn_requests");
      if (overBudget(o.budget, usage)) return finish("max_budget");
      usage.requests++;
      if (o.beforeRequest) await o.beforeRequest();
      const tools = o.registry.openAITools();
      let streamed = "";
      let res: ModelResponse;
      try {
        res = await o.client.complete(
          {
            messages: requestMessages(o.systemPrompt, this.messages),
            tools: tools.length ? tools : undefined,
            model: o.model,
            temperature: o.temperature,
            ...(o.top_p !== undefined ? { top_p: o.top_p } : {}),
            ...(o.reasoning_effort !== undefined ? { reasoning_effort: o.reasoning_effort } : {}),
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
        if (f?.code === "context_overflow" && !shrunk) {
          shrunk = true;
          if (this.#shrinkForOverflow(turnStart, f)) continue;
        }
        // Still too big: summarise the older turns and retry once.
        if (f?.code === "context_overflow" && !compacted) {
          compacted = true;
          const r = await this.#compact({ signal, usage, emit, why: "overflow", end: turnStart });
          if (r.compacted && r.turnStart !== undefined) {
            turnStart = r.turnStart;
            continue;
          }
        }
        const msg = (e as Error)?.message ?? String(e);
        // Not logged here: the turn's `turn_ended.error` carries it, and each frontend shows it
        // once (text/REPL renderer `coyote:`, headless json/stream-json on stderr, ACP as the
        // prompt's JSON-RPC error and on stderr); a log line here printed it twice on a terminal.
        if (
          f?.code === "context_overflow" ||
          (f?.code === "bad_request" && f.status !== undefined && f.status !== 404 &&
            f.status !== 405)
        ) {
          // The server refuses what this turn sent and would refuse every later request that
          // carries it: the turn leaves the history (its transcript `turn_end` says so for
          // loading). Not for a 404/405 (the base URL or the model name is wrong, README
          // "Configuration") nor a failure without a status: the turn is not to blame. Said in
          // the error itself, so it comes with it (a log line came before it).
          this.messages.splice(turnStart);
          const note = "; this turn is not kept in the conversation: send it again, changed";
          return finish("end_turn", { code: f.code, message: msg + note }, true);
        }
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
      // Thinking models want their reasoning back, in the field it came in.
      if (res.reasoning) assistant[res.reasoningField ?? "reasoning_content"] = res.reasoning;
      if (res.reasoningDetails?.length) assistant.reasoning_details = res.reasoningDetails;
      if (calls.length) {
        // Tool call ids must be unique within the session (ACP `toolCallId`; the history
        // pairs results by id); some servers send none, some repeat them every response.
        const seen = new Set<string>(
          this.messages.flatMap((m) =>
            m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []
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
          ...(c.extra_content ? { extra_content: c.extra_content } : {}),
        }));
      }
      // Never an assistant message with neither content nor tool calls (servers reject it).
      if (text || calls.length) this.#pushMessage(assistant);
      if (signal.aborted) {
        this.#answerUnanswered(calls.map((c) => c.id), new Set());
        return finish("cancelled");
      }
      if (calls.length && res.finishReason === "length") {
        // Cut by the token limit: arguments may parse and still be short; nothing runs.
        refuseCutCalls(calls, emit, (m) => this.#pushMessage(m), (l) => this.#log(l));
        if (++cutResponses > 1) return finish("max_tokens");
        continue;
      }
      if (!calls.length) {
        const fr = res.finishReason;
        if (fr === "length") return finish("max_tokens");
        if (fr === "content_filter") return finish("refusal");
        const more = o.beforeTurnEnd
          ? await o.beforeTurnEnd({ text, signal }).catch((e) => {
            this.#log(`coyote: end-of-turn hook failed: ${(e as Error)?.message ?? e}`);
            return null;
          })
          : null;
        if (signal.aborted) return finish("cancelled");
        if (more === null) return finish("end_turn");
        this.#pushMessage({ role: "user", content: more });
        continue;
      }
      t.answered = new Set();
      try {
        await runCalls(t, calls);
      } catch (e) {
        this.#answerUnanswered(calls.map((c) => c.id), t.answered);
        if (e instanceof Cancelled || signal.aborted) return finish("cancelled");
        // An engine fault: end the turn cleanly (transcript closed off) instead of throwing.
        const msg = (e as Error)?.message ?? String(e);
        this.#log(`coyote: internal error while running tools: ${(e as Error)?.stack ?? msg}`);
        return finish("end_turn", { code: "internal", message: msg });
      }
      if (signal.aborted) return finish("cancelled");
      if (o.endTurnAfterTools?.()) return finish("end_turn");
    }
  }

  #addUsage(u: TurnUsage, r: NonNullable<ModelResponse["usage"]>, emit: (ev: EngineEvent) => void) {
    u.prompt_tokens += r.prompt_tokens ?? 0;
    u.completion_tokens += r.completion_tokens ?? 0;
    u.total_tokens += r.total_tokens ?? (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0);
    this.#lastUsed = (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0);
    this.opts.budget?.tree?.add(r, this.opts.budget.price?.());
    emit({
      sessionUpdate: "usage_update",
      used: (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0),
      size: this.opts.contextWindow ?? 128_000,
      _meta: { usage: { ...r }, turn: { ...u } },
    });
  }

  /** Estimated tokens of the next request (core/engine/compact.ts), at least the server's last count. */
  #estimate(): number {
    const o = this.opts;
    const est = estimateTokens(
      requestMessages(o.systemPrompt, this.messages),
      o.registry.openAIToolsChars(),
    );
    return Math.max(est, this.#lastUsed);
  }
  /** Tokens of the last request as the server counted them (0 after a compaction). */
  #lastUsed = 0;

  /**
   * Summarises the older turns (before `end`, default all) keeping the last ones verbatim.
   * Never throws: a failed summary leaves the history as it was.
   */
  async #compact(a: {
    signal?: AbortSignal;
    usage?: TurnUsage;
    emit?: (ev: EngineEvent) => void;
    why: "auto" | "overflow" | "manual";
    end?: number;
    focus?: string;
    keep?: number;
    onStart?: (info: { turns: number; before: number }) => void;
  }): Promise<CompactionResult & { turnStart?: number }> {
    const o = this.opts;
    const before = this.#estimate();
    const plan = [...this.updates].reverse().find((u) => u.sessionUpdate === "plan");
    const todo = plan && plan.sessionUpdate === "plan" && plan.entries.length
      ? plan.entries.map((e) => `- [${e.status}] ${e.content}`).join("\n")
      : undefined;
    let r;
    // `PreCompact` hooks run first (they cannot stop it; core/session/hooks.ts).
    await o.hooks?.preCompact?.(a.why === "manual" ? "manual" : "auto", a.focus).catch(() => {});
    try {
      r = await summarise({
        client: o.client,
        model: o.model,
        messages: this.messages,
        end: a.end,
        focus: a.focus,
        keep: a.keep,
        todo,
        signal: a.signal,
        onStart: a.onStart && ((turns) => a.onStart!({ turns, before })),
      });
    } catch (e) {
      this.#log(`coyote: context compaction failed: ${(e as Error)?.message ?? e}`);
      return {
        compacted: false,
        reason: `the summary failed: ${(e as Error)?.message ?? e}`,
        turns: 0,
        before,
        after: before,
      };
    }
    if (!r) return { compacted: false, reason: "too few turns", turns: 0, before, after: before };
    if (a.usage && r.usage) {
      a.usage.prompt_tokens += r.usage.prompt_tokens ?? 0;
      a.usage.completion_tokens += r.usage.completion_tokens ?? 0;
      a.usage.total_tokens += r.usage.total_tokens ??
        (r.usage.prompt_tokens ?? 0) + (r.usage.completion_tokens ?? 0);
    }
    this.messages.splice(0, this.messages.length, ...r.messages);
    o.transcript?.compaction(this.messages, r.turnStart, r.summary);
    this.#lastUsed = 0;
    const after = this.#estimate();
    if (a.why !== "manual") {
      this.#log(
        `coyote: context compacted (${a.why}): ${r.turns} earlier turn(s) summarised, ~${before} → ~${after} tokens`,
      );
    }
    const ev: EngineEvent = {
      sessionUpdate: "usage_update",
      used: after,
      size: o.contextWindow ?? 128_000,
      _meta: { compaction: { reason: a.why, turns: r.turns, before, after } },
    };
    if (a.emit) a.emit(ev);
    else this.#record(ev, null);
    return {
      compacted: true,
      turns: r.turns,
      before,
      after,
      summary: r.summary,
      usage: r.usage,
      turnStart: r.turnStart,
    };
  }

  /**
   * `/compact [focus]`: summarises all but the last turns now (between turns). `onStart` is
   * called once the turns to summarise are known, before the summary request (a progress line).
   * @throws when a turn is running.
   */
  async compact(
    opts: {
      focus?: string;
      signal?: AbortSignal;
      keep?: number;
      onStart?: (info: { turns: number; before: number }) => void;
    } = {},
  ): Promise<CompactionResult> {
    if (this.#running) throw new Error("a turn is running; compact after it ends");
    this.#running = true;
    try {
      this.#fitModel();
      const { turnStart: _t, ...r } = await this.#compact({ ...opts, why: "manual" });
      return r;
    } finally {
      this.#running = false;
    }
  }

  /** The model's capabilities for this turn (it may have changed), and a window learned from an error. */
  #fitModel() {
    const o = this.opts;
    const info = o.modelInfo?.(o.model);
    if (info) {
      o.contextWindow = info.contextWindow;
      o.images = info.images;
      o.maxOutputTokens = info.maxOutputTokens;
    }
    const learned = this.#learnedWindow;
    if (learned?.model === o.model && learned.tokens < (o.contextWindow ?? Infinity)) {
      o.contextWindow = learned.tokens;
    }
  }

  /** After an overflow: learn the window the server named, shrink tool results (core/engine/context.ts). */
  #shrinkForOverflow(turnStart: number, f: ProviderFault): boolean {
    const o = this.opts;
    if (f.contextWindow && f.contextWindow < (o.contextWindow ?? Infinity)) {
      o.contextWindow = f.contextWindow;
      this.#learnedWindow = { model: o.model, tokens: f.contextWindow };
    }
    const ok = shrinkForOverflow(this.messages, turnStart, o.contextWindow, o.transcript);
    if (ok) {
      this.#log(
        "coyote: the request did not fit the model's context window; retrying once with the largest tool results shortened",
      );
    }
    return ok;
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
}

/** True when the turn's usage (or its tree's, `budget.tree`) reached its token or USD budget (EngineOptions.budget). */
function overBudget(b: EngineOptions["budget"], usage: TurnUsage): boolean {
  if (!b) return false;
  // An agent tree's engines spend from one budget: its meter holds the tree's totals.
  const tokens = b.tree ? b.tree.tokens() : usage.total_tokens;
  if (b.tokens !== undefined && tokens >= b.tokens) return true;
  if (b.usd === undefined) return false;
  const cost = b.tree ? b.tree.usd() : costUsd(usage, b.price?.());
  return cost !== undefined && cost >= b.usd;
}
