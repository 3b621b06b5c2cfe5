/**
 * `coyote mcp list [--json] [--timeout MS]`: shows every configured MCP server, the file it
 * came from, whether it starts (connect + `tools/list`, bounded by the timeout) and its tool
 * count. Output goes to stdout (a table, or one JSON object with `--json`); config warnings
 * go to stderr. Exit codes: 0 listed (even when some servers fail), 2 usage error.
 * `coyote mcp login|logout NAME` (OAuth of a remote server) is ./mcp_login.ts.
 * @module
 */
import { safeCell, safeText } from "../../util/terminal_safe.ts";
import type { AppOptions } from "../../config/app_options.ts";
import {
  connectMcpServers,
  loadMcpConfig,
  type McpServerStatus,
} from "../../extensions/mcp/mod.ts";

/** Runs `coyote mcp <sub>`; returns the process exit code. */
export async function mcpCommand(app: AppOptions, sub: string, args: string[]): Promise<number> {
  if (sub === "login" || sub === "logout") {
    return await (await import("./mcp_login.ts")).mcpLoginCommand(app, sub, args);
  }
  if (sub !== "list") {
    console.error(
      `coyote: mcp: unknown subcommand "${sub}" (try: coyote mcp list, login NAME, logout NAME)`,
    );
    return 2;
  }
  let json = false;
  let timeoutMs: number | undefined;
  let noConnect = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--json") json = true;
    else if (a === "--no-connect") noConnect = true;
    else if (a === "--timeout" || a.startsWith("--timeout=")) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[++i];
      const n = Number(v);
      if (!v || !Number.isFinite(n) || n <= 0) {
        console.error(
          `coyote: mcp list: --timeout needs a positive number of milliseconds, got ${
            JSON.stringify(v ?? "")
          }`,
        );
        return 2;
      }
      timeoutMs = n;
    } else if (a === "-h" || a === "--help") {
      console.log("usage: coyote mcp list [--json] [--timeout MS] [--no-connect]");
      return 0;
    } else {
      console.error(
        `coyote: mcp list: unknown argument ${
          JSON.stringify(a)
        } (usage: coyote mcp list [--json] [--timeout MS] [--no-connect])`,
      );
      return 2;
    }
  }
  const { servers, warnings, files } = await loadMcpConfig(app, app.cwd);
  for (const w of warnings) console.error(safeText(`coyote: warning: ${w}`));
  // Untrusted workspace: say which workspace files were not read (core/config/trust.ts).
  const ignored = (app.workspace?.ignored ?? []).filter((f) => f.endsWith("mcp.json"));
  if (ignored.length && app.workspace) {
    const { untrustedNote } = await import("../../config/trust.ts");
    console.error(untrustedNote(app.workspace.trust, ignored));
  }
  let statuses: McpServerStatus[];
  if (noConnect || servers.length === 0) {
    statuses = servers.map((s) => ({
      name: s.name,
      source: s.source,
      type: "url" in s.spec ? (s.spec.type === "sse" ? "sse" : "http") : "stdio",
      status: noConnect ? "unchecked" : "closed",
      tools: 0,
    }));
  } else {
    const conn = await connectMcpServers(servers, {
      cwd: app.cwd,
      timeoutMs: timeoutMs ?? 10_000,
      onWarning: () => {},
    });
    statuses = conn.servers.map((s) => ({
      ...s,
      status: s.status === "closed" ? "connected" : s.status,
    }));
    await conn.close();
  }
  if (json) {
    console.log(JSON.stringify({ servers: statuses, files, warnings }));
    return 0;
  }
  if (statuses.length === 0) {
    console.log("No MCP servers configured.");
    console.log(
      `Looked in: ${
        [
          `${app.configDir}/mcp.json`,
          ...(app.noWorkspaceMcp ? [] : [".coyote/mcp.json", ".coyote/.mcp.json", ".mcp.json"]),
        ].join(", ")
      }`,
    );
    return 0;
  }
  // Server names and errors come from config files a repository may hold: escaped.
  const rows = statuses.map((s) =>
    [
      s.name,
      s.type,
      noConnect ? "not checked" : s.status,
      noConnect || s.status !== "connected" ? "-" : String(s.tools),
      s.source,
    ].map(safeCell)
  );
  const head = ["NAME", "TYPE", "STATUS", "TOOLS", "SOURCE"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) =>
    r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ");
  console.log(fmt(head));
  for (const r of rows) console.log(fmt(r));
  for (const s of statuses) {
    if (s.error && !noConnect) console.log(safeText(`  ${s.name}: ${s.error}`));
  }
  return 0;
}
