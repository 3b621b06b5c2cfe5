/**
 * A session's MCP servers as the ACP client sees them.
 * - Servers start in the background (`session/new` answers at once): as each one settles,
 *   `session_info_update` carries `_meta.coyote.mcpServers` (`[{name, type, status, tools,
 *   error?}]`) and `available_commands_update` is re-sent (its prompts are slash commands); the
 *   same when a server's tools/prompts list changes. A line per server also goes to stderr.
 * - `resource_link` blocks of a prompt whose `uri` an MCP server lists are read
 *   (`resources/read`) and attached as embedded `resource` blocks (as Claude Code and Codex
 *   attach `@server:resource` mentions); other links are left to the engine.
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AcpPeer, LiveSession } from "./peer.ts";
import { availableCommands } from "./commands.ts";

/** `session_info_update` with the servers' status (no title change). */
export function mcpStatusUpdate(live: LiveSession): acp.SessionUpdate | null {
  const mcp = live.session.mcp;
  if (!mcp) return null;
  return {
    sessionUpdate: "session_info_update",
    _meta: {
      coyote: {
        mcpServers: mcp.servers.map((s) => ({
          name: s.name,
          type: s.type,
          status: s.status,
          tools: s.tools,
          ...(s.error ? { error: s.error } : {}),
        })),
      },
    },
  };
}

/**
 * Sends the status and the command list whenever the session's MCP servers change; call once
 * the `session/new` / `session/load` response has been sent.
 */
export function watchMcp(peer: AcpPeer, live: LiveSession): void {
  const mcp = live.session.mcp;
  if (!mcp || live.mcpWatched) return;
  live.mcpWatched = true;
  const sid = live.session.id;
  mcp.onChange((c) => {
    const status = mcpStatusUpdate(live);
    if (status && c.kind !== "resources") void peer.notify(sid, status);
    if (c.kind === "ready" || c.kind === "prompts" || c.kind === "closed" || c.kind === "failed") {
      void peer.notify(sid, {
        sessionUpdate: "available_commands_update",
        availableCommands: availableCommands(live),
      });
    }
  });
}

/** Replaces `resource_link`s to MCP resources with their contents (in place). */
export async function attachMcpResources(
  live: LiveSession,
  prompt: acp.ContentBlock[],
): Promise<void> {
  const mcp = live.session.mcp;
  if (!mcp || !prompt.some((b) => b.type === "resource_link")) return;
  await mcp.ready;
  const out: acp.ContentBlock[] = [];
  for (const b of prompt) {
    if (b.type !== "resource_link" || !mcp.resources().some((r) => r.uri === b.uri)) {
      out.push(b);
      continue;
    }
    try {
      const contents = await mcp.readResource(b.uri);
      if (!contents?.length) {
        out.push(b);
        continue;
      }
      for (const c of contents) {
        out.push({
          type: "resource",
          resource: typeof c.text === "string"
            ? { uri: c.uri, text: c.text, ...(c.mimeType ? { mimeType: c.mimeType } : {}) }
            : { uri: c.uri, blob: c.blob ?? "", ...(c.mimeType ? { mimeType: c.mimeType } : {}) },
        });
      }
    } catch (e) {
      out.push(b, {
        type: "text",
        text: `(could not read MCP resource ${b.uri}: ${e instanceof Error ? e.message : e})`,
      });
    }
  }
  prompt.splice(0, prompt.length, ...out);
}
