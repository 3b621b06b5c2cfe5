/**
 * The Workspace: what every session on one working directory shares — provider client,
 * base policy (plugin grants), plugin host, MCP connections, skills, workspace instructions
 * and the agent registry. Started once per process and per directory
 * ({@link acquireWorkspace}); a session (core/session/conversation.ts) is one conversation on it, and a
 * sub-agent is a new session on its parent's workspace (no new MCP processes, no new plugin
 * workers).
 *
 * Start-up: the plugin host and the MCP client are loaded with literal dynamic imports, and
 * only when there is something to load (plugins configured or a plugin folder present; MCP
 * servers discovered or passed in).
 * @module
 */
import { safeText } from "../util/terminal_safe.ts";
import { join } from "../util/path.ts";
import type { AppOptions } from "../config/app_options.ts";
import type { AnyTool } from "../protocol/types.ts";
import type { DiscoveredMcpServer, McpConnection, McpServerSpec } from "../extensions/mcp/mod.ts";
import { McpRequestError, type McpRequestHandler } from "./mcp_requests.ts";
import { Policy } from "../policy/policy.ts";
import { coreToolStubs } from "../../plugins/stubs.ts";
import { warmLazyTools } from "../tools/lazy.ts";
import type { ModelClient } from "../engine/mod.ts";
import { findInstructions, type WorkspaceInstructions } from "../config/instructions.ts";
import { PLACEHOLDER_API_KEY, type ProviderFlags, resolveProvider } from "../config/config.ts";
import type { ProviderConfig } from "../provider/types.ts";
import {
  knownSecretCandidates,
  lazyRedactor,
  redactingTool,
  secretValues,
} from "../tools/redact.ts";
import { createProvider } from "../provider/provider.ts";
import { detectBackend } from "../policy/sandbox/mod.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { loadAgentsAndSkills } from "../agents/prepare.ts";
import type { SkillEntry } from "../extensions/skills/load.ts";
import { appTrusts, refusedJustNow, type TrustState, untrustedNote } from "../config/trust.ts";
import { applyWorkspace } from "../config/project.ts";
import { exists } from "../config/workspace_dirs.ts";

/**
 * A user or configuration error (unknown agent, unknown session, no provider):
 * frontends report the message without a stack trace (CLI exit code 2).
 */
export class UsageError extends Error {
  override name = "UsageError";
}

/** What sessions on one directory share; see the module doc. */
export interface Workspace {
  /** The options of this directory: user config with the project config applied when trusted. */
  readonly app: AppOptions;
  /**
   * The directory's trust (core/config/trust.ts). Untrusted: no workspace MCP servers, `.coyote/plugins/`
   * or `.coyote/config*.yaml`; workspace agents must not get extra permissions either.
   */
  readonly trust: TrustState;
  /** Absolute workspace root. */
  readonly cwd: string;
  readonly providerConfig: ProviderConfig;
  readonly client: ModelClient;
  /** The model when neither the session nor its agent names one. */
  readonly defaultModel: string;
  /** Every agent of this directory (core/agents/registry.ts). */
  readonly agents: AgentRegistry;
  /** Every skill visible from this directory (core/extensions/skills/load.ts); agents filter them. */
  readonly skills: SkillEntry[];
  /**
   * Hooks contributed by plugins (run inside the OS sandbox): `hooks.stop` commands
   * (core/extensions/hooks/stop.ts) and, with `event`, lifecycle hooks (core/session/hooks.ts).
   */
  readonly pluginStopHooks: import("../extensions/plugin_host/mod.ts").PluginHook[];
  /**
   * Problems found while starting (lenient front matter, ignored keys, skipped skills): logged
   * and also carried by the first `turn_started` event of each root session.
   */
  readonly warnings: string[];
  readonly instructions: WorkspaceInstructions | null;
  /** Diagnostics sink (stderr by default); never stdout. */
  log(line: string): void;
  /** A fresh policy from config and flags (each root session has its own session rules). */
  newPolicy(): Policy;
  /**
   * Secret values (the provider key, secret-looking variables and config values) kept out of
   * tool results and command environments; computed at the first read.
   */
  readonly secrets: readonly string[];
  /**
   * Wraps one of Coyote's own tools the way {@link tools} wraps them (secrets redacted from its
   * results, logs and progress; its fixed description left as it is).
   */
  protectTool(t: AnyTool): AnyTool;
  /**
   * Every tool of the workspace (first-party, plugins, discovered MCP servers; the `skill__*`
   * tools are per session, core/extensions/skills/tools.ts) plus the tools of `extraMcp` servers (ACP `session/new` `mcpServers`), which are
   * connected once per name and spec and then shared too. Provider keys are redacted from
   * every result.
   */
  tools(extraMcp?: Record<string, McpServerSpec>): Promise<AnyTool[]>;
  /**
   * The MCP servers a session sees (discovered plus `extraMcp`) as one connection view, or null
   * when there are none. Servers start in the background: the view's `ready` settles when all
   * did, `onChange` reports each one settling and every list change (docs/mcp.md).
   */
  mcp(extraMcp?: Record<string, McpServerSpec>): Promise<McpConnection | null>;
  /**
   * Counts one more session using the `extraMcp` servers (starting them if needed); the
   * returned function releases them, and the last release of a server stops it (its process
   * tree ends) while the workspace stays open for its other sessions. Idempotent release.
   */
  retainMcp(extraMcp?: Record<string, McpServerSpec>): () => Promise<void>;
  /**
   * MCP servers' `sampling/createMessage` and `elicitation/create` go to the root session that
   * runs a turn (else the last registered one); a root session registers its handler here
   * (core/session/mcp_requests.ts). With none registered, sampling is refused (`-1`) and an
   * elicitation declined.
   */
  readonly mcpRequests: { register(h: McpRequestHandler): () => void };
  /**
   * Keeps the workspace open for one more user (a session); pair with {@link release}.
   * Returns false when it is already closing (acquire a new one).
   */
  retain(): boolean;
  /** Drops one user; the last one closes the workspace (MCP servers, plugin workers). */
  release(): Promise<void>;
  /** Closes MCP servers and plugin workers now. Idempotent. */
  close(): Promise<void>;
}

