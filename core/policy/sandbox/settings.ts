/**
 * The `sandbox:` setting (docs/permissions.md "The OS sandbox"): a mode string
 * (`auto | required | off`) or a mapping `{mode, auto_allow, limits, protected_paths}`, and
 * `--no-sandbox`. Kept free of heavy imports: core/frontends/cli/resolve.ts resolves it at
 * start-up.
 * @module
 */
import { ConfigError } from "../../protocol/errors.ts";
import { DEFAULT_LIMITS, type SandboxLimits } from "./limits.ts";

/** `sandbox:` config / `--no-sandbox`. */
export type SandboxMode = "auto" | "required" | "off";

/** Resolved sandbox settings. */
export interface SandboxSettings {
  mode: SandboxMode;
  /** With the sandbox on, default `ask`s for commands become `allow`. */
  autoAllow: boolean;
  /**
   * `limits: {processes, memory_mb, tmpfs_mb, open_files, file_mb}` (./limits.ts); defaults when
   * absent.
   */
  limits?: SandboxLimits;
  /**
   * `protected_paths: [pattern]`: more code other tools run later, added to
   * ./protected.ts `RUNS_LATER` (a name or `folder/name`, `*` within a name, any depth).
   */
  protectedPaths?: string[];
}

/** The defaults: `{mode: auto, auto_allow: true}`, default limits, no extra protected paths. */
export const DEFAULT_SANDBOX: SandboxSettings = { mode: "auto", autoAllow: true };

/** A bad `sandbox:` value (message names the key and the accepted shapes). */
export class SandboxConfigError extends ConfigError {
  override name = "SandboxConfigError";
}

const MODES = ["auto", "required", "off"] as const;

/**
 * Settings from the config's `sandbox:` value — a mode string (`auto | required | off`) or a
 * mapping `{mode?, auto_allow?}` — and the `--no-sandbox` flag (wins: mode `off`).
 * @throws SandboxConfigError for any other shape.
 */
export function sandboxSettings(
  config: unknown,
  flags: { noSandbox?: boolean } = {},
): SandboxSettings {
  const s: SandboxSettings = { ...DEFAULT_SANDBOX };
  const bad = (what: string) =>
    new SandboxConfigError(
      `sandbox: ${what}; expected auto, required or off, or a mapping {mode: auto|required|off, auto_allow: true|false, limits: {processes: N, memory_mb: N, tmpfs_mb: N, open_files: N, file_mb: N}, protected_paths: [name or folder/name, …]}`,
    );
  if (typeof config === "string") {
    if (!(MODES as readonly string[]).includes(config)) throw bad(`unknown mode "${config}"`);
    s.mode = config as SandboxMode;
  } else if (config !== undefined && config !== null) {
    if (typeof config !== "object" || Array.isArray(config)) throw bad("not a string or mapping");
    const o = config as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (!["mode", "auto_allow", "limits", "protected_paths"].includes(k)) {
        throw bad(`unknown key "${k}"`);
      }
    }
    if (o.mode !== undefined) {
      if (typeof o.mode !== "string" || !(MODES as readonly string[]).includes(o.mode)) {
        throw bad(`unknown mode ${JSON.stringify(o.mode)}`);
      }
      s.mode = o.mode as SandboxMode;
    }
    if (o.auto_allow !== undefined) {
      if (typeof o.auto_allow !== "boolean") throw bad("auto_allow must be true or false");
      s.autoAllow = o.auto_allow;
    }
    if (o.limits !== undefined && o.limits !== null) s.limits = limitsOf(o.limits, bad);
    if (o.protected_paths !== undefined && o.protected_paths !== null) {
      s.protectedPaths = protectedOf(o.protected_paths, bad);
    }
  }
  if (flags.noSandbox) s.mode = "off";
  return s;
}

function limitsOf(v: unknown, bad: (what: string) => Error): SandboxLimits {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw bad("limits must be a mapping {processes: N, memory_mb: N, tmpfs_mb: N}");
  }
  const l = { ...DEFAULT_LIMITS };
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (!["processes", "memory_mb", "tmpfs_mb", "open_files", "file_mb"].includes(k)) {
      throw bad(`unknown key "limits.${k}"`);
    }
    if (typeof x !== "number" || !Number.isInteger(x) || x < 0) {
      throw bad(`limits.${k} must be a whole number ≥ 0 (0: no limit), not ${JSON.stringify(x)}`);
    }
    if (k === "processes") l.processes = x;
    else if (k === "memory_mb") l.memoryMb = x;
    else if (k === "tmpfs_mb") l.tmpfsMb = x;
    else if (k === "open_files") l.openFiles = x;
    else l.fileMb = x;
  }
  if (l.processes > 0 && l.processes < 16) {
    throw bad(`limits.processes must be 0 (no limit) or at least 16, not ${l.processes}`);
  }
  if (l.memoryMb > 0 && l.memoryMb < 64) {
    throw bad(`limits.memory_mb must be 0 (no limit) or at least 64, not ${l.memoryMb}`);
  }
  if (l.tmpfsMb !== undefined && l.tmpfsMb > 0 && l.tmpfsMb < 16) {
    throw bad(`limits.tmpfs_mb must be 0 (no limit) or at least 16, not ${l.tmpfsMb}`);
  }
  if (l.openFiles !== undefined && l.openFiles > 0 && l.openFiles < 64) {
    throw bad(`limits.open_files must be 0 (no limit) or at least 64, not ${l.openFiles}`);
  }
  return l;
}

function protectedOf(v: unknown, bad: (what: string) => Error): string[] {
  if (!Array.isArray(v)) throw bad("protected_paths must be a list of names or folder/name");
  return v.map((p, i) => {
    if (typeof p !== "string" || !/^[^/]+(\/[^/]+)?$/.test(p.trim()) || p.includes("**")) {
      throw bad(
        `protected_paths[${i}] ${
          JSON.stringify(p)
        } is not a name or folder/name (\`*\` within a name; it matches at any depth)`,
      );
    }
    return p.trim();
  });
}
