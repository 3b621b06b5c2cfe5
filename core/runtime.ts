/**
 * Wires an AgentSession from resolved options: provider, policy, tools
 * (first-party packs + plugin workers + MCP servers), instructions, store.
 * Frontends (headless, ACP, REPL) only talk to this module and core/types.ts.
 *
 * Start-up: the plugin host and the MCP client are loaded with literal dynamic
 * imports, and only when there is something to load (plugins configured or a
 * plugin folder present; MCP servers discovered or passed in).
 * @module
 */
import type { AppOptions } from "./app.ts";
import {
  type AgentDefinition,
  defineTool,
  type HostServices,
  type SkillDefinition,
} from "../sdk/mod.ts";
import { z } from "zod";
import type {
  AnyTool,
  EngineEvent,
  EventSink,
  PermissionResolver,
  PromptInput,
  TurnResult,
} from "./types.ts";
import type { McpConnection, McpServerSpec } from "./mcp/mod.ts";
import { Policy } from "./guard/policy.ts";
import { corePlugins } from "../plugins/mod.ts";
import { agentsPlugin, DEFAULT_AGENT } from "../agents/mod.ts";
import { Engine, type ModelClient } from "./engine.ts";
import { filterTools, ToolRegistry } from "./tools.ts";
import { buildSystemPrompt, findInstructions, type WorkspaceInstructions } from "./instructions.ts";
import {
  listStoredSessions,
  loadSession,
  newSessionId,
  transcriptPath,
  TranscriptWriter,
} from "./sessions.ts";
import { PLACEHOLDER_API_KEY, resolveProvider } from "./config.ts";
import { makeRedactor, redactingTool, secretValues } from "./redact.ts";
import { createProvider } from "./provider.ts";

/** Options for one session (one workspace). */
export interface SessionInit {
  /** Absolute workspace root for this session (ACP `cwd`; CLI: process cwd). */
  cwd: string;
  /** Resolves guard `ask` decisions (headless: immediate reject). */
  permission: PermissionResolver;
  /** Client-side services (ACP fs / terminal, REPL askUser). */
  host?: HostServices;
  /** Extra MCP servers for this session (ACP `session/new` `mcpServers`), merged over discovered ones. */
  mcpServers?: Record<string, McpServerSpec>;
  /** Continue this stored session (its history is loaded; nothing is re-executed). */
  resumeId?: string;
  /** Override agent / model for this session. */
  agent?: string;
  model?: string;
  /** Name for a new session (`--session NAME`); stored in the transcript header. */
  name?: string;
  /** Diagnostics (warnings) sink; stderr by default. Never stdout. */
  log?: (line: string) => void;
}

/** A live session. `prompt` runs one turn; only one turn at a time. */
export interface AgentSession {
  readonly id: string;
  readonly cwd: string;
  /** The session's MCP servers (tools, prompts, resources, status), when it has any. */
  readonly mcp?: McpConnection;
  /** Current model id. */
  model: string;
  /** Current agent name. */
  agent: string;
  /**
   * Runs one turn: streams events to `onEvent` (also appended to the transcript),
   * resolves when the turn ends. Never rejects for provider/tool faults: those end
   * the turn with `error` set. Rejects only if a turn is already running.
   */
  prompt(
    input: PromptInput,
    opts: { signal?: AbortSignal; onEvent: EventSink },
  ): Promise<TurnResult>;
  /** Adds a policy rule for the rest of this session (ACP `allow_always`). */
  addRule(decision: "allow" | "deny", rule: string): void;
  /** Stored events of this session so far, in order (for ACP `session/load` replay). */
  history(): EngineEvent[];
  /** Closes MCP servers / plugin workers of this session. */
  close(): Promise<void>;
}

/** A stored session, as listed by `--list-sessions` and ACP `session/list`. */
export interface SessionInfo {
  sessionId: string;
  cwd: string;
  title: string;
  /** ISO-8601 time of the last write. */
  updatedAt: string;
  name?: string;
}

/**
 * A user or configuration error (unknown agent, unknown session, no provider):
 * frontends report the message without a stack trace (CLI exit code 2).
 */
export class UsageError extends Error {
  override name = "UsageError";
}

