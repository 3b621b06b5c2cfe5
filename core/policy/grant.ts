/**
 * View (b) of the one policy: the Deno Worker permission set of a plugin
 * (docs/permissions.md, core/extensions/plugin_host/). Each entry the plugin
 * declares is granted only when the guard itself (view (a)) allows that
 * access — for a directory, everything beneath it, since a Deno permission
 * cannot carve holes; for a program, with any arguments — so the two views
 * agree by construction (`tests/policy_views_test.ts`).
 *
 * Never throws: a refused entry becomes a message naming the plugin, the
 * permission, the value and the rule or default, with a hint (`add --allow
 * '…'`, `declare a narrower path`) where one helps.
 * @module
 */
import type { PluginPermissions } from "../../sdk/mod.ts";
import type { Decision } from "../protocol/types.ts";
import { hostMatch, isInside, KIND_NAMES, resolvePath, splitHost, WILD } from "./rules.ts";
import { type Level, matcher, type PolicyCore, rulesOf } from "./context.ts";
import { namePart } from "./names.ts";
import { netPart } from "./net.ts";
import { pathPart } from "./paths.ts";
import { applyMode, DEFAULT_RULE, PLAN_RULE } from "./mode.ts";
import { commandView } from "./command.ts";

/** A path part as the guard decides it in the policy's mode (default mode asks before writes). */
const modePart = (core: PolicyCore, p: GuardPart) =>
  applyMode(core.mode, [p], false, core.dangerouslySkipPermissions)[0];
import { simpleParts } from "./walk.ts";
import type { GuardPart, WorkerGrant } from "./types.ts";
import { by, worstPart } from "./verdict.ts";

/**
 * The Deno Worker permission set of a plugin: each declared entry is granted
 * only when the policy allows that access (and, for a directory, everything
 * beneath it); anything else is refused with a message naming the plugin,
 * the permission, the value and the rule or default. Every Deno permission
 * key is explicit; `sys`, `ffi` and `import` are always false. Relative
 * declared paths resolve against the workspace; `~` is the home directory.
 */
export function workerPermissions(
  core: PolicyCore,
  declared: PluginPermissions,
  pluginName: string,
): WorkerGrant {
  const refused: WorkerGrant["refused"] = [];
  const grant = {
    read: [] as string[],
    write: [] as string[],
    net: [] as string[],
    run: [] as string[],
    env: [] as string[],
  };
  const refuse = (
    permission: keyof PluginPermissions,
    value: string,
    rule: string,
    why: string,
    hint?: string,
  ) =>
    refused.push({
      permission,
      value,
      rule,
      message: `plugin "${pluginName}" declares ${permission} ${JSON.stringify(value)} but ${why}${
        hint ? `; ${hint}` : ""
      }`,
    });
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

  for (const kind of ["read", "write"] as const) {
    for (const v of list(declared?.[kind])) {
      if (typeof v !== "string" || !v) {
        refuse(kind, String(v), "default", "the value is not a path");
        continue;
      }
      const abs = resolvePath(v, core.workspace, core.home);
      const r = subtreePart(core, kind, abs);
      if (r.decision === "allow") grant[kind].push(abs);
      else refuse(kind, v, r.rule ?? "default", r.why, r.hint);
    }
  }
  for (const v of list(declared?.net)) {
    const s = String(v);
    if (typeof v !== "string" || !v || v.includes("*") || v.includes("/")) {
      refuse(
        "net",
        s,
        "default",
        "net entries must be host names with an optional :port (no wildcards, no URLs)",
      );
      continue;
    }
    const p = netPart(core, v);
    const { host, port } = splitHost(v);
    const conflict = port === undefined &&
      rulesOf(core, "net").find((r) =>
        r.decision !== "allow" && r.pattern !== undefined &&
        splitHost(r.pattern).port !== undefined && hostMatch(splitHost(r.pattern).host, host)
      );
    if (p.decision === "allow" && !conflict) grant.net.push(v);
    else if (conflict && p.decision === "allow") {
      refuse(
        "net",
        v,
        conflict.text,
        `${by(conflict)} restricts a port of it`,
        "declare host:port",
      );
    } else {refuse(
        "net",
        v,
        p.rule ?? "default",
        phrase(core, p),
        p.rule === "default" ? `add --allow 'Net(${v})' to grant it` : undefined,
      );}
  }
  for (const v of list(declared?.run)) {
    if (typeof v !== "string" || !v || /\s/.test(v) || v.includes(WILD)) {
      refuse("run", String(v), "default", "run entries must be program names or paths");
      continue;
    }
    const r = programPart(core, v);
    if (r.decision === "allow") grant.run.push(v);
    else {
      refuse(
        "run",
        v,
        r.rule ?? "default",
        `the guard ${
          r.decision === "deny" ? "denies" : "asks before"
        } running it with arbitrary arguments (${r.reason})`,
        r.rule === "default" ? `add --allow 'Execute(${v}:*)' to grant it` : undefined,
      );
    }
  }
  for (const v of list(declared?.env)) {
    if (typeof v !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) {
      refuse("env", String(v), "default", "env entries must be variable names");
      continue;
    }
    const p = namePart(core, "env", v, "full");
    if (p?.decision === "allow") grant.env.push(v);
    else if (p) refuse("env", v, p.rule ?? "default", phrase(core, p));
    else {refuse(
        "env",
        v,
        "default",
        "the policy asks before reading environment variables",
        `add --allow 'Env(${v})' to grant it`,
      );}
  }
  const perm = (xs: string[]) => (xs.length ? [...new Set(xs)] : false);
  return {
    permissions: {
      read: perm(grant.read),
      write: perm(grant.write),
      net: perm(grant.net),
      run: perm(grant.run),
      env: perm(grant.env),
      sys: false,
      ffi: false,
      import: false,
    },
    refused,
  };
}

