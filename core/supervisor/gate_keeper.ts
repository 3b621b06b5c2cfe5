/**
 * The gates of one coordinator session (issue 17; docs/subagents.md "Gates"): the pure decisions
 * of ./gates.ts applied to its requests (one request = one turn). Loaded by the supervisor when a
 * turn of an agent that may spawn starts (core/supervisor/supervisor.ts `beginTurn`); inactive
 * unless the agent is one of `gates.coordinators` (default `[sisyphus]`).
 *
 * Every decision is an event in the turn's stream (an `agent_thought_chunk` whose
 * `_meta.coyote.event` is `intent` or `gate`, like `auto_continue_stopped`):
 * - `intent` `{class, text}` when the first response of a request states the Phase 0 line; else a
 *   `gate` `{gate: "intent", decision: "nudge"}` and ONE system note, appended to the next
 *   agent__collect result of that request (never a forced extra request).
 * - `gate` `{gate: "plan_review"}`: a collected child's `PLAN_REVIEW: REJECT` blocks spawning
 *   `gates.implementation_agents` in this request (`decision: "block"` at each refused spawn)
 *   until a later `PLAN_REVIEW: OKAY` (`decision: "allow"`).
 * - `gate` `{gate: "reviewers", reviewers: [...]}`: after an implementation child succeeds, the
 *   reviewers the changed paths call for (./gates.ts `reviewerTriggers`), in the seeds' order
 *   (code-reviewer → adversary → security-reviewer), told to the coordinator in the agent__collect
 *   result (`decision: "require"`). They run one after another: spawning a required reviewer
 *   before the ones ahead of it were collected is refused with the next one's name
 *   (`decision: "block"`); each collected one is `decision: "next"` (more to run) or
 *   `"satisfied"`. A new implementation resets the list. An implementation child that failed
 *   (status `failed`, or its result's marker `CODER_FAILED`/`STEP_FAILED`/`…_REJECTED`: ./gates.ts
 *   `implementationFailure`) requires none by itself (`decision: "none"`; a list that stands from
 *   an earlier success stands) — its changes stay in the tree and count at the next success.
 * - `gate` `{gate: "worktree"}`: a child's worktree patch that conflicted (`block`, with `files`
 *   and `patch`) stands until resolved (`allow`, with `lifted`; ./gate_worktree.ts).
 * - `gate` `{gate: "security", verdict: PASS|FAIL, counts}`: a collected `security-reviewer`'s
 *   findings under `gates.posture` (`decision: "pass" | "fail"`); a FAIL stands until a later
 *   PASS. `gate` `{gate: "code_review"}`: a collected `code-reviewer`'s `[critical]` findings
 *   (`block`, lifted by a later review without one: `allow`) — Critical blocks in every posture.
 * - The completion gate, at the coordinator's end of turn ({@link GateKeeper.beforeTurnEnd}): each
 *   standing gate — required reviewers not run (`reviewers`), the last adversary verdict
 *   DIVERGES/UNMET (`adversary`), a security FAIL (`security`), a Critical code-review finding
 *   (`code_review`), an unresolved worktree conflict (`worktree`) — continues the turn once per
 *   state with a note naming what to do next (`decision: "continue"`, the seed's stop hook: the
 *   first stop is blocked with the reason). If the model ends again on the same state the request
 *   ends incomplete (`decision: "incomplete"`; {@link GateKeeper.outcome} → the turn result's
 *   `gates.complete: false`). The user's override (`gates.allow_divergent_completion`,
 *   `allow_insecure_completion`, `allow_unreviewed_completion`, `allow_conflicted_completion`)
 *   lets the turn end and is recorded (`decision: "override"`, and in `gates.overrides`).
 * @module
 */
import type { EngineEvent, GateOutcome } from "../protocol/types.ts";
import {
  type GatesConfig,
  type GateSettings,
  gateSettings,
  implementationFailure,
  parseAdversary,
  parseFindings,
  parseIntent,
  parsePlanReview,
  type ReviewerTrigger,
  reviewerTriggers,
  securityVerdict,
} from "./gates.ts";
import type { WorktreeOutcome } from "./worktree.ts";
import { ConflictGate } from "./gate_worktree.ts";

