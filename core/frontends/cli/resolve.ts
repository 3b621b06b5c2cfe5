/**
 * {@link resolveApp}: the run's {@link AppOptions} from the parsed flags, the environment and the
 * config file (flag > env > config > default), with a trusted workspace's project config merged
 * under the flags.
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import { configCacheDir, loadConfig, resolveDirs } from "../../config/config.ts";
import { ConfigError } from "../../protocol/errors.ts";
import { sandboxSettings } from "../../policy/sandbox/settings.ts";
import { resolveMode } from "../../policy/mode.ts";
import type { ParsedCli } from "./args.ts";
import { UsageError } from "./output.ts";

/** `["k=v", …]` → `{k: "v"}` (last wins). @throws UsageError for an entry without a name. */
function agentVariables(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf("=");
    if (eq <= 0) {
      throw new UsageError(`--agent-variable needs NAME VALUE, got ${JSON.stringify(p)}`);
    }
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

/**
 * `--record FILE` / `--replay FILE` as absolute paths (relative to the current directory).
 * @throws UsageError when both are given.
 */
function tapeFiles(record?: string, replay?: string): { record?: string; replay?: string } {
  if (record !== undefined && replay !== undefined) {
    throw new UsageError("use either --record FILE or --replay FILE, not both");
  }
  // Absolute and without `..` (node:path stays off the start path).
  const abs = (f: string) =>
    decodeURIComponent(
      new URL(
        f.replaceAll("%", "%25").replaceAll("#", "%23").replaceAll("?", "%3F"),
        `file://${Deno.cwd()}/`,
      ).pathname,
    );
  return {
    ...(record !== undefined ? { record: abs(record) } : {}),
    ...(replay !== undefined ? { replay: abs(replay) } : {}),
  };
}

/** Resolves AppOptions from parsed flags, environment and config file. */
export async function resolveApp(
  opts: ParsedCli["opts"],
  onConfigError?: (e: ConfigError) => void,
): Promise<AppOptions> {
  const { configDir, dataDir } = resolveDirs(Deno.env);
  let loaded: Awaited<ReturnType<typeof loadConfig>>;
  try {
    loaded = await loadConfig(configDir, { cacheDir: configCacheDir(dataDir) });
  } catch (e) {
    // ACP: the error is reported from `session/new` instead (docs/acp.md "Bad input").
    if (!(e instanceof ConfigError) || !onConfigError) throw e;
    onConfigError(e);
    loaded = { config: {} };
  }
  const { config, path } = loaded;
  const app: AppOptions = {
    cwd: Deno.cwd(),
    configDir,
    dataDir,
    config,
    configPath: path,
    model: opts.model,
    baseURL: opts.baseUrl,
    apiKey: opts.apiKey,
    allow: opts.allow ?? [],
    deny: opts.deny ?? [],
    dangerouslySkipPermissions: !!opts.dangerouslySkipPermissions,
    sandbox: sandboxSettings(config.sandbox, { noSandbox: opts.sandbox === false }),
    mode: undefined,
    plugins: opts.plugin ?? [],
    noWorkspaceMcp: opts.workspaceMcp === false,
    verbose: !!opts.verbose,
    headless: !!opts.headless || !!opts.acpServer,
    maxTurns: opts.maxTurns ?? config.max_turns ?? 50,
    maxBudgetUsd: opts.maxBudgetUsd ?? config.budget?.usd,
    maxBudgetTokens: opts.maxBudgetTokens ?? config.budget?.tokens,
    agent: opts.agent ?? config.agent,
    trustWorkspace: !!opts.trustWorkspace,
    agentVariables: agentVariables(opts.agentVariable ?? []),
    ...tapeFiles(opts.record, opts.replay),
    skills: opts.skill ?? [],
    addDirs: opts.addDir ?? [],
  };
  app.mode = resolveMode(opts.mode, config.mode, app.sandbox!.autoAllow);
  // Project config (.coyote/config.yaml, trusted workspaces only) is merged under the flags.
  const { applyWorkspace } = await import("../../config/project.ts");
  try {
    return await applyWorkspace(app, app.cwd, {
      userConfig: config,
      flags: { agent: opts.agent, maxTurns: opts.maxTurns, mode: opts.mode },
    });
  } catch (e) {
    // ACP: reported from `session/new`, where the runtime applies the workspace again.
    if (!(e instanceof ConfigError) || !onConfigError) throw e;
    if (!opts.acpServer) onConfigError(e);
    return app;
  }
}
