/**
 * MCP client, light half: configuration discovery (no MCP SDK import).
 *
 * Config format (Claude Code / Cursor `mcpServers` convention):
 *
 * ```json
 * {"mcpServers": {
 *   "fs":  {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "${HOME}"}, "cwd": "sub"},
 *   "api": {"type": "http", "url": "https://host/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
 *   "old": {"type": "sse",  "url": "https://host/sse"}
 * }}
 * ```
 *
 * Sources, lowest priority first (a later source replaces a same-named server of an earlier one):
 * 1. `config.yaml` `mcpServers` (source `config.yaml`)
 * 2. `<configDir>/mcp.json` (user)
 * 3. workspace `.mcp.json`, then `.coyote/.mcp.json`, then `.coyote/mcp.json` (so `.coyote/mcp.json`
 *    wins inside the workspace; skipped with `--no-workspace-mcp` and in an untrusted workspace,
 *    core/config/trust.ts). A workspace server never replaces a user server (1, 2) of the same name.
 * 4. ACP `session/new` `mcpServers` (merged over all of the above by the runtime, source `acp`)
 *
 * `${VAR}` and `${VAR:-default}` are expanded in every string value from the process environment.
 * A stdio server's environment is only what its entry names plus a safe base
 * (`mcpServerEnv`, ./config.ts), never Coyote's whole environment.
 * Connecting (and the MCP SDK) lives in `./client.ts`, loaded lazily by {@link connectMcpServers}.
 * The entry shape, timeouts and environment are in ./config.ts, the connection's shapes in
 * ./types.ts; this module re-exports the types, as the folder's public face.
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import { appTrusts } from "../../config/trust.ts";
import type { DiscoveredMcpServer, McpServerSpec } from "./config.ts";
import type { ConnectOptions, McpConnection, McpResourceInfo } from "./types.ts";

export type { DiscoveredMcpServer, McpServerSpec } from "./config.ts";
export type {
  ConnectOptions,
  McpChange,
  McpConnection,
  McpPromptInfo,
  McpResourceInfo,
  McpServerStatus,
} from "./types.ts";

/** Workspace config files, in the order the issue names them (highest priority first). */
export const WORKSPACE_MCP_FILES = [".coyote/mcp.json", ".coyote/.mcp.json", ".mcp.json"] as const;

/**
 * Expands `${VAR}` and `${VAR:-default}` (shell convention) in `value` from `env`.
 * Unset variables without a default become `""` and are reported through `missing`.
 */
export function expandVars(
  value: string,
  env: (name: string) => string | undefined,
  missing?: (name: string) => void,
): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_m, name: string, def: string | undefined) => {
      const v = env(name);
      if (v !== undefined && v !== "") return v;
      if (def !== undefined) return def;
      missing?.(name);
      return "";
    },
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Validates and expands one raw `mcpServers` entry. Returns the spec or an error message.
 * Accepted: stdio `{command, args?, env?, cwd?}` (`type` absent or `"stdio"`), remote
 * `{type: "http" | "sse" | "streamable-http", url, headers?}` (`url` without `type` means `http`).
 */
export function parseServerSpec(
  raw: unknown,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): { spec?: McpServerSpec; error?: string; missingVars: string[] } {
  const missingVars: string[] = [];
  const x = (s: string) => expandVars(s, env, (n) => missingVars.push(n));
  if (!isRecord(raw)) return { error: "must be an object", missingVars };
  const strRecord = (v: unknown, field: string): Record<string, string> | string | undefined => {
    if (v === undefined) return undefined;
    if (!isRecord(v)) return `"${field}" must be an object of strings`;
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v)) {
      if (typeof val !== "string" && typeof val !== "number" && typeof val !== "boolean") {
        return `"${field}.${k}" must be a string`;
      }
      out[k] = x(String(val));
    }
    return out;
  };
  const type = raw.type;
  if (
    type === "http" || type === "sse" || type === "streamable-http" ||
    (type === undefined && "url" in raw)
  ) {
    if (typeof raw.url !== "string" || !raw.url) {
      return { error: `"url" must be a non-empty string`, missingVars };
    }
    const url = x(raw.url);
    try {
      new URL(url);
    } catch {
      return { error: `"url" is not a valid URL: ${url}`, missingVars };
    }
    const headers = strRecord(raw.headers, "headers");
    if (typeof headers === "string") return { error: headers, missingVars };
    const spec: McpServerSpec = { type: type === "sse" ? "sse" : "http", url };
    if (headers) spec.headers = headers;
    return { spec, missingVars };
  }
  if (type !== undefined && type !== "stdio") {
    return { error: `unknown "type" ${JSON.stringify(type)} (stdio, http or sse)`, missingVars };
  }
  if (typeof raw.command !== "string" || !raw.command.trim()) {
    return { error: `"command" must be a non-empty string`, missingVars };
  }
  if (
    raw.args !== undefined &&
    (!Array.isArray(raw.args) ||
      raw.args.some((a) => typeof a !== "string" && typeof a !== "number"))
  ) {
    return { error: `"args" must be an array of strings`, missingVars };
  }
  const envRec = strRecord(raw.env, "env");
  if (typeof envRec === "string") return { error: envRec, missingVars };
  if (raw.cwd !== undefined && typeof raw.cwd !== "string") {
    return { error: `"cwd" must be a string`, missingVars };
  }
  const spec: McpServerSpec = { command: x(raw.command) };
  if (raw.args) spec.args = (raw.args as unknown[]).map((a) => x(String(a)));
  if (envRec) spec.env = envRec;
  if (typeof raw.cwd === "string") spec.cwd = x(raw.cwd);
  return { spec, missingVars };
}

