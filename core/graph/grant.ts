/**
 * The Deno permissions of a graph `.ts` script (issue 8 §1, script nodes' `permissions`): what
 * the node declares, granted only where the policy allows it — the workspace's configured policy
 * AND the session's current one (config, flags and the rules the user added during the session,
 * e.g. "reject always"). Session rules can only narrow a grant, never widen it: an entry is kept
 * only when both policies grant it (core/policy/policy.ts `Policy.workerPermissions`). Computed at
 * each run of the script, so a rule added mid-session applies to the next run.
 * @module
 */
import type { Policy } from "../policy/policy.ts";

/** Declared permissions of a script node (`read`, `write`, `net`, `run`, `env` lists). */
export type DeclaredPermissions = Record<string, string[] | undefined>;

/**
 * The grant of `declared` under both policies: each permission keeps the entries both grant
 * (same values: both policies resolve paths against the same workspace); `sys`, `ffi` and
 * `import` are false.
 * @param configured the workspace's policy without session rules (`Workspace.newPolicy()`)
 * @param session the session's policy object (the one its "always" answers add rules to)
 * @param name how refusals name the grantee (`graph <name>`)
 */
export async function scriptGrant(
  configured: Policy,
  session: Policy,
  declared: DeclaredPermissions,
  name: string,
): Promise<Deno.PermissionOptionsObject> {
  // Path globs compile only once npm picomatch has loaded (core/policy/rules.ts).
  await configured.globsReady();
  await session.globsReady();
  const a = configured.workerPermissions(declared, name).permissions;
  const b = session === configured ? a : session.workerPermissions(declared, name).permissions;
  const out: Deno.PermissionOptionsObject = { sys: false, ffi: false, import: false };
  for (const kind of ["read", "write", "net", "run", "env"] as const) {
    const x = a[kind];
    const y = b[kind];
    const both = Array.isArray(x) && Array.isArray(y)
      ? x.filter((v) => (y as unknown[]).map(String).includes(String(v))).map(String)
      : [];
    out[kind] = both.length ? both : false;
  }
  return out;
}
