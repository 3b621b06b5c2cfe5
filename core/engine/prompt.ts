/**
 * Prompt building: ACP prompt content → OpenAI user message content, the blocks kept as
 * history, and the messages of one model request (system prompt first).
 * @module
 */
import type { PromptInput } from "../protocol/types.ts";
import type { ChatMessage } from "../transcript/types.ts";

/**
 * Converts prompt input (text or ACP content blocks) to an OpenAI user message content.
 * With `images: false` (a text-only model) an image becomes a note instead of an `image_url`
 * part, which such a model's server rejects (HTTP 400).
 */
export function promptToContent(
  input: PromptInput,
  opts: { images?: boolean } = {},
): string | unknown[] {
  if (typeof input === "string") return input;
  const parts: unknown[] = [];
  let text = "";
  for (const b of input) {
    if (b.type === "text") text += (text ? "\n" : "") + b.text;
    else if (b.type === "resource") {
      const r = b.resource as { uri: string; text?: string; blob?: string };
      if (typeof r.text === "string") {
        text += `${text ? "\n" : ""}<file uri="${r.uri}">\n${r.text}\n</file>`;
      } else text += `${text ? "\n" : ""}[binary resource ${r.uri}]`;
    } else if (b.type === "resource_link") text += `${text ? "\n" : ""}[file: ${b.uri}]`;
    else if (b.type === "image" && opts.images === false) {
      text += `${text ? "\n" : ""}[image omitted: this model does not accept images]`;
    } else if (b.type === "image") {
      if (text) parts.push({ type: "text", text }), text = "";
      parts.push({ type: "image_url", image_url: { url: `data:${b.mimeType};base64,${b.data}` } });
    }
  }
  if (!parts.length) return text;
  if (text) parts.push({ type: "text", text });
  return parts;
}

/** The prompt as ACP content blocks, for `user_message_chunk` history (empty text dropped). */
export function promptBlocks(input: PromptInput): Exclude<PromptInput, string> {
  if (typeof input === "string") return [{ type: "text", text: input }];
  const blocks = input.filter((b) => b.type !== "text" || b.text);
  return blocks.length ? blocks : [{ type: "text", text: "" }];
}

/** The prompt's text blocks joined (for `turn_started.prompt`). */
export function promptText(input: PromptInput): string {
  if (typeof input === "string") return input;
  return input.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
}

/** The messages of one model request: the system prompt, then the history. */
export function requestMessages(systemPrompt: string, history: ChatMessage[]): ChatMessage[] {
  return [{ role: "system", content: systemPrompt }, ...history];
}
