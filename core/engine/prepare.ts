/**
 * Preparing one tool call: parse and validate its arguments, announce it (`tool_call`
 * `pending`), refuse unknown tools, bad JSON and repeated identical calls, then pass it
 * through the `PreToolUse` hooks and the guard gate. Bad model output never throws: it becomes a refusal the model reads.
 * @module
 */
import { resolve } from "../util/path.ts";
import type { ToolAccess } from "../../sdk/mod.ts";
import { gateCall } from "./gate.ts";
import { type ModelToolCall, type PreparedCall, REPEAT_LIMIT, type TurnContext } from "./types.ts";

/** Stable JSON (sorted keys), for comparing repeated calls. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${
      Object.keys(v).sort().map((k) =>
        `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`
      )
        .join(",")
    }}`;
  }
  return JSON.stringify(v);
}

/** Announces the call (`tool_call` pending), validates it, and asks the guard. */
export async function prepareCall(t: TurnContext, call: ModelToolCall): Promise<PreparedCall> {
  const o = t.opts;
  const tool = o.registry.get(call.name);
  const p: PreparedCall = { id: call.id, name: call.name, tool };
  let rawInput: unknown = call.arguments;
  let parsed: unknown;
  let parseError = "";
  const raw = (call.arguments ?? "").trim();
  try {
    parsed = raw === "" ? {} : JSON.parse(raw);
    rawInput = parsed;
  } catch (e) {
    parseError = (e as Error).message;
  }
  let title = call.name;
  let accesses: ToolAccess[] = [];
  if (tool && !parseError) {
    const v = await o.registry.validate(call.name, parsed);
    if (v.ok) {
      p.input = v.value;
      try {
        title = tool.title?.(v.value) ?? call.name;
      } catch { /* a title is cosmetic */ }
      try {
        accesses = tool.access?.(v.value, o.cwd) ?? [{ type: "tool", name: call.name }];
      } catch (e) {
        p.refusal = `error: could not check arguments of ${call.name}: ${(e as Error).message}`;
      }
      p.locations = accesses.flatMap((a) =>
        a.type === "read" || a.type === "write" ? [{ path: resolve(o.cwd, a.path) }] : []
      );
    } else {
      p.refusal =
        `error: invalid arguments for ${call.name}: ${v.message}. Call it again with arguments matching its schema.`;
    }
  }
  t.emit({
    sessionUpdate: "tool_call",
    toolCallId: call.id,
    title,
    kind: tool?.kind ?? "other",
    status: "pending",
    rawInput,
    ...(p.locations?.length ? { locations: p.locations } : {}),
  });
  if (!tool) {
    const names = o.registry.names();
    const near = names.filter((n) => n.includes(call.name.split("_")[0] ?? "") && call.name)
      .slice(0, 5);
    const show = [...new Set([...near, ...names])].slice(0, 8);
    p.refusal = `error: unknown tool "${call.name}". ` +
      (show.length
        ? `Available tools include: ${show.join(", ")}${
          names.length > show.length ? `, … (${names.length} in all)` : ""
        }.`
        : "No tools are available in this session; answer without tools.");
    return p;
  }
  if (parseError) {
    p.refusal =
      `error: the arguments of ${call.name} are not valid JSON (${parseError}). Send a single JSON object matching the tool's schema.`;
    return p;
  }
  if (p.refusal) return p;

  // Repeated identical calls: the third one in a row is refused.
  const key = `${call.name}\u0000${canonical(p.input)}`;
  if (key === t.repeat.key) t.repeat.count++;
  else t.repeat = { key, count: 1 };
  if (t.repeat.count >= REPEAT_LIMIT) {
    p.refusal = `error: this exact ${call.name} call was already made ${
      t.repeat.count - 1
    } times in a row with the same arguments; its result will not change. Use the earlier result or try a different approach.`;
    return p;
  }
  // Lifecycle hooks may refuse, approve, ask or rewrite the call (core/engine/tool_hooks.ts,
  // loaded when a session has them).
  const hooked = o.hooks?.preToolUse
    ? await (await import("./tool_hooks.ts")).preToolUse(t, p, { accesses, title, rawInput })
    : { accesses, title, rawInput };
  if (p.refusal) return p;
  await gateCall(t, p, hooked.accesses, hooked);
  return p;
}
