/**
 * The one-line status notes the terminal renderer (./mod.ts) writes for decision events: a
 * lifecycle hook's decision ({@link hookLine}) and a coordinator's gate decision or Phase 0 intent
 * ({@link gateLine}); the turn's footer ({@link turnFooter}) and the number formats it uses. Every string in them is made safe for the terminal (core/util/terminal_safe.ts).
 * @module
 */
import type { HookEvent, TurnUsage } from "../../protocol/types.ts";
import { costUsd, type ModelPrice } from "../../config/models.ts";
import type { Style } from "./style.ts";
import { safeLine } from "../../util/terminal_safe.ts";

/**
 * The line a lifecycle hook's event gets (`↪ PreToolUse hook denied: reason`), or null for one
 * that decided nothing, only added context, or failed (its problem is logged on stderr).
 */
export function hookLine(ev: HookEvent, s: Style): string | null {
  const what: Record<string, string> = {
    deny: s.red("denied"),
    block: s.red("blocked"),
    ask: s.yellow("asks"),
    allow: s.green("approved"),
    stop: s.yellow("ended the turn"),
  };
  const verb = what[ev.decision];
  const msg = ev.systemMessage ? ` ${s.dim(safeLine(ev.systemMessage))}` : "";
  if (!verb && !msg) return null;
  const why = verb && ev.reason ? `: ${safeLine(ev.reason)}` : "";
  return `${s.dim("↪")} ${safeLine(ev.hookEventName)} hook${verb ? ` ${verb}` : ""}${why}${msg}`;
}

/**
 * The one dim line a gate decision or the Phase 0 intent gets (core/supervisor/gate_keeper.ts: an
 * `agent_thought_chunk` whose `_meta.coyote.event` is `gate` or `intent`) — `⚑ gate plan_review:
 * block — reason`, `⚑ intent (implementation): what was heard` — cut to `width` columns; null for
 * any other thought chunk, and for the intent gate's `nudge` (a note to the model that its first
 * response lacked the intent line: the model's business, not a decision the user needs to read).
 */
export function gateLine(meta: unknown, s: Style, width: number): string | null {
  const m = (meta as { coyote?: Record<string, unknown> } | undefined)?.coyote;
  if (!m || (m.event !== "gate" && m.event !== "intent")) return null;
  if (m.event === "gate" && m.gate === "intent" && m.decision === "nudge") return null;
  const str = (v: unknown) => safeLine(String(v ?? "").replace(/\s+/g, " ").trim());
  const text = m.event === "intent"
    ? `⚑ intent (${str(m.class)}): ${str(m.text)}`
    : `⚑ gate ${str(m.gate)}: ${str(m.decision)}${m.reason ? ` — ${str(m.reason)}` : ""}`;
  const max = Math.max(20, width - 1);
  return s.dim(text.length > max ? text.slice(0, max - 1).trimEnd() + "…" : text);
}

/** Compact `1234` → `1.2k`. */
export function formatTokens(n: number): string {
  return n >= 10_000
    ? `${Math.round(n / 1000)}k`
    : n >= 1000
    ? `${(n / 1000).toFixed(1)}k`
    : `${n}`;
}

/** `ms` → `850ms`, `4.2s`, `2m05s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/**
 * One line per turn: tokens, cost, time. A turn the server reported no usage for (a server that
 * sends none, `provider.stream_options: false`, or a turn cancelled before the stream's last chunk,
 * which carries it) says `tokens not reported`, never "0 tokens"; a cancelled turn's footer has
 * the same shape as any other (the `cancelled` line above it says so). A turn that made no model
 * request (a hook blocked the prompt) says `no model request`.
 */
export function turnFooter(usage: TurnUsage, ms: number, price?: ModelPrice): string {
  if (!usage.total_tokens) {
    return `${usage.requests ? "tokens not reported" : "no model request"} · ${formatDuration(ms)}`;
  }
  const cost = costUsd(usage, price);
  const parts = [
    `${formatTokens(usage.total_tokens)} tokens (${formatTokens(usage.prompt_tokens)} in, ${
      formatTokens(usage.completion_tokens)
    } out)`,
    ...(cost !== undefined ? [`$${cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)}`] : []),
    formatDuration(ms),
  ];
  return parts.join(" · ");
}