/** A child run as the gates read it. */
export interface GatedRun {
  id: string;
  agent: string;
  status: string;
  text: string;
  /** Its change's last outcome when it worked in its own git worktree (./worktree.ts). */
  worktreeOutcome?: WorktreeOutcome;
}

/** The text of a system note for the model. */
const note = (s: string) => `<system-reminder>${s}</system-reminder>`;

/** A gate that stands at the end of a turn (see {@link GateKeeper.beforeTurnEnd}). */
interface Standing {
  gate: "reviewers" | "adversary" | "security" | "code_review" | "worktree";
  /** Identifies the state: the end is continued once per key and request. */
  key: string;
  reason: string;
  /** What the coordinator is told to do. */
  todo: string;
  /** Quoted after the note (the adversary's complaints, verbatim). */
  detail?: string;
  /** The override setting that lets the turn end on it, and whether it is set. */
  override: { setting: string; on: boolean };
  extra: Record<string, unknown>;
}

/** See the module doc. */
export class GateKeeper {
  readonly settings: GateSettings;
  /** Whether the gates apply to this session's agent. */
  readonly active: boolean;
  #emit: ((ev: EngineEvent) => void) | null = null;
  // Per request.
  #rejected: string | null = null;
  #nudge: string | null = null;
  #implementers = new Set<string>();
  /** Standing keys whose end of turn was continued (or overridden, or ended incomplete). */
  #held = new Set<string>();
  #overridden = new Map<string, { gate: string; reason: string }>();
  #incomplete = new Set<string>();
  // Per session: the change's state.
  #divergent: { verdict: string; complaints: string; by: string } | null = null;
  #lastCoder: string | null = null;
  /** The reviewers the last implementation requires, in order, and those collected since. */
  #required: { after: string; list: ReviewerTrigger[]; ran: Map<string, string> } | null = null;
  #insecure: { by: string; reason: string; verdict: string } | null = null;
  #critical: { by: string; count: number } | null = null;
  /** Unresolved worktree conflicts (./gate_worktree.ts). */
  #conflicts: ConflictGate;

  constructor(
    agent: string,
    raw: GatesConfig | undefined,
    readonly cwd: string | undefined,
  ) {
    this.settings = gateSettings(raw);
    this.active = this.settings.coordinators.includes(agent);
    this.#conflicts = new ConflictGate(cwd, (d, why, x) => this.#gate("worktree", d, why, x));
  }

  /** A request starts: per-request state reset; decisions go to `emit` (the owner's stream). */
  beginRequest(emit: ((ev: EngineEvent) => void) | null): void {
    this.#emit = emit;
    this.#rejected = null;
    this.#nudge = null;
    this.#implementers.clear();
    this.#held.clear();
    this.#overridden.clear();
    this.#incomplete.clear();
  }

