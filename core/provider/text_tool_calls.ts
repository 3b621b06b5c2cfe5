/**
 * Tool calls a model wrote as text because its server did not parse them into `tool_calls`
 * (common with small local models behind llama.cpp, Ollama, vLLM without a tool parser). The
 * well-known forms, as their chat templates define them:
 * - Hermes / Qwen: `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (one block per call);
 * - Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]`, or `[TOOL_CALLS]name[ARGS]{…}`;
 * - Llama 3.x: `<function=name>{…}</function>`, and Qwen3-Coder's
 *   `<function=name><parameter=key>value</parameter>…</function>`;
 * - bare JSON as the whole message: `{"name": …, "arguments"|"parameters": {…}}` or an array of
 *   such objects (optionally in a ```json fence; Llama 3.2 adds `"type": "function"`).
 *
 * Only calls that name a tool the request offered become calls; a text that looks like a call
 * but does not parse, or names an unknown tool, is reported as unparsed so the caller can warn.
 * Used by core/provider/provider.ts when a response has no `tool_calls` (config
 * `provider.text_tool_calls: false` turns it off).
 * @module
 */
import type { ModelResponse, ModelToolCall } from "./types.ts";

/** What a response's text held: calls, a call-like text that did not parse, or plain text. */
export type TextToolCalls =
  | { kind: "calls"; calls: { name: string; arguments: string }[]; rest: string }
  | { kind: "unparsed"; why: string }
  | { kind: "none" };

/** Cheap test for the markers of a text tool call (no parsing). */
export function mayHoldToolCall(text: string): boolean {
  return /<tool_call>|\[TOOL_CALLS\]|<function=|<\|python_tag\|>/.test(text) ||
    /^\s*(?:```(?:json)?\s*)?[[{][\s\S]*"name"\s*:/.test(text);
}

/**
 * Parses the text forms of the module doc out of `text`. `known` are the tool names the request
 * offered: a call naming anything else makes the whole text `unparsed` (nothing runs that the
 * model did not clearly ask for).
 */
export function parseTextToolCalls(text: string, known: ReadonlySet<string>): TextToolCalls {
  if (!mayHoldToolCall(text)) return { kind: "none" };
  const found: { name: string; arguments: string }[] = [];
  let rest = text;
  let marker = false;
  let bad: string | undefined;
  const take = (v: unknown): boolean => {
    const call = asCall(v);
    if (!call) return false;
    found.push(call);
    return true;
  };

  // Hermes / Qwen.
  rest = rest.replace(/<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g, (_m, body: string) => {
    marker = true;
    const v = parseJson(unfence(body));
    if (!(Array.isArray(v) ? v.every(take) : take(v))) bad ??= "a <tool_call> block is not JSON";
    return "";
  });
  // Llama / Qwen3-Coder function tags.
  rest = rest.replace(
    /<function=([\w.-]+)>\s*([\s\S]*?)\s*(?:<\/function>|$)/g,
    (_m, name: string, body: string) => {
      marker = true;
      const params = [...body.matchAll(/<parameter=([\w.-]+)>\s*([\s\S]*?)\s*<\/parameter>/g)];
      if (params.length) {
        const args: Record<string, unknown> = {};
        for (const [, k, v] of params) args[k] = parseJson(v) ?? v;
        found.push({ name, arguments: JSON.stringify(args) });
      } else {
        const v = body.trim() ? parseJson(body) : {};
        if (v && typeof v === "object" && !Array.isArray(v)) {
          found.push({ name, arguments: JSON.stringify(v) });
        } else bad ??= `the <function=${name}> body is not a JSON object`;
      }
      return "";
    },
  );
  // Mistral.
  const at = rest.indexOf("[TOOL_CALLS]");
  if (at !== -1) {
    marker = true;
    const tail = rest.slice(at);
    rest = rest.slice(0, at);
    for (const part of tail.split("[TOOL_CALLS]").slice(1)) {
      const p = part.trim();
      const named = p.match(/^([\w.-]+)\[ARGS\]([\s\S]*)$/);
      if (named) {
        const v = parseJson(named[2]);
        if (v && typeof v === "object" && !Array.isArray(v)) {
          found.push({ name: named[1], arguments: JSON.stringify(v) });
        } else bad ??= `the [TOOL_CALLS] arguments of ${named[1]} are not a JSON object`;
        continue;
      }
      const v = parseJson(p);
      if (!(Array.isArray(v) ? v.length > 0 && v.every(take) : take(v))) {
        bad ??= "the [TOOL_CALLS] text is not a JSON list of calls";
      }
    }
  }
  // Bare JSON as the whole message.
  if (!marker) {
    const v = parseJson(unfence(text.trim().replace(/^<\|python_tag\|>/, "")));
    if (v !== undefined && (Array.isArray(v) ? v.length > 0 && v.every(take) : take(v))) {
      rest = "";
    } else if (/<\|python_tag\|>/.test(text)) bad = "a <|python_tag|> call is not JSON";
    else if (
      /"(?:arguments|parameters)"\s*:/.test(text) && /^\s*(?:```(?:json)?\s*)?[[{]/.test(text)
    ) {
      bad = "the message is JSON shaped like a tool call but does not parse as one";
    } else return { kind: "none" };
  }
  if (bad) return { kind: "unparsed", why: bad };
  if (!found.length) return { kind: "unparsed", why: "no call could be read from it" };
  const unknown = found.filter((c) => !known.has(c.name)).map((c) => c.name);
  if (unknown.length) {
    return {
      kind: "unparsed",
      why: `it names ${unknown.map((n) => JSON.stringify(n)).join(", ")}, not a tool of this agent`,
    };
  }
  return { kind: "calls", calls: found, rest: rest.trim() };
}

