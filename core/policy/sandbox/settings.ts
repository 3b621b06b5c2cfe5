/**
 * The `sandbox:` setting (docs/permissions.md "The OS sandbox"): a mode string
 * (`auto | required | off`) or a mapping `{mode, auto_allow}`, and `--no-sandbox`. Kept free of
 * heavy imports: core/frontends/cli/resolve.ts resolves it at start-up.
 * @module
 */
import { ConfigError } from "../../protocol/errors.ts";

/** `sandbox:` config / `--no-sandbox`. */
export type SandboxMode = "auto" | "required" | "off";

/** Resolved sandbox settings. */
export interface SandboxSettings {
  mode: SandboxMode;
  /** With the sandbox on, default `ask`s for commands become `allow`. */
  autoAllow: boolean;
}

/** The defaults: `{mode: auto, auto_allow: true}`. */
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
      `sandbox: ${what}; expected auto, required or off, or a mapping {mode: auto|required|off, auto_allow: true|false}`,
    );
  if (typeof config === "string") {
    if (!(MODES as readonly string[]).includes(config)) throw bad(`unknown mode "${config}"`);
    s.mode = config as SandboxMode;
  } else if (config !== undefined && config !== null) {
    if (typeof config !== "object" || Array.isArray(config)) throw bad("not a string or mapping");
    const o = config as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (k !== "mode" && k !== "auto_allow") throw bad(`unknown key "${k}"`);
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
  }
  if (flags.noSandbox) s.mode = "off";
  return s;
}
