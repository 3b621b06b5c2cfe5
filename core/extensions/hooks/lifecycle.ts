/**
 * Claude Code's lifecycle hooks (docs/hooks.md): the hooks of one event that match, run in
 * parallel (identical commands once), and what their exit codes and stdout JSON decide —
 * Claude Code's contract, so its hook scripts work unchanged:
 *
 * - exit 0: stdout, when it starts with `{`, is JSON: `continue: false` (+ `stopReason`) ends the
 *   turn, `systemMessage` is shown to the user, `suppressOutput` is accepted (Coyote never shows a
 *   hook's stdout), `decision`/`reason` (`block`; `PreToolUse`'s older `approve`/`block`) and
 *   `hookSpecificOutput` (`permissionDecision` allow|deny|ask, `permissionDecisionReason`,
 *   `updatedInput`, `additionalContext`). Plain stdout is context for `UserPromptSubmit` and
 *   `SessionStart`, ignored elsewhere. JSON that does not parse is reported and ignored.
 * - exit 2: a blocking error, stderr the reason: `PreToolUse` denies the call (the reason goes to
 *   the model), `PostToolUse` gives the reason to the model, `UserPromptSubmit` blocks the prompt
 *   (the reason is shown to the user); for other events it is shown to the user only.
 *   (`Stop`/`SubagentStop` are core/extensions/hooks/stop.ts.)
 * - any other exit code, a timeout, a hook that cannot start: one message for the user; the
 *   run goes on as if the hook had decided nothing.
 *
 * Several hooks: `deny` > `ask` > `allow`; blocks and contexts add up; the first `updatedInput`
 * wins. Every hook that ran gives one {@link HookEvent}.
 * @module
 */
import type { HookEventName } from "../../config/hooks.ts";
import { matcherMatches } from "../../config/hooks.ts";
import type { HookEvent } from "../../protocol/types.ts";
import { type HookLaunch, runHookCommand } from "./run.ts";

/** One configured hook command of one event. */
export interface HookEntry {
  event: HookEventName;
  matcher?: string;
  command: string;
  /** Milliseconds; default 60 000. */
  timeoutMs?: number;
  /** `config`, a workspace file's path, `plugin NAME` (for messages and events). */
  source: string;
  /** Starts it inside the OS sandbox (workspace and plugin hooks); absent: as the user. */
  launch?: HookLaunch;
  /**
   * May its `allow` skip a permission question? Only the user config's hooks: a workspace's or a
   * plugin's may deny, ask or rewrite (the model can write the scripts a workspace's run).
   */
  mayApprove?: boolean;
}

/** What the hooks of one event decided together. */
export interface HookOutcome {
  /** `PreToolUse`: the strongest permission decision (deny > ask > allow). */
  permission?: "allow" | "deny" | "ask";
  /** `UserPromptSubmit`, `PostToolUse`: a hook blocked (exit 2 or `decision: "block"`). */
  block?: boolean;
  /** The deny / ask / block reasons, joined. */
  reason?: string;
  /** `PreToolUse`: the first `updatedInput`. */
  updatedInput?: Record<string, unknown>;
  /** Context for the model (`additionalContext`, plain stdout of the context events). */
  context: string[];
  /** A hook said `continue: false`: end the turn, with this reason for the user. */
  stop?: string;
  events: HookEvent[];
  /** One line per failed hook (for the user). */
  problems: string[];
}

interface Parsed {
  decision: HookEvent["decision"];
  reason?: string;
  context?: string;
  updatedInput?: Record<string, unknown>;
  stop?: string;
  systemMessage?: string;
  problem?: string;
}

/** Events whose plain stdout (exit 0) is context for the model, as in Claude Code. */
const STDOUT_IS_CONTEXT = new Set<string>(["UserPromptSubmit", "SessionStart"]);

/** How one hook's run reads (see the module doc). */
export function interpret(
  event: HookEventName,
  run: { code: number; stdout: string; stderr: string },
): Parsed {
  const { code, stdout, stderr } = run;
  if (code === 2) {
    const reason = stderr || `a ${event} hook exited 2`;
    if (event === "PreToolUse") return { decision: "deny", reason };
    if (event === "PostToolUse" || event === "UserPromptSubmit") {
      return { decision: "block", reason };
    }
    return { decision: "error", reason: `exited 2: ${reason}`, problem: `exited 2: ${reason}` };
  }
  if (code !== 0) {
    const p = `exited ${code}${stderr ? `: ${stderr.slice(0, 300)}` : ""}`;
    return { decision: "error", reason: p, problem: p };
  }
  if (!stdout) return { decision: "none" };
  if (!stdout.startsWith("{")) {
    return STDOUT_IS_CONTEXT.has(event)
      ? { decision: "context", reason: stdout, context: stdout }
      : { decision: "none" };
  }
  let o: Record<string, unknown>;
  try {
    const v = JSON.parse(stdout);
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
    o = v;
  } catch {
    const p = `printed something that is not JSON: ${JSON.stringify(stdout.slice(0, 80))}`;
    return { decision: "error", reason: p, problem: p };
  }
  const out: Parsed = { decision: "none" };
  const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
  if (str(o.systemMessage)) out.systemMessage = str(o.systemMessage);
  const spec = o.hookSpecificOutput && typeof o.hookSpecificOutput === "object"
    ? o.hookSpecificOutput as Record<string, unknown>
    : {};
  const ctx = str(spec.additionalContext);
  if (ctx) out.context = ctx, out.decision = "context", out.reason = ctx;
  if (event === "PreToolUse") {
    let pd = spec.permissionDecision;
    let why = str(spec.permissionDecisionReason);
    // The older top-level form: `decision: "approve" | "block"`, `reason`.
    if (pd === undefined && (o.decision === "approve" || o.decision === "block")) {
      pd = o.decision === "approve" ? "allow" : "deny";
      why = str(o.reason);
    }
    if (pd !== undefined) {
      if (pd !== "allow" && pd !== "deny" && pd !== "ask") {
        const p = `permissionDecision must be allow, deny or ask, not ${JSON.stringify(pd)}`;
        return { decision: "error", reason: p, problem: p };
      }
      out.decision = pd;
      out.reason = why ?? (pd === "deny" ? "denied by a PreToolUse hook" : undefined);
    }
    const ui = spec.updatedInput;
    if (ui !== undefined) {
      if (!ui || typeof ui !== "object" || Array.isArray(ui)) {
        const p = "updatedInput must be an object of the tool's arguments";
        return { decision: "error", reason: p, problem: p };
      }
      out.updatedInput = ui as Record<string, unknown>;
    }
  } else if (o.decision === "block") {
    out.decision = "block";
    out.reason = str(o.reason) ?? `blocked by a ${event} hook`;
  }
  if (o.continue === false) {
    out.decision = "stop";
    out.stop = str(o.stopReason) ?? `a ${event} hook ended the turn`;
    out.reason = out.stop;
  }
  return out;
}

