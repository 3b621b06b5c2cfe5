/**
 * An MCP server's tools as Coyote tools: the model-facing name (`mcp__<server>__<tool>`,
 * sanitised to `[a-zA-Z0-9_-]`, at most 64 characters, the OpenAI function-name rule), the kind
 * (`readOnlyHint` → `read`), the wrapped `tools/call` (results not validated against
 * `outputSchema`; a stopped server answers `MCP server X is not running: …`) and the text the
 * model sees of a `CallToolResult` ({@link contentToText}). Also the paged reading of
 * `tools/list`, `prompts/list` and `resources/list` without the SDK's item schemas
 * ({@link listAll}), so one odd item never removes the others.
 * @module
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ToolContext, ToolKind, ToolResult } from "../../../sdk/mod.ts";
import type { AnyTool } from "../../protocol/types.ts";
import { DEFAULT_TOOL_TIMEOUT_MS } from "./config.ts";
import { errMsg, type ServerState } from "./server.ts";
import type { ConnectOptions } from "./types.ts";
import { headText } from "../../util/text.ts";

/**
 * Sanitises a name part to `[a-zA-Z0-9_-]` (other characters become `_`).
 */
export function sanitizeName(s: string): string {
  return s.replace(/[^a-zA-Z0-9_-]/g, "_");
}

/** Short stable hash (FNV-1a, base36) used to keep truncated names unique. */
function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

/**
 * The model-facing name of an MCP tool: `mcp__<server>__<tool>`, sanitised, at most 64
 * characters (OpenAI function-name rule); longer names are cut and get a hash suffix.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `mcp__${sanitizeName(server)}__${sanitizeName(tool)}`;
  if (full.length <= 64) return full;
  const suffix = "_" + shortHash(`${server}\u0000${tool}`);
  return full.slice(0, 64 - suffix.length) + suffix;
}

/** A `tools/list` item, as far as Coyote reads it. */
export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    openWorldHint?: boolean;
  };
}

function toolKind(t: McpTool): ToolKind {
  return t.annotations?.readOnlyHint === true ? "read" : "other";
}

/** Turns MCP `CallToolResult.content` into the text the model sees. */
export function contentToText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const c of content) {
    if (!c || typeof c !== "object") continue;
    const b = c as Record<string, unknown>;
    switch (b.type) {
      case "text":
        parts.push(String(b.text ?? ""));
        break;
      case "image":
      case "audio": {
        const data = typeof b.data === "string" ? b.data : "";
        parts.push(
          `[${b.type}: ${b.mimeType ?? "unknown"}, ${Math.floor(data.length * 3 / 4)} bytes]`,
        );
        break;
      }
      case "resource": {
        const r = (b.resource ?? {}) as Record<string, unknown>;
        if (typeof r.text === "string") parts.push(`[resource ${r.uri}]\n${r.text}`);
        else parts.push(`[resource ${r.uri}: ${r.mimeType ?? "binary"}]`);
        break;
      }
      case "resource_link":
        parts.push(`[resource link ${b.uri}${b.name ? ` (${b.name})` : ""}]`);
        break;
      default:
        parts.push(JSON.stringify(b));
    }
  }
  return parts.join("\n");
}

/**
 * The `image` blocks of MCP `CallToolResult.content` (base64 `data` and `mimeType`), for a model
 * that accepts images (core/engine/execute.ts sends them as image parts); the text keeps its
 * `[image: …]` placeholder for the others.
 */
export function contentImages(content: unknown): { data: string; mimeType: string }[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((c) => {
    const b = (c ?? {}) as Record<string, unknown>;
    return b.type === "image" && typeof b.data === "string" && b.data &&
        typeof b.mimeType === "string" && /^image\/[\w.+-]+$/.test(b.mimeType)
      ? [{ data: b.data, mimeType: b.mimeType }]
      : [];
  });
}

/** The Coyote tool that calls `t` on the server of `st` (`schema`: its repaired input schema). */
export function wrapTool(
  st: ServerState,
  t: McpTool,
  schema: Record<string, unknown>,
  wrapped: boolean,
  opts: ConnectOptions,
): AnyTool {
  const name = mcpToolName(st.d.name, t.name);
  const server = st.d.name;
  const toolTimeout = opts.toolTimeoutMs ??
    (Number(Deno.env.get("MCP_TOOL_TIMEOUT")) || DEFAULT_TOOL_TIMEOUT_MS);
  return {
    name,
    description: headText(
      `${t.description ?? t.title ?? t.name} (MCP server ${server}, tool ${t.name})`,
      4096,
    ),
    input: schema,
    kind: toolKind(t),
    readOnly: t.annotations?.readOnlyHint === true,
    title: () => t.annotations?.title ?? t.title ?? `${server}: ${t.name}`,
    access: () => [{ type: "tool", name }],
    async run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
      if (!st.alive || !st.client) {
        return {
          content: `MCP server ${server} is not running: ${st.deadReason ?? "not connected"}`,
          isError: true,
        };
      }
      try {
        // Not `client.callTool`: it validates structured output against `outputSchema` and
        // would replace an error result's own message with a schema-mismatch error.
        // (A wrapped root's `{value}` is sent as is: MCP arguments are always an object.)
        const args = input ?? {};
        void wrapped;
        const res = await st.client.request(
          { method: "tools/call", params: { name: t.name, arguments: args as never } },
          CallToolResultSchema,
          { signal: ctx.signal, timeout: toolTimeout, resetTimeoutOnProgress: true },
        );
        const r = res as {
          content?: unknown;
          structuredContent?: unknown;
          isError?: boolean;
          toolResult?: unknown;
        };
        let text = r.content !== undefined
          ? contentToText(r.content)
          : JSON.stringify(r.toolResult ?? null);
        if (!text && r.structuredContent !== undefined) text = JSON.stringify(r.structuredContent);
        const out: ToolResult = { content: text, isError: r.isError === true };
        const images = contentImages(r.content);
        if (images.length) out.images = images;
        out.rawOutput = r.structuredContent !== undefined ? r.structuredContent : r.content;
        return out;
      } catch (e) {
        if (ctx.signal.aborted) return { content: "cancelled", isError: true };
        if (!st.alive) {
          return {
            content: `MCP server ${server} is not running: ${st.deadReason ?? errMsg(e)}`,
            isError: true,
          };
        }
        return {
          content: `MCP server ${server}, tool ${t.name} failed: ${errMsg(e)}`,
          isError: true,
        };
      }
    },
  };
}

/** Reads every page of a list method (tools, prompts, resources) without the SDK item schemas. */
export async function listAll(
  client: Client,
  method: "tools/list" | "prompts/list" | "resources/list",
  key: "tools" | "prompts" | "resources",
  opts: { signal?: AbortSignal; timeout: number },
): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request(
      { method, params: cursor ? { cursor } : {} },
      ResultSchema,
      opts,
    ) as Record<string, unknown>;
    const list = page[key];
    if (Array.isArray(list)) items.push(...list);
    cursor = typeof page.nextCursor === "string" && page.nextCursor ? page.nextCursor : undefined;
  } while (cursor && items.length < 10_000);
  return items;
}
