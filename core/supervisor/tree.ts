/**
 * The live-agent budget of one agent tree: every sub-agent session under one root session —
 * spawned by `agent__spawn` (counted from the moment it is queued) or opened by a graph's
 * `agent`/`map` node — holds one slot until it has ended. The cap is the root agent's
 * `max_live_agents` (default 64, core/supervisor/limits.ts), read when a slot is taken (so
 * switching the root's agent applies at once); a child's definition does not change it.
 *
 * A request past the cap is refused at once, never queued: a session waiting for a slot may
 * itself hold one, and a tree whose slots are all held by waiters would hang.
 * @module
 */
/** The budget shared by every session of one tree (see the module doc). */
export class LiveAgentBudget {
  #live = 0;
  /**
   * @param cap the current cap (the root agent's `max_live_agents`).
   * @param rootLabel names the tree's root in refusals (e.g. `sisyphus (session 0193…)`).
   */
  constructor(readonly cap: () => number, readonly rootLabel: () => string) {}

  /** Sessions of the tree queued or running now (the root not included). */
  get live(): number {
    return this.#live;
  }

  /**
   * Takes a slot; returns the function that gives it back (idempotent), or the reason the
   * tree is full — a message for the model or the graph node's error.
   */
  acquire(): { release: () => void } | { refused: string } {
    const cap = this.cap();
    if (this.#live >= cap) {
      return {
        refused: `max_live_agents ${cap} reached: ${this.#live} sub-agents are already queued or ` +
          `running in the agent tree of ${this.rootLabel()}; wait for some to end ` +
          `(agent__collect, agent__cancel) or raise max_live_agents in the root agent's definition`,
      };
    }
    this.#live++;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#live--;
      },
    };
  }
}
