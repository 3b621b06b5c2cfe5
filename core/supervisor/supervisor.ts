/**
 * The supervisor of one session: the sub-agents it spawned in the current turn.
 *
 * - `spawn` returns an id (`<agent>-<8 hex>`) at once; the child — a fresh Session on the same
 *   Workspace with its own definition's instructions and tools, the parent's policy narrowed —
 *   runs concurrently. Beyond `max_concurrent_agents` spawns queue and start as others end.
 *   Refusals (not allowed to spawn, not in `spawnable_agents` nor a custom agent under
 *   `spawn_custom_agents` — core/supervisor/spawnable.ts —, unknown agent, `max_agent_depth`
 *   reached, `max_spawns_per_turn` children already spawned in this turn, `max_live_agents`
 *   sessions already live in the whole tree — core/supervisor/tree.ts) throw {@link SpawnRefused}
 *   with the reason and how to raise the limit. A child may start in its own git worktree (the
 *   spawn's `worktree` flag, the agent's `worktree` setting; ./worktree.ts `placeRun`): the
 *   session opens there, and each run's change comes back as a patch applied to the parent's
 *   tree or reported with its conflicts (the result's last line and a `worktree` event).
 * - A child's envelopes flow into the parent's current stream (their `parent_id` is the
 *   parent's agent id); its permission requests and questions go to the root frontend
 *   (core/supervisor/escalation.ts).
 * - `collect` waits for one child or all uncollected ones; the result is the child's final
 *   answer, condensed past `summarization_threshold` (the full text stays in its transcript).
 * - `send` resumes a child that ended (completed or failed) with a follow-up user message: the
 *   same session (its conversation intact, its transcript continued, its `agent_id` in the
 *   events), again a run of this turn (queued, concurrency, spawn and live-agent caps as a
 *   spawn). Ended children's sessions stay open for it across the parent's turns, until
 *   {@link Supervisor.closeChildren} (the parent's close); a cancelled child is not resumable.
 * - `cancel` aborts a child's turn, which cancels its own children (cascade) and kills the
 *   processes its tools started; cancelling the parent's turn cancels every child.
 * - Guardrail (`beforeTurnEnd`): a turn that would end with uncollected children is reminded
 *   {@link MAX_PENDING_REMINDERS} times, then they are cancelled.
 * - `endTurn` rolls the children's usage and denied actions up (each denial tagged with the
 *   `agent_id` that asked; a grandchild's keeps its own) and lists them for `turn_ended.agents`.
 * @module
 */
import type {
  AgentRunSummary,
  AgentSpec,
  DeniedAction,
  EngineEvent,
  EnvelopeSink,
  EventEnvelope,
  GateOutcome,
  TurnResult,
  TurnUsage,
} from "../protocol/types.ts";
import type { ChildSessionOptions, SupervisedSession } from "./types.ts";
import { transcriptPath } from "../transcript/store.ts";
import { condense, stopNote } from "./summary.ts";
import { type AgentLimits, limitsOf, MAX_PENDING_REMINDERS } from "./limits.ts";
import type { LiveAgentBudget } from "./tree.ts";
import { spawnVerdict } from "./spawnable.ts";
import type { GateKeeper } from "./gate_keeper.ts";
import type { WorktreeRun } from "./worktree.ts";
import { addUsage, zeroUsage } from "./usage.ts";
export { addUsage, withChildRuns } from "./usage.ts";

/** A spawn the supervisor refused; the message says why (it becomes the tool error). */
export class SpawnRefused extends Error {
  override name = "SpawnRefused";
}

