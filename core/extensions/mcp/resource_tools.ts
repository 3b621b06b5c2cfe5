/**
 * MCP resources the model can list and read itself (issue 21; docs/mcp.md "Resources"), as
 * Claude Code's `ListMcpResourcesTool` / `ReadMcpResourceTool` and Codex's
 * `list_mcp_resources` / `read_mcp_resource` do, named in Coyote's `<pack>__<verb>` form:
 * - `mcp__list_resources {server?}` → the resources of the running servers (or of one):
 *   a JSON array of `{server, uri, name, mimeType?, description?}`;
 * - `mcp__read_resource {server?, uri}` → `resources/read` on the server that lists `uri`
 *   (`server` picks one when several list it): text contents as text (several joined, each
 *   under a `--- uri (mime)` line), an image blob as an image part (sent to a model with
 *   `images: true`, else a placeholder), another blob as a `[binary resource: mime, N bytes]`
 *   line.
 * They are offered only while a connected server lists at least one resource (the workspace
 * adds them to the tool list, core/session/workspace.ts), and are read-only: allowed by the
 * default policy (other `mcp__*` tools ask; core/policy/names.ts), a rule naming them still
 * applies. No MCP SDK import: they work on the connection view (`McpConnection`).
 * @module
 */
import type { ToolContext, ToolResult } from "../../../sdk/mod.ts";
import type { AnyTool } from "../../protocol/types.ts";
import type { McpConnection } from "./types.ts";
import { headText } from "../../util/text.ts";

/** The two tool names (read-only; the default policy allows them). */
export const MCP_RESOURCE_TOOLS = ["mcp__list_resources", "mcp__read_resource"] as const;

/** Largest text of one `mcp__read_resource` result, in characters (the rest is cut, said so). */
const MAX_TEXT = 200_000;

/** The resource tools over the connection `view()` returns (null: no MCP servers). */
export function mcpResourceTools(view: () => McpConnection | null): AnyTool[] {
  const list: AnyTool = {
    name: "mcp__list_resources",
    description:
      "List the resources (files, documents, records) that the connected MCP servers offer. " +
      "Returns a JSON array of {server, uri, name, mimeType, description}; read one with " +
      "mcp__read_resource.",
    input: {
      type: "object",
      properties: {
        server: { type: "string", description: "Only this MCP server's resources" },
      },
    },
    kind: "read",
    readOnly: true,
    title: (i?: Record<string, unknown>) =>
      typeof i?.server === "string" ? `List MCP resources of ${i.server}` : "List MCP resources",
    access: () => [{ type: "tool", name: "mcp__list_resources" }],
    run(input: Record<string, unknown>): Promise<ToolResult> {
      const mcp = view();
      const server = typeof input?.server === "string" && input.server ? input.server : undefined;
      const all = mcp?.resources() ?? [];
      if (server && !(mcp?.servers ?? []).some((s) => s.name === server)) {
        const names = (mcp?.servers ?? []).map((s) => s.name).join(", ") || "none";
        return Promise.resolve({
          content: `no MCP server named ${server} (servers: ${names})`,
          isError: true,
        });
      }
      const items = all.filter((r) => !server || r.server === server).map((r) => ({
        server: r.server,
        uri: r.uri,
        name: r.name,
        ...(r.mimeType ? { mimeType: r.mimeType } : {}),
        ...(r.description ? { description: r.description } : {}),
      }));
      return Promise.resolve({
        content: items.length ? JSON.stringify(items) : "no resources",
        rawOutput: items,
      });
    },
  };
  const read: AnyTool = {
    name: "mcp__read_resource",
    description:
      "Read one resource of a connected MCP server by its URI (as listed by mcp__list_resources). " +
      "Returns its text; images are attached as images.",
    input: {
      type: "object",
      properties: {
        uri: { type: "string", description: "The resource URI" },
        server: {
          type: "string",
          description: "The MCP server that lists it (needed only when several do)",
        },
      },
      required: ["uri"],
    },
    kind: "read",
    readOnly: true,
    title: (i?: Record<string, unknown>) => `Read MCP resource ${String(i?.uri ?? "")}`,
    access: () => [{ type: "tool", name: "mcp__read_resource" }],
    async run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
      const mcp = view();
      const uri = typeof input?.uri === "string" ? input.uri : "";
      const server = typeof input?.server === "string" && input.server ? input.server : undefined;
      if (!uri) return { content: "uri is required", isError: true };
      const listed = (mcp?.resources() ?? []).filter((r) =>
        r.uri === uri && (!server || r.server === server)
      );
      if (!mcp || !listed.length) {
        return {
          content: `no running MCP server${
            server ? ` named ${server}` : ""
          } lists the resource ${uri}; see mcp__list_resources`,
          isError: true,
        };
      }
      try {
        const contents = await abortable(mcp.readResource(uri, listed[0].server), ctx.signal);
        return resultOf(uri, contents ?? []);
      } catch (e) {
        if (ctx.signal.aborted) return { content: "cancelled", isError: true };
        return {
          content: `MCP server ${listed[0].server} could not read ${uri}: ${
            e instanceof Error ? e.message : String(e)
          }`,
          isError: true,
        };
      }
    },
  };
  return [list, read];
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error("cancelled"));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error("cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The tool result of `resources/read` contents (see the module doc). */
function resultOf(
  uri: string,
  contents: { uri: string; mimeType?: string; text?: string; blob?: string }[],
): ToolResult {
  if (!contents.length) return { content: `${uri} is empty` };
  const parts: string[] = [];
  const images: { data: string; mimeType: string }[] = [];
  for (const c of contents) {
    const head = contents.length > 1 ? `--- ${c.uri}${c.mimeType ? ` (${c.mimeType})` : ""}\n` : "";
    if (typeof c.text === "string") parts.push(head + c.text);
    else if (typeof c.blob === "string") {
      const bytes = Math.floor(c.blob.length * 3 / 4);
      if (c.mimeType?.startsWith("image/")) images.push({ data: c.blob, mimeType: c.mimeType });
      parts.push(
        `${head}[${c.mimeType?.startsWith("image/") ? "image" : "binary resource"}: ${
          c.mimeType ?? "application/octet-stream"
        }, ${bytes} bytes]`,
      );
    }
  }
  let text = parts.join("\n");
  if (text.length > MAX_TEXT) {
    text = headText(text, MAX_TEXT) + `\n[… cut: the resource has ${text.length} characters]`;
  }
  const out: ToolResult = { content: text, rawOutput: contents };
  if (images.length) out.images = images;
  return out;
}