  #event(event: "intent" | "gate", data: Record<string, unknown>): void {
    this.#emit?.({
      sessionUpdate: "agent_thought_chunk",
      // Readable where a client shows thought chunks (ACP); the data is in `_meta.coyote`.
      content: {
        type: "text",
        text: event === "intent"
          ? `intent (${data.class}): ${data.text}\n`
          : `gate ${data.gate}: ${data.decision}${data.reason ? ` — ${data.reason}` : ""}\n`,
      },
      _meta: { coyote: { event, ...data } },
    } as EngineEvent);
  }

  #gate(gate: string, decision: string, reason: string, extra: Record<string, unknown> = {}) {
    this.#event("gate", { gate, decision, reason, ...extra });
  }

  /** The first response of the request ended with `text`: the intent event, or the one nudge. */
  firstResponse(text: string): void {
    if (!this.active) return;
    const intent = parseIntent(text);
    if (intent) return this.#event("intent", { class: intent.class, text: intent.text });
    this.#nudge = note(
      "Phase 0: your first response in this request did not state the intent line. State it now, in one line: `Intent: <what you heard> — class: <class>`.",
    );
    this.#gate(
      "intent",
      "nudge",
      "the first response of the request has no `Intent: … — class: …` line",
    );
  }

  /** The pending nudge, once (appended to a text tool result). */
  takeNote(): string {
    const n = this.#nudge;
    this.#nudge = null;
    return n ? `\n\n${n}` : "";
  }

  /** The first required reviewer not collected yet, or null. */
  #nextReviewer(): ReviewerTrigger | null {
    const r = this.#required;
    return r?.list.find((t) => !r.ran.has(t.reviewer)) ?? null;
  }

  /**
   * Why spawning `agent` is refused, or null: a PLAN_REVIEW REJECT stands (implementation agents),
   * or `agent` is a required reviewer whose turn has not come (the reviewers ahead of it in the
   * seeds' order were not collected yet).
   */
  beforeSpawn(agent: string): string | null {
    if (!this.active) return null;
    if (this.settings.implementation_agents.includes(agent) && this.#rejected) {
      const reason =
        `plan review gate: ${this.#rejected} answered PLAN_REVIEW: REJECT in this request; revise the plan and have it reviewed again (PLAN_REVIEW: OKAY) before spawning ${agent}; do not implement the rejected plan yourself meanwhile`;
      this.#gate("plan_review", "block", reason, { agent });
      return reason;
    }
    const req = this.#required;
    const next = this.#nextReviewer();
    if (
      req && next && next.reviewer !== agent && !req.ran.has(agent) &&
      req.list.some((t) => t.reviewer === agent)
    ) {
      const reason = `review order gate: the reviewers run in this order, one after another: ${
        req.list.map((t) => t.reviewer).join(" → ")
      }; ${next.reviewer} is next (${next.trigger}: ${next.reason}): spawn it and collect its result before ${agent}`;
      this.#gate("reviewers", "block", reason, { reviewer: agent, next: next.reviewer });
      return reason;
    }
    return null;
  }

  /** Counts a spawned implementation child of this request. */
  spawned(agent: string, id: string): void {
    if (this.active && this.settings.implementation_agents.includes(agent)) {
      this.#implementers.add(id);
    }
  }

  /** Decisions on collected children; returns the notes for the coordinator (or ""). */
  async collected(runs: GatedRun[]): Promise<string> {
    if (!this.active) return this.takeNote();
    const notes: string[] = [];
    for (const r of runs) {
      if (r.status !== "completed" && r.status !== "failed") continue;
      const review = parsePlanReview(r.text);
      if (review === "REJECT") {
        this.#rejected = r.id;
        this.#gate("plan_review", "block", `${r.id}: PLAN_REVIEW: REJECT`, { agent_id: r.id });
        notes.push(
          `Plan review gate: ${r.id} rejected the plan; implementation agents (${
            this.settings.implementation_agents.join(", ")
          }) cannot be spawned until a revised plan gets PLAN_REVIEW: OKAY.`,
        );
      } else if (review === "OKAY") {
        const was = this.#rejected;
        this.#rejected = null;
        this.#gate("plan_review", "allow", `${r.id}: PLAN_REVIEW: OKAY`, {
          agent_id: r.id,
          ...(was ? { lifted: was } : {}),
        });
      }
      const adv = r.agent === "adversary" || /ADVERSARIAL_REVIEW:/.test(r.text)
        ? parseAdversary(r.text)
        : null;
      if (adv) {
        if (adv.verdict === "CONFORMS") {
          const was = this.#divergent;
          this.#divergent = null;
          this.#gate("adversary", "allow", `${r.id}: ADVERSARIAL_REVIEW: CONFORMS`, {
            agent_id: r.id,
            ...(was ? { lifted: was.by } : {}),
          });
        } else {
          this.#divergent = { verdict: adv.verdict, complaints: adv.complaints, by: r.id };
          this.#gate("adversary", "block", `${r.id}: ADVERSARIAL_REVIEW: ${adv.verdict}`, {
            agent_id: r.id,
            verdict: adv.verdict,
          });
        }
      }
      if (r.agent === "security-reviewer" && r.status === "completed") {
        const v = securityVerdict(r.text, this.settings.posture);
        const was = this.#insecure;
        this.#insecure = v.verdict === "FAIL"
          ? { by: r.id, reason: v.reason, verdict: "FAIL" }
          : null;
        this.#gate("security", v.verdict === "PASS" ? "pass" : "fail", v.reason, {
          agent_id: r.id,
          verdict: v.verdict,
          posture: this.settings.posture,
          counts: v.counts,
          ...(was && v.verdict === "PASS" ? { lifted: was.by } : {}),
        });
        notes.push(
          `Security gate (posture ${this.settings.posture}): ${v.verdict} — ${v.reason}.${
            v.verdict === "FAIL"
              ? " The request cannot end as complete until the blocking findings are fixed and a security-reviewer run passes."
              : ""
          }`,
        );
      }
      if (r.agent === "code-reviewer" && r.status === "completed") {
        const n = parseFindings(r.text).Critical;
        const was = this.#critical;
        if (n > 0) {
          this.#critical = { by: r.id, count: n };
          const reason = `${r.id}: ${n} Critical finding(s); Critical blocks in every posture`;
          this.#gate("code_review", "block", reason, { agent_id: r.id, critical: n });
          notes.push(
            `Code review gate: ${reason}. Fix them and have code-reviewer check again before you end as complete.`,
          );
        } else if (was) {
          this.#critical = null;
          this.#gate("code_review", "allow", `${r.id}: no Critical finding`, {
            agent_id: r.id,
            lifted: was.by,
          });
        }
      }
      const rq = this.#required;
      if (rq && rq.list.some((t) => t.reviewer === r.agent)) {
        if (r.status === "completed") {
          rq.ran.set(r.agent, r.id);
          const next = this.#nextReviewer();
          this.#gate(
            "reviewers",
            next ? "next" : "satisfied",
            `${r.agent} ran (${r.id})${
              next
                ? `; next: ${next.reviewer} (${next.trigger}: ${next.reason})`
                : "; every required reviewer ran, in order"
            }`,
            { reviewer: r.agent, agent_id: r.id, ...(next ? { next: next.reviewer } : {}) },
          );
          if (next) {
            notes.push(
              `Review gate: ${r.agent} ran; next: ${next.reviewer} (${next.trigger}: ${next.reason}).`,
            );
          }
        } else {
          notes.push(
            `Review gate: ${r.id} (${r.agent}) failed; it counts only once a run completes — run it again.`,
          );
        }
      }
      if (this.settings.implementation_agents.includes(r.agent) && r.status === "completed") {
        this.#lastCoder = r.id;
      }
      const wt = await this.#conflicts.collected(
        r,
        this.settings.implementation_agents.includes(r.agent) && r.status === "completed" &&
          !implementationFailure(r.status, r.text),
      );
      if (wt) notes.push(wt);
    }
    // The reviewers the change calls for, once per collect: children collected together (the
    // parallel coders) made one change to review, not one list each.
    // A failed implementation (CODER_FAILED, STEP_FAILED, …) calls for no reviewer by itself.
    const impl = runs.filter((r) =>
      this.settings.implementation_agents.includes(r.agent) &&
      (r.status === "completed" || r.status === "failed")
    );
    const coders = impl.filter((r) => !implementationFailure(r.status, r.text));
    for (const r of impl.filter((r) => !coders.includes(r))) {
      this.#gate(
        "reviewers",
        "none",
        `${r.id} ended ${
          implementationFailure(r.status, r.text)
        }: a failed implementation calls for no reviewer by itself (its changes stay in the workspace and count once an implementation succeeds)`,
        { agent_id: r.id, ...(this.#required ? { reviewers: this.#required.list } : {}) },
      );
    }
    if (coders.length) {
      const t = await this.#triggers(coders.at(-1)!.id);
      if (t) notes.push(t);
    }
    const text = notes.length ? `\n\n${note(notes.join("\n"))}` : "";
    return text + this.takeNote();
  }

  async #triggers(after: string): Promise<string | null> {
    if (!this.cwd) return null;
    const changed = await changedPaths(this.cwd);
    let spec: string | null = null;
    for (const f of this.settings.spec_files) {
      if (await Deno.stat(`${this.cwd}/${f}`).then(() => true, () => false)) {
        spec = f;
        break;
      }
    }
    const list = reviewerTriggers(changed, this.#implementers.size, spec, this.settings);
    this.#required = list.length ? { after, list, ran: new Map() } : null;
    this.#gate(
      "reviewers",
      list.length ? "require" : "none",
      list.length
        ? list.map((t) => `${t.reviewer}: ${t.reason}`).join("; ")
        : `${changed.length} changed file(s): no reviewer trigger`,
      { reviewers: list, changed_files: changed.length },
    );
    if (!list.length) return null;
    const sec = list.some((t) => t.reviewer === "security-reviewer")
      ? ` security-reviewer's findings are judged under posture ${this.settings.posture} (Critical blocks in every posture).`
      : "";
    return `Review gate: run these reviewers in this order, one after another (spawn one, collect it, then the next), before you report the work as done: ${
      list.map((t, i) => `${i + 1}. ${t.reviewer} (${t.trigger}: ${t.reason})`).join("; ")
    }.${sec}`;
  }

  /** The gates standing now, in the order the coordinator deals with them. */
  #standing(): Standing[] {
    const s = this.settings;
    const out: Standing[] = [];
    const next = this.#nextReviewer();
    if (next && this.#required) {
      const rest = this.#required.list.filter((t) => !this.#required!.ran.has(t.reviewer));
      out.push({
        gate: "reviewers",
        key: `reviewers:${this.#required.after}:${next.reviewer}`,
        reason: `required reviewer(s) not run: ${rest.map((t) => t.reviewer).join(" → ")}`,
        todo: `spawn ${next.reviewer} now (${next.trigger}: ${next.reason}), collect it${
          rest.length > 1 ? `, then ${rest.slice(1).map((t) => t.reviewer).join(", then ")}` : ""
        }`,
        override: { setting: "allow_unreviewed_completion", on: s.allow_unreviewed_completion },
        extra: { next: next.reviewer, reviewers: rest.map((t) => t.reviewer) },
      });
    }
    const d = this.#divergent;
    if (d) {
      out.push({
        gate: "adversary",
        key: `adversary:${d.by}`,
        reason: `the last adversary verdict (${d.by}) is ${d.verdict}`,
        todo: `send its complaints verbatim to the coder that made the change (agent__send${
          this.#lastCoder ? ` {agent_id: "${this.#lastCoder}"}` : ""
        }), collect it and have the adversary check again — or say plainly why you stop with the change diverging`,
        detail: d.complaints || undefined,
        override: { setting: "allow_divergent_completion", on: s.allow_divergent_completion },
        extra: { verdict: d.verdict },
      });
    }
    const f = this.#insecure;
    if (f) {
      out.push({
        gate: "security",
        key: `security:${f.by}`,
        reason: `security review ${f.by} is FAIL under posture ${s.posture}: ${f.reason}`,
        todo:
          `have the coder fix the blocking findings, then run security-reviewer again — or say plainly why you stop with the review failing`,
        override: { setting: "allow_insecure_completion", on: s.allow_insecure_completion },
        extra: { verdict: "FAIL", posture: s.posture },
      });
    }
    for (const w of this.#conflicts.open()) {
      out.push({
        gate: "worktree",
        key: `worktree:${w.id}:${w.patch}`,
        reason: `${w.id}'s worktree patch conflicts and was not applied (${
          w.files.join(", ")
        }; patch ${w.patch})`,
        todo:
          `apply or merge that patch into the workspace (e.g. \`git apply --3way ${w.patch}\` and resolve), or re-run the coder on the current tree for ${
            w.files.join(", ")
          } (agent__send {agent_id: "${w.id}"} or a new coder) — or say plainly why you stop with its change not applied`,
        override: { setting: "allow_conflicted_completion", on: s.allow_conflicted_completion },
        extra: { agent_id: w.id, files: w.files, patch: w.patch },
      });
    }
    const c = this.#critical;
    if (c) {
      out.push({
        gate: "code_review",
        key: `code_review:${c.by}`,
        reason:
          `code review ${c.by} has ${c.count} Critical finding(s); Critical blocks in every posture`,
        todo: `have the coder fix them, then run code-reviewer again`,
        override: { setting: "allow_insecure_completion", on: s.allow_insecure_completion },
        extra: { critical: c.count },
      });
    }
    return out;
  }

  /**
   * At the coordinator's end of turn (no child left uncollected): the continuation note while a
   * gate stands — once per standing state and request — or null to let the turn end (then each
   * gate still standing is `decision: "incomplete"`, or `"override"` when its setting is on).
   */
  async beforeTurnEnd(): Promise<string | null> {
    if (!this.active) return null;
    await this.#conflicts.resolvedInPlace();
    const blocking: Standing[] = [];
    for (const g of this.#standing()) {
      if (g.override.on) {
        if (!this.#overridden.has(g.key)) {
          const reason = `the request ends while ${g.reason}: gates.${g.override.setting} is true`;
          this.#overridden.set(g.key, { gate: g.gate, reason });
          this.#gate(g.gate, "override", reason, { ...g.extra, setting: g.override.setting });
        }
      } else blocking.push(g);
    }
    if (!blocking.length) return null;
    const fresh = blocking.filter((g) => !this.#held.has(g.key));
    if (!fresh.length) {
      for (const g of blocking) {
        if (this.#incomplete.has(g.key)) continue;
        this.#incomplete.add(g.key);
        this.#gate(g.gate, "incomplete", `the request ends incomplete: ${g.reason}`, g.extra);
      }
      return null;
    }
    for (const g of fresh) {
      this.#held.add(g.key);
      this.#gate(g.gate, "continue", g.reason, g.extra);
    }
    return note(
      // The quoted complaints last: the coordinator passes them on verbatim.
      [...fresh].sort((a, b) => Number(!!a.detail) - Number(!!b.detail)).map((g) =>
        `Completion gate: ${g.reason}. ${g.todo[0].toUpperCase()}${g.todo.slice(1)}.${
          g.detail ? `\n\n${g.detail}` : ""
        }`
      ).join("\n\n"),
    );
  }

  /**
   * The request's gate outcome for the turn result (`gates`): `complete` false while a gate
   * stands that no override lifts; `open` those gates, `overrides` the recorded overrides.
   * Null when the gates do not apply to this session.
   */
  outcome(): GateOutcome | null {
    if (!this.active) return null;
    const open = this.#standing().filter((g) => !g.override.on).map((g) => ({
      gate: g.gate,
      reason: g.reason,
    }));
    return { complete: open.length === 0, open, overrides: [...this.#overridden.values()] };
  }
}

/** Workspace-relative paths changed against HEAD (`git status --porcelain`, untracked included). */
export async function changedPaths(cwd: string): Promise<string[]> {
  try {
    const out = await new Deno.Command("git", {
      args: ["status", "--porcelain=v1", "-z", "-uall"],
      cwd,
      stdout: "piped",
      stderr: "null",
    }).output();
    if (out.code !== 0) return [];
    const parts = new TextDecoder().decode(out.stdout).split("\0");
    const paths: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      const e = parts[i];
      if (e.length < 4) continue;
      paths.push(e.slice(3));
      if (e[0] === "R" || e[0] === "C") i++; // the rename's source path follows
    }
    return paths;
  } catch {
    return [];
  }
}
