/**
 * The model history as a strict OpenAI-compatible server accepts it. Applied to every request by
 * core/provider/provider.ts (so no caller can send a poisoned history) and, for the structural parts, to
 * transcripts on load by core/transcript/load.ts `repairHistory`.
 *
 * Rules (each one a server that rejects the whole request otherwise):
 * - An assistant message needs content or tool calls: one with neither (a turn that streamed only
 *   reasoning, or nothing) is dropped (OpenAI, DeepSeek: HTTP 400).
 * - `tool_calls: []` is removed (some servers reject an empty array); tool-call `arguments` that
 *   are empty become `"{}"`, and arguments that are not a JSON object (a model's broken call,
 *   refused by the engine) are wrapped as `{"invalid_arguments": "…"}` — servers that parse
 *   them (Ollama, vLLM chat templates) reject the whole request otherwise, forever.
 * - Tool-call names outside `^[a-zA-Z0-9_-]{1,64}$` (a model's hallucinated name) are made valid.
 * - An empty `tool` result becomes `(no output)` (some upstreams reject empty content).
 * - Consecutive `user` messages are merged into one (chat templates that insist roles alternate —
 *   Mistral, Llama via vLLM/TGI — raise "roles must alternate"); a failed or dropped turn would
 *   otherwise leave two in a row.
 * - Reasoning fields (`reasoning_content`, DeepSeek/vLLM; `reasoning`, OpenRouter/Ollama) stay on
 *   the assistant message they came with, in the field they came in, unless `omitReasoning`.
 * @module
 */
import { headText } from "../util/text.ts";

/** A Chat Completions message as kept in the history (loose: extra fields travel as they are). */
export interface WireMessage {
  role: string;
  // deno-lint-ignore no-explicit-any
  content?: string | null | any[];
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  reasoning_content?: string;
  reasoning?: string;
  reasoning_details?: unknown[];
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
          copy.tool_calls = copy.tool_calls.map((tc) => {
            if (!tc.function) return tc;
            const args = validArguments(tc.function.arguments);
            const name = validName(tc.function.name);
            return args !== tc.function.arguments || name !== tc.function.name
              ? { ...tc, function: { ...tc.function, name, arguments: args } }
              : tc;
          });
        }
      }
      if (opts.omitReasoning) {
        delete copy.reasoning_content;
        delete copy.reasoning;
        delete copy.reasoning_details;
      }
      msg = copy;
    }
    if (m.role === "tool" && (m.content === "" || m.content === null || m.content === undefined)) {
      msg = { ...m, content: "(no output)" };
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

/**
 * A tool-call name as OpenAI validates it in the history (`^[a-zA-Z0-9_-]{1,64}$`): a model's
 * hallucinated name (`functions.fs_read`, `fs_read<|channel|>commentary`, empty) would make every
 * later request fail with HTTP 400; other characters become `_`, empty is `unnamed_tool`.
 */
function validName(name: string | undefined): string {
  const n = (name ?? "").replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return n || "unnamed_tool";
}

/**
 * Tool-call arguments as servers that parse them accept (Ollama, vLLM chat templates): "" is
 * `{}`; text that is not a JSON object is wrapped as `{"invalid_arguments": "<text>"}` (the
 * call was refused with an error saying so; the raw text stays visible to the model).
 */
function validArguments(args: unknown): string {
  // A transcript written from a server that sent `arguments` as an object: JSON text once.
  const raw = typeof args === "string"
    ? args
    : args === null || args === undefined
    ? ""
    : JSON.stringify(args) ?? "";
  if (!raw.trim()) return "{}";
  try {
    const v = JSON.parse(raw);
    if (v && typeof v === "object" && !Array.isArray(v)) return raw;
  } catch { /* wrapped below */ }
  return JSON.stringify({ invalid_arguments: headText(raw, 4000) });
}

// deno-lint-ignore no-explicit-any
type Content = string | null | undefined | any[];

function joinContent(a: Content, b: Content): Content {
  if (typeof a === "string" && typeof b === "string") return a && b ? `${a}\n\n${b}` : a || b;
  const parts = (c: Content) =>
    Array.isArray(c) ? c : typeof c === "string" && c ? [{ type: "text", text: c }] : [];
  return [...parts(a), ...parts(b)];
}
