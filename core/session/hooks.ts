/**
 * A session's lifecycle hooks (docs/hooks.md): where they come from, where they run, and the
 * engine callbacks, permission wrapper and session start/end that run them
 * (core/extensions/hooks/lifecycle.ts decides what their output means).
 *
 * Sources, and where each runs:
 * - the user's `config.yaml` `hooks:` — as the user, outside the OS sandbox (like Claude Code);
 * - a **trusted** workspace's `.coyote/config.yaml` / `config.local.yaml` `hooks:` and
 *   `.claude/settings.json` / `settings.local.json` `hooks` (core/config/project.ts) — inside the
 *   session's OS sandbox, as its commands run: the model may write the scripts they name, so
 *   their `allow` is ignored (they may deny, ask or rewrite); an untrusted workspace's are not
 *   read at all;
 * - plugins (SDK `hooks`) — inside the OS sandbox; a plugin's `allow` is ignored (it may deny,
 *   ask or rewrite, not approve).
 *
 * A root session runs `SessionStart` when it opens (`startup`, or `resume`; its context and
 * events reach the first turn), `UserPromptSubmit` at each turn, `SessionEnd` when it closes.
 * Every session (sub-agents too) runs `PreToolUse`, `PostToolUse`, `PreCompact` and
 * `Notification` (when a permission question is asked). `Stop` / `SubagentStop` are
 * core/session/stop_hooks.ts. A hook's problem is one line on stderr; every hook that ran is a
 * `hook` event in the stream (core/protocol/types.ts `HookEvent`).
 * @module
 */
import type { HookEventName, LifecycleHooks } from "../config/hooks.ts";
import { HOOK_EVENTS } from "../config/hooks.ts";
import type { HookEvent, PermissionResolver } from "../protocol/types.ts";
import type { EngineHooks } from "../engine/mod.ts";
import { type HookEntry, type HookOutcome, HookSet } from "../extensions/hooks/lifecycle.ts";
import type { HookLaunch } from "../extensions/hooks/run.ts";
import type { StopHookSpec } from "../extensions/hooks/stop.ts";
import {
  fromUpdatedInput,
  hookToolInput,
  hookToolName,
  matcherNames,
} from "../extensions/hooks/tool_input.ts";
import type { CommandSandbox } from "../policy/sandbox/mod.ts";
import { transcriptPath } from "../transcript/store.ts";
import type { Workspace } from "./workspace.ts";

/** What a session's hooks run against. */
export interface HookSource {
  ws: Workspace;
  /** A sub-agent (no SessionStart / SessionEnd / UserPromptSubmit). */
  child: boolean;
  sandbox: CommandSandbox;
  sessionId: string;
  agent(): string;
  /** Coyote's permission mode (`plan`, `default`, `accept-edits`, `auto`), if known. */
  mode?(): string | undefined;
  /** Emits into the running turn's stream; false when no turn is running (the event waits). */
  emit(ev: HookEvent): boolean;
  log(line: string): void;
}

/** Every hook a session of `ws` may run (see the module doc for the sources). */
export function hookEntries(
  ws: Workspace,
  sandbox: CommandSandbox,
  warn?: (line: string) => void,
): HookEntry[] {
  const app = ws.app;
  const cwd = ws.cwd;
  const inSandbox: HookLaunch = (c) => sandbox.prepare(c, cwd, "bash");
  const out: HookEntry[] = [];
  const add = (h: LifecycleHooks | undefined, source: string, launch?: HookLaunch) => {
    for (const event of HOOK_EVENTS) {
      for (const [i, g] of (h?.[event] ?? []).entries()) {
        for (const [j, c] of g.hooks.entries()) {
          if ((c.type ?? "command") !== "command" || !c.command) {
            warn?.(
              `coyote: warning: ${source}: hooks.${event}[${i}].hooks[${j}]: type ${
                JSON.stringify(c.type)
              } is not supported (only command hooks run); skipped`,
            );
            continue;
          }
          out.push({
            event,
            ...(g.matcher !== undefined ? { matcher: g.matcher } : {}),
            command: c.command,
            ...(c.timeout ? { timeoutMs: Math.round(c.timeout * 1000) } : {}),
            source,
            ...(launch ? { launch } : {}),
            // Only your own config's hooks may approve: the model can write the scripts a
            // workspace's hooks run (and a plugin is not you).
            mayApprove: !launch,
          });
        }
      }
    }
  };
  add(app.workspace?.userConfig?.hooks ?? app.config?.hooks, "config");
  for (const f of app.workspace?.hooks ?? []) add(f.hooks, f.file, inSandbox);
  for (const h of ws.pluginStopHooks) {
    if (!h.event) continue;
    out.push({
      event: h.event,
      ...(h.matcher !== undefined ? { matcher: h.matcher } : {}),
      command: h.command,
      ...(h.timeout ? { timeoutMs: Math.round(h.timeout * 1000) } : {}),
      source: `plugin ${h.plugin}`,
      launch: inSandbox,
      mayApprove: false,
    });
  }
  return out;
}

