/**
 * The plugin host: discovers third-party plugins and runs each in a process
 * of its own, with its permission grant as the process's Deno flags, killable
 * and heap-capped (process.ts; see docs/plugins.md for the user's view).
 *
 * Loading one plugin:
 * 1. a one-file plugin: read the file's text and compile it to a
 *    self-contained module (source.ts: TypeScript → JS with sucrase, every
 *    import except the SDK refused after parsing with acorn); a folder plugin:
 *    bundle the folder (bundle.ts: esbuild-wasm; its own files, npm packages
 *    and node: built-ins; anything leaving the folder refused by name), then
 *    the same checks;
 * 2. PROBE: evaluate it in a process with NO permissions at all, read its
 *    manifest (name, version, declared permissions, tools with JSON Schemas,
 *    agents, skills), kill that process. Probes are cached in
 *    `<dataDir>/plugin-cache/` keyed by the entry's real path, with the
 *    SHA-256 of every file that went into the module (plus SDK and host format
 *    versions), so a warm start neither bundles nor spawns anything;
 * 3. GRANT: `policy.forWorkspace(cwd).workerPermissions(declared, name)` →
 *    declared ∩ policy, every Deno permission key explicit. If the policy
 *    refuses any declared permission the WHOLE plugin is refused with a
 *    warning naming the plugin, the permission and the rule (a partly granted
 *    plugin would fail in confusing ways at call time);
 * 4. the plugin's process with the grant starts lazily, on the first tool call.
 *
 * Tool inputs are validated on the host against the tool's JSON Schema
 * (`@cfworker/json-schema`, draft 2020-12) and again in the plugin's process
 * by zod when the plugin uses zod.
 * @module
 */
import { basename, join } from "../../util/path.ts";
import type {
  AgentDefinition,
  PluginPermissions,
  SkillDefinition,
  ToolContext,
  ToolResult,
} from "../../../sdk/mod.ts";
import { SDK_VERSION } from "../../../sdk/mod.ts";
import type { AnyTool } from "../../protocol/types.ts";
import type { AppOptions } from "../../config/app_options.ts";
import type { Policy } from "../../policy/policy.ts";
import { discoverPlugins, type PluginLocation, type PluginOrigin } from "./discover.ts";
import { appTrusts } from "../../config/trust.ts";
import {
  HOOK_EVENTS,
  type HookEventName,
  hookIssues,
  keyPath,
  type LifecycleHooks,
} from "../../config/hooks.ts";
import { type PluginLogSink, PluginWorker } from "./worker.ts";
import { NO_PERMISSIONS } from "./grant.ts";
import type { RpcLimits } from "./limits.ts";
import type { PluginManifest } from "./replies.ts";
import { writeTextAtomic } from "../../util/files.ts";

export { discoverPlugins, type PluginLocation, type PluginOrigin } from "./discover.ts";
export { type PluginLogSink, PluginWorker } from "./worker.ts";
export type { RpcLimits } from "./limits.ts";
export type { PluginManifest } from "./replies.ts";

/** One discovered plugin and what became of it (for `coyote plugins list`). */
export interface LoadedPluginInfo {
  /** Plugin name from its manifest (the file name when it could not be read). */
  name: string;
  version?: string;
  description?: string;
  /** Entry file (real path). */
  path: string;
  origin: PluginOrigin;
  status: "loaded" | "refused" | "error";
  /** Why the plugin is refused / failed. */
  error?: string;
  tools: string[];
  agents: string[];
  skills: string[];
  /** What the plugin declared. */
  declared: PluginPermissions;
  /** The effective Worker permissions (all keys explicit; all false unless loaded). */
  grant: Deno.PermissionOptionsObject;
  refused: { permission: string; value: string; rule: string; message: string }[];
}

/** Plugins loaded for one session. Tools proxy `run` to the plugin's worker. */
/** One hook a plugin contributes (see {@link LoadedPlugins.stopHooks}). */
export interface PluginHook {
  plugin: string;
  command: string;
  timeout_ms?: number;
  /** A lifecycle event (absent: a `hooks.stop` command). */
  event?: HookEventName;
  matcher?: string;
  /** Seconds (lifecycle hooks). */
  timeout?: number;
}

