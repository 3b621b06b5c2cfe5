/**
 * `coyote mcp login NAME [--timeout MS] [--no-browser]` and `coyote mcp logout NAME`: OAuth for a
 * remote (`http`/`sse`) MCP server of the configuration (docs/mcp.md "OAuth"). Login prints the
 * authorization URL on stdout (and opens a browser on a terminal), waits for the loopback redirect
 * and stores the tokens under the data dir (`mcp-oauth/`, mode 0600); logout deletes the tokens
 * and the client registration. The flow is core/extensions/mcp/oauth/login.ts.
 * Exit codes: 0 done; 2 a usage error, an unknown or stdio server, or a login that failed (the
 * reason on stderr), as the other subcommands (README "Subcommands").
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import { loadMcpConfig } from "../../extensions/mcp/mod.ts";
import { safeText } from "../../util/terminal_safe.ts";

const USAGE = "usage: coyote mcp login NAME [--timeout MS] [--no-browser] | coyote mcp logout NAME";

/** Runs `coyote mcp login|logout`; returns the exit code. */
export async function mcpLoginCommand(
  app: AppOptions,
  sub: "login" | "logout",
  args: string[],
): Promise<number> {
  let name: string | undefined;
  let timeoutMs: number | undefined;
  let openBrowser: boolean | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "-h" || a === "--help") {
      console.log(USAGE);
      return 0;
    } else if (sub === "login" && a === "--no-browser") openBrowser = false;
    else if (sub === "login" && (a === "--timeout" || a.startsWith("--timeout="))) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[++i];
      const n = Number(v);
      if (!v || !Number.isFinite(n) || n <= 0) {
        console.error(
          `coyote: mcp login: --timeout needs a positive number of milliseconds, got ${
            JSON.stringify(v ?? "")
          }`,
        );
        return 2;
      }
      timeoutMs = n;
    } else if (!a.startsWith("-") && name === undefined) name = a;
    else {
      console.error(`coyote: mcp ${sub}: unexpected argument ${JSON.stringify(a)} (${USAGE})`);
      return 2;
    }
  }
  if (!name) {
    console.error(`coyote: mcp ${sub}: which server? (${USAGE})`);
    return 2;
  }
  const { servers, warnings } = await loadMcpConfig(app, app.cwd);
  for (const w of warnings) console.error(safeText(`coyote: warning: ${w}`));
  const server = servers.find((s) => s.name === name);
  if (!server) {
    const names = servers.map((s) => s.name);
    console.error(safeText(
      `coyote: mcp ${sub}: no MCP server named "${name}" (${
        names.length ? `configured: ${names.join(", ")}` : "none configured"
      }; see coyote mcp list)`,
    ));
    return 2;
  }
  if (!("url" in server.spec)) {
    console.error(safeText(
      `coyote: mcp ${sub}: "${name}" is a stdio server (${server.source}); OAuth applies to http and sse servers`,
    ));
    return 2;
  }
  const { loginMcpServer, logoutMcpServer } = await import(
    "../../extensions/mcp/oauth/login.ts"
  );
  if (sub === "logout") {
    const had = await logoutMcpServer(app.dataDir, server.spec.url);
    console.log(
      had
        ? safeText(
          `Logged out of MCP server ${name}: its tokens and client registration are deleted.`,
        )
        : safeText(`MCP server ${name}: nothing stored (not logged in).`),
    );
    return 0;
  }
  try {
    const path = await loginMcpServer({
      name,
      serverUrl: server.spec.url,
      dataDir: app.dataDir,
      headers: server.spec.headers,
      timeoutMs,
      openBrowser,
      print: (l) => console.log(safeText(l)),
    });
    console.log(safeText(`Logged in to MCP server ${name}; tokens saved in ${path} (mode 0600).`));
    return 0;
  } catch (e) {
    console.error(safeText(`coyote: mcp login ${name}: ${(e as Error).message}`));
    return 2;
  }
}