/** One child of the current turn (`S`: the session type of the tree). */
/** (WorktreeRun: the spawn's `worktree` flag, its own git worktree and its last outcome.) */
export interface ChildRun<S extends SupervisedSession = SupervisedSession> extends WorktreeRun {
  id: string;
  agent: string;
  prompt: string;
  status: AgentRunSummary["status"];
  /** The parent's call that started the current run: `agent__spawn`, or `agent__send` (resumed). */
  toolCallId: string;
  session?: S;
  /** The parent link its session was opened with; a follow-up re-points it (`send`). */
  link?: { session: S; toolCallId: string; agentId: string };
  ctrl: AbortController;
  queuedAt: number;
  startedAt?: number;
  endedAt?: number;
  result?: TurnResult;
  /** Set when the child could not start (e.g. its session failed to open). */
  error?: string;
  collected: boolean;
  /** Resolves when the child ended (any status). */
  done: Promise<void>;
  finish: () => void;
  /** What it is doing now: title of its last tool call. */
  activity?: string;
}

/** What the supervisor needs from its session (`S`: the session type, core/supervisor/types.ts). */
export interface SupervisorHost<S extends SupervisedSession = SupervisedSession> {
  /** The owning session (set once it exists). */
  owner(): S;
  /** Opens a child session (core/session/conversation.ts `openSession` on the owner's workspace). */
  open(opts: ChildSessionOptions<S>): Promise<S>;
  /** The child's permission resolver and host services (the root's, escalating). */
  childWiring(def: AgentSpec): Pick<ChildSessionOptions<S>, "permission" | "host" | "variables">;
  /** Depth cap inherited from the ancestors (min of their `max_agent_depth`). */
  depthCap: number;
  /**
   * Children-at-once cap inherited from the ancestors (min of their `max_concurrent_agents`;
   * the root: Infinity): a child's own definition can lower its limit, never raise it.
   */
  concurrencyCap: number;
  /** The live-agent budget of this session's whole tree (shared with every session in it). */
  tree: LiveAgentBudget;
  log(line: string): void;
}

function randomHex8(): string {
  return crypto.getRandomValues(new Uint32Array(1))[0].toString(16).padStart(8, "0");
}

/** See the module doc. */
export class Supervisor<S extends SupervisedSession = SupervisedSession> {
  readonly runs = new Map<string, ChildRun<S>>();
  /** Children that ended with an open session: resumable by {@link send} in any later turn. */
  readonly #ended = new Map<string, ChildRun<S>>();
  #sink: EnvelopeSink | null = null;
  #reminders = 0;
  #turnSignal: AbortSignal | null = null;
  #onTurnAbort = () => this.cancelAll("the parent's turn was cancelled");
  /** The gates (./gate_keeper.ts), loaded at the first turn of an agent that may spawn. */
  #gates: Promise<GateKeeper> | null = null;
  /** The request's first response text, until its first tool call or its end. */
  #first = { text: "", closed: false };
  #emit: ((ev: EngineEvent) => void) | null = null;

  constructor(readonly host: SupervisorHost<S>) {}

  get limits(): AgentLimits {
    return limitsOf(this.host.owner().definition);
  }

  /** The depth cap this session passes to its children. */
  childDepthCap(def: AgentSpec): number {
    return Math.min(this.host.depthCap, limitsOf(def).maxDepth);
  }

  /**
   * Starts a turn: children's events go to `sink`; aborting `signal` cancels them all; the gates'
   * decisions (./gate_keeper.ts) go to `emit`, the owner's own stream.
   */
  beginTurn(sink: EnvelopeSink, signal: AbortSignal, emit?: (ev: EngineEvent) => void): void {
    const owner = this.host.owner();
    if (owner.definition.can_spawn_agents) {
      this.#gates ??= import("./gate_keeper.ts").then((m) =>
        new m.GateKeeper(owner.agent, owner.workspace.app.config?.gates, owner.workspace.cwd)
      );
      void this.#gates.then((g) => g.beginRequest(emit ?? null));
    }
    this.#first = { text: "", closed: false };
    this.#emit = emit ?? null;
    this.runs.clear();
    this.#reminders = 0;
    this.#sink = sink;
    this.#turnSignal = signal;
    signal.addEventListener("abort", this.#onTurnAbort, { once: true });
  }