/** The hooks of a session, by event (see the module doc). */
export class HookSet {
  constructor(readonly entries: HookEntry[]) {}

  /** Are there hooks for `event` at all? */
  has(event: HookEventName): boolean {
    return this.entries.some((e) => e.event === event);
  }

  /** The hooks of `event` whose matcher matches one of `names` (identical commands once). */
  matching(event: HookEventName, names: string[] | undefined): HookEntry[] {
    const seen = new Set<string>();
    return this.entries.filter((e) => {
      if (e.event !== event) return false;
      if (names && !matcherMatches(e.matcher, names)) return false;
      const key = `${e.command}\u0000${e.launch ? "sandbox" : "user"}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  /**
   * Runs the hooks of `event` that match `names` (all of them when `names` is absent) with
   * `input` on stdin, in parallel. Never throws.
   */
  async run(
    event: HookEventName,
    input: Record<string, unknown>,
    o: {
      names?: string[];
      cwd: string;
      signal: AbortSignal;
      toolCallId?: string;
      toolName?: string;
    },
  ): Promise<HookOutcome> {
    const hooks = this.matching(event, o.names);
    const outcome: HookOutcome = { context: [], events: [], problems: [] };
    if (!hooks.length) return outcome;
    const runs = await Promise.all(hooks.map(async (h) => {
      try {
        return await runHookCommand({
          command: h.command,
          input,
          cwd: o.cwd,
          timeoutMs: h.timeoutMs,
          launch: h.launch,
          signal: o.signal,
        });
      } catch (e) {
        return { ran: false as const, problem: `could not run: ${(e as Error).message}` };
      }
    }));
    const reasons: Record<"deny" | "ask" | "block", string[]> = { deny: [], ask: [], block: [] };
    hooks.forEach((h, i) => {
      const r = runs[i];
      let p: Parsed = r.ran
        ? interpret(event, r)
        : { decision: "error", reason: r.problem, problem: r.problem };
      if (p.decision === "allow" && !h.mayApprove) {
        p = { ...p, decision: "none", reason: "allow ignored: this source may not approve" };
      }
      const ev: HookEvent = {
        sessionUpdate: "hook",
        hookEventName: event,
        ...(h.matcher !== undefined ? { matcher: h.matcher } : {}),
        command: h.command,
        source: h.source,
        decision: p.decision,
        ...(p.reason ? { reason: p.reason } : {}),
        ...(p.systemMessage ? { systemMessage: p.systemMessage } : {}),
        ...(o.toolCallId ? { toolCallId: o.toolCallId } : {}),
        ...(o.toolName ? { toolName: o.toolName } : {}),
        ...(p.updatedInput ? { updatedInput: true } : {}),
        ...(r.ran ? { exitCode: r.code } : {}),
      };
      outcome.events.push(ev);
      if (p.problem) {
        if (!o.signal.aborted) {
          outcome.problems.push(`${event} hook \`${h.command}\` (${h.source}) ${p.problem}`);
        }
        return;
      }
      if (p.context) outcome.context.push(p.context);
      if (p.updatedInput && !outcome.updatedInput) outcome.updatedInput = p.updatedInput;
      if (p.stop && outcome.stop === undefined) outcome.stop = p.stop;
      if (p.decision === "deny" || p.decision === "ask" || p.decision === "block") {
        if (p.reason) reasons[p.decision].push(p.reason);
        if (p.decision === "block") outcome.block = true;
        else if (p.decision === "deny" || outcome.permission !== "deny") {
          outcome.permission = p.decision;
        }
      } else if (p.decision === "allow" && !outcome.permission) outcome.permission = "allow";
    });
    const why = outcome.permission === "deny"
      ? reasons.deny
      : outcome.permission === "ask"
      ? reasons.ask
      : reasons.block;
    if (why.length) outcome.reason = why.join("; ");
    return outcome;
  }
}