/**
 * `res` with the text tool calls of its text as real calls, when it has no `tool_calls` and
 * `known` is not empty (see {@link parseTextToolCalls}); `notify` gets one line saying what was
 * done, or that the text looked like a tool call that could not be used (never silence).
 * `finish_reason` `stop` becomes `tool_calls`; `length` stays (the engine refuses cut calls).
 * With `enabled` false (config `provider.text_tool_calls: false`, or the model's
 * `models.<name>.text_tool_calls: false`) nothing is parsed into calls, but a call-like text is
 * still warned about; `setting` names the config key in those lines.
 */
export function withTextToolCalls(
  res: ModelResponse,
  known: ReadonlySet<string>,
  notify: (line: string) => void,
  attemptNo = 0,
  enabled = true,
  setting = "provider.text_tool_calls",
): ModelResponse {
  if (res.toolCalls.length) return res;
  if (!res.text.trim()) {
    // A call inside the reasoning only (a server's reasoning parser took it): not run — the
    // model had not committed to it — but said, since the turn would otherwise end in silence.
    if (res.reasoning && parseTextToolCalls(res.reasoning, known).kind !== "none") {
      notify(
        "coyote: warning: the model wrote a tool call inside its reasoning and answered nothing; " +
          "it was not run (the server returned no tool_calls; check its reasoning and tool-call parsers)",
      );
    }
    return res;
  }
  const r = parseTextToolCalls(res.text, known);
  if (r.kind === "none") return res;
  if (!enabled) {
    notify(
      "coyote: warning: the model wrote what looks like a tool call as text; not run " +
        `(${setting} is false)`,
    );
    return res;
  }
  if (r.kind === "unparsed") {
    notify(
      `coyote: warning: the model wrote what looks like a tool call as text, and it was not run: ${r.why}` +
        " (the server returned no tool_calls; check its tool-call parser or chat template)",
    );
    return res;
  }
  const nonce = crypto.randomUUID().slice(0, 8);
  const toolCalls: ModelToolCall[] = r.calls.map((c, i) => ({
    id: `call_text_${attemptNo}_${i}_${nonce}`,
    name: c.name,
    arguments: c.arguments,
  }));
  notify(
    `coyote: the model wrote ${toolCalls.length} tool call(s) as text (${
      toolCalls.map((c) => c.name).join(", ")
    }); running them as calls (set ${setting}: false to turn this off)`,
  );
  return {
    ...res,
    text: r.rest,
    toolCalls,
    finishReason: res.finishReason === "stop" || res.finishReason === null
      ? "tool_calls"
      : res.finishReason,
  };
}

function asCall(v: unknown): { name: string; arguments: string } | undefined {
  if (!v || typeof v !== "object" || Array.isArray(v)) return undefined;
  let o = v as Record<string, unknown>;
  if (o.function && typeof o.function === "object") o = o.function as Record<string, unknown>;
  if (typeof o.name !== "string" || !o.name) return undefined;
  const a = "arguments" in o ? o.arguments : o.parameters;
  if (a === undefined) return undefined;
  const args = typeof a === "string" ? parseJson(a) : a;
  if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
  return { name: o.name, arguments: JSON.stringify(args) };
}

function unfence(s: string): string {
  const m = s.trim().match(/^```(?:json)?\s*([\s\S]*?)\s*```$/);
  return m ? m[1] : s;
}

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s.trim());
  } catch {
    return undefined;
  }
}
