/**
 * Errors shared across layers: a user error in configuration is raised where config is read
 * (core/config/) and where a setting is parsed (the `sandbox:` setting, core/policy/sandbox/),
 * and every frontend shows it as one `coyote: …` line, exit code 2 (README "Exit codes").
 * @module
 */

/** A user error in configuration: one clear line (or a few), no stack trace wanted. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
