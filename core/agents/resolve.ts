/**
 * Turning an agent definition into what one session runs: variable values (given or defaulted),
 * the tool filter, and the templated instructions.
 *
 * Templates (the original Coyote's placeholders): `{{__os__}}` (Deno's OS name), `{{__cwd__}}`,
 * `{{__now__}}` (ISO-8601, UTC), `{{__tools__}}` (the agent's tool names, comma-separated) and
 * `{{name}}` for each declared variable. Spaces inside the braces are allowed; any other `{{…}}`
 * is left as written (instructions may show template syntax as an example).
 * @module
 */
import type { AgentDefinition } from "../../sdk/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import { filterTools } from "../tools/registry.ts";
import { didYouMean } from "../util/text.ts";
import { AgentUsageError } from "./registry.ts";

/**
 * The values of an agent's variables: each declared variable from `given`, else its default.
 * @throws AgentUsageError listing every required variable that is missing (with its description
 *   and the flag to pass), or naming a given variable the agent does not declare.
 */
export function resolveVariables(
  def: AgentDefinition,
  given: Record<string, string> = {},
): Record<string, string> {
  const declared = def.variables ?? [];
  const names = declared.map((v) => v.name);
  for (const k of Object.keys(given)) {
    if (!names.includes(k)) {
      throw new AgentUsageError(
        `agent "${def.name}" has no variable "${k}"${didYouMean(k, names)}` +
          (names.length ? `; its variables: ${names.join(", ")}` : "; it declares none"),
      );
    }
  }
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const v of declared) {
    const value = given[v.name] ?? v.default;
    if (value === undefined) {
      missing.push(`${v.name}${v.description ? ` (${v.description})` : ""}`);
    } else out[v.name] = value;
  }
  if (missing.length) {
    throw new AgentUsageError(
      `agent "${def.name}" needs ${missing.length === 1 ? "variable" : "variables"} ${
        missing.join(", ")
      }; pass --agent-variable NAME VALUE`,
    );
  }
  return out;
}

/**
 * Built-in tools an agent gets only when its `tools` name them exactly (not through a glob, nor
 * by listing no tools): the original Coyote's `fs_cat` and `ast_grep` (plugins/fs/cat.ts,
 * ast_grep.ts), kept out of every other agent's requests (their schemas cost tokens, and
 * `fs_read`/`fs_grep` do the same work for an agent written for this Coyote).
 */
export const NAMED_ONLY_TOOLS: ReadonlySet<string> = new Set(["fs_cat", "ast_grep"]);

/**
 * The tools an agent gets from `all`: its `tools` entries (names, globs; `mcp:<server>` means
 * `mcp__<server>__*`) plus every tool of each `mcp_servers` entry. An agent listing neither gets
 * every tool; one listing only `mcp_servers` gets every tool that is not an MCP tool plus those
 * servers' tools. {@link NAMED_ONLY_TOOLS} come only by their exact name. Order follows `all`.
 */
export function selectTools<T extends { name: string }>(all: T[], def: AgentDefinition): T[] {
  const mcp = (def.mcp_servers ?? []).map((s) => `mcp__${s}__*`);
  const named = (t: T) => !NAMED_ONLY_TOOLS.has(t.name) || (def.tools ?? []).includes(t.name);
  if (!def.tools && !def.mcp_servers) return all.filter(named);
  const globs = def.tools
    ? [...def.tools.map((t) => t.startsWith("mcp:") ? `mcp__${t.slice(4)}__*` : t), ...mcp]
    : mcp;
  const picked = new Set(filterTools(all as unknown as AnyTool[], globs).map((t) => t.name));
  return all.filter((t) =>
    named(t) && (picked.has(t.name) || (!def.tools && !t.name.startsWith("mcp__")))
  );
}

/** Facts the templates may use. */
export interface TemplateFacts {
  cwd: string;
  /** Tool names the agent ends up with. */
  tools: string[];
  vars: Record<string, string>;
  /** Defaults to `Deno.build.os`. */
  os?: string;
  /** Defaults to now. */
  now?: Date;
}

/** Fills the `{{…}}` placeholders of `text` (see the module doc). */
export function renderInstructions(text: string, f: TemplateFacts): string {
  const builtins: Record<string, string> = {
    __os__: f.os ?? Deno.build.os,
    __cwd__: f.cwd,
    __now__: (f.now ?? new Date()).toISOString(),
    __tools__: f.tools.join(", "),
  };
  return text.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (all, name: string) => {
    if (Object.hasOwn(builtins, name)) return builtins[name];
    if (Object.hasOwn(f.vars, name)) return f.vars[name];
    return all;
  });
}
