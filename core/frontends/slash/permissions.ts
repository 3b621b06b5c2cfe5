/**
 * `/permissions` (REPL and ACP): see the rules in force, and add or remove an allow/deny rule.
 *
 * - `/permissions` — the policy as `coyote policy show` prints it (rules with their sources,
 *   defaults, sandbox), then the rules added in this session;
 * - `/permissions allow|deny RULE` — adds the rule to this session (`AgentSession.addRule`, what
 *   an "always" answer does for the running session);
 * - `/permissions allow|deny RULE --project` — also saves it to `.coyote/config.local.yaml`
 *   (core/config/project.ts `appendPermissionRule`, where the permission prompt's "always" answers
 *   go; trusted workspaces only);
 * - `/permissions remove RULE` — removes it from `.coyote/config.local.yaml` (new sessions; a
 *   rule added to a running session holds until it ends).
 *
 * RULE is the config syntax (`Execute(git status)`, `Write(src/**)`, `Net(example.com)`, docs/permissions.md).
 * @module
 */
import type { AgentSession } from "../../session/types.ts";
import { writeTextAtomic } from "../../util/files.ts";

const added = new WeakMap<AgentSession, string[]>();

const USAGE =
  "usage: /permissions [allow|deny RULE [--project] | remove RULE]  (RULE e.g. Execute(npm test), Write(src/**))";

/** Runs `/permissions args`; returns the text to show. */
export async function permissionsCommand(
  session: AgentSession,
  args: string,
  opts: { trusted: boolean },
): Promise<string> {
  const m = /^(allow|deny|remove)\s+([\s\S]+?)(\s+--project)?$/.exec(args.trim());
  if (!args.trim()) {
    const lines: string[] = [];
    const { policyCommand } = await import("../policy_show.ts");
    await policyCommand(session.workspace.app, (t) => lines.push(t));
    const mine = added.get(session) ?? [];
    if (mine.length) lines.push("", "Added in this session:", ...mine.map((r) => `  ${r}`));
    lines.push("", USAGE);
    return lines.join("\n");
  }
  if (!m) return USAGE;
  const [, verb, rule, project] = m;
  if (verb === "remove") return await removeRule(session.cwd, rule.trim());
  const decision = verb as "allow" | "deny";
  const { parseRule } = await import("../../policy/rules.ts");
  try {
    parseRule(rule, decision, "/permissions");
  } catch (e) {
    return (e as Error).message;
  }
  session.addRule(decision, rule);
  added.set(session, [...(added.get(session) ?? []), `${decision} ${rule}`]);
  if (!project) return `${decision} ${rule}: added for this session (--project keeps it)`;
  if (!opts.trusted) {
    return `${decision} ${rule}: added for this session; not saved, the workspace is not trusted (/trust)`;
  }
  const { appendPermissionRule } = await import("../../config/project.ts");
  try {
    const path = await appendPermissionRule(session.cwd, decision, rule);
    return `${decision} ${rule}: added for this session and saved to ${path}`;
  } catch (e) {
    return `${decision} ${rule}: added for this session; could not save: ${(e as Error).message}`;
  }
}

/** Removes `rule` from every decision list of `.coyote/config.local.yaml`. */
async function removeRule(cwd: string, rule: string): Promise<string> {
  const { LOCAL_CONFIG } = await import("../../config/project.ts");
  const path = `${cwd.replace(/\/+$/, "")}/${LOCAL_CONFIG}`;
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return `${rule}: no ${LOCAL_CONFIG} in this workspace; nothing removed`;
  }
  const YAML = await import("yaml");
  const doc = YAML.parseDocument(text);
  if (doc.errors.length) return `${path}: ${doc.errors[0].message.split("\n")[0]}; nothing removed`;
  const from: string[] = [];
  for (const decision of ["allow", "ask", "deny"]) {
    const list = doc.getIn(["permissions", decision]);
    if (!YAML.isSeq(list)) continue;
    const i = list.items.findIndex((x) => (YAML.isScalar(x) ? x.value : x) === rule);
    if (i < 0) continue;
    list.delete(i);
    from.push(decision);
  }
  if (!from.length) return `${rule}: not in ${path}; nothing removed`;
  await writeTextAtomic(path, doc.toString());
  return `${rule}: removed from permissions.${
    from.join(", ")
  } of ${path} (new sessions; a rule added to this session holds until it ends)`;
}