  /**
   * Ends a turn: the children's usage and denied actions (rolled up, so a headless run's
   * `result.denied` lists what any agent of the tree was refused) and their summaries.
   */
  endTurn(): { usage: TurnUsage; denied: DeniedAction[]; agents: AgentRunSummary[] } {
    this.#turnSignal?.removeEventListener("abort", this.#onTurnAbort);
    this.#turnSignal = null;
    this.#sink = null;
    const usage = zeroUsage();
    const denied: DeniedAction[] = [];
    const agents: AgentRunSummary[] = [];
    for (const r of this.runs.values()) {
      const u = r.result?.usage ?? zeroUsage();
      addUsage(usage, u);
      for (const d of r.result?.denied ?? []) denied.push({ ...d, agent_id: d.agent_id ?? r.id });
      agents.push(this.summary(r));
    }
    return { usage, denied, agents };
  }

  summary(r: ChildRun<S>): AgentRunSummary {
    return {
      agent_id: r.id,
      agent: r.agent,
      session_id: r.session?.id ?? "",
      parent_id: this.host.owner().agentId,
      status: r.status,
      ...(r.result ? { stop_reason: r.result.stopReason } : {}),
      usage: r.result?.usage ?? zeroUsage(),
      ...(r.startedAt !== undefined
        ? { duration_ms: Math.round((r.endedAt ?? performance.now()) - r.startedAt) }
        : {}),
    };
  }

