/**
 * Slash commands over ACP: `available_commands_update` lists the shared list of
 * `core/frontends/slash_commands.ts` (plus the session's MCP prompts), and a prompt that is exactly one
 * such command is answered here instead of going to the model:
 * - an MCP prompt (`/<server>:<prompt> args`) is fetched with `prompts/get` and its
 *   messages become the turn's prompt (as Claude Code and Codex do);
 * - a custom command (a Markdown prompt file, core/frontends/slash/custom.ts) becomes the turn's
 *   prompt, its `model` and `allowed-tools` hold for that turn;
 * - `/help`, `/status`, `/session`, `/model [id]`, `/agent [name]`, `/agents`, `/mcp`, `/tools`,
 *   `/skill` (list), `/skills`, `/permissions [allow|deny|remove RULE]`, `/memory` (list),
 *   `/resume` (how: ACP `session/load`), `/todo`, `/cost`, `/exit` answer with an
 *   `agent_message_chunk` and `end_turn`;
 * - `/skill NAME [text]` runs a turn led by the skill's instructions; `/init` and `/review` run
 *   their prompts (core/frontends/slash/prompts.ts);
 * - `/compact [focus]` summarises the older turns (core/engine/compact.ts) and sends a
 *   `usage_update` with the new context size;
 * - `/rewind [TURN] [files|conversation]` lists the turns, or restores files and conversation to
 *   before a turn (core/frontends/rewind_command.ts; the restore summary first);
 * - `/clear`, `/policy`, `/trust` answer that they need the terminal REPL.
 * Text that merely starts with `/` but names no command goes to the model unchanged (an editor
 * may send any text; the REPL, where the user types it, answers with a did-you-mean instead).
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import {
  hintText,
  parseSlashCommand,
  type SlashCommand,
  slashCommands,
} from "../slash_commands.ts";
import type { AcpPeer, LiveSession } from "./peer.ts";
import { modelInfo } from "../../config/models.ts";
import type { TurnOverrides } from "../../session/types.ts";
import { asSlashCommand, customTurn, findCustom } from "../slash/custom.ts";

/** MCP prompts of a session as slash commands `/<server>:<prompt>`. */
export function mcpCommands(live: LiveSession): SlashCommand[] {
  return (live.session.mcp?.prompts() ?? []).map((p) => ({
    name: `${p.server}:${p.name}`,
    description: p.description ?? `MCP prompt ${p.name} of server ${p.server}`,
    ...(p.arguments.length ? { hint: p.arguments.map((a) => a.name).join(" ") } : {}),
    source: { mcpServer: p.server, prompt: p.name },
  }));
}

/**
 * Arguments of an MCP prompt from the words after its name: `name=value` pairs, else the
 * words in the prompt's argument order (the last argument takes the rest of the line).
 */
