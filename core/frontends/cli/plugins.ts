/**
 * `coyote plugins list [--json]` and `coyote plugins check PATH [--json]`.
 *
 * `list` shows every discovered plugin with its status, tools and EFFECTIVE
 * grant (declared ∩ policy); `check` compiles and probes one plugin without a
 * session, computes its grant, then starts it once with that grant.
 * Reports go to stdout; warnings and errors to stderr.
 * Exit codes (README "Exit codes"): `check` 0 when the plugin loads and starts, 2 when it does not
 * or PATH holds no plugin (one `coyote: plugins check: …` line); `list` 0 when every plugin
 * loaded, 2 when one could not (broken, refused, a config `plugins:` path missing), the full
 * listing printed either way.
 * @module
 */
import type { AppOptions } from "../../config/app_options.ts";
import { Policy } from "../../policy/policy.ts";
import { type LoadedPluginInfo, loadPlugins } from "../../extensions/plugin_host/mod.ts";
import { safeText } from "../../util/terminal_safe.ts";

/** JSON output (data: escaped by JSON itself). */
const data = (s: string) => Deno.stdout.writeSync(new TextEncoder().encode(s + "\n"));
// Listings and warnings show what plugins chose (names, descriptions, errors): escaped.
const out = (s: string) => data(safeText(s));
const err = (s: string) => Deno.stderr.writeSync(new TextEncoder().encode(safeText(s) + "\n"));

function policyFor(app: AppOptions): Policy {
  return Policy.create(app.config?.permissions ?? {}, { allow: app.allow, deny: app.deny }, {
    workspace: app.cwd,
    configDir: app.configDir,
    dataDir: app.dataDir,
    dangerouslySkipPermissions: app.dangerouslySkipPermissions,
  });
}

/**
 * A plugin's error or warning as shown to the user: the `Error: ` that stringified exceptions
 * carry (`Error: boom`, `plugin x: Error: boom`) says nothing and is dropped.
 */
export function tidyMessage(s: string): string {
  return s.replace(/(^|: )Error: /, "$1");
}

/** One permission of a Deno grant as text: `no`, `all` or the list. */
function grantText(v: unknown): string {
  if (v === false || v === undefined || v === "none") return "no";
  if (v === true || v === "inherit") return "all";
  if (Array.isArray(v)) return v.length ? v.join(", ") : "no";
  return String(v);
}

/** Human-readable report of one plugin. */
export function formatPlugin(p: LoadedPluginInfo): string {
  const lines = [
    `${p.name}${p.version ? ` ${p.version}` : ""}  [${p.status}]  (${p.origin}) ${p.path}`,
  ];
  if (p.description) lines.push(`  ${p.description}`);
  if (p.error) lines.push(`  problem: ${tidyMessage(p.error)}`);
  if (p.tools.length) lines.push(`  tools: ${p.tools.join(", ")}`);
  if (p.agents.length) lines.push(`  agents: ${p.agents.join(", ")}`);
  if (p.skills.length) lines.push(`  skills: ${p.skills.join(", ")}`);
  const declared = Object.entries(p.declared).map(([k, v]) =>
    `${k}: ${(v as string[]).join(", ")}`
  );
  lines.push(`  declared: ${declared.length ? declared.join("; ") : "nothing"}`);
  const keys = ["read", "write", "net", "run", "env", "sys", "ffi", "import"] as const;
  lines.push(
    `  grant: ${
      keys.map((k) => `${k}: ${grantText(p.grant[k as keyof Deno.PermissionOptionsObject])}`).join(
        "; ",
      )
    }`,
  );
  return lines.join("\n");
}

/**
 * Runs `coyote plugins <sub>`. Returns the process exit code.
 * @param sub `list` or `check`
 * @param args remaining arguments (`--json`; for `check`, the plugin PATH)
 */
export async function pluginsCommand(
  app: AppOptions,
  sub: "list" | "check" | string,
  args: string[],
): Promise<number> {
  const json = args.includes("--json");
  const rest = args.filter((a) => a !== "--json");
  if (sub !== "list" && sub !== "check") {
    err(`coyote: unknown plugins command "${sub}" (expected list or check PATH)`);
    return 2;
  }
  if (sub === "check" && rest.length !== 1) {
    err("coyote: usage: coyote plugins check PATH");
    return 2;
  }
  if (sub === "check") {
    // A path that holds no plugin is a usage error, one line (as a missing `--plugin` is).
    const { pluginPathProblem } = await import("./targets.ts");
    const problem = await pluginPathProblem(rest[0], app.cwd);
    if (problem) {
      err(`coyote: plugins check: ${problem}`);
      return 2;
    }
  }
  const policy = policyFor(app);
  const loaded = await loadPlugins(
    app,
    policy,
    app.cwd,
    sub === "check" ? { only: [rest[0]], noCache: true } : {},
  );
  try {
    const startErrors = sub === "check" ? await loaded.warm() : [];
    const warnings = [...loaded.warnings, ...startErrors].map(tidyMessage);
    if (json) {
      const plugins = loaded.plugins.map((p) =>
        p.error ? { ...p, error: tidyMessage(p.error) } : p
      );
      data(JSON.stringify({ plugins, warnings }, null, 2));
    } else {
      for (const w of warnings) err(`coyote: warning: ${w}`);
      if (loaded.plugins.length) out(loaded.plugins.map(formatPlugin).join("\n\n"));
      else if (sub === "list") out("no plugins found");
    }
    if (sub === "check") {
      const ok = loaded.plugins.length === 1 && loaded.plugins[0].status === "loaded" &&
        startErrors.length === 0 && loaded.warnings.length === 0;
      if (!json) out(ok ? "ok" : "invalid");
      return ok ? 0 : 2;
    }
    // `list`: everything is listed; a plugin that could not be loaded (broken, refused by the
    // policy, a missing path in config `plugins:`) is a configuration error (2), as in `agents list`.
    const allLoaded = loaded.plugins.every((p) => p.status === "loaded") &&
      loaded.warnings.length === 0;
    return allLoaded ? 0 : 2;
  } finally {
    await loaded.close();
  }
}
