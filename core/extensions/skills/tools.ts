/**
 * A session's skills: which are visible (an agent's `enabled_skills` filters), which are loaded,
 * and the tools that change that — `skill__list`, `skill__load {name}`, `skill__unload {name}`.
 *
 * Only names and descriptions are in the first request (the index, core/config/instructions.ts). Loading
 * a skill appends its body to the system prompt and adds the tools its `allowed-tools` names, from
 * the next model request on (the original Coyote's rule; the body stays out of the transcript, so
 * unloading really removes it). `auto_unload` skills are dropped when the turn ends. Every call is
 * still checked by the guard: a skill widens what the model is offered, never what it may do.
 * @module
 */
import type { AnyTool } from "../../protocol/types.ts";
import { BUILTIN_TOOLS, lazyTool } from "../../tools/lazy.ts";
import { didYouMean } from "../../util/text.ts";
import type { SkillEntry } from "./load.ts";

/** A user error about skills (`--skill` naming an unknown skill). */
export class SkillUsageError extends Error {
  override name = "UsageError";
}

let defs: Promise<typeof import("./tool_defs.ts")> | undefined;
/** Imports ./tool_defs.ts (the real skill tools) once. */
function loadDefs(): Promise<typeof import("./tool_defs.ts")> {
  return defs ??= import("./tool_defs.ts");
}

/** The live skill state of one session. */
export interface SkillState {
  /** Skills the agent may see, in discovery order. */
  readonly visible: SkillEntry[];
  /** Loaded skill names, in load order. */
  readonly loaded: string[];
  /** `skill__list` / `skill__load` / `skill__unload` (none when no skill is visible). */
  readonly tools: AnyTool[];
  /** Tool globs the loaded skills add (`allowed-tools`, `mcp__<server>__*`). */
  grantedTools(): string[];
  /** The system-prompt text of the loaded skills ("" when none). */
  promptSection(): string;
  /** Loads a skill; false when it is unknown. Calls `onChange` when something changed. */
  load(name: string): boolean;
  unload(name: string): boolean;
  /** Turn ended: drops `auto_unload` skills. */
  endTurn(): void;
}

/** Skills `enabledSkills` admits (undefined: all), in the given order. */
export function visibleSkills(all: SkillEntry[], enabled: string[] | undefined): SkillEntry[] {
  if (!enabled) return all;
  const set = new Set(enabled);
  return all.filter((s) => set.has(s.name));
}

/**
 * Creates the state. `preload` names (`--skill NAME`) are loaded at once.
 * @throws SkillUsageError when a preload name is not a visible skill (with did-you-mean).
 */
export function createSkillState(
  visible: SkillEntry[],
  opts: { onChange: () => void; preload?: string[] },
): SkillState {
  const loaded: string[] = [];
  const byName = new Map(visible.map((s) => [s.name, s]));
  const names = visible.map((s) => s.name);
  const unknown = (name: string) =>
    `unknown skill "${name}"${didYouMean(name, names)}; available: ${names.join(", ") || "(none)"}`;

  const state: SkillState = {
    visible,
    loaded,
    tools: [],
    grantedTools() {
      return loaded.flatMap((n) => {
        const s = byName.get(n)!;
        return [
          ...(s.enabled_tools ?? []),
          ...(s.enabled_mcp_servers ?? []).map((m) => `mcp__${m}__*`),
        ];
      });
    },
    promptSection() {
      return loaded.map((n) => `# Loaded skill: ${n}\n\n${byName.get(n)!.content}`).join("\n\n");
    },
    load(name) {
      if (!byName.has(name)) return false;
      if (!loaded.includes(name)) {
        loaded.push(name);
        opts.onChange();
      }
      return true;
    },
    unload(name) {
      const i = loaded.indexOf(name);
      if (i < 0) return false;
      loaded.splice(i, 1);
      opts.onChange();
      return true;
    },
    endTurn() {
      const drop = loaded.filter((n) => byName.get(n)!.auto_unload);
      if (!drop.length) return;
      for (const n of drop) loaded.splice(loaded.indexOf(n), 1);
      opts.onChange();
    },
  };
  for (const n of opts.preload ?? []) {
    if (!byName.has(n)) throw new SkillUsageError(`--skill: ${unknown(n)}`);
    if (!loaded.includes(n)) loaded.push(n);
  }
  if (!visible.length) return state;

  // Stubs (core/tools/lazy.ts): ./tool_defs.ts loads at the first call.
  let real: AnyTool[] | undefined;
  (state.tools as AnyTool[]).push(...BUILTIN_TOOLS.skills.map((d) =>
    lazyTool(d, {
      module: loadDefs,
      tool: (m) =>
        (real ??= m.skillTools({ state, visible, byName, unknown })).find((t) =>
          t.name === d.name
        )!,
    })
  ));
  return state;
}
