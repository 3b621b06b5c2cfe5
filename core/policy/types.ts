/**
 * The policy's public shapes: the config block it is built from
 * ({@link PolicyInput}, {@link PolicyOptions}), what it is asked about
 * ({@link PolicyAccess}), the per-part verdict behind every guard decision
 * ({@link GuardPart}) and a plugin's worker grant ({@link WorkerGrant}).
 * `core/policy/policy.ts` re-exports them as the face of its `Policy`.
 *
 * Types only; paths in them are absolute once the policy has resolved them.
 * @module
 */
import type { PluginPermissions, ToolAccess } from "../../sdk/mod.ts";
import type { Decision } from "../protocol/types.ts";

/** The `permissions` block of the config file. */
export interface PolicyInput {
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

export interface PolicyOptions {
  /** Absolute workspace root (relative rule paths resolve against it). */
  workspace: string;
  /** Coyote's config dir: never written without an explicit allow rule. */
  configDir: string;
  /** Coyote's data dir (sessions): never written without an explicit allow rule. */
  dataDir?: string;
  /** Home directory for `~` (default `$HOME`). */
  home?: string;
  /** `--dangerously-skip-permissions`: allow everything except explicit deny rules. */
  dangerouslySkipPermissions?: boolean;
  /** Path of the config file the `permissions` block came from (named in errors and `describe()`). */
  configPath?: string;
  /** The permission mode (./mode.ts `PermissionMode`); default `auto`. */
  mode?: "plan" | "default" | "accept-edits" | "auto";
}

export interface WorkerGrant {
  /** Deno Worker `deno.permissions`, every key explicit. */
  permissions: Deno.PermissionOptionsObject;
  refused: { permission: keyof PluginPermissions; value: string; rule: string; message: string }[];
}

/** Everything the guard can be asked about: the SDK's {@link ToolAccess} plus environment variables. */
export type PolicyAccess = ToolAccess | { type: "env"; name: string };

/**
 * One part of a verdict: a simple command, a redirection, a path argument, a
 * variable. `subject` is the sub-command or path it is about.
 */
export interface GuardPart {
  decision: Decision;
  reason: string;
  /** The rule text that decided, or `default` when a default did. */
  rule?: string;
  subject: string;
  /** Set on the parts of a path decision (paths.ts `pathPart`): what the path is accessed for. */
  kind?: "read" | "write";
}