/** The `Stop` (root) or `SubagentStop` (child) hooks as stop.ts runs them, with `hooks.stop`. */
export function stopHookSpecs(
  ws: Workspace,
  sandbox: CommandSandbox,
  child: boolean,
): StopHookSpec[] {
  const app = ws.app;
  const cwd = ws.cwd;
  const launch = (c: string) => sandbox.prepare(c, cwd, "bash");
  const event: HookEventName = child ? "SubagentStop" : "Stop";
  const own = hookEntries(ws, sandbox).filter((e) => e.event === event).map((e) => ({
    command: e.command,
    ...(e.timeoutMs ? { timeout_ms: e.timeoutMs } : {}),
    source: e.source,
    ...(e.launch ? { launch } : {}),
  }));
  if (child) return own;
  const user = app.workspace?.userConfig?.hooks ?? app.config?.hooks;
  return [
    ...(user?.stop ?? []).map((h: { command: string; timeout_ms?: number }) => ({
      ...h,
      source: "config",
    })),
    // A trusted workspace's `hooks.stop` runs inside the OS sandbox, like its other hooks.
    ...(app.workspace?.hooks ?? []).flatMap((f) =>
      (f.hooks.stop ?? []).map((h) => ({ ...h, source: f.file, launch }))
    ),
    ...own,
    // A plugin's hook runs inside the session's OS sandbox, never with Coyote's own rights.
    ...ws.pluginStopHooks.filter((h) => !h.event).map((h) => ({
      command: h.command,
      ...(h.timeout_ms ? { timeout_ms: h.timeout_ms } : {}),
      source: `plugin ${h.plugin}`,
      launch,
    })),
  ];
}

/** Claude Code's name of a Coyote permission mode (`accept-edits` → `acceptEdits`). */
export function claudeMode(mode: string | undefined): string {
  return mode === "accept-edits" ? "acceptEdits" : mode ?? "default";
}

/** A session's hooks (see the module doc). */
export interface SessionHooks {
  readonly set: HookSet;
  /** The engine's callbacks; undefined when there are no hooks. */
  readonly engine?: EngineHooks;
  /**
   * A `continue: false` asked to end the running turn (EngineOptions `endTurnAfterTools`); true
   * once per request.
   */
  halted(): boolean;
  /** Wraps a permission resolver: `Notification` hooks run when a question is asked. */
  permission(resolver: PermissionResolver): PermissionResolver;
  /** `SessionStart` (root sessions; call once when it opens). */
  start(source: "startup" | "resume"): Promise<void>;
  /** `SessionEnd` (root sessions; call when it closes). */
  end(reason: string): Promise<void>;
}