/** True when the plugin host has anything to discover for this workspace. */
export function wantsPlugins(app: AppOptions, cwd: string, trusted = appTrusts(app, cwd)): boolean {
  return app.plugins.length > 0 ||
    (Array.isArray(app.config?.plugins) && app.config.plugins.length > 0) ||
    (trusted && exists(`${cwd}/.coyote/plugins`)) || exists(`${app.configDir}/plugins`);
}

/**
 * Adds config `instructions:` files (paths relative to the workspace, `~` = home) after the
 * discovered workspace instructions. A missing file is a warning, not an error.
 */
function mergeInstructions(
  found: WorkspaceInstructions | null,
  extra: unknown,
  cwd: string,
  log: (line: string) => void,
): WorkspaceInstructions | null {
  if (!Array.isArray(extra) || !extra.length) return found;
  const parts = found ? [found.text] : [];
  const paths = found ? [found.path] : [];
  for (const p of extra) {
    if (typeof p !== "string") continue;
    const home = Deno.env.get("HOME") ?? "";
    const abs = p.startsWith("~/") ? `${home}${p.slice(1)}` : p.startsWith("/") ? p : `${cwd}/${p}`;
    try {
      const text = Deno.readTextFileSync(abs).trim();
      if (text) parts.push(text), paths.push(abs);
    } catch (e) {
      log(`coyote: warning: cannot read instructions file ${abs}: ${(e as Error).message}`);
    }
  }
  return parts.length ? { path: paths.join(", "), text: parts.join("\n\n") } : null;
}

/**
 * Starts a workspace: provider (a missing provider is a configuration error, before anything
 * starts), policy, plugins and discovered MCP servers in parallel, skills, agents.
 * @throws UsageError / ConfigError / PolicyError for bad configuration.
 */
