/**
 * Coyote entry point. Kept tiny so `coyote --version` starts fast: everything
 * else (commander, config, engine, frontends) is loaded lazily by core/frontends/cli/mod.ts.
 * @module
 */
import { versionLine } from "./core/frontends/cli/version.ts";
import { startBundleUrl } from "./core/frontends/cli/start_bundle.ts";

const args = Deno.args;
if (args[0] === "__coyote_plugin_host") {
  // A plugin's own process (core/extensions/plugin_host/process.ts); a literal import keeps it in a compiled binary.
  await (await import("./core/extensions/plugin_host/host_main.ts")).runPluginHost();
}
if (args[0] === "__coyote_home_scan") {
  // The sandbox's home-scan helper (core/policy/sandbox/home_prescan.ts); literal: in the binary.
  await (await import("./core/policy/sandbox/home_scan_main.ts")).runHomeScan();
}
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  Deno.stdout.writeSync(new TextEncoder().encode(`${versionLine()}\n`));
  Deno.exit(0);
}
// The start bundle (scripts/bundle_start.ts), the same program in fewer files, when it is fresh;
// else the sources. One side only, so each module has one instance.
const bundle = await startBundleUrl(import.meta.url);
type Stdio = typeof import("./core/frontends/acp/stdio.ts");
type Cli = typeof import("./core/frontends/cli/mod.ts");
if (args.includes("--acp-server")) {
  // ACP: stdout carries only protocol messages; redirect every other writer before any import.
  const stdio: Stdio = bundle
    ? await import(`${bundle}acp_stdio.js`)
    : await import("./core/frontends/acp/stdio.ts");
  stdio.takeStdoutForProtocol();
}
const { main }: Cli = bundle
  ? await import(`${bundle}cli.js`)
  : await import("./core/frontends/cli/mod.ts");
try {
  Deno.exit(await main(args));
} catch (e) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(`coyote: internal error: ${(e as Error)?.stack ?? e}\n`),
  );
  Deno.exit(1);
}