/** All agents available to a session: built-in first, then plugin contributions. */
export function availableAgents(extra: AgentDefinition[] = []): AgentDefinition[] {
  const byName = new Map<string, AgentDefinition>();
  const contributed = [agentsPlugin, ...corePlugins].flatMap((p) => p.agents ?? []);
  for (const a of [...contributed, ...extra]) if (!byName.has(a.name)) byName.set(a.name, a);
  return [...byName.values()];
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** True when the plugin host has anything to discover for this workspace. */
function wantsPlugins(app: AppOptions, cwd: string): boolean {
  return app.plugins.length > 0 ||
    (Array.isArray(app.config?.plugins) && app.config.plugins.length > 0) ||
    exists(`${cwd}/.coyote/plugins`) || exists(`${app.configDir}/plugins`);
}

/**
 * Skills: plugin contributions plus `SKILL.md` folders (`<cwd>/.coyote/skills/`,
 * `<configDir>/skills/`; the loader is imported only when one of them exists).
 * The first skill of a name wins.
 */
async function collectSkills(
  app: AppOptions,
  cwd: string,
  fromPlugins: SkillDefinition[],
  log: (line: string) => void,
): Promise<SkillDefinition[]> {
  let files: SkillDefinition[] = [];
  if (exists(`${cwd}/.coyote/skills`) || exists(`${app.configDir}/skills`)) {
    const { loadSkills } = await import("./plugin_host/skills.ts");
    const r = await loadSkills(app, cwd);
    for (const w of r.warnings) log(`coyote: warning: ${w}`);
    files = r.skills;
  }
  const byName = new Map<string, SkillDefinition>();
  for (const sk of [...files, ...fromPlugins]) if (!byName.has(sk.name)) byName.set(sk.name, sk);
  return [...byName.values()];
}

/** `skill__load {name}`: returns a skill's instructions (Agent Skills: bodies load on demand). */
function skillLoadTool(skills: SkillDefinition[]): AnyTool {
  const names = skills.map((sk) => sk.name);
  return defineTool({
    name: "skill__load",
    description:
      "Load the full instructions of a skill listed in the system prompt before using it.",
    input: z.object({ name: z.string().describe(`one of: ${names.join(", ")}`) }),
    kind: "read",
    readOnly: true,
    title: (i) => `Load skill ${i.name}`,
    run: (i) => {
      const sk = skills.find((x) => x.name === i.name);
      if (!sk) {
        return {
          content: `unknown skill "${i.name}"; available: ${names.join(", ")}`,
          isError: true,
        };
      }
      return { content: `# Skill: ${sk.name}\n\n${sk.content}` };
    },
  });
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

export async function createSession(app: AppOptions, init: SessionInit): Promise<AgentSession> {
  const cwd = init.cwd;
  const log = init.log ?? ((l: string) => console.error(l));
  const resumed = init.resumeId ? await loadSession(app.dataDir, init.resumeId) : null;
  if (init.resumeId && !resumed) throw new UsageError(`no stored session with id ${init.resumeId}`);
  if (resumed?.skipped) {
    log(`coyote: skipped ${resumed.skipped} unreadable line(s) of session ${init.resumeId}`);
  }

  // Provider first: a missing provider is a configuration error, before anything starts.
  const explicitModel = init.model ?? app.model;
  const providerCfg = resolveProvider({
    flags: { model: explicitModel, baseURL: app.baseURL, apiKey: app.apiKey },
    env: Deno.env,
    config: app.config ?? {},
    configPath: app.configPath,
  });
  const client = createProvider(providerCfg);

  const policy = Policy.create(
    app.config?.permissions ?? {},
    { allow: app.allow, deny: app.deny },
    {
      workspace: cwd,
      configDir: app.configDir,
      dataDir: app.dataDir,
      configPath: app.configPath,
      dangerouslySkipPermissions: app.dangerouslySkipPermissions,
    },
  );

  const closers: (() => Promise<void>)[] = [];
  const [plugins, mcp] = await Promise.all([
    wantsPlugins(app, cwd)
      ? import("./plugin_host/mod.ts").then((m) => m.loadPlugins(app, policy, cwd))
      : Promise.resolve(null),
    import("./mcp/mod.ts").then(async (m) => {
      const found = await m.discoverMcpServers(app, cwd);
      const byName = new Map(found.map((s) => [s.name, s]));
      for (const [name, spec] of Object.entries(init.mcpServers ?? {})) {
        byName.set(name, { name, spec, source: "acp" });
      }
      if (!byName.size) return null;
      // In the background: the session opens at once, tools join as each server is ready
      // (a turn waits for the servers still starting; see `prompt` below).
      return await m.connectMcpServers([...byName.values()], {
        cwd,
        background: true,
        onWarning: (w) => log(`coyote: warning: ${w}`),
        onInfo: (line) => log(`coyote: ${line}`),
      });
    }),
  ]);
  const skills = await collectSkills(app, cwd, plugins?.skills ?? [], log);
  if (plugins) closers.push(() => plugins.close());
  if (mcp) closers.push(() => mcp.close());
  for (const w of plugins?.warnings ?? []) {
    log(`coyote: warning: ${w}`);
  }

  const agentName = init.agent ?? resumed?.header.agent ?? app.agent ?? DEFAULT_AGENT;
  const agents = availableAgents(plugins?.agents);
  const agent = agents.find((a) => a.name === agentName);
  if (!agent) {
    await Promise.all(closers.map((c) => c().catch(() => {})));
    throw new UsageError(
      `unknown agent "${agentName}"; available: ${agents.map((a) => a.name).join(", ")}`,
    );
  }
  // The provider key never travels in a tool result (core/redact.ts).
  const secrets = secretValues([
    providerCfg.apiKey === PLACEHOLDER_API_KEY ? undefined : providerCfg.apiKey,
    Deno.env.get("OPENAI_API_KEY"),
  ]);
  const redact = makeRedactor(secrets);
  // MCP tools change while the session lives (servers becoming ready, tools/list_changed).
  const allTools = (): AnyTool[] =>
    [
      ...corePlugins.flatMap((p) => p.tools ?? []),
      ...(plugins?.tools ?? []),
      ...(mcp?.tools ?? []),
    ].map((t) => secrets.length ? redactingTool(t, redact) : t);
  // The skill loader is offered to every agent when there are skills (read-only, harmless).
  const skillTools = skills.length ? [skillLoadTool(skills)] : [];
  const toolsFor = (a: AgentDefinition) => [...filterTools(allTools(), a.tools), ...skillTools];
  const registry = new ToolRegistry(toolsFor(agent));
  for (const w of registry.warnings) log(`coyote: warning: ${w}`);

  const model = explicitModel ?? agent.model ?? providerCfg.model;
  const instructions = mergeInstructions(findInstructions(cwd), app.config?.instructions, cwd, log);
  const systemPrompt = buildSystemPrompt(agent.instructions, { cwd }, instructions, skills);

  let id: string;
  let transcript: TranscriptWriter;
  if (resumed) {
    id = resumed.header.id;
    transcript = TranscriptWriter.open(transcriptPath(app.dataDir, id));
  } else {
    id = newSessionId();
    transcript = TranscriptWriter.create(app.dataDir, {
      id,
      cwd,
      created: new Date().toISOString(),
      model,
      agent: agent.name,
      ...(init.name ? { name: init.name } : {}),
    });
  }
  closers.push(() => Promise.resolve(transcript.close()));

  const engine = new Engine({
    sessionId: id,
    cwd,
    client: client as unknown as ModelClient,
    model,
    temperature: agent.temperature,
    registry,
    policy,
    permission: init.permission,
    host: init.host,
    systemPrompt,
    maxTurns: app.maxTurns > 0 ? app.maxTurns : agent.maxTurns ?? 50,
    history: resumed?.messages,
    updates: resumed?.updates,
    transcript,
    log,
  });

  let closed = false;
  let current = agent;
  mcp?.onChange((c) => {
    if (c.kind === "prompts" || c.kind === "resources") return;
    engine.opts.registry = new ToolRegistry(toolsFor(current));
  });
  const session: AgentSession = {
    id,
    cwd,
    mcp: mcp ?? undefined,
    get model() {
      return engine.opts.model;
    },
    set model(m: string) {
      engine.opts.model = m;
    },
    get agent() {
      return current.name;
    },
    /** Switching the agent swaps instructions, tool set and temperature for the next turn. */
    set agent(name: string) {
      const next = agents.find((a) => a.name === name);
      if (!next) {
        throw new UsageError(
          `unknown agent "${name}"; available: ${agents.map((a) => a.name).join(", ")}`,
        );
      }
      current = next;
      engine.opts.systemPrompt = buildSystemPrompt(
        next.instructions,
        { cwd },
        instructions,
        skills,
      );
      engine.opts.registry = new ToolRegistry(toolsFor(next));
      engine.opts.temperature = next.temperature;
      if (!explicitModel && next.model) engine.opts.model = next.model;
    },
    async prompt(input, opts) {
      if (closed) throw new Error("session is closed");
      // MCP servers still starting: the turn waits for them (each bounded by its start-up
      // timeout) so the model sees their tools; a cancel stops the wait.
      if (mcp) await untilAborted(mcp.ready, opts.signal);
      return await engine.prompt(input, opts);
    },
    addRule(decision, rule) {
      policy.addRule(decision, rule, "session");
    },
    history() {
      return [...engine.updates];
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(
        closers.map((c) => c().catch((e) => log(`coyote: close failed: ${(e as Error).message}`))),
      );
    },
  };
  return session;
}

/** Resolves when `p` settles or `signal` aborts, whichever is first. */
function untilAborted(p: Promise<unknown>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p.then(() => {}, () => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    p.then(done, done);
  });
}

export async function listSessions(
  app: AppOptions,
  filter?: { cwd?: string },
): Promise<SessionInfo[]> {
  const list = await listStoredSessions(app.dataDir, { cwd: filter?.cwd });
  return list.map((s) => ({
    sessionId: s.id,
    cwd: s.cwd,
    title: s.title,
    updatedAt: s.updated,
    ...(s.name ? { name: s.name } : {}),
  }));
}