/** Parses one `{"mcpServers": {...}}` document; problems become warnings naming `source`. */
export function parseMcpServers(
  doc: unknown,
  source: string,
  env?: (name: string) => string | undefined,
): { servers: DiscoveredMcpServer[]; warnings: string[] } {
  const warnings: string[] = [];
  const servers: DiscoveredMcpServer[] = [];
  if (!isRecord(doc)) {
    return { servers, warnings: [`${source}: expected a JSON object with "mcpServers"; ignored`] };
  }
  const map = doc.mcpServers;
  if (map === undefined) return { servers, warnings };
  if (!isRecord(map)) {
    return { servers, warnings: [`${source}: "mcpServers" must be an object; ignored`] };
  }
  for (const [name, raw] of Object.entries(map)) {
    if (!name.trim()) {
      warnings.push(`${source}: a server with an empty name was ignored`);
      continue;
    }
    if (isRecord(raw) && raw.disabled === true) continue;
    const { spec, error, missingVars } = parseServerSpec(raw, env);
    if (error || !spec) {
      warnings.push(`${source}: MCP server "${name}" ignored: ${error}`);
      continue;
    }
    for (const v of new Set(missingVars)) {
      warnings.push(
        `${source}: MCP server "${name}": environment variable ${v} is not set (expanded to "")`,
      );
    }
    servers.push({ name, spec, source });
  }
  return { servers, warnings };
}

async function readJsonFile(
  path: string,
): Promise<{ doc?: unknown; warning?: string; found: boolean }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { found: false };
    if (e instanceof Deno.errors.IsADirectory) return { found: false };
    return { found: true, warning: `${path}: cannot read MCP config: ${(e as Error).message}` };
  }
  if (!text.trim()) return { found: true, doc: {} };
  try {
    return { found: true, doc: JSON.parse(text) };
  } catch (e) {
    return {
      found: true,
      warning: `${path}: invalid JSON, MCP servers in it ignored: ${(e as Error).message}`,
    };
  }
}

function join(dir: string, rel: string): string {
  return dir.endsWith("/") ? dir + rel : `${dir}/${rel}`;
}

/**
 * Reads every MCP config source for a workspace (see the module doc for order and priority).
 * Never throws: unreadable or invalid files become `warnings` naming the file.
 * Servers are returned with duplicates resolved (highest-priority source wins), in
 * the order they were first seen.
 */
export async function loadMcpConfig(
  app: Pick<
    AppOptions,
    "configDir" | "config" | "noWorkspaceMcp" | "dataDir" | "trustWorkspace" | "workspace"
  >,
  cwd: string,
): Promise<{ servers: DiscoveredMcpServer[]; warnings: string[]; files: string[] }> {
  const warnings: string[] = [];
  const files: string[] = [];
  const byName = new Map<string, DiscoveredMcpServer>();
  const userNames = new Set<string>();
  const add = (list: DiscoveredMcpServer[], user: boolean) => {
    for (const s of list) {
      const prev = byName.get(s.name);
      if (!user && prev && userNames.has(s.name)) {
        warnings.push(
          `${s.source}: MCP server "${s.name}" ignored: a workspace server cannot replace the user's server of that name (${prev.source})`,
        );
        continue;
      }
      if (user) userNames.add(s.name);
      byName.set(s.name, s);
    }
  };
  const cfgServers = app.config?.mcpServers;
  if (cfgServers !== undefined) {
    const r = parseMcpServers({ mcpServers: cfgServers }, "config.yaml");
    warnings.push(...r.warnings);
    add(r.servers, true);
  }
  const paths = [join(app.configDir, "mcp.json")];
  if (!app.noWorkspaceMcp && appTrusts(app, cwd)) {
    for (const rel of [...WORKSPACE_MCP_FILES].reverse()) paths.push(join(cwd, rel));
  }
  const docs = await Promise.all(paths.map((p) => readJsonFile(p)));
  docs.forEach((d, i) => {
    if (!d.found) return;
    files.push(paths[i]);
    if (d.warning) warnings.push(d.warning);
    if (d.doc === undefined) return;
    const r = parseMcpServers(d.doc, paths[i]);
    warnings.push(...r.warnings);
    add(r.servers, i === 0);
  });
  return { servers: [...byName.values()], warnings, files };
}

