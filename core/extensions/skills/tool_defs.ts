/**
 * The real `skill__list`, `skill__load {name}` and `skill__unload {name}` of one session's skill
 * state (./tools.ts registers stubs of them, core/tools/lazy.ts; this module loads at the first
 * call; its input schemas are generated data, typed by ./inputs.ts).
 * @module
 */
import { builtinInputs } from "../../tools/lazy.ts";
import type { SKILL_INPUTS } from "./inputs.ts";
import { defineTool } from "../../../sdk/mod.ts";
import type { AnyTool } from "../../protocol/types.ts";
import type { SkillEntry } from "./load.ts";

/** The generated JSON Schemas of the tools (core/tools/lazy.ts), typed by ./inputs.ts. */
const skillInput = builtinInputs<typeof SKILL_INPUTS>("skills");

/** The tools over `state` (`unknown(name)`: the error text for a name that is not a skill). */
export function skillTools(
  { state, visible, byName, unknown }: {
    /** ./tools.ts `SkillState` (structurally: that module imports this one). */
    state: {
      readonly loaded: string[];
      load(name: string): boolean;
      unload(name: string): boolean;
    };
    visible: SkillEntry[];
    byName: Map<string, SkillEntry>;
    unknown: (name: string) => string;
  },
): AnyTool[] {
  const loaded = state.loaded;
  return [
    defineTool({
      name: "skill__list",
      description: "List the skills you can load, with descriptions and whether each is loaded.",
      input: skillInput("skill__list"),
      kind: "read",
      readOnly: true,
      title: () => "List skills",
      run: () =>
        visible.map((s) =>
          `- ${s.name}${loaded.includes(s.name) ? " [loaded]" : ""}: ${s.description}`
        ).join("\n"),
    }),
    defineTool({
      name: "skill__load",
      description:
        "Load a skill: its instructions join your system prompt and its tools become available from your next step.",
      input: skillInput("skill__load"),
      kind: "read",
      readOnly: true,
      title: (i) => `Load skill ${i.name}`,
      run: (i) => {
        if (loaded.includes(i.name)) return `skill ${i.name} is already loaded`;
        if (!state.load(i.name)) return { content: unknown(i.name), isError: true };
        const s = byName.get(i.name)!;
        const tools = [
          ...(s.enabled_tools ?? []),
          ...(s.enabled_mcp_servers ?? []).map((m) => `mcp:${m}`),
        ];
        return `Loaded skill ${i.name}: follow "# Loaded skill: ${i.name}" in your system prompt.` +
          (tools.length ? ` Tools added: ${tools.join(", ")}.` : "");
      },
    }),
    defineTool({
      name: "skill__unload",
      description: "Unload a skill you no longer need (removes its instructions and tools).",
      input: skillInput("skill__unload"),
      kind: "read",
      readOnly: true,
      title: (i) => `Unload skill ${i.name}`,
      run: (i) =>
        state.unload(i.name)
          ? `Unloaded skill ${i.name}.`
          : { content: `skill "${i.name}" is not loaded`, isError: true },
    }),
  ];
}