  #forward = (env: EventEnvelope) => {
    const run = this.runs.get(env.agent_id);
    if (run && env.update.sessionUpdate === "tool_call") run.activity = env.update.title;
    const sink = this.#sink;
    if (!sink) return;
    try {
      sink(env);
    } catch (e) {
      this.host.log(`coyote: event sink failed: ${(e as Error).message}`);
    }
  };

  /** The owner's own events of the turn: the first response's text, for the intent gate. */
  observe(ev: EngineEvent): void {
    if (this.#first.closed || !this.#gates) return;
    if (ev.sessionUpdate === "agent_message_chunk" && ev.content.type === "text") {
      this.#first.text += ev.content.text;
    } else if (ev.sessionUpdate === "tool_call") this.#closeFirst();
  }

  #closeFirst(): Promise<void> {
    if (this.#first.closed || !this.#gates) return Promise.resolve();
    this.#first.closed = true;
    const text = this.#first.text;
    return this.#gates.then((g) => g.firstResponse(text));
  }

  /** The gates' refusal of spawning `agent` (a plan review REJECT stands), or null. */
  async gateSpawn(agent: string): Promise<string | null> {
    await this.#closeFirst();
    return this.#gates ? (await this.#gates).beforeSpawn(agent) : null;
  }

  /** The request's gate outcome (./gate_keeper.ts `outcome`), or null when no gates apply. */
  async gateOutcome(): Promise<GateOutcome | null> {
    return this.#gates ? (await this.#gates).outcome() : null;
  }

  /** Counts a spawn for the gates (implementation agents of the request). */
  gateSpawned(run: ChildRun<S>): void {
    void this.#gates?.then((g) => g.spawned(run.agent, run.id));
  }

  /** The gates' notes on collected runs (appended to the agent__collect result), or "". */
  async gateCollected(runs: ChildRun<S>[]): Promise<string> {
    if (!this.#gates) return "";
    await this.#closeFirst();
    const g = await this.#gates;
    return await g.collected(runs.map((r) => ({ ...r, text: r.result?.text ?? "" })));
  }

  running(): ChildRun<S>[] {
    return [...this.runs.values()].filter((r) => r.status === "running");
  }

  /**
   * Spawns a child (see the module doc); returns its run at once.
   * @throws SpawnRefused with the reason.
   */
  spawn(agentName: string, prompt: string, toolCallId: string, worktree?: boolean): ChildRun<S> {
    const owner = this.host.owner();
    const def = owner.definition;
    if (!def.can_spawn_agents) {
      throw new SpawnRefused(`agent ${owner.agent} may not spawn sub-agents (can_spawn_agents)`);
    }
    const verdict = spawnVerdict(
      { ...def, name: owner.agent },
      agentName,
      owner.workspace.agents,
      owner.workspace.trust.trusted,
    );
    if (!verdict.ok) throw new SpawnRefused(verdict.reason);
    const child = owner.workspace.agents.get(agentName);
    if (!child) throw new SpawnRefused(owner.workspace.agents.unknown(agentName));
    const depth = owner.origin.depth + 1;
    if (depth > this.host.depthCap) {
      throw new SpawnRefused(
        `max_agent_depth ${this.host.depthCap} reached: ${owner.agentId} is at depth ${owner.origin.depth}, a child would be at depth ${depth}`,
      );
    }
    const { done, finish } = this.#admit();
    let id = `${agentName}-${randomHex8()}`;
    while (this.runs.has(id) || this.#ended.has(id)) id = `${agentName}-${randomHex8()}`;
    const run: ChildRun<S> = {
      id,
      agent: agentName,
      prompt,
      status: "queued",
      toolCallId,
      ctrl: new AbortController(),
      queuedAt: performance.now(),
      collected: false,
      done,
      finish,
      inWorktree: worktree,
    };
    this.runs.set(id, run);
    this.#pump();
    return run;
  }

  /**
   * The caps a new run of this turn passes (the turn not cancelled, `max_spawns_per_turn`, a
   * slot of the tree's live-agent budget); its `done` promise and `finish` (which gives the
   * slot back).
   * @throws SpawnRefused with the reason.
   */
  #admit(): { done: Promise<void>; finish: () => void } {
    const owner = this.host.owner();
    if (this.#turnSignal?.aborted) throw new SpawnRefused("the turn is being cancelled");
    const perTurn = this.limits.maxSpawnsPerTurn;
    if (this.runs.size >= perTurn) {
      throw new SpawnRefused(
        `max_spawns_per_turn ${perTurn} reached: ${owner.agentId} already spawned ${this.runs.size} sub-agents in this turn; collect their results (agent__collect) and answer with what you have. (A user can raise max_spawns_per_turn in the definition of agent ${owner.agent}.)`,
      );
    }
    const slot = this.host.tree.acquire();
    if ("refused" in slot) throw new SpawnRefused(slot.refused);
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    // Ending (any way) gives the tree's slot back.
    const finish = () => {
      slot.release();
      resolve();
    };
    return { done, finish };
  }

  /**
   * `agent__send`: resumes the ended child `id` (this turn's or an earlier one's) with `message`
   * as its next user message, in the same session; returns its run at once (collect it as a
   * spawn). Counts as a run of this turn (`max_spawns_per_turn`, the live-agent budget,
   * `max_concurrent_agents`); the child's own limits (`max_turns` …) apply to its new turn.
   * `toolCallId` (`agent__send`) becomes the run's call (`parent_tool_call_id`, `rootToolCallId`).
   * @throws SpawnRefused when `id` is unknown, still queued or running, or was cancelled.
   */
  send(id: string, message: string, toolCallId: string): ChildRun<S> {
    const live = this.runs.get(id);
    if (live && (live.status === "queued" || live.status === "running")) {
      throw new SpawnRefused(
        `${id} is still ${live.status}: collect its result (agent__collect) before sending it a follow-up`,
      );
    }
    const run = this.#ended.get(id);
    if (!run) {
      const known = [...this.#ended.keys()];
      throw new SpawnRefused(
        live
          ? `${id} cannot be resumed: it ${
            live.status === "cancelled" ? "was cancelled" : "never started"
          }; spawn a new sub-agent instead`
          : `no ended sub-agent with id "${id}"${
            known.length ? `; resumable: ${known.join(", ")}` : " (none to resume)"
          }`,
      );
    }
    const wasInTurn = this.runs.delete(id);
    let admitted;
    try {
      admitted = this.#admit();
    } catch (e) {
      if (wasInTurn) this.runs.set(id, run);
      throw e;
    }
    this.#ended.delete(id);
    run.toolCallId = run.link!.toolCallId = toolCallId;
    const origin = run.session?.origin as { rootToolCallId?: string } | undefined;
    if (origin && this.host.owner().origin.depth === 0) origin.rootToolCallId = toolCallId;
    Object.assign(run, {
      prompt: message,
      status: "queued",
      ctrl: new AbortController(),
      queuedAt: performance.now(),
      startedAt: undefined,
      endedAt: undefined,
      result: undefined,
      error: undefined,
      collected: false,
      activity: undefined,
      ...admitted,
    });
    this.runs.set(id, run);
    this.#pump();
    return run;
  }

  /** Closes the sessions of ended children kept for {@link send} (the parent's close). */
  async closeChildren(): Promise<void> {
    const kept = [...this.#ended.values()];
    this.#ended.clear();
    await Promise.all(
      kept.map((r) =>
        r.session?.close().catch(() => {}).then(() =>
          r.worktree && import("./worktree.ts").then((w) => w.dropWorktree(r))
        )
      ),
    );
  }

  /**
   * Children this session runs at once: its agent's `max_concurrent_agents`, never more than
   * any ancestor's (a child definition asking for a thousand does not widen the tree).
   */
  maxConcurrent(): number {
    return Math.min(this.limits.maxConcurrent, this.host.concurrencyCap);
  }

  /** Starts queued children while fewer than {@link maxConcurrent} run. */
  #pump(): void {
    const max = this.maxConcurrent();
    let running = 0;
    for (const r of this.runs.values()) if (r.status === "running") running++;
    for (const r of this.runs.values()) {
      if (running >= max) return;
      if (r.status === "queued") {
        running++;
        void this.#start(r);
      }
    }
  }

  async #start(run: ChildRun<S>): Promise<void> {
    run.status = "running";
    run.startedAt = performance.now();
    const owner = this.host.owner();
    const def = owner.workspace.agents.get(run.agent)!;
    const coders =
      [...this.runs.values()].filter((r) =>
        r !== run && r.agent === "coder" && (r.status === "running" || r.status === "queued")
      ).length;
    try {
      // The first run may get its own git worktree, the child's workspace root (./worktree.ts).
      if (!run.session) {
        const w = await import("./worktree.ts");
        await w.placeRun(run, def.worktree, coders, owner.workspace, this.#emit);
      }
      // A follow-up (`send`) prompts the session it already has.
      run.link ??= { session: owner, toolCallId: run.toolCallId, agentId: run.id };
      run.session ??= await this.host.open({
        ...this.host.childWiring(def),
        agent: run.agent,
        parent: run.link,
        ...(run.worktree ? { cwd: run.worktree.cwd } : {}),
      });
      // Cancelled while it opened: the turn still runs, already cancelled, so the child's
      // transcript records its task and a cancelled turn end, and the frontend sees it end.
      run.result = await run.session.prompt(run.prompt, {
        signal: run.ctrl.signal,
        onEvent: this.#forward,
      });
      run.status = run.result.stopReason === "cancelled"
        ? "cancelled"
        : run.result.error
        ? "failed"
        : "completed";
    } catch (e) {
      run.error = (e as Error)?.message ?? String(e);
      run.status = run.ctrl.signal.aborted ? "cancelled" : "failed";
    } finally {
      run.endedAt = performance.now();
      // An ended child's session stays open for a follow-up (`send`); a cancelled one closes.
      const kept = !!run.session && run.status !== "cancelled";
      if (kept) this.#ended.set(run.id, run);
      else await run.session?.close().catch(() => {});
      if (run.worktree) await (await import("./worktree.ts")).bringBack(run, kept, this.#emit);
      run.finish();
      this.#pump();
    }
  }

  /** The result text of a child for its parent (condensed past the threshold). */
  resultText(run: ChildRun<S>): string {
    if (run.status === "queued" || run.status === "running") {
      return `${run.id} is ${run.status}${run.activity ? ` (last: ${run.activity})` : ""}.`;
    }
    const full = run.result?.text ?? "";
    const limit =
      limitsOf(run.session?.definition ?? { name: "", description: "", instructions: "" })
        .summarizationThreshold;
    const path = run.session
      ? transcriptPath(this.host.owner().workspace.app.dataDir, run.session.id)
      : "";
    const body = condense(full, limit, path);
    const head = run.status === "completed"
      ? `${run.id} completed${stopNote(run.result?.stopReason)}:`
      : run.status === "cancelled"
      ? `${run.id} was cancelled${full ? "; its answer so far:" : "."}`
      : `${run.id} failed: ${run.result?.error?.message ?? run.error ?? "unknown error"}${
        full ? "; its answer so far:" : ""
      }`;
    const note = run.worktreeNote ? `\n${run.worktreeNote}` : "";
    return (full ? `${head}\n${body}` : head) + note;
  }

  /** `agent__check`: status, or the result when it ended (then it counts as collected). */
  check(id: string): ChildRun<S> {
    const run = this.#get(id);
    if (run.status !== "queued" && run.status !== "running") run.collected = true;
    return run;
  }

  /**
   * `agent__collect`: waits until `id` (or every uncollected child) ended, or `timeoutMs`
   * passed, or `signal` aborted; marks the ended ones collected and returns them all.
   */
  async collect(
    id: string | undefined,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<ChildRun<S>[]> {
    const runs = id ? [this.#get(id)] : [...this.runs.values()].filter((r) => !r.collected);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort = () => {};
    await Promise.race([
      Promise.all(runs.map((r) => r.done)),
      new Promise((r) => (timer = setTimeout(r, timeoutMs))),
      new Promise((r) => {
        onAbort = () => r(null);
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    for (const r of runs) if (r.status !== "queued" && r.status !== "running") r.collected = true;
    return runs;
  }

  /** `agent__cancel`: cancels a child (and through its turn, its descendants). */
  async cancel(id: string): Promise<ChildRun<S>> {
    const run = this.#get(id);
    this.#abort(run, "cancelled by its parent");
    await run.done;
    run.collected = true;
    return run;
  }

  #abort(run: ChildRun<S>, why: string): void {
    if (run.status === "queued") {
      run.status = "cancelled";
      run.error = why;
      run.endedAt = performance.now();
      run.finish();
      return;
    }
    run.ctrl.abort(new Error(why));
  }

  /** Cancels every child that has not ended. */
  cancelAll(why: string): void {
    for (const r of this.runs.values()) {
      if (r.status === "queued" || r.status === "running") this.#abort(r, why);
    }
  }

  /** Waits (at most `ms`) until every child ended. */
  async settle(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all([...this.runs.values()].map((r) => r.done)),
      new Promise((r) => (timer = setTimeout(r, ms))),
    ]);
    clearTimeout(timer);
  }

  /**
   * The pending-agent guardrail: text to continue the turn with while children are
   * uncollected (at most {@link MAX_PENDING_REMINDERS} times), then it cancels them and
   * returns null.
   */
  async beforeTurnEnd(): Promise<string | null> {
    const pending = [...this.runs.values()].filter((r) => !r.collected);
    if (!pending.length) {
      if (!this.#gates) return null;
      await this.#closeFirst();
      return (await this.#gates).beforeTurnEnd();
    }
    if (this.#reminders < MAX_PENDING_REMINDERS) {
      this.#reminders++;
      const list = pending.map((r) => `${r.id} (${r.agent}, ${r.status})`).join(", ");
      return `<system-reminder>You are about to answer while sub-agents you spawned have not been collected: ${list}. Call agent__collect to wait for their results (or agent__cancel for ones you no longer need) before you give your final answer. Reminder ${this.#reminders} of ${MAX_PENDING_REMINDERS}; after that they are cancelled.</system-reminder>`;
    }
    this.cancelAll("not collected before the parent's turn ended");
    await this.settle(5_000);
    for (const r of pending) r.collected = true;
    return null;
  }

  #get(id: string): ChildRun<S> {
    const run = this.runs.get(id);
    if (!run) {
      const known = [...this.runs.keys()];
      throw new SpawnRefused(
        `no sub-agent with id "${id}" in this turn${
          known.length ? `; known: ${known.join(", ")}` : " (none spawned)"
        }`,
      );
    }
    return run;
  }
}
