/**
 * Slash commands over ACP: `available_commands_update` lists the shared list of
 * `core/commands.ts` (plus the session's MCP prompts), and a prompt that is exactly one
 * such command is answered here instead of going to the model:
 * - an MCP prompt (`/<server>:<prompt> args`) is fetched with `prompts/get` and its
 *   messages become the turn's prompt (as Claude Code and Codex do);
 * - `/help`, `/session`, `/model [id]`, `/agent [name]`, `/mcp`, `/tools` answer with an
 *   `agent_message_chunk` and `end_turn`;
 * - the other built-ins answer that they are not available over ACP.
 * Text that merely starts with `/` but names no command goes to the model unchanged.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import { parseSlashCommand, type SlashCommand, slashCommands } from "../commands.ts";
import type { AcpPeer, LiveSession } from "./peer.ts";

/** MCP prompts of a session as slash commands (empty when the runtime offers none). */
function mcpCommands(live: LiveSession): SlashCommand[] {
  const s = live.session as { slashCommands?: () => SlashCommand[] };
  return typeof s.slashCommands === "function" ? s.slashCommands() : [];
}

/** The `availableCommands` of a session (ACP `AvailableCommand[]`). */
export function availableCommands(live: LiveSession): acp.AvailableCommand[] {
  return slashCommands(mcpCommands(live)).map((c) => ({
    name: c.name,
    description: c.description,
    ...(c.hint ? { input: { hint: c.hint } } : {}),
  }));
}

/** The prompt's text when it is a single text block (a command), else null. */
function soleText(prompt: acp.ContentBlock[]): string | null {
  if (prompt.length !== 1 || prompt[0].type !== "text") return null;
  return prompt[0].text;
}

/**
 * Answers `prompt` locally when it is a slash command; returns the response, or null to run a
 * normal turn. An MCP prompt replaces `prompt` in place (its messages), then returns null.
 */
export async function runSlashCommand(
  peer: AcpPeer,
  live: LiveSession,
  prompt: acp.ContentBlock[],
  _signal: AbortSignal,
): Promise<acp.PromptResponse | null> {
  const text = soleText(prompt);
  const cmd = text === null ? null : parseSlashCommand(text);
  if (!cmd) return null;
  const all = slashCommands(mcpCommands(live));
  const found = all.find((c) => c.name === cmd.name);
  if (!found) return null;
  const sid = live.session.id;
  const say = async (msg: string): Promise<acp.PromptResponse> => {
    await peer.notify(sid, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: msg },
    });
    return { stopReason: "end_turn" };
  };
  if (found.source !== "builtin") {
    const s = live.session as {
      expandPrompt?: (server: string, prompt: string, args: string) => Promise<acp.ContentBlock[]>;
    };
    if (!s.expandPrompt) return await say(`/${found.name} is not available in this session.`);
    try {
      const blocks = await s.expandPrompt(found.source.mcpServer, found.source.prompt, cmd.args);
      prompt.splice(0, prompt.length, ...blocks);
      return null;
    } catch (e) {
      return await say(`/${found.name} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const session = live.session;
  switch (found.name) {
    case "help":
      return await say(
        all.map((c) => `/${c.name}${c.hint ? ` <${c.hint}>` : ""} — ${c.description}`).join("\n"),
      );
    case "session":
      return await say(`session ${session.id}\nworkspace ${session.cwd}`);
    case "model":
      if (cmd.args) session.model = cmd.args;
      return await say(`model: ${session.model}`);
    case "agent":
      if (cmd.args) {
        try {
          session.agent = cmd.args;
        } catch (e) {
          return await say(e instanceof Error ? e.message : String(e));
        }
      }
      return await say(`agent: ${session.agent}`);
    case "mcp":
    case "tools": {
      const s = session as { describe?: (what: "mcp" | "tools") => string };
      return await say(s.describe ? s.describe(found.name) : `/${found.name}: nothing to show`);
    }
    default:
      return await say(`/${found.name} is not available over ACP; use the terminal REPL.`);
  }
}