export async function createWorkspace(
  app: AppOptions,
  opts: {
    cwd: string;
    log?: (line: string) => void;
    onClose?: () => void;
    /** Someone can answer questions (REPL, ACP): the MCP `elicitation` capability is offered. */
    canAsk?: boolean;
  },
): Promise<Workspace> {
  const cwd = opts.cwd;
  // Warnings name files, servers and plugins a repository chose: shown escaped (render/safe.ts).
  const log = opts.log ?? ((l: string) => console.error(safeText(l)));
  // The OS sandbox probe (a `bwrap … true` run, memoised per process, a success cached per bwrap
  // binary and kernel in the data dir) starts now, beside the workspace's own start-up.
  if (app.sandbox?.mode !== "off") void detectBackend({ cacheDir: app.dataDir });
  // Trust and project config of this directory (core/config/trust.ts, core/config/project.ts).
  app = await applyWorkspace(app, cwd);
  const trust = app.workspace!.trust;
  // Said once: not again right after the user answered the trust question "no" (trust.ts).
  const ignored = app.workspace!.ignored;
  if (ignored.length && !refusedJustNow(trust.root)) log(untrustedNote(trust, ignored));
  const flags: ProviderFlags = { model: app.model, baseURL: app.baseURL, apiKey: app.apiKey };
  const resolve = (f: ProviderFlags = flags) =>
    resolveProvider({
      flags: f,
      env: Deno.env,
      config: app.config ?? {},
      configPath: app.configPath,
    });
  // `--record` / `--replay` (core/provider/tape.ts, loaded only then): the provider's fetch.
  const tape = app.record || app.replay ? await import("../provider/tape.ts") : null;
  let providerConfig = tape && app.replay
    ? await replayProvider(tape, app.replay, resolve, flags)
    : resolve();
  // No known secret (provider key, secret-named variables, config secrets) travels in a tool
  // result or an MCP tool description (core/tools/redact.ts), nor into a recording. Computed at
  // the first use (a tool result, a third-party tool's description, the first command's
  // environment), not before the first request: judging every variable's value costs 2-5 ms.
  const apiKey = providerConfig.apiKey;
  let secretList: string[] | undefined;
  const secrets = (): string[] =>
    secretList ??= secretValues([
      apiKey === PLACEHOLDER_API_KEY ? undefined : apiKey,
      Deno.env.get("OPENAI_API_KEY"),
      ...knownSecretCandidates(app.config),
    ]);
  const redact = lazyRedactor(secrets);
  if (tape) {
    const ctx = {
      cwd,
      home: Deno.env.get("HOME"),
      redact,
      log,
      model: providerConfig.model,
      baseURL: providerConfig.baseURL,
    };
    try {
      providerConfig = {
        ...providerConfig,
        fetch: await tape.tapeFetch({ record: app.record, replay: app.replay }, ctx),
      };
    } catch (e) {
      throw e instanceof tape.TapeError ? new UsageError(e.message) : e;
    }
  }
  // Retries and dropped request fields are announced on the diagnostics sink (stderr).
  const client = createProvider({
    ...providerConfig,
    fetch: warmAfterFirstResponse(providerConfig.fetch),
    notify: log,
  }) as unknown as ModelClient;
  const newPolicy = () =>
    Policy.create(
      app.config?.permissions ?? {},
      { allow: app.allow, deny: app.deny },
      {
        workspace: cwd,
        configDir: app.configDir,
        dataDir: app.dataDir,
        configPath: app.configPath,
        dangerouslySkipPermissions: app.dangerouslySkipPermissions,
        mode: app.mode,
      },
    );
  const policy = newPolicy();

  type McpModule = typeof import("../extensions/mcp/mod.ts");
  let mcpModule: Promise<McpModule> | null = null;
  const mcpMod = () => (mcpModule ??= import("../extensions/mcp/mod.ts"));
  const closers: (() => Promise<void>)[] = [];
  const mcpHandlers: McpRequestHandler[] = [];
  const handler = () => [...mcpHandlers].reverse().find((h) => h.busy()) ?? mcpHandlers.at(-1);
  const mcpLogs = {
    background: true,
    onWarning: (w: string) => log(`coyote: warning: ${w}`),
    onInfo: (line: string) => log(`coyote: ${line}`),
    // Sampling is always offered (the policy gates it); elicitation when someone can answer.
    onSampling: (server: string, params: Record<string, unknown>, signal: AbortSignal) => {
      const h = handler();
      if (!h) throw new McpRequestError(-1, "User rejected sampling request: no session");
      return h.sample(server, params, signal);
    },
    ...(opts.canAsk
      ? {
        onElicitation: (server: string, params: Record<string, unknown>, signal: AbortSignal) =>
          handler()?.elicit(server, params, signal) ?? Promise.resolve({ action: "decline" }),
      }
      : {}),
  };
  const [plugins, mcp] = await Promise.all([
    wantsPlugins(app, cwd, trust.trusted)
      ? import("../extensions/plugin_host/mod.ts").then((m) => m.loadPlugins(app, policy, cwd))
      : Promise.resolve(null),
    mcpMod().then(async (m) => {
      const found = await m.discoverMcpServers(app, cwd);
      if (!found.length) return null;
      // In the background: sessions open at once; tools join as each server is ready.
      return await m.connectMcpServers(found, { cwd, ...mcpLogs });
    }),
  ]);
  if (plugins) closers.push(() => plugins.close());
  if (mcp) closers.push(() => mcp.close());
  for (const w of plugins?.warnings ?? []) log(`coyote: warning: ${w}`);
  const { agents, skills, warnings } = await loadAgentsAndSkills({
    configDir: app.configDir,
    cwd,
    cacheDir: join(app.dataDir, "builtin-cache"),
    addDirs: app.addDirs,
    // The built-in plugins contribute tools only (plugins/mod.ts), no agents.
    pluginAgents: [...(plugins?.agents ?? [])],
    pluginSkills: plugins?.skills,
    trusted: trust.trusted,
  });
  for (const w of warnings) log(`coyote: warning: ${w}`);

  // Third-party and MCP tools: descriptions and schemas redacted too (this computes the secrets);
  // Coyote's own tools (fixed text): their results only, at run time.
  const guard = (t: AnyTool) => redactingTool(t, redact);
  const guardOwn = (t: AnyTool) => redactingTool(t, redact, { ownText: true });
  // `web_search` exists only when config.yaml names a backend (plugins/web/search.ts).
  const search = app.config?.web_search
    ? [(await import("../../plugins/web/search.ts")).webSearchTool(app.config.web_search)]
    : [];
  const fixedTools: AnyTool[] = [
    ...coreToolStubs.map(guardOwn),
    ...[...search as unknown as AnyTool[], ...(plugins?.tools ?? [])].map(guard),
  ];
  // MCP tools change while the workspace lives (servers becoming ready, list_changed).
  const guarded = new WeakMap<AnyTool, AnyTool>();
  const guardOnce = (t: AnyTool) => {
    let g = guarded.get(t);
    if (!g) guarded.set(t, g = guard(t));
    return g;
  };
  const baseTools = (): AnyTool[] => [...fixedTools, ...(mcp?.tools ?? []).map(guardOnce)];

  // Servers a session brings (ACP `mcpServers`), connected once per name and spec, shared by
  // the sessions that name them and stopped when the last of those releases it (`retainMcp`).
  const extraConns = new Map<string, { p: Promise<McpConnection>; users: number }>();
  const keyOf = (name: string, spec: McpServerSpec) => `${name}\u0000${JSON.stringify(spec)}`;
  const extraConn = (name: string, spec: McpServerSpec): Promise<McpConnection> => {
    const key = keyOf(name, spec);
    let e = extraConns.get(key);
    if (!e) {
      const p = mcpMod().then((m) => {
        const server: DiscoveredMcpServer = { name, spec, source: "acp" };
        return m.connectMcpServers([server], { cwd, ...mcpLogs });
      });
      extraConns.set(key, e = { p, users: 0 });
    }
    return e.p;
  };
  closers.push(async () => {
    const all = [...extraConns.values()];
    extraConns.clear();
    await Promise.all(all.map((e) => e.p.then((c) => c.close(), () => {})));
  });

  const instructions = mergeInstructions(findInstructions(cwd), app.config?.instructions, cwd, log);
  let users = 0;
  let closed: Promise<void> | null = null;
  const ws: Workspace = {
    app,
    trust,
    cwd,
    providerConfig,
    client,
    defaultModel: providerConfig.model,
    agents,
    skills,
    pluginStopHooks: plugins?.stopHooks ?? [],
    warnings,
    instructions,
    log,
    newPolicy,
    get secrets() {
      return secrets();
    },
    protectTool: guardOwn,
    async tools(extraMcp) {
      const entries = Object.entries(extraMcp ?? {});
      let list = baseTools();
      if (entries.length) {
        const conns = await Promise.all(entries.map(([n, s]) => extraConn(n, s)));
        const extra = conns.flatMap((c) => c.tools).map(guardOnce);
        // A session's own server replaces a discovered one of the same name (ACP wins).
        const names = new Set(entries.map(([n]) => n));
        const prefix = (t: AnyTool) => [...names].some((n) => t.name.startsWith(`mcp__${n}__`));
        list = [...list.filter((t) => !prefix(t)), ...extra];
      }
      // `mcp__list_resources` / `mcp__read_resource` while a running server lists resources.
      if (!mcp && !entries.length) return list;
      const view = await ws.mcp(extraMcp);
      if (!view?.resources().length) return list;
      const { mcpResourceTools } = await import("../extensions/mcp/resource_tools.ts");
      return [...list, ...mcpResourceTools(() => view).map(guard)];
    },
    async mcp(extraMcp) {
      const entries = Object.entries(extraMcp ?? {});
      const extra = await Promise.all(entries.map(([n, s]) => extraConn(n, s)));
      const all = [...(mcp ? [mcp] : []), ...extra];
      if (!all.length) return null;
      const m = await mcpMod();
      return m.combineMcp(all, mcp ? new Set(entries.map(([n]) => n)) : new Set());
    },
    retainMcp(extraMcp) {
      const keys = Object.entries(extraMcp ?? {}).map(([n, s]) => {
        void extraConn(n, s);
        const k = keyOf(n, s);
        extraConns.get(k)!.users++;
        return k;
      });
      let done = false;
      return async () => {
        if (done) return;
        done = true;
        await Promise.all(keys.map(async (k) => {
          const e = extraConns.get(k);
          if (!e || --e.users > 0) return;
          extraConns.delete(k);
          await e.p.then((c) => c.close(), () => {});
        }));
      };
    },
    mcpRequests: {
      register(h) {
        mcpHandlers.push(h);
        return () => {
          const i = mcpHandlers.indexOf(h);
          if (i >= 0) mcpHandlers.splice(i, 1);
        };
      },
    },
    retain() {
      if (closed) return false;
      users++;
      return true;
    },
    async release() {
      users--;
      if (users <= 0) await ws.close();
    },
    close() {
      closed ??= (async () => {
        opts.onClose?.();
        await Promise.all(
          closers.map((c) =>
            c().catch((e) => log(`coyote: close failed: ${(e as Error).message}`))
          ),
        );
      })();
      return closed;
    },
  };
  return ws;
}