export function promptArguments(
  declared: { name: string }[],
  text: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  const pairs = [...text.matchAll(/(\w[\w-]*)=("([^"]*)"|\S+)/g)];
  if (pairs.length && pairs.every((m) => declared.some((d) => d.name === m[1]))) {
    for (const m of pairs) out[m[1]] = m[3] ?? m[2];
    return out;
  }
  const words = text.split(/\s+/);
  declared.forEach((d, i) => {
    if (i >= words.length) return;
    out[d.name] = i === declared.length - 1 ? words.slice(i).join(" ") : words[i];
  });
  return out;
}

/** MCP prompt messages → prompt content blocks (text, images, embedded resources). */
function messagesToBlocks(
  messages: { role: string; content: Record<string, unknown> }[],
): acp.ContentBlock[] {
  const blocks: acp.ContentBlock[] = [];
  for (const m of messages) {
    const c = m.content;
    if (c.type === "text") blocks.push({ type: "text", text: String(c.text ?? "") });
    else if (c.type === "image" && typeof c.data === "string") {
      blocks.push({ type: "image", data: c.data, mimeType: String(c.mimeType ?? "image/png") });
    } else if (c.type === "resource" && c.resource && typeof c.resource === "object") {
      const r = c.resource as { uri: string; text?: string; blob?: string; mimeType?: string };
      blocks.push({
        type: "resource",
        resource: typeof r.text === "string"
          ? { uri: r.uri, text: r.text, mimeType: r.mimeType }
          : { uri: r.uri, blob: r.blob ?? "", mimeType: r.mimeType },
      });
    } else if (c.type === "resource_link" && typeof c.uri === "string") {
      blocks.push({ type: "resource_link", uri: c.uri, name: String(c.name ?? c.uri) });
    } else blocks.push({ type: "text", text: JSON.stringify(c) });
  }
  return blocks;
}

/** The `availableCommands` of a session (ACP `AvailableCommand[]`). */
export function availableCommands(live: LiveSession): acp.AvailableCommand[] {
  return allCommands(live).map((c) => ({
    name: c.name,
    description: c.description,
    ...(c.hint ? { input: { hint: c.hint } } : {}),
  }));
}

/** Built-ins, then the custom commands, then the MCP prompts of a session. */
function allCommands(live: LiveSession): SlashCommand[] {
  return slashCommands([...(live.custom ?? []).map(asSlashCommand), ...mcpCommands(live)]);
}

/** The prompt's text when it is a single text block (a command), else null. */
function soleText(prompt: acp.ContentBlock[]): string | null {
  if (prompt.length !== 1 || prompt[0].type !== "text") return null;
  return prompt[0].text;
}

/**
 * Answers `prompt` locally when it is a slash command; returns the response, or null to run a
 * normal turn. An MCP prompt, a custom command, `/init`, `/review` and `/skill NAME` replace
 * `prompt` in place, then return null; a custom command's turn overrides go to `turn`.
 */
export async function runSlashCommand(
  peer: AcpPeer,
  live: LiveSession,
  prompt: acp.ContentBlock[],
  _signal: AbortSignal,
  turn: { overrides?: TurnOverrides } = {},
): Promise<acp.PromptResponse | null> {
  const text = soleText(prompt);
  const cmd = text === null ? null : parseSlashCommand(text);
  if (!cmd) return null;
  const all = allCommands(live);
  const leaf = findCustom(live.custom ?? [], cmd.name);
  const found = all.find((c) => c.name === cmd.name) ?? all.find((c) => c.name === leaf?.name);
  if (!found) return null;
  const sid = live.session.id;
  const say = async (msg: string): Promise<acp.PromptResponse> => {
    await peer.notify(sid, {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: msg },
    });
    return { stopReason: "end_turn" };
  };
  if (typeof found.source === "object" && "file" in found.source) {
    const custom = live.custom!.find((c) => c.name === found.name)!;
    const t = customTurn(custom, cmd.args, live.session);
    for (const n of t.notes) console.error(`coyote: ${n}`);
    prompt.splice(0, prompt.length, { type: "text", text: t.prompt });
    turn.overrides = t.overrides;
    return null;
  }
  if (found.source !== "builtin") {
    const mcp = live.session.mcp;
    const { mcpServer, prompt: name } = found.source;
    const info = mcp?.prompts().find((p) => p.server === mcpServer && p.name === name);
    if (!mcp || !info) return await say(`/${found.name} is not available in this session.`);
    try {
      const args = promptArguments(info.arguments, cmd.args);
      const missing = info.arguments.filter((a) => a.required && !(a.name in args));
      if (missing.length) {
        return await say(
          `/${found.name} needs ${missing.map((a) => a.name).join(", ")}: /${found.name} ${
            info.arguments.map((a) => `<${a.name}>`).join(" ")
          }`,
        );
      }
      const blocks = messagesToBlocks(await mcp.getPrompt(mcpServer, name, args));
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
        all.map((c) => `/${c.name}${hintText(c.hint)} — ${c.description}`).join("\n"),
      );
    case "session":
      return await say(`session ${session.id}\nworkspace ${session.cwd}`);
    case "init":
    case "review": {
      const P = await import("../slash/prompts.ts");
      const text = found.name === "init"
        ? P.initPrompt(cmd.args)
        : P.reviewPrompt(session, cmd.args);
      prompt.splice(0, prompt.length, { type: "text", text });
      return null;
    }
    case "status": {
      const { statusText } = await import("../slash/info.ts");
      return await say(statusText(session, live.usage, live.custom?.length ?? 0));
    }
    case "agents":
    case "skills":
    case "memory": {
      const I = await import("../slash/info.ts");
      return await say(
        found.name === "agents"
          ? I.agentsText(session)
          : found.name === "skills"
          ? I.skillsText(session)
          : I.memoryText(session, false),
      );
    }
    case "permissions": {
      const { permissionsCommand } = await import("../slash/permissions.ts");
      return await say(
        await permissionsCommand(session, cmd.args, { trusted: session.workspace.trust.trusted }),
      );
    }
    case "mode": {
      const { modeCommand } = await import("../slash/mode.ts");
      const r = modeCommand(session, cmd.args);
      // The client's mode selector follows (./modes.ts).
      if (r.after) {
        await peer.notify(session.id, {
          sessionUpdate: "current_mode_update",
          currentModeId: r.after,
        });
      }
      return await say(r.text);
    }
    case "resume":
      return await say(
        "Open another session from your editor's session list (ACP session/list, session/load).",
      );
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
    case "mcp": {
      const mcp = session.mcp;
      if (!mcp) return await say("No MCP servers are configured for this workspace.");
      const lines = mcp.servers.map((s) =>
        `${s.name} (${s.type}): ${s.status}${s.status === "connected" ? `, ${s.tools} tools` : ""}${
          s.error ? ` — ${s.error}` : ""
        }`
      );
      const prompts = mcp.prompts().map((p) => `/${p.server}:${p.name}`);
      const res = mcp.resources().map((r) => `${r.uri} (${r.server}: ${r.name})`);
      if (prompts.length) lines.push("", "Prompts: " + prompts.join(", "));
      if (res.length) lines.push("", "Resources (attach as resource links):", ...res);
      return await say(lines.join("\n"));
    }
    case "tools": {
      const names = session.toolNames();
      return await say(names.length ? names.join("\n") : "This agent has no tools.");
    }
    case "skill": {
      const skills = session.workspace.skills;
      if (!cmd.args) {
        return await say(
          skills.length
            ? skills.map((k) => `${k.name} — ${k.description}`).join("\n")
            : "No skills in this workspace (.coyote/skills/, plugins).",
        );
      }
      const [name, ...rest] = cmd.args.split(/\s+/);
      const skill = skills.find((k) => k.name === name);
      if (!skill) {
        return await say(
          `unknown skill "${name}"; available: ${skills.map((k) => k.name).join(", ") || "none"}`,
        );
      }
      // The skill's instructions lead the turn, then what the user typed after its name.
      prompt.splice(0, prompt.length, {
        type: "text",
        text: `# Skill: ${skill.name}\n\n${skill.content}`,
      }, ...(rest.length ? [{ type: "text" as const, text: rest.join(" ") }] : []));
      return null;
    }
    case "todo": {
      const plans = session.history().filter((u) => u.sessionUpdate === "plan") as {
        entries: { content: string; status: string }[];
      }[];
      const last = plans.at(-1);
      return await say(
        last?.entries.length
          ? last.entries.map((e) => `[${e.status}] ${e.content}`).join("\n")
          : "No plan yet.",
      );
    }
    case "cost": {
      const u = live.usage;
      return await say(
        u
          ? `${u.prompt_tokens} prompt + ${u.completion_tokens} completion tokens in ${u.requests} model request(s) (this connection)`
          : "No model requests yet in this connection.",
      );
    }
    case "rewind": {
      // Files and conversation back to before a turn (core/frontends/rewind_command.ts); the
      // summary of what it restores comes first, as its own message.
      const { rewindSlashCommand } = await import("../rewind_command.ts");
      const parts: string[] = [];
      await rewindSlashCommand(session, cmd.args, (t) => void parts.push(t));
      for (const t of parts.slice(0, -1)) await say(`${t}\n\n`);
      return await say(parts.at(-1) ?? "");
    }
    case "compact": {
      try {
        const r = await session.compact({ focus: cmd.args || undefined, keep: 1 });
        if (!r.compacted) return await say(`Nothing to compact (${r.reason}).`);
        await peer.notify(sid, {
          sessionUpdate: "usage_update",
          used: r.after,
          size: modelInfo(session.workspace.app.config, session.model).contextWindow,
          _meta: {
            compaction: { reason: "manual", turns: r.turns, before: r.before, after: r.after },
          },
        });
        return await say(
          `Compacted ${r.turns} earlier turn(s): ~${r.before} → ~${r.after} tokens.`,
        );
      } catch (e) {
        return await say(`/compact failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    case "exit":
      return await say("Close the session from your editor (ACP session/close).");
    default:
      return await say(`/${found.name} is not available over ACP; use the terminal REPL.`);
  }
}
