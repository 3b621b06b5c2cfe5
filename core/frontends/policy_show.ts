/**
 * `coyote policy show`: prints the effective permission policy (rules with
 * their sources, the defaults), the Deno flags and the OS sandbox profile
 * (core/policy/sandbox/) derived from it, via `out`
 * (stdout). A malformed rule is a config/usage error: the message (naming the
 * rule and where it came from) goes to stderr and the exit code is 2.
 *
 * Shared by the frontends: the CLI's `coyote policy show` (core/frontends/cli/mod.ts) and the
 * REPL's `/policy` (core/frontends/repl/commands.ts) print the same text.
 * @module
 */
import type { AppOptions } from "../config/app_options.ts";
import { Policy, PolicyError } from "../policy/policy.ts";

/** Exit code for usage/config errors (README "Exit codes"). */
const EXIT_USAGE = 2;

export async function policyCommand(
  app: AppOptions,
  out: (text: string) => void,
): Promise<number> {
  let policy: Policy;
  try {
    policy = Policy.create(app.config?.permissions ?? {}, {
      allow: app.allow ?? [],
      deny: app.deny ?? [],
    }, {
      workspace: app.cwd,
      configDir: app.configDir,
      dataDir: app.dataDir,
      configPath: app.configPath,
      dangerouslySkipPermissions: app.dangerouslySkipPermissions,
      mode: app.mode,
    });
  } catch (e) {
    if (e instanceof PolicyError) {
      console.error(`coyote: ${e.message}`);
      return EXIT_USAGE;
    }
    throw e;
  }
  await policy.globsReady();
  out(policy.describe());
  const sb = await import("../policy/sandbox/mod.ts");
  const sandbox = await sb.CommandSandbox.create(policy, app.sandbox ?? sb.DEFAULT_SANDBOX);
  // Commands run without asking in mode auto only (core/policy/mode.ts).
  const status = { ...sandbox.status, autoAllow: policy.mode === "auto" };
  out("\n" + sb.describeSandbox(sb.deriveProfile(policy), status));
  return 0;
}