export interface LoadedPlugins {
  tools: AnyTool[];
  agents: AgentDefinition[];
  skills: SkillDefinition[];
  /**
   * Hooks the plugins contribute, each with its plugin's name: SDK `hooks.stop` (no `event`) and
   * Claude Code's lifecycle events (`hooks.PreToolUse: [{matcher, hooks}]`, …: `event`, `matcher`,
   * `timeout` in seconds; docs/hooks.md).
   */
  stopHooks: PluginHook[];
  /** Human-readable load problems (refused permissions, bad modules); never fatal. */
  warnings: string[];
  /** Every discovered plugin with its status and effective grant. */
  plugins: LoadedPluginInfo[];
  /**
   * Starts every loaded plugin's Worker now (normally they start on first use).
   * Resolves with one message per plugin that failed to start; never rejects.
   */
  warm(): Promise<string[]>;
  close(): Promise<void>;
}

/** Extra knobs for {@link loadPlugins}; all optional. */
export interface LoadPluginsOptions {
  /** RPC limits (timeout default 60 s or `$COYOTE_PLUGIN_TIMEOUT_MS`; result limit 1 MiB). */
  limits?: RpcLimits;
  /** Where plugin log lines go (default stderr). */
  log?: PluginLogSink;
  /** Tool names already taken (first-party, MCP); plugin tools with these names are refused. */
  reservedToolNames?: Iterable<string>;
  /** Load exactly these plugin paths instead of discovering (used by `coyote plugins check`). */
  only?: string[];
  /** Skip the probe cache (read and write). */
  noCache?: boolean;
}

/** Model-facing tool names (OpenAI function-name rule). */
export const TOOL_NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
const PLUGIN_NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/;
const PERMISSION_KEYS = ["read", "write", "net", "run", "env"] as const;
/** Bump when the cached probe format or the compiler changes. */
const CACHE_FORMAT = 2;

interface Probed {
  code: string;
  manifest: PluginManifest;
}

