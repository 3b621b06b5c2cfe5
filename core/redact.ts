/**
 * Keeps the provider API key out of everything a tool hands back. A tool result becomes a model
 * message, an ACP `tool_call_update` (stdout in stream-json / ACP) and a transcript line, so a
 * command that prints a file holding the key (`cat ~/.config/coyote/config.yaml`, a workspace
 * `.env`) would otherwise copy it into all three. Every occurrence of the key in a result's
 * content, diffs, raw output, progress and log messages is replaced by `[redacted]`, the same marker
 * core/provider.ts uses for provider error messages. (Issue 2 / project rule: secrets are never
 * in logs or transcripts.) `execute_command` also keeps the key and secret-looking variables out of
 * its children's environment (core/sandbox/env.ts).
 * @module
 */
import type { ToolContext, ToolResult } from "../sdk/mod.ts";
import type { AnyTool } from "./types.ts";

/** The replacement text. */
export const REDACTED = "[redacted]";

/**
 * Shortest value treated as a secret (characters). Placeholder keys of local servers (`ollama`,
 * `lm-studio`, `EMPTY`) are shorter and are ordinary words in tool output; real keys are longer.
 */
export const MIN_SECRET_LENGTH = 12;

/** The values worth hiding among `candidates` (trimmed, long enough, de-duplicated). */
export function secretValues(candidates: (string | undefined)[]): string[] {
  const out = new Set<string>();
  for (const c of candidates) {
    const v = c?.trim();
    if (v && v.length >= MIN_SECRET_LENGTH) out.add(v);
  }
  return [...out];
}

/** A function replacing every occurrence of each secret with {@link REDACTED}. */
export function makeRedactor(secrets: string[]): (text: string) => string {
  if (!secrets.length) return (t) => t;
  return (t) => {
    if (typeof t !== "string") return t;
    for (const s of secrets) if (t.includes(s)) t = t.split(s).join(REDACTED);
    return t;
  };
}

function redactResult(r: ToolResult | string, redact: (t: string) => string): ToolResult | string {
  if (typeof r === "string") return redact(r);
  if (!r || typeof r !== "object") return r;
  const out: ToolResult = { ...r };
  if (typeof r.content === "string") out.content = redact(r.content);
  else if (r.content !== undefined) out.content = redactJson(r.content, redact) as string;
  if (r.diffs) {
    out.diffs = r.diffs.map((d) => ({
      ...d,
      oldText: typeof d.oldText === "string" ? redact(d.oldText) : d.oldText,
      newText: redact(d.newText),
    }));
  }
  if (r.rawOutput !== undefined) out.rawOutput = redactJson(r.rawOutput, redact);
  return out;
}

function redactJson(v: unknown, redact: (t: string) => string): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    return v; // not serialisable: the engine drops it anyway
  }
  if (text === undefined) return v;
  const clean = redact(text);
  return clean === text ? v : JSON.parse(clean);
}

/** `tool` with its results and progress messages passed through `redact`. */
export function redactingTool(tool: AnyTool, redact: (t: string) => string): AnyTool {
  return {
    ...tool,
    run: async (input: unknown, ctx: ToolContext) => {
      const wrapped: ToolContext = {
        ...ctx,
        log: {
          debug: (m) => ctx.log.debug(redact(m)),
          info: (m) => ctx.log.info(redact(m)),
          warn: (m) => ctx.log.warn(redact(m)),
          error: (m) => ctx.log.error(redact(m)),
        },
        progress: (u) =>
          ctx.progress(typeof u?.message === "string" ? { ...u, message: redact(u.message) } : u),
      };
      return redactResult(await tool.run(input, wrapped), redact);
    },
  };
}
