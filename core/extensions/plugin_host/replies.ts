/**
 * What a plugin process sends back, seen as untrusted input: the manifest of its
 * `ready` message ({@link PluginManifest}), and the checks that keep only
 * well-formed fields of a call's result and progress (see worker_main.ts for
 * the message protocol). Faults become tool errors ({@link errorResult}).
 * @module
 */
import type { ToolProgress, ToolResult } from "../../../sdk/mod.ts";

/** The manifest a plugin reports from its worker (plain data). */
export interface PluginManifest {
  name: string;
  version: string;
  description?: string;
  sdkVersion?: string;
  permissions: Record<string, unknown>;
  tools: {
    name: string;
    description: string;
    inputSchema: Record<string, unknown>;
    kind?: string;
    readOnly?: boolean;
    concurrency?: string;
  }[];
  agents: unknown[];
  skills: unknown[];
}

/** A tool error naming the plugin. */
export const errorResult = (plugin: string, message: string): ToolResult => ({
  content: `plugin ${plugin}: ${message}`,
  isError: true,
});

const str = (v: unknown) => typeof v === "string";

/** Keeps only well-formed ToolResult fields from untrusted worker data. */
export function sanitizeResult(v: unknown, plugin: string): ToolResult {
  if (!v || typeof v !== "object" || !str((v as ToolResult).content)) {
    return errorResult(plugin, "returned a malformed result");
  }
  const r = v as ToolResult;
  const out: ToolResult = { content: r.content };
  if (r.isError === true) out.isError = true;
  if (Array.isArray(r.diffs)) {
    out.diffs = r.diffs.filter((d) =>
      d && str(d.path) && str(d.newText) && (d.oldText === null || str(d.oldText))
    );
  }
  if (Array.isArray(r.locations)) {
    out.locations = r.locations.filter((l) =>
      l && str(l.path) && (l.line === undefined || Number.isInteger(l.line))
    );
  }
  if (Array.isArray(r.plan)) {
    out.plan = r.plan.filter((p) => p && str(p.content) && str(p.priority) && str(p.status));
  }
  if (r.rawOutput !== undefined) out.rawOutput = r.rawOutput;
  return out;
}

/** Keeps only well-formed ToolProgress fields from untrusted worker data. */
export function sanitizeProgress(v: unknown): ToolProgress | undefined {
  if (!v || typeof v !== "object") return undefined;
  const u = v as ToolProgress;
  const out: ToolProgress = {};
  if (str(u.message)) out.message = u.message!.slice(0, 4096);
  if (str(u.title)) out.title = u.title!.slice(0, 500);
  if (Array.isArray(u.locations)) {
    out.locations = u.locations.filter((l) => l && str(l.path)).slice(0, 100);
  }
  return out;
}
