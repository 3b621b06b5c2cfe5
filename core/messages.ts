/**
 * The model history as a strict OpenAI-compatible server accepts it. Applied to every request by
 * core/provider.ts (so no caller can send a poisoned history) and, for the structural parts, to
 * transcripts on load by core/sessions.ts `repairHistory`.
 *
 * Rules (each one a server that rejects the whole request otherwise):
 * - An assistant message needs content or tool calls: one with neither (a turn that streamed only
 *   reasoning, or nothing) is dropped (OpenAI, DeepSeek: HTTP 400).
 * - `tool_calls: []` is removed (some servers reject an empty array); tool-call `arguments` that
 *   are empty become `"{}"` (servers that parse them reject "").
 * - Consecutive `user` messages are merged into one (chat templates that insist roles alternate —
 *   Mistral, Llama via vLLM/TGI — raise "roles must alternate"); a failed or dropped turn would
 *   otherwise leave two in a row.
 * - Reasoning fields (`reasoning_content`, DeepSeek/vLLM; `reasoning`, OpenRouter/Ollama) stay on
 *   the assistant message they came with, in the field they came in, unless `omitReasoning`.
 * @module
 */

/** A Chat Completions message as kept in the history (loose: extra fields travel as they are). */
export interface WireMessage {
  role: string;
  // deno-lint-ignore no-explicit-any
  content?: string | null | any[];
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  reasoning_content?: string;
  reasoning?: string;
}

/** True for an assistant message with neither text/parts nor tool calls. */
export function isEmptyAssistant(m: WireMessage): boolean {
  if (m.role !== "assistant") return false;
  if (m.tool_calls?.length) return false;
  const c = m.content;
  if (typeof c === "string") return c.trim() === "";
  if (Array.isArray(c)) return c.length === 0;
  return true;
}

/** The history as it goes on the wire (see the module doc). Does not modify its input. */
export function wireMessages<T extends WireMessage>(
  messages: readonly T[],
  opts: { omitReasoning?: boolean } = {},
): T[] {
  const out: T[] = [];
  for (const m of messages) {
    if (isEmptyAssistant(m)) continue;
    let msg = m;
    if (m.role === "assistant") {
      const copy = { ...m };
      if (Array.isArray(copy.tool_calls)) {
        if (!copy.tool_calls.length) delete copy.tool_calls;
        else {
          copy.tool_calls = copy.tool_calls.map((tc) =>
            tc.function && !(tc.function.arguments ?? "").trim()
              ? { ...tc, function: { ...tc.function, arguments: "{}" } }
              : tc
          );
        }
      }
      if (opts.omitReasoning) {
        delete copy.reasoning_content;
        delete copy.reasoning;
      }
      msg = copy;
    }
    const prev = out[out.length - 1];
    if (prev && prev.role === "user" && msg.role === "user") {
      out[out.length - 1] = { ...prev, content: joinContent(prev.content, msg.content) };
      continue;
    }
    out.push(msg);
  }
  return out;
}

// deno-lint-ignore no-explicit-any
type Content = string | null | undefined | any[];

function joinContent(a: Content, b: Content): Content {
  if (typeof a === "string" && typeof b === "string") return a && b ? `${a}\n\n${b}` : a || b;
  const parts = (c: Content) =>
    Array.isArray(c) ? c : typeof c === "string" && c ? [{ type: "text", text: c }] : [];
  return [...parts(a), ...parts(b)];
}
