/**
 * Loading a session transcript (line shapes in core/transcript/types.ts): the header, the model
 * history (rejected turns left out, compactions and tool-result updates applied, then repaired
 * for the Chat Completions API), the events for replay and the turns with their checkpoints
 * (turns a `rewind` line dropped are left out of all three). Torn-line tolerant: unparseable lines
 * (a torn tail after a crash) are counted and skipped.
 * @module
 */
import type { EngineEvent } from "../protocol/types.ts";
import { isEmptyAssistant } from "../provider/messages.ts";
import type {
  ChatMessage,
  LoadedSession,
  SessionHeader,
  StoredTurn,
  TranscriptLine,
} from "./types.ts";
import { ID_RE, sessionsDir } from "./store.ts";

/** Parses a transcript's text. Unparseable lines (a torn tail) are counted and skipped. */
export function parseTranscript(text: string): LoadedSession | null {
  let header: SessionHeader | null = null;
  const messages: ChatMessage[] = [];
  const updates: EngineEvent[] = [];
  let skipped = 0;
  let turnStart = 0;
  // The lines of the conversation as it stands: a `rewind` line drops the turns from its `turn`
  // on (`starts[k]`: where turn k + 1 begins in `kept`).
  const kept: TranscriptLine[] = [];
  const starts = [0];
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    let line: TranscriptLine;
    try {
      line = JSON.parse(raw);
    } catch {
      skipped++;
      continue;
    }
    if (!line || typeof line !== "object") {
      skipped++;
      continue;
    }
    if (line.type === "session") {
      header ??= line;
      continue;
    }
    if (line.type === "rewind") {
      const n = line.turn;
      if (typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= starts.length) {
        kept.length = starts[n - 1];
        starts.length = n;
      }
      continue;
    }
    kept.push(line);
    if (line.type === "turn_end") starts.push(kept.length);
  }
  const turns: StoredTurn[] = [];
  let turn: StoredTurn | null = null;
  for (const line of kept) {
    turn ??= { prompt: "", checkpoints: [] };
    if (line.type === "turn_end") {
      turns.push(turn);
      turn = null;
    } else if (line.type === "checkpoint" && typeof line.id === "string") {
      turn.checkpoints.push(line.id);
    } else if (
      line.type === "update" && line.update?.sessionUpdate === "user_message_chunk" &&
      line.update.content?.type === "text"
    ) {
      turn.prompt += line.update.content.text;
    }
    if (line.type === "message" && line.message) messages.push(line.message);
    else if (line.type === "update" && line.update) updates.push(line.update);
    else if (line.type === "turn_end") {
      // A rejected turn's messages would be rejected again: they leave the model history.
      if (line.rejected) messages.length = turnStart;
      turnStart = messages.length;
    } else if (line.type === "compaction" && Array.isArray(line.messages)) {
      messages.splice(0, messages.length, ...line.messages);
      turnStart = Math.min(line.turn_start ?? messages.length, messages.length);
    } else if (line.type === "tool_result_update" && typeof line.content === "string") {
      for (const m of messages) {
        if (m.role === "tool" && m.tool_call_id === line.tool_call_id) m.content = line.content;
      }
    }
  }
  // A turn cut off by a crash (no `turn_end`) is still a turn (it may have changed files).
  if (turn && (turn.prompt || turn.checkpoints.length)) turns.push(turn);
  if (!header) return null;
  return { header, messages: repairHistory(messages), updates, skipped, turns };
}

/**
 * Makes a loaded history valid for the Chat Completions API: every assistant
 * `tool_calls` entry needs a `tool` reply (a crash mid-tool leaves none), so a
 * missing reply is filled in as an interrupted tool error; a `tool` message that answers no
 * preceding call, and an assistant message with neither content nor tool calls (older
 * transcripts stored reasoning-only turns as `content: null`), are dropped.
 */
export function repairHistory(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (isEmptyAssistant(m) || m.role === "tool") continue;
    out.push(m);
    if (m.role === "assistant" && m.tool_calls?.length) {
      const answered = new Set<string>();
      let j = i + 1;
      const ids = new Set(m.tool_calls.map((tc) => tc.id));
      while (j < messages.length && messages[j].role === "tool") {
        const id = messages[j].tool_call_id ?? "";
        if (ids.has(id) && !answered.has(id)) out.push(messages[j]);
        answered.add(id);
        j++;
      }
      for (const tc of m.tool_calls) {
        if (!answered.has(tc.id)) {
          out.push({
            role: "tool",
            tool_call_id: tc.id,
            content: "error: interrupted before this tool call finished",
          });
        }
      }
      i = j - 1;
    }
  }
  return out;
}

export async function loadSession(dataDir: string, id: string): Promise<LoadedSession | null> {
  if (!ID_RE.test(id)) return null;
  let text: string;
  try {
    text = await Deno.readTextFile(`${sessionsDir(dataDir)}/${id}.jsonl`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  return parseTranscript(text);
}
