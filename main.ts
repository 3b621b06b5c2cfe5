/**
 * Coyote entry point. Kept tiny so `coyote --version` starts fast: everything
 * else (commander, config, engine, frontends) is loaded lazily by core/frontends/cli/mod.ts.
 * @module
 */
import { versionLine } from "./core/frontends/cli/version.ts";

const args = Deno.args;
if (args[0] === "__coyote_plugin_host") {
  // A plugin's own process (core/extensions/plugin_host/process.ts); a literal import keeps it in a compiled binary.
  await (await import("./core/extensions/plugin_host/host_main.ts")).runPluginHost();
}
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  Deno.stdout.writeSync(new TextEncoder().encode(`${versionLine()}\n`));
  Deno.exit(0);
}
if (args.includes("--acp-server")) {
  // ACP: stdout carries only protocol messages; redirect every other writer before any import.
  (await import("./core/frontends/acp/stdio.ts")).takeStdoutForProtocol();
}
const { main } = await import("./core/frontends/cli/mod.ts");
try {
  Deno.exit(await main(args));
} catch (e) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(`coyote: internal error: ${(e as Error)?.stack ?? e}\n`),
  );
  Deno.exit(1);
}
