/**
 * The agent registry of a workspace: every agent a session may run or spawn, by name.
 * Definitions come from anywhere (built-ins, plugins, agent files); a later registration of
 * a name shadows the earlier one (issue 7: built-ins < plugins < user dir < workspace), and
 * `source` records where the winner came from.
 * @module
 */
import type { AgentSpec } from "./types.ts";

/** Agents by name; see the module doc. */
export class AgentRegistry {
  #byName = new Map<string, AgentSpec>();

  /** Adds (or shadows) an agent. `source` defaults to the definition's own `source`. */
  register(def: AgentSpec, source?: string): void {
    this.#byName.set(def.name, source ? { ...def, source } : def);
  }

  get(name: string): AgentSpec | undefined {
    return this.#byName.get(name);
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  /** Every agent, in first-registration order of its name. */
  list(): AgentSpec[] {
    return [...this.#byName.values()];
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }

  /** `unknown agent "x"; available: a, b` — the message of a refused name. */
  unknown(name: string): string {
    return `unknown agent "${name}"; available: ${this.names().join(", ")}`;
  }
}
