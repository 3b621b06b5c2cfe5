/**
 * Executing one prepared tool call: build its `ToolContext` (signal, progress, call-scoped host
 * services and permission questions), run it, bound the wait after a cancel by
 * {@link CANCEL_GRACE_MS}, and turn the result into `tool_call_update` events and the `tool`
 * message of the history (output cut to core/engine/context.ts `toolOutputCap` of the model's window,
 * at most `MAX_TOOL_OUTPUT`).
 * @module
 */
import { resolve } from "../util/path.ts";
import type { ToolCallContent as ToolContent } from "@agentclientprotocol/sdk";
import type { HostServices, ToolAccess, ToolResult } from "../../sdk/mod.ts";
import type { ChatMessage } from "../transcript/types.ts";
import { callScope } from "./gate.ts";
import { capText, toolOutputCap } from "./context.ts";
import { nestedInstructions } from "./nested_instructions.ts";
import { CANCEL_GRACE_MS, Cancelled, type PreparedCall, type TurnContext } from "./types.ts";

/** Runs a prepared call (or reports its refusal) and answers it in the history. */
export async function executeCall(t: TurnContext, p: PreparedCall): Promise<void> {
  const o = t.opts;
  const { signal, emit } = t;
  const fail = (text: string, rawOutput?: unknown) => {
    emit({
      sessionUpdate: "tool_call_update",
      toolCallId: p.id,
      status: "failed",
      content: [{ type: "content", content: { type: "text", text } }],
      ...(rawOutput !== undefined ? { rawOutput } : {}),
    });
    t.answered.add(p.id);
    t.pushMessage({ role: "tool", tool_call_id: p.id, content: text });
  };
  if (p.refusal || !p.tool) {
    fail(p.refusal ?? "error: tool unavailable", p.denied ? { denied: true } : undefined);
    return;
  }
  if (signal.aborted) {
    fail("error: cancelled");
    throw new Cancelled();
  }
  // Issue 18: the workspace is checkpointed before the turn's first change.
  if (!p.tool.readOnly && o.beforeChange) {
    await o.beforeChange(p.name);
    // A cancel while the checkpoint ran (Ctrl+C right after the call shows) fired its `abort`
    // event before the call's own signal below listened: the tool must not start at all.
    if (signal.aborted) {
      fail("error: cancelled");
      throw new Cancelled();
    }
  }
  emit({ sessionUpdate: "tool_call_update", toolCallId: p.id, status: "in_progress" });
  const ctrl = new AbortController();
  const onAbort = () => ctrl.abort(signal.reason);
  // An `abort` event reaches only the listeners already added: an aborted signal is passed on now.
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  const progress: ToolContent[] = [];
  const name = p.name;
  const scope = callScope(t, p.id, name);
  const host: HostServices | undefined = typeof o.host === "function" ? o.host(scope) : o.host;
  const debug = (m: string) => Deno.env.get("COYOTE_DEBUG") && t.log(`[${name}] ${m}`);
  const ctx = {
    cwd: o.cwd,
    signal: ctrl.signal,
    toolCallId: p.id,
    sessionId: o.sessionId,
    host,
    guard: (access: ToolAccess) => o.policy.evaluate(access),
    log: {
      debug,
      info: debug,
      warn: (m: string) => t.log(`[${name}] warning: ${m}`),
      error: (m: string) => t.log(`[${name}] error: ${m}`),
    },
    progress: (
      u: { message?: string; title?: string; locations?: { path: string; line?: number }[] },
    ) => {
      if (u.message) {
        progress.push({ type: "content", content: { type: "text", text: u.message } });
      }
      emit({
        sessionUpdate: "tool_call_update",
        toolCallId: p.id,
        ...(u.message ? { content: [...progress] } : {}),
        ...(u.title ? { title: u.title } : {}),
        ...(u.locations ? { locations: u.locations } : {}),
      });
    },
    requestPermission: async (q: { title: string; detail?: string }) => {
      const out = await o.permission({
        sessionId: o.sessionId,
        toolCallId: p.id,
        toolName: name,
        title: q.title,
        kind: p.tool?.kind ?? "other",
        rawInput: p.input,
        verdicts: [{
          decision: "ask",
          reason: q.detail ? `${q.title}: ${q.detail}` : q.title,
          access: { type: "tool", name },
        }],
        scope,
      }, ctrl.signal).catch(() => "reject_once" as const);
      return out === "allow_once" || out === "allow_always";
    },
  };
  let result: ToolResult;
  try {
    const running = Promise.resolve().then(() => p.tool!.run(p.input, ctx));
    // On cancel, wait (bounded) for the tool to stop before ending the turn.
    const aborted = new Promise<never>((_, rej) => {
      const stop = () => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        void Promise.race([
          running.then(() => {}, () => {}),
          new Promise((r) => (timer = setTimeout(r, CANCEL_GRACE_MS))),
        ]).then(() => {
          clearTimeout(timer);
          rej(new Cancelled());
        });
      };
      if (ctrl.signal.aborted) stop();
      else ctrl.signal.addEventListener("abort", stop, { once: true });
    });
    aborted.catch(() => {});
    const r = await Promise.race([running, aborted]);
    if (ctrl.signal.aborted) throw new Cancelled();
    result = typeof r === "string" ? { content: r } : r ?? { content: "" };
  } catch (e) {
    signal.removeEventListener("abort", onAbort);
    if (e instanceof Cancelled || signal.aborted) {
      fail("error: cancelled by the user");
      throw new Cancelled();
    }
    fail(`error: ${name} failed: ${(e as Error)?.message ?? String(e)}`);
    return;
  }
  signal.removeEventListener("abort", onAbort);
  let content = typeof result.content === "string"
    ? result.content
    : JSON.stringify(result.content);
  // At most MAX_TOOL_OUTPUT, less for a small context window (core/engine/context.ts).
  content = capText(content, toolOutputCap(t.opts.contextWindow, t.opts.maxOutputTokens));
  if (result.plan) {
    emit({ sessionUpdate: "plan", entries: result.plan.map((e) => ({ ...e })) });
  }
  const items: ToolContent[] = [{ type: "content", content: { type: "text", text: content } }];
  for (const d of result.diffs ?? []) {
    items.push({
      type: "diff",
      path: resolve(o.cwd, d.path),
      oldText: d.oldText,
      newText: d.newText,
    });
  }
  const locations = result.locations?.map((l) => ({ ...l, path: resolve(o.cwd, l.path) })) ??
    p.locations;
  let rawOutput = result.rawOutput;
  if (rawOutput !== undefined) {
    try {
      JSON.stringify(rawOutput);
    } catch {
      rawOutput = undefined;
    }
  }
  emit({
    sessionUpdate: "tool_call_update",
    toolCallId: p.id,
    status: result.isError ? "failed" : "completed",
    content: items,
    ...(locations?.length ? { locations } : {}),
    ...(rawOutput !== undefined ? { rawOutput } : {}),
  });
  t.answered.add(p.id);
  let forModel = result.isError && !/^error\b/i.test(content) ? `error: ${content}` : content;
  // A subdirectory's AGENTS.md (…) the first time a file tool works there (once per directory).
  if (!result.isError) forModel += nestedInstructions(t.opts, o.cwd, name, p.input);
  if (p.hookContext) forModel += `\n\nPreToolUse hook context: ${p.hookContext}`;
  // `PostToolUse` hooks may add feedback or context for the model (core/engine/tool_hooks.ts).
  if (!result.isError && o.hooks?.postToolUse) {
    forModel += await (await import("./tool_hooks.ts")).postToolUse(t, p, content, rawOutput);
  }
  t.pushMessage({ role: "tool", tool_call_id: p.id, content: forModel });
  // Images of the result (an MCP screenshot) for a model that accepts them: a tool message
  // carries text only, so they follow as a user message of image parts (held by
  // core/engine/schedule.ts runCalls until every call of the response has its tool result).
  if (result.images?.length && o.images === true && !result.isError) {
    t.pushMessage({
      role: "user",
      content: [
        { type: "text", text: `[images from the result of ${name} (tool call ${p.id})]` },
        ...result.images.map((im) => ({
          type: "image_url",
          image_url: { url: `data:${im.mimeType};base64,${im.data}` },
        })),
      ] as ChatMessage["content"],
    });
  }
}
