/**
 * Project configuration: `.coyote/config.yaml` (shared, committed) and `.coyote/config.local.yaml`
 * (personal, git-ignored; "allow always" answers are written here) in the workspace, after Claude
 * Code's `.claude/settings.json` / `settings.local.json`. Both use the user `config.yaml` schema
 * (core/config/config.ts) except `trusted_workspaces` (a repository cannot trust itself), `sandbox` (a
 * repository cannot weaken the OS sandbox) and `mcpServers` (project MCP servers belong in
 * `.mcp.json`).
 *
 * Hooks are not merged into the config: each file's `hooks` (and the `hooks` of Claude Code's
 * `.claude/settings.json` / `settings.local.json`) is kept apart in `WorkspaceState.hooks`, because
 * a workspace's hooks run inside the OS sandbox, the user's as the user (docs/hooks.md).
 *
 * **Applied only in trusted workspaces** (core/config/trust.ts). Layers, lowest first: user config →
 * `.coyote/config.yaml` → `.coyote/config.local.yaml`. Scalars (`model`, `agent`, `max_turns`) and
 * `provider.*` keys are replaced by later layers; `permissions` lists, `plugins` and
 * `instructions` are concatenated (a deny rule of any layer still denies). Project `plugins` paths
 * are relative to the `.coyote/` folder. Flags still win over every layer.
 *
 * {@link applyWorkspace} derives the `AppOptions` of one workspace (trust + merged config); the
 * CLI does it for the process cwd, the runtime for each session's cwd.
 * @module
 */
import type { AppOptions, WorkspaceState } from "./app_options.ts";
import { configCacheDir, type CoyoteConfig, parseConfig } from "./config.ts";
import { ConfigError } from "../protocol/errors.ts";
import { gatedWorkspaceFiles, trustState } from "./trust.ts";
import { CLAUDE_SETTINGS, readClaudeSettingsHooks } from "./hooks.ts";
import type { WorkspaceHooks } from "./app_options.ts";
import { writeTextAtomic } from "../util/files.ts";

/** Shared project config, relative to the workspace. */
export const PROJECT_CONFIG = ".coyote/config.yaml";
/** Personal project config (git-ignored), relative to the workspace. */
export const LOCAL_CONFIG = ".coyote/config.local.yaml";

function isAbs(p: string): boolean {
  return p.startsWith("/") || p.startsWith("~/") || /^[a-z][a-z0-9+.-]*:/i.test(p);
}

/**
 * Reads and validates one project config file; null when it does not exist.
 * @throws ConfigError naming the file (bad YAML, unknown or forbidden key, malformed rule).
 */
export async function readProjectFile(
  path: string,
  opts: { cacheDir?: string } = {},
): Promise<CoyoteConfig | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw new ConfigError(`config error in ${path}: cannot read: ${(e as Error).message}`);
  }
  const cfg = await parseConfig(text, path, opts);
  if (cfg.trusted_workspaces !== undefined) {
    throw new ConfigError(
      `config error in ${path}: trusted_workspaces: only the user config.yaml can trust folders`,
    );
  }
  if (cfg.sandbox !== undefined) {
    // A repository must not weaken the OS boundary that holds when the guard is fooled.
    throw new ConfigError(
      `config error in ${path}: sandbox: only the user config.yaml (or --no-sandbox) sets the OS sandbox`,
    );
  }
  if (cfg.mcpServers !== undefined) {
    throw new ConfigError(
      `config error in ${path}: mcpServers: put project MCP servers in .mcp.json`,
    );
  }
  const { parseRule } = await import("../policy/rules.ts");
  for (const decision of ["allow", "ask", "deny"] as const) {
    (cfg.permissions?.[decision] ?? []).forEach((t, i) => {
      try {
        parseRule(t, decision, `config ${path} permissions.${decision}[${i}]`);
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
    });
  }
  const dir = path.slice(0, path.lastIndexOf("/"));
  if (cfg.plugins) cfg.plugins = cfg.plugins.map((p) => (isAbs(p) ? p : `${dir}/${p}`));
  return cfg;
}

/** Merges config layers (lowest first) as the module doc describes. */
export function mergeConfigs(layers: CoyoteConfig[]): CoyoteConfig {
  const out: CoyoteConfig = {};
  for (const c of layers) {
    for (const k of ["model", "agent", "max_turns", "mcpServers", "trusted_workspaces"] as const) {
      // deno-lint-ignore no-explicit-any
      if (c[k] !== undefined) (out as any)[k] = c[k];
    }
    if (c.provider) {
      out.provider = {
        ...out.provider,
        ...c.provider,
        ...(c.provider.headers || out.provider?.headers
          ? { headers: { ...out.provider?.headers, ...c.provider.headers } }
          : {}),
      };
    }
    if (c.models) out.models = { ...out.models, ...c.models };
    for (const k of ["plugins", "instructions"] as const) {
      if (c[k]) out[k] = [...(out[k] ?? []), ...c[k]!];
    }
    if (c.permissions) {
      const p = out.permissions ?? {};
      for (const d of ["allow", "ask", "deny"] as const) {
        if (c.permissions[d]) p[d] = [...(p[d] ?? []), ...c.permissions[d]!];
      }
      out.permissions = p;
    }
  }
  return out;
}

/**
 * The `AppOptions` for the workspace at `cwd`: its trust, and — when trusted — the project config
 * layers merged over the user config (`agent`/`maxTurns` recomputed unless given as flags).
 * Returns `app` itself when it was already derived for `cwd`.
 * @throws ConfigError for a bad project config file of a trusted workspace.
 */
