/**
 * The budget of an agent tree (issue 18, docs/modes.md "Budgets"): `--max-budget-usd` /
 * `--max-budget-tokens` cap a root turn *with* everything its sub-agents spend. One
 * {@link TreeBudget} per tree (the root's, shared through core/session/lineage.ts): every
 * engine of the tree adds each response's usage to it (priced at that engine's model), and
 * every engine checks the tree's totals before its next request (core/engine/loop.ts
 * `overBudget`) — so a child stops with `max_budget` once the tree is over, and so does the
 * root. The root resets it when its turn begins.
 * @module
 */
import type { BudgetMeter } from "../engine/types.ts";
import { costUsd, type ModelPrice } from "../config/models.ts";

/** Tokens and cost of one agent tree's current root turn. */
export class TreeBudget implements BudgetMeter {
  #tokens = 0;
  #usd = 0;
  /** True once usage without a price was added: `usd()` then counts only the priced part. */
  unpriced = false;

  /** Adds one response's usage, priced at `price` (USD per million tokens), if known. */
  add(
    u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number },
    price?: ModelPrice,
  ): void {
    const p = u.prompt_tokens ?? 0;
    const c = u.completion_tokens ?? 0;
    this.#tokens += u.total_tokens ?? p + c;
    const cost = costUsd({ prompt_tokens: p, completion_tokens: c }, price);
    if (cost === undefined) this.unpriced = true;
    else this.#usd += cost;
  }

  /** Total tokens of the tree so far in this root turn. */
  tokens(): number {
    return this.#tokens;
  }

  /** Cost (USD) of the priced usage so far in this root turn. */
  usd(): number {
    return this.#usd;
  }

  /** A new root turn: nothing spent yet. */
  reset(): void {
    this.#tokens = 0;
    this.#usd = 0;
    this.unpriced = false;
  }
}