/**
 * Reads user and workspace MCP config files (see the module doc for order).
 * Warnings (bad JSON, invalid entries, unset variables) go to stderr via `console.warn`.
 */
export async function discoverMcpServers(
  app: AppOptions,
  cwd: string,
): Promise<DiscoveredMcpServer[]> {
  const { servers, warnings } = await loadMcpConfig(app, cwd);
  for (const w of warnings) console.warn(`coyote: warning: ${w}`);
  return servers;
}

/**
 * Connects servers in parallel; a failing server yields a warning, never a throw.
 * Tools of a server that later crashes return `MCP server X is not running: …` errors.
 * Loads the MCP SDK lazily (it is not on the start-up path). With `background`, returns before
 * the servers are up (see {@link McpConnection.ready}).
 */
export async function connectMcpServers(
  servers: DiscoveredMcpServer[],
  opts: ConnectOptions,
): Promise<McpConnection> {
  const { connectAll } = await import("./client.ts");
  const conn = connectAll(servers, opts);
  if (!opts.background) await conn.ready;
  return conn;
}

/**
 * One view over several connections (a workspace's discovered servers plus a session's own):
 * lists are concatenated in order; servers named in `hidden` are left out of the first
 * connection (a session's server replaces a discovered one of the same name); `close` closes
 * nothing (the connections' owner does).
 */
export function combineMcp(conns: McpConnection[], hidden: Set<string> = new Set()): McpConnection {
  const visible = (i: number, server: string) => i > 0 || !hidden.has(server);
  const owner = (server: string) =>
    conns.find((c, i) => visible(i, server) && c.servers.some((s) => s.name === server));
  const toolServer = (name: string) => /^mcp__(.+?)__/.exec(name)?.[1];
  return {
    get tools() {
      return conns.flatMap((c, i) =>
        c.tools.filter((t) => {
          const s = toolServer(t.name);
          return !s || i > 0 || ![...hidden].some((h) => h.replace(/[^a-zA-Z0-9_-]/g, "_") === s);
        })
      );
    },
    get warnings() {
      return conns.flatMap((c) => c.warnings);
    },
    get servers() {
      return conns.flatMap((c, i) => c.servers.filter((s) => visible(i, s.name)));
    },
    ready: Promise.all(conns.map((c) => c.ready)).then(() => {}),
    settled: () => Promise.all(conns.map((c) => c.settled?.())).then(() => {}),
    onChange(listener) {
      const offs = conns.map((c) => c.onChange(listener));
      return () => offs.forEach((off) => off());
    },
    prompts: () => conns.flatMap((c, i) => c.prompts().filter((p) => visible(i, p.server))),
    resources: () => conns.flatMap((c, i) => c.resources().filter((r) => visible(i, r.server))),
    getPrompt(server, name, args) {
      const c = owner(server);
      if (!c) return Promise.reject(new Error(`no MCP server named ${server}`));
      return c.getPrompt(server, name, args);
    },
    async readResource(uri, server) {
      for (const [i, c] of conns.entries()) {
        const lists = (r: McpResourceInfo) =>
          r.uri === uri && visible(i, r.server) && (!server || r.server === server);
        if (!c.resources().some(lists)) continue;
        return await c.readResource(uri, server);
      }
      return null;
    },
    close: () => Promise.resolve(),
  };
}

/**
 * Converts ACP `session/new` `mcpServers` (`McpServer[]`: stdio `{name, command, args, env:
 * [{name, value}]}`, `{type: "http"|"sse", name, url, headers: [{name, value}]}`) into a record
 * of {@link McpServerSpec}. Entries without a usable name or command/url are skipped.
 */
export function mcpServersFromAcp(list: unknown): Record<string, McpServerSpec> {
  const out: Record<string, McpServerSpec> = {};
  if (!Array.isArray(list)) return out;
  const pairs = (v: unknown): Record<string, string> | undefined => {
    if (!Array.isArray(v) || v.length === 0) return undefined;
    const r: Record<string, string> = {};
    for (const p of v) {
      if (isRecord(p) && typeof p.name === "string" && typeof p.value === "string") {
        r[p.name] = p.value;
      }
    }
    return r;
  };
  for (const s of list) {
    if (!isRecord(s) || typeof s.name !== "string" || !s.name) continue;
    if ((s.type === "http" || s.type === "sse") && typeof s.url === "string") {
      const spec: McpServerSpec = { type: s.type, url: s.url };
      const h = pairs(s.headers);
      if (h) spec.headers = h;
      out[s.name] = spec;
    } else if (typeof s.command === "string" && s.command) {
      const spec: McpServerSpec = { command: s.command };
      if (Array.isArray(s.args)) spec.args = s.args.map(String);
      const e = pairs(s.env);
      if (e) spec.env = e;
      out[s.name] = spec;
    }
  }
  return out;
}
