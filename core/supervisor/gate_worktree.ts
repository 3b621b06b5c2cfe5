/**
 * The worktree gate (issue 17; docs/subagents.md "Gates"): a child's worktree patch that could
 * not be applied (./worktree.ts `collectWorktree` → `{status: "conflict"}`) stands until it is
 * resolved, and holds the coordinator's end of turn like a DIVERGES verdict (the standing gate is
 * built by ./gate_keeper.ts from {@link ConflictGate.open}). Resolved when:
 * - a later run of the same child (`agent__send`) comes back `applied` (its worktree kept the
 *   base, so that is its whole change) or `unchanged`;
 * - another child's worktree change that covers all the conflicting files is applied;
 * - a later successful implementation child in the shared tree left each conflicting file
 *   different from when the conflict was reported;
 * - at the end of turn the patch is found in the workspace (`git apply --check -R <patch>`
 *   succeeds: the coordinator applied or merged it).
 * Each decision is a `gate` event `{gate: "worktree"}`: `block` (with `files`, `patch`) and
 * `allow` (with `lifted`). Loaded with ./gate_keeper.ts.
 * @module
 */
import type { WorktreeOutcome } from "./worktree.ts";

/** A child's worktree patch that could not be applied. */
export interface Conflict {
  id: string;
  agent: string;
  /** The conflicting files, relative to the repository's top level. */
  files: string[];
  /** The kept patch (absolute path). */
  patch: string;
  /** Each conflicting file's text when the conflict was reported (null: absent). */
  was: (string | null)[];
}

/** A collected run as this gate reads it. */
export interface ConflictRun {
  id: string;
  agent: string;
  worktreeOutcome?: WorktreeOutcome;
}

type Decide = (decision: string, reason: string, extra: Record<string, unknown>) => void;

/** The unresolved conflicts of one coordinator session (see the module doc). */
export class ConflictGate {
  #open = new Map<string, Conflict>();
  #seen = new WeakSet<WorktreeOutcome>();
  #top: string | null = null;

  /** `decide` emits a `gate` event `{gate: "worktree", decision, reason, ...extra}`. */
  constructor(readonly cwd: string | undefined, readonly decide: Decide) {}

  /** The conflicts standing now, oldest first. */
  open(): Conflict[] {
    return [...this.#open.values()];
  }

  #lift(c: Conflict, by: string, why: string) {
    this.#open.delete(c.id);
    this.decide("allow", `${c.id}'s conflict is resolved: ${why}`, {
      agent_id: by,
      lifted: c.id,
      files: c.files,
    });
  }

  /**
   * One collected run (`succeeded`: an implementation child that completed without a failure
   * marker). Returns the note for the coordinator when its patch conflicted, else null. Each
   * outcome is read once (a run collected twice, or checked then collected, decides once).
   */
  async collected(r: ConflictRun, succeeded: boolean): Promise<string | null> {
    const o = r.worktreeOutcome;
    if (o && this.#seen.has(o)) return null;
    if (o) this.#seen.add(o);
    if (o?.status === "conflict") {
      const was = await this.#texts(o.files);
      this.#open.set(r.id, { id: r.id, agent: r.agent, files: o.files, patch: o.patch, was });
      const reason = `${r.id}'s change conflicts with the workspace and was not applied (${
        o.files.join(", ")
      }; patch ${o.patch})`;
      this.decide("block", reason, { agent_id: r.id, files: o.files, patch: o.patch });
      return `Worktree gate: ${reason}. The request cannot end as complete until it is resolved: apply or merge the patch into the workspace, or re-run the coder on the current tree for those files (agent__send {agent_id: "${r.id}"} or a new coder).`;
    }
    if (o?.status === "applied" || o?.status === "unchanged") {
      const mine = this.#open.get(r.id);
      if (mine) {
        this.#lift(
          mine,
          r.id,
          `a later run of ${r.id} came back ${
            o.status === "applied" ? "applied" : "with no change"
          }`,
        );
      }
      if (o.status === "applied") {
        for (const c of this.open()) {
          if (c.files.every((f) => o.files.includes(f))) {
            this.#lift(c, r.id, `${r.id}'s change to ${c.files.join(", ")} was applied`);
          }
        }
      }
    } else if (!o && succeeded) {
      for (const c of this.open()) {
        const now = await this.#texts(c.files);
        if (now.every((t, i) => t !== c.was[i])) {
          this.#lift(c, r.id, `${r.id} changed ${c.files.join(", ")} in the workspace`);
        }
      }
    }
    return null;
  }

  /** At the end of turn: lifts the conflicts whose patch is in the workspace now. */
  async resolvedInPlace(): Promise<void> {
    if (!this.cwd) return;
    for (const c of this.open()) {
      if (await git(await this.#root(), ["apply", "--check", "-R", c.patch]) !== null) {
        this.#lift(c, c.id, "its patch is in the workspace");
      }
    }
  }

  /** The files' texts now, relative to the repository's top level (as a patch names them). */
  async #texts(files: string[]): Promise<(string | null)[]> {
    if (!this.cwd) return files.map(() => null);
    const root = await this.#root();
    return await Promise.all(files.map((f) => Deno.readTextFile(`${root}/${f}`).catch(() => null)));
  }

  /** The repository's top level (the workspace when git cannot say), once. */
  async #root(): Promise<string> {
    return this.#top ??= (await git(this.cwd!, ["rev-parse", "--show-toplevel"]))?.trim() ||
      this.cwd!;
  }
}

/** `git args` in `cwd`: its stdout, or null when it fails or cannot run. */
async function git(cwd: string, args: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "null" })
      .output();
    return out.code === 0 ? new TextDecoder().decode(out.stdout) : null;
  } catch {
    return null;
  }
}