/** Builds a session's hooks (see {@link SessionHooks}). */
export function sessionHooks(s: HookSource): SessionHooks {
  const { ws } = s;
  const cwd = ws.cwd;
  const set = new HookSet(hookEntries(ws, s.sandbox, s.child ? undefined : s.log));
  const pending: HookEvent[] = [];
  let startContext: string[] = [];
  let halt = false;
  const emit = (ev: HookEvent) => {
    if (!s.emit(ev)) pending.push(ev);
  };
  const base = (event: HookEventName) => ({
    session_id: s.sessionId,
    transcript_path: transcriptPath(ws.app.dataDir, s.sessionId),
    cwd,
    hook_event_name: event,
    permission_mode: claudeMode(s.mode?.()),
    agent: s.agent(),
  });
  const run = async (
    event: HookEventName,
    extra: Record<string, unknown>,
    o: { names?: string[]; signal?: AbortSignal; toolCallId?: string; toolName?: string } = {},
  ): Promise<HookOutcome> => {
    const r = await set.run(event, { ...base(event), ...extra }, {
      ...o,
      cwd,
      signal: o.signal ?? new AbortController().signal,
    });
    for (const p of r.problems) s.log(`coyote: ${p}; ignored`);
    for (const ev of r.events) emit(ev);
    if (r.stop !== undefined) halt = true;
    return r;
  };
  const has = (e: HookEventName) => set.has(e);
  const any = set.entries.length > 0;

  const engine: EngineHooks | undefined = !any ? undefined : {
    ...(s.child ? {} : {
      userPromptSubmit: async (prompt, signal) => {
        halt = false;
        // Events of hooks that ran between turns (SessionStart, /compact's PreCompact) first.
        for (const ev of pending.splice(0)) s.emit(ev);
        const context = startContext.map((c) => `SessionStart hook context: ${c}`);
        startContext = [];
        if (has("UserPromptSubmit")) {
          const r = await run("UserPromptSubmit", { prompt }, { signal });
          if (r.block || r.stop !== undefined) {
            const why = r.reason ?? r.stop ?? "blocked by a UserPromptSubmit hook";
            s.log(`coyote: the prompt was blocked by a UserPromptSubmit hook: ${why}`);
            return { block: why };
          }
          context.push(...r.context.map((c) => `UserPromptSubmit hook context: ${c}`));
        }
        return context.length ? { context: context.join("\n\n") } : {};
      },
    }),
    ...(has("PreToolUse")
      ? {
        preToolUse: async (call, signal) => {
          const r = await run("PreToolUse", {
            tool_name: hookToolName(call.name),
            tool_input: hookToolInput(call.name, call.input, cwd),
            tool_use_id: call.id,
            coyote_tool_name: call.name,
          }, { names: matcherNames(call.name), signal, toolCallId: call.id, toolName: call.name });
          const context = r.context.length ? { context: r.context.join("\n") } : {};
          if (r.stop !== undefined) return { deny: r.stop, ...context };
          if (r.permission === "deny") return { deny: r.reason ?? "denied", ...context };
          return {
            ...context,
            ...(r.updatedInput
              ? { input: fromUpdatedInput(call.name, call.input, r.updatedInput, cwd) }
              : {}),
            ...(r.permission === "ask" ? { ask: r.reason ?? "" } : {}),
            ...(r.permission === "allow" ? { allow: true } : {}),
          };
        },
      }
      : {}),
    ...(has("PostToolUse")
      ? {
        postToolUse: async (call, signal) => {
          const raw = call.rawOutput && typeof call.rawOutput === "object"
            ? call.rawOutput as Record<string, unknown>
            : {};
          const input = hookToolInput(call.name, call.input, cwd) as { file_path?: string };
          const r = await run("PostToolUse", {
            tool_name: hookToolName(call.name),
            tool_input: input,
            tool_response: {
              ...raw,
              output: call.output,
              success: true,
              ...(input?.file_path ? { filePath: input.file_path } : {}),
            },
            tool_use_id: call.id,
            coyote_tool_name: call.name,
          }, { names: matcherNames(call.name), signal, toolCallId: call.id, toolName: call.name });
          const parts: string[] = [];
          if (r.block) parts.push(`PostToolUse hook feedback: ${r.reason ?? "blocked"}`);
          for (const c of r.context) parts.push(`PostToolUse hook context: ${c}`);
          return parts.length ? parts.join("\n\n") : undefined;
        },
      }
      : {}),
    ...(has("PreCompact")
      ? {
        preCompact: async (trigger, focus) => {
          await run("PreCompact", { trigger, custom_instructions: focus ?? "" }, {
            names: [trigger],
          });
        },
      }
      : {}),
  };

  return {
    set,
    engine,
    // Consumed once: the turn ends, the next (a sub-agent's follow-up too) starts afresh.
    halted: () => halt ? !(halt = false) : false,
    permission(resolver) {
      if (!has("Notification")) return resolver;
      return async (req, signal) => {
        const tool = hookToolName(req.toolName);
        const note = run("Notification", {
          message: `Coyote needs your permission to use ${tool}`,
          title: "Permission needed",
          notification_type: "permission_prompt",
        }, { names: ["permission_prompt"], toolCallId: req.toolCallId, toolName: req.toolName });
        // The question is asked at once; the answer waits for the notification hooks too.
        const [out] = await Promise.all([resolver(req, signal), note]);
        return out;
      };
    },
    async start(source) {
      if (s.child || !has("SessionStart")) return;
      const r = await run("SessionStart", { source }, { names: [source] });
      startContext = r.context;
    },
    async end(reason) {
      if (s.child || !has("SessionEnd")) return;
      await run("SessionEnd", { reason }, { names: [reason] });
    },
  };
}
