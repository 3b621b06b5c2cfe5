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
 * - `gate` `{gate: "adversary"}`: while the last collected adversary verdict of the session is
 *   DIVERGES/UNMET, the coordinator's end of turn is continued once per request with a note
 *   (`decision: "continue"`); `gates.allow_divergent_completion: true` lets it end
 *   (`decision: "override"`).
 * - `gate` `{gate: "reviewers", reviewers: [...]}`: after an implementation child completes, the
 *   reviewers the changed paths call for (./gates.ts `reviewerTriggers`), also told to the
 *   coordinator in the agent__collect result.
 * - `gate` `{gate: "security", verdict: PASS|FAIL, counts}`: a collected `security-reviewer`'s
 *   findings under `gates.posture`.
 * @module
 */
import type { EngineEvent } from "../protocol/types.ts";
import {
  type GatesConfig,
  type GateSettings,
  gateSettings,
  parseAdversary,
  parseIntent,
  parsePlanReview,
  reviewerTriggers,
  securityVerdict,
} from "./gates.ts";

/** A child run as the gates read it. */
export interface GatedRun {
  id: string;
  agent: string;
  status: string;
  text: string;
}

/** The text of a system note for the model. */
const note = (s: string) => `<system-reminder>${s}</system-reminder>`;

/** See the module doc. */
export class GateKeeper {
  readonly settings: GateSettings;
  /** Whether the gates apply to this session's agent. */
  readonly active: boolean;
  #emit: ((ev: EngineEvent) => void) | null = null;
  // Per request.
  #rejected: string | null = null;
  #nudge: string | null = null;
  #continued = false;
  #implementers = new Set<string>();
  // Per session: the change's last adversary verdict.
  #divergent: { verdict: string; complaints: string; by: string } | null = null;
  #lastCoder: string | null = null;

  constructor(
    agent: string,
    raw: GatesConfig | undefined,
    readonly cwd: string | undefined,
  ) {
    this.settings = gateSettings(raw);
    this.active = this.settings.coordinators.includes(agent);
  }

  /** A request starts: per-request state reset; decisions go to `emit` (the owner's stream). */
  beginRequest(emit: ((ev: EngineEvent) => void) | null): void {
    this.#emit = emit;
    this.#rejected = null;
    this.#nudge = null;
    this.#continued = false;
    this.#implementers.clear();
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

  /** Why spawning `agent` is refused (a PLAN_REVIEW REJECT stands), or null. */
  beforeSpawn(agent: string): string | null {
    if (!this.active || !this.settings.implementation_agents.includes(agent)) return null;
    if (!this.#rejected) return null;
    const reason =
      `plan review gate: ${this.#rejected} answered PLAN_REVIEW: REJECT in this request; revise the plan and have it reviewed again (PLAN_REVIEW: OKAY) before spawning ${agent}; do not implement the rejected plan yourself meanwhile`;
    this.#gate("plan_review", "block", reason, { agent });
    return reason;
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
      if (r.agent === "security-reviewer") {
        const v = securityVerdict(r.text, this.settings.posture);
        this.#gate("security", v.verdict === "PASS" ? "pass" : "fail", v.reason, {
          agent_id: r.id,
          verdict: v.verdict,
          posture: this.settings.posture,
          counts: v.counts,
        });
        notes.push(`Security gate (posture ${this.settings.posture}): ${v.verdict} — ${v.reason}.`);
      }
      if (this.settings.implementation_agents.includes(r.agent) && r.status === "completed") {
        this.#lastCoder = r.id;
        const t = await this.#triggers();
        if (t) notes.push(t);
      }
    }
    const text = notes.length ? `\n\n${note(notes.join("\n"))}` : "";
    return text + this.takeNote();
  }

  async #triggers(): Promise<string | null> {
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
    this.#gate(
      "reviewers",
      list.length ? "require" : "none",
      list.length
        ? list.map((t) => `${t.reviewer}: ${t.reason}`).join("; ")
        : `${changed.length} changed file(s): no reviewer trigger`,
      { reviewers: list, changed_files: changed.length },
    );
    if (!list.length) return null;
    return `Review gate: run these reviewers now, in parallel, before you report the work as done: ${
      list.map((t) => `${t.reviewer} (${t.trigger}: ${t.reason})`).join("; ")
    }.`;
  }

  /** At the coordinator's end of turn: the continuation while a DIVERGES verdict stands (once). */
  beforeTurnEnd(): string | null {
    if (!this.active || !this.#divergent || this.#continued) return null;
    const d = this.#divergent;
    if (this.settings.allow_divergent_completion) {
      this.#continued = true;
      this.#gate(
        "adversary",
        "override",
        `the request ends while ${d.by}'s verdict ${d.verdict} stands: gates.allow_divergent_completion is true`,
        { verdict: d.verdict },
      );
      return null;
    }
    this.#continued = true;
    const reason = `the last adversary verdict (${d.by}) is ${d.verdict}`;
    this.#gate("adversary", "continue", reason, { verdict: d.verdict });
    return note(
      `Completion gate: ${reason}. Send its complaints verbatim to the coder that made the change (agent__send${
        this.#lastCoder ? ` {agent_id: "${this.#lastCoder}"}` : ""
      }), collect it and have the adversary check again — or say plainly why you stop with the change diverging.${
        d.complaints ? `\n\n${d.complaints}` : ""
      }`,
    );
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