/**
 * The provider of a `--replay` run: the configured one, else the recording's model and base URL
 * (a CI job replays without any provider set up). @throws UsageError for a bad replay file.
 */
async function replayProvider(
  tape: typeof import("../provider/tape.ts"),
  file: string,
  resolve: (f: ProviderFlags) => ProviderConfig,
  flags: ProviderFlags,
): Promise<ProviderConfig> {
  let header;
  try {
    header = await tape.tapeHeader(file);
  } catch (e) {
    throw e instanceof tape.TapeError ? new UsageError(e.message) : e;
  }
  const fills: ProviderFlags[] = [
    flags,
    { ...flags, baseURL: flags.baseURL ?? header.base_url },
    { ...flags, baseURL: flags.baseURL ?? header.base_url, model: flags.model ?? header.model },
  ];
  for (let i = 0;; i++) {
    try {
      return resolve(fills[i]);
    } catch (e) {
      if (i === fills.length - 1) throw e;
    }
  }
}

/** Open workspaces per app options and directory (ACP sessions on one cwd share one). */
const open = new WeakMap<AppOptions, Map<string, Promise<Workspace>>>();

/**
 * The shared, retained workspace of `cwd` for these app options, started on first use.
 * The caller {@link Workspace.release}s it when its session closes; the last release closes it.
 */
