/**
 * Requests MCP servers send to Coyote (issue 21; docs/mcp.md "Sampling and elicitation"), served
 * by the root session whose turn is running (else the last opened one; the workspace routes them,
 * core/session/workspace.ts `mcpRequests`):
 * - `sampling/createMessage` → one completion of the session's model (its provider, its current
 *   model; the server's `systemPrompt` and text messages; images and audio become placeholders;
 *   no tools). Gated like a tool call: the access `Tool(mcp__sampling__<server>)` goes through the
 *   session's policy (not covered by a rule for the server's tools, `mcp__<server>__*`) — a rule
 *   allows or denies it, the default asks (REPL prompt, ACP
 *   `session/request_permission`, `allow_always` remembered for the session; denied at once in
 *   headless unless config or `--allow` allows it). A refusal answers JSON-RPC error `-1` ("User
 *   rejected sampling request", MCP's own wording).
 * - `elicitation/create` (form mode) → the session's question path (`HostServices.askUser`: the
 *   REPL prompt, ACP `elicitation/create` or `session/request_permission`, core/frontends/acp/
 *   questions.ts): one question per property of `requestedSchema` (boolean → confirm, enum →
 *   select, string/number → input); answers `{action: "accept", content}`, `cancel` when the user
 *   dismisses a question, `decline` when nobody can answer (headless) or the schema is not a flat
 *   form.
 * Each request shows as a tool call of the running turn (`tool_call` then its final
 * `tool_call_update`), so the editor's card for the permission request or question ends.
 * @module
 */
import type { HostServices, UserQuestion } from "../../sdk/mod.ts";
import type { EngineEvent, PermissionResolver } from "../protocol/types.ts";
import type { ModelClient, PolicyLike } from "../engine/types.ts";
import type { ChatMessage } from "../transcript/types.ts";

