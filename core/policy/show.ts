/**
 * `coyote policy show` (its command lives in core/frontends/): the effective policy as
 * text — the roots, every rule with its source and how it maps to a Deno flag
 * (flags.ts), the defaults, and the derived Deno flags. The sandbox profile
 * (view (d)) is printed by the CLI from core/policy/sandbox/.
 * @module
 */
import { type RuleDecision, ruleText } from "./rules.ts";
import type { PolicyCore } from "./context.ts";
import { MAX_COMMAND_LENGTH } from "./command.ts";
import { denoFlags, flagFor } from "./flags.ts";
import { MODE_DESCRIPTIONS } from "./mode.ts";

/** Human-readable effective policy: rules with sources, defaults and the derived Deno flags. */
export function describe(core: PolicyCore): string {
  const lines: string[] = [];
  lines.push("Coyote permission policy (deny > ask > allow)");
  lines.push(`  workspace:  ${core.workspace}`);
  lines.push(
    `  config dir: ${core.configDir}${core.configPath ? ` (config file ${core.configPath})` : ""}`,
  );
  if (core.dataDir) lines.push(`  data dir:   ${core.dataDir}`);
  lines.push(`  mode:       ${core.mode} (${MODE_DESCRIPTIONS[core.mode]})`);
  if (core.dangerouslySkipPermissions) {
    lines.push(
      `  skip:       --dangerously-skip-permissions (everything is allowed except explicit deny rules${
        core.mode === "plan" ? "; plan mode stays read-only" : ""
      })`,
    );
  }
  lines.push("");
  lines.push("Rules:");
  if (!core.rules.length) lines.push("  (none; the defaults below decide)");
  const order: RuleDecision[] = ["deny", "ask", "allow"];
  for (const d of order) {
    for (const r of core.rules.filter((x) => x.decision === d)) {
      lines.push(`  ${d.padEnd(5)}  ${ruleText(r)}`);
      lines.push(`         from ${r.source}; ${flagFor(core, r).note}`);
    }
  }
  lines.push("");
  lines.push("Defaults:");
  lines.push(
    "  Execute  read-only commands allowed (ls, cat, head, tail, wc, grep, rg, find without -exec/-delete,",
  );
  lines.push(
    "           git status|diff|log|show|branch…); every other command asks the guard; commands the parser",
  );
  lines.push(`           cannot analyse or longer than ${MAX_COMMAND_LENGTH} characters ask`);
  lines.push(
    "           (in mode auto with the OS sandbox on, a command asked about by these defaults alone runs",
  );
  lines.push("           inside the sandbox without asking; see the sandbox section)");
  lines.push(
    "  Read     inside the workspace allowed; outside asks (fs_read, and what read-only commands read:",
  );
  lines.push("           cat ~/.ssh/id_rsa, ls /, grep -r x /etc ask)");
  lines.push(
    "  Write    inside the workspace allowed; outside asks; any .git/, .coyote/ or .mcp.json (any depth,",
  );
  lines.push(
    "           any case), the config dir and the data dir are denied unless an allow rule matches",
  );
  lines.push("  Net      asks (also git fetch/pull/push/clone/ls-remote, git remote show)");
  lines.push(
    "  Env      asks; expanding a variable whose name looks secret ($GITHUB_TOKEN) asks",
  );
  lines.push("  Tool     mcp__* asks; other tools allowed");
  lines.push("");
  lines.push("Deno flags (deno run / deno compile):");
  lines.push(`  ${denoFlags(core).join(" ")}`);
  return lines.join("\n") + "\n";
}
