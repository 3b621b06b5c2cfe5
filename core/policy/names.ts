/**
 * Named accesses (view (a)): environment variables and tools. `Env` and
 * `Tool` rules match the name with `*` (and `?`, read as `*`) wildcards;
 * deny > ask > allow. Defaults: an MCP tool (`mcp__*`) asks, any other tool
 * is allowed ({@link toolPart}); reading a variable asks (decided by the
 * caller: {@link namePart} returns undefined when no rule matches); setting a
 * dangerous one for a command (PATH, LD_*, HOME, GIT_*, PS4, …; shell/commands.ts
 * `dangerousEnvName`) asks ({@link envSetPart}).
 * @module
 */
import { type Rule, starMatch } from "./rules.ts";
import { type Level, type PolicyCore, rulesOf, type ScriptCtx } from "./context.ts";
import { dangerousEnvName } from "./shell/commands.ts";
import type { GuardPart } from "./types.ts";
import { by, q } from "./verdict.ts";

/** Env or Tool rules for `name`; undefined when no rule matches (and not skipping). */
export function namePart(
  core: PolicyCore,
  kind: "env" | "tool",
  name: string,
  level: Level,
): GuardPart | undefined {
  let deny: Rule | undefined, ask: Rule | undefined, allow: Rule | undefined;
  for (const r of rulesOf(core, kind)) {
    if (r.pattern !== undefined && !starMatch(r.pattern.replace(/\?/g, "*"), name, "strict")) {
      continue;
    }
    if (r.decision === "deny") deny ??= r;
    else if (r.decision === "ask") ask ??= r;
    else allow ??= r;
  }
  const what = kind === "env" ? `environment variable ${name}` : `tool ${name}`;
  if (deny) {
    return {
      decision: "deny",
      reason: `${by(deny)} denies ${what}`,
      rule: deny.text,
      subject: name,
    };
  }
  if (core.dangerouslySkipPermissions || level === "skip") {
    return {
      decision: "allow",
      reason: `--dangerously-skip-permissions allows ${what}`,
      rule: "default",
      subject: name,
    };
  }
  if (ask) {
    return {
      decision: "ask",
      reason: `${by(ask)} asks before using ${what}`,
      rule: ask.text,
      subject: name,
    };
  }
  if (allow) {
    return {
      decision: "allow",
      reason: `${by(allow)} allows ${what}`,
      rule: allow.text,
      subject: name,
    };
  }
  return undefined;
}

export function toolPart(core: PolicyCore, name: string): GuardPart {
  const p = namePart(core, "tool", name, "full");
  if (p) return p;
  // The MCP resource tools only read what a configured server offers (core/extensions/mcp/
  // resource_tools.ts): allowed like the other read-only tools; a rule naming them still wins.
  if (name.startsWith("mcp__") && name !== "mcp__list_resources" && name !== "mcp__read_resource") {
    return {
      decision: "ask",
      reason: `the default policy asks before calling MCP tool ${name}`,
      rule: "default",
      subject: name,
    };
  }
  return {
    decision: "allow",
    reason: `tools other than MCP tools are allowed by default (${name})`,
    rule: "default",
    subject: name,
  };
}

/**
 * Setting variable `name` for a command: Env rules, and dangerous names
 * (PATH, LD_*, HOME, GIT_*, PS4, …) ask by default — unless the whole
 * command line was approved as it is ({@link ScriptCtx.approved}).
 */
export function envSetPart(
  core: PolicyCore,
  name: string,
  display: string,
  level: Level,
  ctx?: ScriptCtx,
): GuardPart | undefined {
  const p = namePart(core, "env", name, level);
  if (p) {
    return p.decision === "allow"
      ? undefined
      : { ...p, reason: `${p.reason} (set by ${q(display)})`, subject: display };
  }
  if (level === "skip" || ctx?.approved || !dangerousEnvName(name)) return undefined;
  return {
    decision: "ask",
    reason: `${
      q(display)
    } sets ${name}, which changes which program runs, what it loads or what the shell evaluates; the default policy asks (allow with Env(${name}))`,
    rule: "default",
    subject: display,
  };
}
