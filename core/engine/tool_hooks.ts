/**
 * The lifecycle hooks of one tool call (EngineOptions `hooks`, docs/hooks.md): `PreToolUse` runs
 * after the call was validated and announced and before the guard — it may refuse it, ask, approve
 * (the policy's deny still wins) or rewrite its arguments (validated again, announced as a
 * `tool_call_update` with the new `rawInput`); `PostToolUse` runs after a successful call and
 * may add text to its result for the model.
 * @module
 */
import { resolve } from "../util/path.ts";
import type { ToolAccess } from "../../sdk/mod.ts";
import type { PreparedCall, TurnContext } from "./types.ts";

/** What the gate needs to know from `PreToolUse` (see {@link preToolUse}). */
export interface PreToolVerdict {
  /** The call's accesses (recomputed when the input was rewritten). */
  accesses: ToolAccess[];
  title: string;
  rawInput: unknown;
  /** A hook asked: the gate asks even where the policy allows. */
  ask?: string;
  /** A hook approved: the policy's `ask` does not ask (its `deny` still refuses). */
  allow?: boolean;
}

/**
 * Runs `PreToolUse` for a validated call `p`: sets `p.refusal` on a deny or a bad rewrite,
 * replaces `p.input` on a rewrite. Returns what the gate needs.
 */
export async function preToolUse(
  t: TurnContext,
  p: PreparedCall,
  v: { accesses: ToolAccess[]; title: string; rawInput: unknown },
): Promise<PreToolVerdict> {
  const o = t.opts;
  const hook = o.hooks?.preToolUse;
  if (!hook || !p.tool) return v;
  const r = await hook({ id: p.id, name: p.name, input: p.input }, t.signal).catch(() => ({}));
  if ("context" in r && r.context) p.hookContext = r.context;
  if ("deny" in r && r.deny !== undefined) {
    t.denied.push({
      toolCallId: p.id,
      toolName: p.name,
      access: { type: "tool", name: p.name },
      decision: "deny",
      reason: `PreToolUse hook: ${r.deny}`,
    });
    p.refusal = `error: blocked by a PreToolUse hook: ${r.deny}`;
    p.denied = true;
    return v;
  }
  let out: PreToolVerdict = { ...v };
  if ("input" in r && r.input) {
    const checked = await o.registry.validate(p.name, r.input);
    if (!checked.ok) {
      p.refusal =
        `error: a PreToolUse hook rewrote the arguments of ${p.name} into invalid ones: ${checked.message}`;
      return v;
    }
    p.input = checked.value;
    let title = p.name;
    try {
      title = p.tool.title?.(checked.value) ?? p.name;
    } catch { /* cosmetic */ }
    let accesses: ToolAccess[];
    try {
      accesses = p.tool.access?.(checked.value, o.cwd) ?? [{ type: "tool", name: p.name }];
    } catch (e) {
      p.refusal = `error: could not check arguments of ${p.name}: ${(e as Error).message}`;
      return v;
    }
    p.locations = accesses.flatMap((a) =>
      a.type === "read" || a.type === "write" ? [{ path: resolve(o.cwd, a.path) }] : []
    );
    out = { accesses, title, rawInput: checked.value };
    t.emit({
      sessionUpdate: "tool_call_update",
      toolCallId: p.id,
      title,
      rawInput: checked.value,
      ...(p.locations.length ? { locations: p.locations } : {}),
    });
  }
  if ("ask" in r && r.ask !== undefined) out.ask = r.ask;
  else if ("allow" in r && r.allow) out.allow = true;
  return out;
}

/** Runs `PostToolUse` for a successful call; the text to append to its result ("" if none). */
export async function postToolUse(
  t: TurnContext,
  p: PreparedCall,
  output: string,
  rawOutput: unknown,
): Promise<string> {
  const hook = t.opts.hooks?.postToolUse;
  if (!hook) return "";
  const extra = await hook(
    { id: p.id, name: p.name, input: p.input, output, rawOutput },
    t.signal,
  ).catch(() => undefined);
  return extra ? `\n\n${extra}` : "";
}
