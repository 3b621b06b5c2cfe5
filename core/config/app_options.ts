/**
 * The resolved application options every command and frontend receives:
 * CLI flags merged over environment and config file (see core/frontends/cli/resolve.ts and
 * core/config/config.ts for precedence: flag > env > config > default).
 * @module
 */
import type { TrustState } from "./trust.ts";
import type { CoyoteConfig } from "./config.ts";

/** Resolved options for one process. Paths are absolute. */
export interface AppOptions {
  /** Process working directory (the default workspace). */
  cwd: string;
  /** `$COYOTE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/coyote`, else `~/.config/coyote`. */
  configDir: string;
  /** `$COYOTE_DATA_DIR`, else `$XDG_DATA_HOME/coyote`, else `~/.local/share/coyote` (sessions live in `sessions/`). */
  dataDir: string;
  /** The validated config file (empty object when there is none). */
  // deno-lint-ignore no-explicit-any
  config: any;
  /** Path of the config file that was read, if any. */
  configPath?: string;
  model?: string;
  baseURL?: string;
  apiKey?: string;
  /** `--allow RULE` / `--deny RULE` (repeatable). */
  allow: string[];
  deny: string[];
  dangerouslySkipPermissions: boolean;
  /** The OS sandbox of commands (config `sandbox:`, `--no-sandbox`); default auto + auto_allow. */
  sandbox?: { mode: "auto" | "required" | "off"; autoAllow: boolean };
  /**
   * The permission mode (core/policy/mode.ts): `--mode` > config `mode:` > `auto` (`accept-edits`
   * when the config says `sandbox: {auto_allow: false}`).
   */
  mode?: import("../policy/mode.ts").PermissionMode;
  /** `--plugin PATH` (repeatable). */
  plugins: string[];
  noWorkspaceMcp: boolean;
  /** `--verbose`: record more in the transcript (graph agents: state snapshots after each node). */
  verbose?: boolean;
  headless: boolean;
  maxTurns: number;
  /** `--max-budget-usd` / config `budget.usd`: the run's cost cap (USD at the `models:` prices). */
  maxBudgetUsd?: number;
  /** `--max-budget-tokens` / config `budget.tokens`: the run's cap on total tokens. */
  maxBudgetTokens?: number;
  agent?: string;
  /** `--agent-variable NAME VALUE` (repeatable): values of the agent's template variables. */
  agentVariables?: Record<string, string>;
  /** `--skill NAME` (repeatable): skills loaded before the first request. */
  skills?: string[];
  /** `--add-dir DIR` (repeatable): more directories whose `.coyote|.claude|.agents/skills/` count. */
  addDirs?: string[];
  // Workspace trust and project config (core/config/trust.ts, core/config/project.ts).
  /** `--record FILE` (absolute): write every model exchange there (core/provider/tape.ts). */
  record?: string;
  /** `--replay FILE` (absolute): serve the model from that recording, no network. */
  replay?: string;
  /** `--trust-workspace`: trust the workspace for this run. */
  trustWorkspace?: boolean;
  /** Set by `applyWorkspace`: the workspace these options were derived for. */
  workspace?: WorkspaceState;
}

/** The workspace an `AppOptions` was derived for (`AppOptions.workspace`). */
export interface WorkspaceState {
  /** The workspace directory (absolute). */
  cwd: string;
  trust: TrustState;
  /** Project config files applied (absolute paths; empty when untrusted or none). */
  files: string[];
  /** Workspace files ignored because the workspace is untrusted (relative names). */
  ignored: string[];
  /** The user config before project layers. */
  userConfig: CoyoteConfig;
  /** Values given as flags (they win over every config layer). */
  flags: { agent?: string; maxTurns?: number; mode?: import("../policy/mode.ts").PermissionMode };
  /** Hooks of the trusted workspace's files, per file (not merged; docs/hooks.md). */
  hooks?: WorkspaceHooks[];
}

/** The `hooks` of one workspace file (`.coyote/config.yaml`, `.claude/settings.json`, …). */
export interface WorkspaceHooks {
  /** Absolute path of the file. */
  file: string;
  hooks: NonNullable<CoyoteConfig["hooks"]>;
}
