/**
 * STUB CONTRACT (owner: guard helper replaces the bodies, keeps the signatures).
 * @module
 */
import type { PluginPermissions, ToolAccess } from "../../sdk/mod.ts";
import type { Decision, GuardVerdict } from "../types.ts";

export interface PolicyInput {
  allow?: string[];
  ask?: string[];
  deny?: string[];
}

export interface PolicyOptions {
  workspace: string;
  configDir: string;
  dataDir?: string;
  home?: string;
  dangerouslySkipPermissions?: boolean;
}

export interface WorkerGrant {
  /** Deno Worker `deno.permissions`, every key explicit. */
  permissions: Deno.PermissionOptionsObject;
  refused: { permission: keyof PluginPermissions; value: string; rule: string; message: string }[];
}

export class Policy {
  static create(_config: PolicyInput, _flags: { allow: string[]; deny: string[] }, _opts: PolicyOptions): Policy {
    return new Policy();
  }
  forWorkspace(_cwd: string): Policy {
    return this;
  }
  evaluate(access: ToolAccess): Promise<GuardVerdict> {
    return Promise.resolve({ decision: "allow" as Decision, reason: "stub", access });
  }
  addRule(_decision: Decision, _rule: string, _source = "session"): void {}
  workerPermissions(_declared: PluginPermissions, _pluginName: string): WorkerGrant {
    return {
      permissions: { read: false, write: false, net: false, run: false, env: false, sys: false, ffi: false, import: false },
      refused: [],
    };
  }
  denoFlags(): string[] {
    return [];
  }
}
