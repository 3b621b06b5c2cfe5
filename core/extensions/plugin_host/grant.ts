/**
 * A plugin's grant as the host hands it on: {@link NO_PERMISSIONS} (the Deno
 * Worker permission object with every key false) and the environment of the
 * processes a plugin spawns ({@link childEnvFor}, sent in the `load` message;
 * worker_main.ts passes it to every child). Also used by graph script
 * processes (core/graph/script.ts).
 * @module
 */

/** Deno Worker permissions with every key false. */
export const NO_PERMISSIONS: Deno.PermissionOptionsObject = {
  read: false,
  write: false,
  net: false,
  run: false,
  env: false,
  sys: false,
  ffi: false,
  import: false,
};

/** Variables a plugin's child processes get besides its granted ones (programs need them to run). */
export const CHILD_BASE_ENV = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "TERM",
];

/**
 * The environment of the processes a plugin spawns: {@link CHILD_BASE_ENV} plus the
 * variables of its `env` grant, nothing else. Deno starts a child with the WHOLE
 * environment of the process when `clearEnv` is not set, whatever the Worker's
 * `env` permission, so without this a plugin granted `run: ["printenv"]` (or `cat`
 * of `/proc/self/environ`) would read every secret of the session, the provider key
 * included. Empty when the plugin may run nothing.
 */
export function childEnvFor(perms: Deno.PermissionOptionsObject): Record<string, string> {
  if (!perms.run) return {};
  const names = [...CHILD_BASE_ENV, ...(Array.isArray(perms.env) ? perms.env : [])];
  const out: Record<string, string> = {};
  for (const n of names) {
    const v = Deno.env.get(String(n));
    if (v !== undefined) out[String(n)] = v;
  }
  return out;
}