/** A refusal phrase from a part: `rule X (from …) denies it` / `the policy asks for reads outside the workspace`. */
function phrase(core: PolicyCore, p: GuardPart): string {
  // Plan mode's own decision (./mode.ts) says itself what it is.
  if (p.rule === PLAN_RULE || p.rule === DEFAULT_RULE) {
    return p.reason.replace(/ \((switch the mode|accept-edits and auto).*\)$/, "");
  }
  if (p.rule && p.rule !== "default") {
    const r = core.rules.find((x) => x.text === p.rule);
    return `${r ? by(r) : `rule ${p.rule}`} ${p.decision === "deny" ? "denies" : "asks for"} it`;
  }
  return p.reason.replace(/^the default policy/, "the policy");
}

/** Can the whole subtree at `abs` be granted? */
function subtreePart(
  core: PolicyCore,
  kind: "read" | "write",
  abs: string,
): { decision: Decision; rule?: string; why: string; hint?: string } {
  const verb = kind === "read" ? "reads" : "writes";
  const hintAllow = `add --allow '${KIND_NAMES[kind]}(${abs === "/" ? "" : abs}/**)' to grant it`;
  let isFile = false;
  try {
    isFile = Deno.statSync(abs).isFile;
  } catch { /* missing or unreadable: treat as a directory */ }
  const probes = isFile ? [abs] : [abs, `${abs === "/" ? "" : abs}/\u0001probe`];
  for (const p of probes) {
    const part = modePart(core, pathPart(core, kind, p, "full"));
    if (part.decision === "allow") continue;
    if (part.rule && part.rule !== "default") {
      return { decision: part.decision, rule: part.rule, why: phrase(core, part) };
    }
    const why = /outside the workspace/.test(part.reason)
      ? `the policy asks for ${verb} outside the workspace`
      : part.reason.replace(/ \([^)]*\); add .*$/, "").replace(/\(\/.*?\)$/, "").trim();
    return { decision: part.decision, rule: "default", why, hint: hintAllow };
  }
  // Nothing beneath it may be restricted: Deno permissions cannot carve holes.
  for (const r of isFile ? [] : rulesOf(core, kind)) {
    if (r.decision === "allow" || r.pattern === undefined) continue;
    const m = matcher(core, r);
    if (isInside(m.base, abs) || (!m.literal && isInside(abs, m.base))) {
      return {
        decision: r.decision,
        rule: r.text,
        why: `${by(r)} ${
          r.decision === "deny" ? "denies" : "asks for"
        } part of it (a worker grant cannot exclude a sub-path)`,
        hint: "declare a narrower path",
      };
    }
  }
  if (kind === "write" && !isFile) {
    const roots = [
      `${core.workspace}/.git`,
      `${core.workspace}/.coyote`,
      `${core.workspace}/.mcp.json`,
      core.configDir,
      core.dataDir,
    ].filter((
      x,
    ): x is string => !!x);
    for (const root of roots) {
      if (!isInside(root, abs) || root === abs) continue;
      const part = modePart(core, pathPart(core, "write", `${root}/\u0001probe`, "full"));
      if (part.decision !== "allow") {
        return {
          decision: part.decision,
          rule: part.rule ?? "default",
          why:
            `it contains ${root}, which is never written without an explicit allow rule (a worker grant cannot exclude a sub-path)`,
          hint: "declare a narrower path",
        };
      }
    }
  }
  return { decision: "allow", why: "allowed" };
}

/**
 * May `program` run with any arguments? View (b) `run` asks the guard itself
 * about `program "$@"` (arguments unknown), so the two views agree by
 * construction: path deny rules, argument-specific deny rules and the
 * default read-only table all apply.
 */
function programPart(base: PolicyCore, program: string): GuardPart {
  // Judged as the guard judges a command in the policy's mode (command.ts `commandView`).
  const core = commandView(base);
  const parts: GuardPart[] = [];
  const level: Level = core.dangerouslySkipPermissions ? "skip" : "full";
  simpleParts(
    core,
    [program, WILD],
    [],
    `${program} …`,
    { depth: 0, cwds: [core.workspace], level },
    level,
    parts,
    true,
  );
  return worstPart(applyMode(base.mode, parts, true, base.dangerouslySkipPermissions));
}