export async function acquireWorkspace(
  app: AppOptions,
  opts: { cwd: string; log?: (line: string) => void; canAsk?: boolean },
): Promise<Workspace> {
  let byCwd = open.get(app);
  if (!byCwd) open.set(app, byCwd = new Map());
  const map = byCwd;
  while (true) {
    let p = map.get(opts.cwd);
    if (!p) {
      const created: Promise<Workspace> = createWorkspace(app, {
        ...opts,
        onClose: () => {
          if (map.get(opts.cwd) === created) map.delete(opts.cwd);
        },
      });
      p = created;
      map.set(opts.cwd, p);
      p.catch(() => {
        if (map.get(opts.cwd) === created) map.delete(opts.cwd);
      });
    }
    const ws = await p;
    if (ws.retain()) return ws;
  }
}

/**
 * `fetch` (the provider's, default the global one) that imports the built-in tools' modules in
 * the background (core/tools/lazy.ts `warmLazyTools`) while the first request waits for the
 * model: {@link WARM_AFTER_MS} after it was handed over (it is out by then; started at once, the
 * import's evaluation on the one JS thread delayed the request's own send), or when its response
 * arrives if that is sooner. The first request never waits for the tool modules, the first tool
 * call rarely does, and the evaluation lands in the model's time to first token, not on its first
 * chunk (bench repl: first token → first visible character).
 */
function warmAfterFirstResponse(inner: typeof fetch | undefined): typeof fetch {
  let warmed = false;
  return (input, init) => {
    const res = (inner ?? fetch)(input, init);
    if (!warmed) {
      warmed = true;
      let done = false;
      const warm = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        setTimeout(warmLazyTools, 0);
      };
      const timer = setTimeout(warm, WARM_AFTER_MS);
      res.then(warm, warm);
    }
    return res;
  };
}

/** How long after the first request is handed to `fetch` the tool modules start loading (ms). */
const WARM_AFTER_MS = 60;
