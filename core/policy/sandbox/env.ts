/**
 * The environment every command Coyote runs receives (issue 10 "Commands that never hang", issue
 * 11 §1 "the environment is scrubbed"), sandboxed or not:
 *
 * - Coyote's environment minus what {@link envDecision} drops: the provider key (by name and by
 *   value), secret-looking names (`*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, …) and `Env` deny
 *   rules, unless an `Env` allow rule passes them;
 * - {@link NON_INTERACTIVE_ENV} on top, so nothing waits for a human: pagers are `cat`, editors
 *   are `false` (git then fails at once with "There was a problem with the editor" instead of
 *   blocking until the timeout), git never prompts for credentials.
 * @module
 */
import type { Rule } from "../rules.ts";
import { envDecision } from "./profile.ts";

/** Variables set for every command so it never waits for a terminal or an editor. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  EDITOR: "false",
  VISUAL: "false",
  GIT_EDITOR: "false",
  GIT_SEQUENCE_EDITOR: "false",
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  DEBIAN_FRONTEND: "noninteractive",
};

/**
 * The environment for a command: `base` (default: Coyote's own) filtered by the `Env` rules and
 * the known `secrets` (values), plus {@link NON_INTERACTIVE_ENV}. Returns the names dropped too.
 */
export function commandEnvironment(
  opts: {
    base?: Record<string, string>;
    rules?: readonly Rule[];
    secrets?: readonly string[];
  } = {},
): { env: Record<string, string>; dropped: string[] } {
  const base = opts.base ?? Deno.env.toObject();
  const env: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(base)) {
    if (!envDecision(opts.rules ?? [], k, v, opts.secrets).pass) {
      dropped.push(k);
    } else env[k] = v;
  }
  Object.assign(env, NON_INTERACTIVE_ENV);
  return { env, dropped };
}