async function sha256(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * True when every file of a cached bundle still has the recorded SHA-256 and every path found
 * missing is still missing (the bundle is then still valid); a changed, unreadable or newly
 * created file makes it false.
 */
async function inputsUnchanged(inputs: { path: string; sha256: string }[]): Promise<boolean> {
  for (const i of inputs) {
    if (i.sha256 === "") {
      // Missing when bundled: a file appearing there may change what an import resolves to.
      try {
        await Deno.lstat(String(i.path));
        return false;
      } catch {
        continue;
      }
    }
    try {
      const d = await crypto.subtle.digest("SHA-256", await Deno.readFile(String(i.path)));
      const hex = Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
      if (hex !== i.sha256) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Compiles (a one-file plugin) or bundles (a folder plugin, `root` given) and
 * probes one plugin without permissions, using the cache when possible. The
 * cache entry is keyed by the entry's real path and holds the SHA-256 of every
 * file that went into the module: a warm start re-hashes them and neither
 * bundles nor probes when none changed.
 * @throws PluginSourceError / BundleError for refused imports and syntax or bundling errors
 */
export async function probePlugin(
  entry: string,
  opts: { cacheDir?: string; limits?: RpcLimits; log?: PluginLogSink; root?: string } = {},
): Promise<Probed> {
  const text = opts.root ? "" : await Deno.readTextFile(entry);
  const key = await sha256(
    `${CACHE_FORMAT}\0${SDK_VERSION}\0${opts.root ? `bundle\0${opts.root}` : text}`,
  );
  const cacheFile = opts.cacheDir ? join(opts.cacheDir, `${await sha256(entry)}.json`) : undefined;
  if (cacheFile) {
    try {
      const cached = JSON.parse(await Deno.readTextFile(cacheFile));
      if (
        cached?.key === key && typeof cached.code === "string" && cached.manifest &&
        (!opts.root ||
          (Array.isArray(cached.inputs) && await inputsUnchanged(cached.inputs)))
      ) {
        return { code: cached.code, manifest: cached.manifest };
      }
    } catch { /* miss */ }
  }
  const { compilePluginSource } = await import("./source.ts");
  let code: string;
  let inputs: { path: string; sha256: string }[] | undefined;
  if (opts.root) {
    const { bundlePlugin } = await import("./bundle.ts");
    const bundle = await bundlePlugin(entry, opts.root);
    inputs = bundle.inputs;
    code = await compilePluginSource(bundle.code, `${entry} (bundled)`, {
      allowNodeBuiltins: true,
    });
  } else code = await compilePluginSource(text, entry);
  const probe = new PluginWorker(basename(entry), code, NO_PERMISSIONS, {
    ...opts.limits,
    loadTimeoutMs: opts.limits?.loadTimeoutMs ?? 10_000,
  }, opts.log);
  let manifest: PluginManifest;
  try {
    manifest = await probe.start();
  } finally {
    await probe.close();
  }
  if (cacheFile) {
    try {
      await Deno.mkdir(opts.cacheDir!, { recursive: true });
      await writeTextAtomic(cacheFile, JSON.stringify({ key, entry, inputs, code, manifest }));
    } catch { /* cache is best effort */ }
  }
  return { code, manifest };
}

/** Checks a manifest's shape; returns the problems (empty = fine). */
export function validateManifest(m: PluginManifest): string[] {
  const problems: string[] = [];
  if (typeof m.name !== "string" || !PLUGIN_NAME_RE.test(m.name)) {
    problems.push(`name ${JSON.stringify(m.name)} is not valid (letters, digits, . _ -; up to 64)`);
  }
  if (typeof m.version !== "string" || !m.version) problems.push("version is missing");
  if (typeof m.sdkVersion === "string") {
    const major = m.sdkVersion.split(".")[0];
    if (major !== SDK_VERSION.split(".")[0]) {
      problems.push(`written for SDK ${m.sdkVersion}; this Coyote implements SDK ${SDK_VERSION}`);
    }
  }
  const perms = m.permissions ?? {};
  if (typeof perms !== "object" || Array.isArray(perms)) {
    problems.push("permissions must be an object");
  } else {
    for (const [k, v] of Object.entries(perms)) {
      if (!(PERMISSION_KEYS as readonly string[]).includes(k)) {
        problems.push(`unknown permission "${k}" (supported: ${PERMISSION_KEYS.join(", ")})`);
      } else if (!Array.isArray(v) || v.some((x) => typeof x !== "string" || !x)) {
        problems.push(`permission "${k}" must be a list of non-empty strings`);
      }
    }
  }
  const names = new Set<string>();
  for (const t of m.tools ?? []) {
    if (!TOOL_NAME_RE.test(t.name)) {
      problems.push(`tool name ${JSON.stringify(t.name)} must match ${TOOL_NAME_RE}`);
    }
    if (names.has(t.name)) problems.push(`tool "${t.name}" is defined twice`);
    names.add(t.name);
    if (!t.description) problems.push(`tool "${t.name}" has no description`);
    if (!t.inputSchema || t.inputSchema.type !== "object") {
      problems.push(`tool "${t.name}": input schema must be a JSON Schema with type "object"`);
    }
  }
  for (const a of m.agents ?? []) {
    const ag = a as AgentDefinition;
    if (!ag || typeof ag.name !== "string" || typeof ag.instructions !== "string") {
      problems.push(`agent ${JSON.stringify(ag?.name)} needs a name and instructions`);
    }
  }
  for (const s of m.skills ?? []) {
    const sk = s as SkillDefinition;
    if (!sk || typeof sk.name !== "string" || typeof sk.content !== "string") {
      problems.push(`skill ${JSON.stringify(sk?.name)} needs a name and content`);
    }
  }
  return problems;
}

function declaredOf(m: PluginManifest): PluginPermissions {
  const out: PluginPermissions = {};
  for (const k of PERMISSION_KEYS) {
    const v = (m.permissions as Record<string, unknown>)?.[k];
    if (Array.isArray(v) && v.length) out[k] = v.map(String);
  }
  return out;
}

function envLimits(): RpcLimits {
  const t = Number(Deno.env.get("COYOTE_PLUGIN_TIMEOUT_MS"));
  return Number.isFinite(t) && t > 0 ? { timeoutMs: t } : {};
}

type Validator = {
  validate(v: unknown): { valid: boolean; errors: { instanceLocation: string; error: string }[] };
};

/** Builds the host-side proxy tool for one plugin tool. */
function proxyTool(worker: PluginWorker, t: PluginManifest["tools"][number]): AnyTool {
  let validator: Validator | undefined;
  const schema = { ...t.inputSchema };
  delete schema.$schema;
  return {
    name: t.name,
    description: t.description,
    input: schema,
    kind: (t.kind as AnyTool["kind"]) ?? "other",
    readOnly: t.readOnly === true,
    ...(t.concurrency === "parallel" || t.concurrency === "serial"
      ? { concurrency: t.concurrency }
      : {}),
    async run(input: unknown, ctx: ToolContext): Promise<ToolResult> {
      if (!validator) {
        const { Validator } = await import("@cfworker/json-schema");
        validator = new Validator(schema as never, "2020-12", false) as unknown as Validator;
      }
      const v = validator.validate(input ?? {});
      if (!v.valid) {
        const detail = v.errors.slice(0, 5).map((e) => `${e.instanceLocation}: ${e.error}`).join(
          "; ",
        );
        return { content: `invalid input for ${t.name}: ${detail}`, isError: true };
      }
      return await worker.call(t.name, input ?? {}, { cwd: ctx.cwd, toolCallId: ctx.toolCallId }, {
        signal: ctx.signal,
        progress: (u) => ctx.progress(u),
        requestPermission: (q) => ctx.requestPermission(q),
      });
    },
  };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  });
  await Promise.all(runners);
  return out;
}

/**
 * Discovers plugins (`--plugin`, config `plugins:`, `<cwd>/.coyote/plugins/`,
 * `<configDir>/plugins/`), probes them (cached) and returns proxy tools whose
 * Workers start on first use. Never throws for a bad plugin: problems are in
 * `warnings` and in `plugins[i].error`.
 */
export async function loadPlugins(
  app: AppOptions,
  policy: Policy,
  cwd: string,
  opts: LoadPluginsOptions = {},
): Promise<LoadedPlugins> {
  const warnings: string[] = [];
  let locations: PluginLocation[];
  if (opts.only) {
    const { resolveEntry } = await import("./discover.ts");
    locations = [];
    for (const p of opts.only) {
      const r = await resolveEntry(p);
      if ("error" in r) warnings.push(`plugin ${r.error}`);
      else locations.push({ path: p, entry: r.entry, root: r.root, origin: "flag" });
    }
  } else {
    const found = await discoverPlugins({
      cwd,
      configDir: app.configDir,
      configPath: app.configPath,
      configPlugins: app.config?.plugins,
      flagPlugins: app.plugins ?? [],
      processCwd: app.cwd,
      trusted: appTrusts(app, cwd),
    });
    locations = found.plugins;
    warnings.push(...found.warnings);
  }
  const limits: RpcLimits = { ...envLimits(), ...opts.limits };
  const cacheDir = opts.noCache ? undefined : join(app.dataDir, "plugin-cache");
  const probed = await mapLimit(locations, 3, async (loc) => {
    try {
      return await probePlugin(loc.entry, { cacheDir, limits, log: opts.log, root: loc.root });
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  });

  const scoped = policy.forWorkspace(cwd);
  // Path globs among the rules compile only once npm picomatch has loaded (core/policy/rules.ts).
  await scoped.globsReady();
  const reserved = new Set(opts.reservedToolNames ?? []);
  const pluginNames = new Set<string>();
  const tools: AnyTool[] = [];
  const agents: AgentDefinition[] = [];
  const stopHooks: LoadedPlugins["stopHooks"] = [];
  const skills: SkillDefinition[] = [];
  const workers: PluginWorker[] = [];
  const infos: LoadedPluginInfo[] = [];

  locations.forEach((loc, i) => {
    const p = probed[i];
    const info: LoadedPluginInfo = {
      name: basename(loc.entry),
      path: loc.entry,
      origin: loc.origin,
      status: "error",
      tools: [],
      agents: [],
      skills: [],
      declared: {},
      grant: { ...NO_PERMISSIONS },
      refused: [],
    };
    infos.push(info);
    if (p instanceof Error) {
      info.error = p.message;
      warnings.push(`plugin ${loc.path}: ${p.message}`);
      return;
    }
    const m = p.manifest;
    if (typeof m.name === "string") info.name = m.name;
    info.version = typeof m.version === "string" ? m.version : undefined;
    info.description = typeof m.description === "string" ? m.description : undefined;
    const problems = validateManifest(m);
    if (problems.length) {
      info.error = problems.join("; ");
      warnings.push(`plugin ${info.name} (${loc.path}): ${info.error}`);
      return;
    }
    if (pluginNames.has(m.name)) {
      info.status = "refused";
      info.error = `another plugin named "${m.name}" is already loaded`;
      warnings.push(`plugin ${m.name} (${loc.path}): ${info.error}`);
      return;
    }
    info.declared = declaredOf(m);
    let grant;
    try {
      grant = scoped.workerPermissions(info.declared, m.name);
    } catch (e) {
      info.error = `cannot compute its permissions: ${(e as Error).message}`;
      warnings.push(`plugin ${m.name}: ${info.error}`);
      return;
    }
    info.refused = grant.refused;
    if (grant.refused.length) {
      info.status = "refused";
      info.error = grant.refused.map((r) => r.message).join("; ");
      warnings.push(`${info.error} (plugin ${m.name} not loaded)`);
      return;
    }
    // Every key explicit, whatever the policy returned: omitted means false; plugins
    // cannot declare sys / ffi / import, so those are never granted.
    info.grant = { ...NO_PERMISSIONS, ...grant.permissions, sys: false, ffi: false, import: false };
    pluginNames.add(m.name);
    info.status = "loaded";
    const worker = new PluginWorker(m.name, p.code, info.grant, limits, opts.log);
    workers.push(worker);
    for (const t of m.tools) {
      if (reserved.has(t.name)) {
        warnings.push(`plugin ${m.name}: tool "${t.name}" collides with an existing tool; skipped`);
        continue;
      }
      reserved.add(t.name);
      tools.push(proxyTool(worker, t));
      info.tools.push(t.name);
    }
    for (const a of m.agents as AgentDefinition[]) {
      agents.push(a);
      info.agents.push(a.name);
    }
    const hooks = (m as { hooks?: { stop?: unknown } }).hooks;
    for (const h of Array.isArray(hooks?.stop) ? hooks.stop : []) {
      const c = (h as { command?: unknown })?.command;
      const t = (h as { timeout_ms?: unknown })?.timeout_ms;
      if (typeof c !== "string" || !c.trim()) {
        warnings.push(`plugin ${m.name}: a stop hook without a command; skipped`);
        continue;
      }
      stopHooks.push({
        plugin: m.name,
        command: c,
        ...(typeof t === "number" && t > 0 ? { timeout_ms: t } : {}),
      });
    }
    // Claude Code's lifecycle events; a malformed section skips the plugin's hooks, with a warning.
    const lifecycle = hooks && typeof hooks === "object" ? hooks as Record<string, unknown> : {};
    const issues = hookIssues(lifecycle);
    if (issues.length) {
      warnings.push(
        `plugin ${m.name}: hooks skipped: ${
          issues.map((x) => `${keyPath(["hooks", ...x.path])}: ${x.message}`).join("; ")
        }`,
      );
    } else {
      for (const event of HOOK_EVENTS) {
        for (const g of (lifecycle as LifecycleHooks)[event] ?? []) {
          for (const h of g.hooks) {
            if ((h.type ?? "command") !== "command") {
              warnings.push(`plugin ${m.name}: ${event} hook of type ${h.type} skipped`);
              continue;
            }
            stopHooks.push({
              plugin: m.name,
              event,
              command: h.command!,
              ...(g.matcher !== undefined ? { matcher: g.matcher } : {}),
              ...(h.timeout ? { timeout: h.timeout } : {}),
            });
          }
        }
      }
    }
    for (const s of m.skills as SkillDefinition[]) {
      skills.push({
        name: s.name,
        description: String(s.description ?? ""),
        content: s.content,
        ...(Array.isArray(s.enabled_tools) ? { enabled_tools: s.enabled_tools.map(String) } : {}),
        ...(Array.isArray(s.enabled_mcp_servers)
          ? { enabled_mcp_servers: s.enabled_mcp_servers.map(String) }
          : {}),
        ...(s.auto_unload === true ? { auto_unload: true } : {}),
      });
      info.skills.push(s.name);
    }
  });

  return {
    tools,
    agents,
    skills,
    stopHooks,
    warnings,
    plugins: infos,
    async warm() {
      const errors = await Promise.all(workers.map(async (w) => {
        try {
          await w.start();
          return undefined;
        } catch (e) {
          return `plugin ${w.name}: ${(e as Error).message}`;
        }
      }));
      return errors.filter((e): e is string => e !== undefined);
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
