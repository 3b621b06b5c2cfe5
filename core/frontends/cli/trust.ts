/**
 * `coyote trust [DIR]`, `trust --revoke [DIR]` and `trust --list`: the CLI side of workspace
 * trust. The trust store and the listing are core/config/trust.ts (`trustCommand`); here its
 * lines are escaped for the terminal and written to stdout and stderr.
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import { safeText } from "../../util/terminal_safe.ts";
import { stdout } from "./output.ts";

/** Runs `coyote trust` (`sub`: `trust`, `revoke` or `list`); returns the exit code. */
export async function trustCommand(app: AppOptions, sub: string, args: string[]): Promise<number> {
  const trust = await import("../../config/trust.ts");
  return trust.trustCommand(
    { dataDir: app.dataDir, config: app.workspace?.userConfig ?? app.config },
    { dir: args[0], revoke: sub === "revoke", list: sub === "list" },
    (l) => stdout(safeText(l) + "\n"),
    (l) => Deno.stderr.writeSync(new TextEncoder().encode(safeText(l) + "\n")),
  );
}