/** What a session serves (the workspace calls the running one). */
export interface McpRequestHandler {
  /** True while the session runs a turn. */
  busy(): boolean;
  sample(server: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  elicit(server: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** An MCP JSON-RPC error the SDK sends back as is (`code`, `message`). */
export class McpRequestError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** What {@link mcpRequestHandler} needs of its session. */
export interface McpRequestDeps {
  sessionId: string;
  busy(): boolean;
  policy(): PolicyLike;
  permission: PermissionResolver;
  /** Host services for a request shown as tool call `toolCallId` (undefined: nobody answers). */
  host(toolCallId: string, toolName: string): HostServices | undefined;
  client: ModelClient;
  model(): string;
  /** The running turn's event sink, or null between turns. */
  emit(): ((ev: EngineEvent) => void) | null;
  log(line: string): void;
}

let seq = 0;

/** The model-facing text of MCP content (`{type: "text", text}`; other kinds as placeholders). */
function contentText(c: unknown): string {
  const list = Array.isArray(c) ? c : [c];
  return list.map((x) => {
    const b = (x ?? {}) as Record<string, unknown>;
    if (b.type === "text" && typeof b.text === "string") return b.text;
    return `[${String(b.type ?? "content")}${b.mimeType ? `: ${b.mimeType}` : ""}]`;
  }).join("\n");
}

/** The request handler of one root session (see the module doc). */
export function mcpRequestHandler(d: McpRequestDeps): McpRequestHandler {
  const card = (server: string, what: string, rawInput: unknown) => {
    const id = `mcp_${what}_${++seq}`;
    const emit = d.emit();
    emit?.({
      sessionUpdate: "tool_call",
      toolCallId: id,
      title: what === "sampling"
        ? `MCP server ${server} asks to use the model`
        : `MCP server ${server} asks for input`,
      kind: "other",
      status: "pending",
      rawInput: rawInput as Record<string, unknown>,
    });
    return {
      id,
      end(ok: boolean, text?: string) {
        emit?.({
          sessionUpdate: "tool_call_update",
          toolCallId: id,
          status: ok ? "completed" : "failed",
          ...(text ? { content: [{ type: "content", content: { type: "text", text } }] } : {}),
        });
      },
    };
  };

  return {
    busy: () => d.busy(),
    async sample(server, params, signal) {
      // Not `mcp__<server>__…`: a rule allowing a server's tools (`mcp__github__*`) does not
      // hand it the model.
      const name = `mcp__sampling__${server.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
      const messages = Array.isArray(params.messages) ? params.messages as unknown[] : [];
      const system = typeof params.systemPrompt === "string" ? params.systemPrompt : undefined;
      const chat: ChatMessage[] = [
        ...(system ? [{ role: "system", content: system } as ChatMessage] : []),
        ...messages.map((m) => {
          const r = (m ?? {}) as { role?: string; content?: unknown };
          return {
            role: r.role === "assistant" ? "assistant" : "user",
            content: contentText(r.content),
          } as ChatMessage;
        }),
      ];
      const rawInput = {
        server,
        ...(system ? { systemPrompt: system } : {}),
        messages: chat.filter((m) => m.role !== "system").map((m) => ({
          role: m.role,
          text: String(m.content).slice(0, 2000),
        })),
        ...(typeof params.maxTokens === "number" ? { maxTokens: params.maxTokens } : {}),
      };
      const c = card(server, "sampling", rawInput);
      const access = { type: "tool" as const, name };
      const verdict = await d.policy().evaluate(access);
      let allowed = verdict.decision === "allow";
      if (verdict.decision === "ask") {
        const outcome = await d.permission({
          sessionId: d.sessionId,
          toolCallId: c.id,
          toolName: name,
          title: `MCP server ${server} asks to use the model (sampling)`,
          kind: "other",
          rawInput,
          verdicts: [verdict],
        }, signal).catch(() => "reject_once" as const);
        allowed = outcome === "allow_once" || outcome === "allow_always";
        const rule = `Tool(${name})`;
        try {
          if (outcome === "allow_always") d.policy().addRule("allow", rule, "session");
          if (outcome === "reject_always") d.policy().addRule("deny", rule, "session");
        } catch (e) {
          d.log(`coyote: could not remember the rule ${rule}: ${(e as Error).message}`);
        }
      }
      if (!allowed) {
        const why = verdict.decision === "deny" ? verdict.reason : "the user did not allow it";
        c.end(false, `sampling refused: ${why}`);
        d.log(`coyote: MCP server ${server}: sampling request refused (${why})`);
        throw new McpRequestError(-1, `User rejected sampling request: ${why}`);
      }
      try {
        const model = d.model();
        const res = await d.client.complete({ messages: chat, model }, {}, signal);
        c.end(true, res.text);
        return {
          role: "assistant",
          content: { type: "text", text: res.text },
          model,
          stopReason: res.finishReason === "length" ? "maxTokens" : "endTurn",
        };
      } catch (e) {
        c.end(false, (e as Error).message);
        throw new McpRequestError(-32603, `sampling failed: ${(e as Error).message}`);
      }
    },
    async elicit(server, params, signal) {
      const message = typeof params.message === "string" ? params.message : "";
      if (params.mode === "url") return { action: "decline" };
      const schema = (params.requestedSchema ?? {}) as {
        properties?: Record<string, Record<string, unknown>>;
        required?: string[];
      };
      const props = Object.entries(schema.properties ?? {});
      const c = card(server, "elicitation", { server, message, requestedSchema: schema });
      const host = d.host(c.id, `mcp__${server}__elicitation`);
      if (!host?.askUser || !props.length) {
        c.end(false, "declined: nobody can answer here");
        return { action: "decline" };
      }
      const content: Record<string, unknown> = {};
      try {
        for (const [i, [key, p]] of props.entries()) {
          const label = String(p.title ?? key) + (p.description ? ` (${p.description})` : "");
          const question = i === 0 ? `${server}: ${message}\n${label}` : label;
          const options = Array.isArray(p.enum)
            ? p.enum.map(String)
            : Array.isArray(p.oneOf)
            ? (p.oneOf as { const?: unknown }[]).map((o) => String(o.const))
            : undefined;
          const q: UserQuestion = p.type === "boolean"
            ? { action: "confirm", question }
            : options?.length
            ? { action: "select", question, options }
            : { action: "input", question };
          if (p.default !== undefined) q.default = p.default as string | boolean;
          const answer = await host.askUser(q, signal);
          if (p.type === "number" || p.type === "integer") {
            const n = Number(answer);
            if (!Number.isFinite(n)) throw new Error(`"${key}" needs a number`);
            content[key] = p.type === "integer" ? Math.trunc(n) : n;
          } else if (answer !== "" || schema.required?.includes(key)) content[key] = answer;
        }
      } catch (e) {
        c.end(false, `cancelled: ${(e as Error).message}`);
        return { action: "cancel" };
      }
      c.end(true, JSON.stringify(content));
      return { action: "accept", content };
    },
  };
}
