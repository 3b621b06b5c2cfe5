/**
 * Outgoing size limit: ACP clients built on the official SDKs refuse (and close the
 * connection on) a line over 32 MiB, the mirror image of `./input.ts`. A `session/update`
 * whose JSON is over {@link MAX_UPDATE_CHARS} (a tool's huge `rawOutput`, a replayed update of
 * an old transcript) is sent reduced instead: `rawInput` / `rawOutput` dropped, each text
 * content cut to {@link MAX_TEXT_CHARS} with a note, `_meta.coyote.truncated: true`.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import { headText } from "../../util/text.ts";

/** Largest update sent as is, in UTF-16 code units (a quarter of 32 MiB leaves room for UTF-8). */
export const MAX_UPDATE_CHARS = 8 * 1024 * 1024;
/** Longest text content kept in a reduced update. */
export const MAX_TEXT_CHARS = 1024 * 1024;

function cut(text: string): string {
  if (text.length <= MAX_TEXT_CHARS) return text;
  return `${headText(text, MAX_TEXT_CHARS)}\n[… ${
    text.length - MAX_TEXT_CHARS
  } more characters not sent: the update was over the ACP message limit]`;
}

/** `update` itself when small enough, else its reduced copy (see the module doc). */
export function limitUpdate(update: acp.SessionUpdate): acp.SessionUpdate {
  let size: number;
  try {
    size = JSON.stringify(update).length;
  } catch {
    return update;
  }
  if (size <= MAX_UPDATE_CHARS) return update;
  // deno-lint-ignore no-explicit-any
  const u: any = { ...update };
  delete u.rawInput;
  delete u.rawOutput;
  if (u.content && typeof u.content === "object" && !Array.isArray(u.content)) {
    if (u.content.type === "text") u.content = { ...u.content, text: cut(String(u.content.text)) };
  }
  if (Array.isArray(u.content)) {
    // deno-lint-ignore no-explicit-any
    u.content = u.content.map((c: any) => {
      if (c?.type === "content" && c.content?.type === "text") {
        return { ...c, content: { ...c.content, text: cut(String(c.content.text)) } };
      }
      if (c?.type === "diff") {
        return {
          ...c,
          oldText: c.oldText == null ? c.oldText : cut(c.oldText),
          newText: cut(c.newText ?? ""),
        };
      }
      return c;
    });
  }
  u._meta = { ...(u._meta ?? {}), coyote: { ...(u._meta?.coyote ?? {}), truncated: true } };
  try {
    if (JSON.stringify(u).length <= MAX_UPDATE_CHARS) return u as acp.SessionUpdate;
  } catch { /* fall through */ }
  // Still too large (many parts): keep only a note.
  const { content: _c, ...rest } = u;
  return {
    ...rest,
    ...(update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update"
      ? {
        content: [{
          type: "content",
          content: { type: "text", text: "[output not sent: over the ACP message limit]" },
        }],
      }
      : {}),
  } as acp.SessionUpdate;
}