export async function applyWorkspace(
  app: AppOptions,
  cwd: string,
  seed?: Pick<WorkspaceState, "userConfig" | "flags">,
): Promise<AppOptions> {
  if (!seed && app.workspace?.cwd === cwd) return app;
  const userConfig: CoyoteConfig = seed?.userConfig ?? app.workspace?.userConfig ?? app.config ??
    {};
  const flags = seed?.flags ?? app.workspace?.flags ??
    { agent: app.agent, maxTurns: app.maxTurns, mode: app.mode };
  const trust = trustState(
    { dataDir: app.dataDir, config: userConfig, trustWorkspace: app.trustWorkspace },
    cwd,
  );
  const base = cwd.replace(/\/+$/, "");
  let config = userConfig;
  const files: string[] = [];
  const hooks: WorkspaceHooks[] = [];
  // A workspace's `mode:` can only narrow the user's permission mode (core/policy/mode.ts).
  let layersMode: CoyoteConfig["mode"];
  if (trust.trusted) {
    const layers: CoyoteConfig[] = [userConfig];
    for (const rel of [PROJECT_CONFIG, LOCAL_CONFIG]) {
      const c = await readProjectFile(`${base}/${rel}`, { cacheDir: configCacheDir(app.dataDir) });
      if (c) layers.push(c), files.push(`${base}/${rel}`);
      if (c?.hooks) hooks.push({ file: `${base}/${rel}`, hooks: c.hooks });
      if (c?.mode) layersMode = layersMode ? (await narrowest(layersMode, c.mode)) : c.mode;
    }
    if (files.length) config = mergeConfigs(layers);
    // Claude Code's project settings: only their `hooks` (core/config/hooks.ts).
    for (const rel of CLAUDE_SETTINGS) {
      const h = await readClaudeSettingsHooks(`${base}/${rel}`);
      if (h) hooks.push({ file: `${base}/${rel}`, hooks: h }), files.push(`${base}/${rel}`);
    }
  }
  return {
    ...app,
    config,
    agent: flags.agent ?? config.agent,
    maxTurns: flags.maxTurns ?? config.max_turns ?? 50,
    mode: await workspaceMode(app, userConfig, flags, layersMode),
    workspace: {
      cwd,
      trust,
      files,
      ignored: trust.trusted ? [] : gatedWorkspaceFiles(cwd),
      userConfig,
      flags,
      hooks,
    },
  };
}

/** The narrower of two modes (core/policy/mode.ts, loaded only when a workspace names one). */
async function narrowest(
  a: NonNullable<CoyoteConfig["mode"]>,
  b: NonNullable<CoyoteConfig["mode"]>,
): Promise<NonNullable<CoyoteConfig["mode"]>> {
  return (await import("../policy/mode.ts")).narrower(a, b);
}

/**
 * The run's permission mode in this workspace: `--mode`, else the user's (config `mode:`, else
 * from `sandbox.auto_allow`), narrowed by the workspace's `mode:` — a repository can make a run
 * more careful, never less (docs/modes.md).
 */
async function workspaceMode(
  app: AppOptions,
  user: CoyoteConfig,
  flags: WorkspaceState["flags"],
  project: CoyoteConfig["mode"],
): Promise<AppOptions["mode"]> {
  if (flags.mode) return flags.mode;
  const M = await import("../policy/mode.ts");
  return M.narrower(M.resolveMode(undefined, user.mode, app.sandbox?.autoAllow ?? true), project);
}

/**
 * Appends a permission rule to the workspace's `.coyote/config.local.yaml` (created when missing,
 * comments and other keys kept; a rule already listed is not added twice) and makes sure git
 * ignores the file (a `.coyote/.gitignore` entry). This is where the REPL's "allow always" /
 * "deny always" answers go. The rule is validated first.
 * @returns the path of the file written.
 * @throws ConfigError for a malformed rule or an unreadable/invalid existing file.
 */
export async function appendPermissionRule(
  cwd: string,
  decision: "allow" | "ask" | "deny",
  rule: string,
): Promise<string> {
  const { parseRule } = await import("../policy/rules.ts");
  try {
    parseRule(rule, decision, `${LOCAL_CONFIG} permissions.${decision}`);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  const dir = `${cwd.replace(/\/+$/, "")}/.coyote`;
  const path = `${dir}/config.local.yaml`;
  await Deno.mkdir(dir, { recursive: true });
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new ConfigError(`config error in ${path}: cannot read: ${(e as Error).message}`);
    }
  }
  if (text.trim()) await parseConfig(text, path); // refuse to extend a broken file
  const YAML = await import("yaml");
  const doc = YAML.parseDocument(text || "{}");
  const list = doc.getIn(["permissions", decision]);
  const current = YAML.isSeq(list) ? list.toJSON() as unknown[] : [];
  if (!current.includes(rule)) {
    if (YAML.isSeq(list)) list.add(rule);
    else doc.setIn(["permissions", decision], [rule]);
  }
  if (!text.trim()) {
    doc.commentBefore =
      " Personal Coyote settings for this workspace (git-ignored). Applied when the workspace is trusted.";
  }
  await writeTextAtomic(path, doc.toString());
  await ignoreInGit(dir, "config.local.yaml");
  return path;
}

/** Adds `name` to `<dir>/.gitignore` when no line there names it already. */
async function ignoreInGit(dir: string, name: string): Promise<void> {
  const file = `${dir}/.gitignore`;
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch { /* none yet */ }
  if (text.split("\n").some((l) => l.trim() === name || l.trim() === `/${name}`)) return;
  await Deno.writeTextFile(file, `${text}${text && !text.endsWith("\n") ? "\n" : ""}${name}\n`);
}
