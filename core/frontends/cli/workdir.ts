/**
 * Where a run works when no `-C DIR` says so. `deno task coyote` always starts in the folder of
 * Coyote's deno.json (Deno runs a task in its config's folder) and puts the directory it was typed
 * in into `INIT_CWD` (the npm-scripts convention Deno follows); {@link taskWorkdir} moves back to
 * that directory, so `deno task coyote "fix the bug"` works where the user stands, as every peer
 * does. It acts only when the process starts in Coyote's own folder, so an `INIT_CWD` left over by
 * some other task runner never moves a run that was started elsewhere. {@link ownTreeWarning}
 * is the warning printed when the workspace is Coyote's own source tree anyway (issue 20).
 * Imports nothing.
 * @module
 */

/** Coyote's source root (the folder of main.ts and deno.json), no trailing slash. */
const OWN_ROOT = decodeURIComponent(new URL("../../../", import.meta.url).pathname).replace(
  /\/$/,
  "",
);

/** True when `dir` (absolute) is Coyote's own source root or inside it. */
export function inOwnTree(dir: string, root = OWN_ROOT): boolean {
  if (!new URL("../../../", import.meta.url).protocol.startsWith("file")) return false;
  const d = dir.replace(/\/+$/, "");
  return d === root || d.startsWith(root + "/");
}

/**
 * The directory a `deno task coyote` run should work in: `INIT_CWD` when the process started in
 * Coyote's own root (the task's folder) and `INIT_CWD` names another existing directory; else
 * `undefined` (stay). `get` reads the environment, `cwd` is the process's directory.
 */
export function taskWorkdir(
  get: (name: string) => string | undefined = (n) => Deno.env.get(n),
  cwd: string = Deno.cwd(),
  root = OWN_ROOT,
): string | undefined {
  const init = get("INIT_CWD");
  if (!init || !/^([A-Za-z]:)?[\\/]/.test(init) || cwd.replace(/\/+$/, "") !== root) {
    return undefined;
  }
  if (init.replace(/\/+$/, "") === root) return undefined;
  try {
    return Deno.statSync(init).isDirectory ? init : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The stderr line for a workspace inside Coyote's own clone, or `undefined` elsewhere: the agent
 * would read, edit and run commands in Coyote's source, which is rarely what was meant.
 */
export function ownTreeWarning(cwd: string = Deno.cwd(), root = OWN_ROOT): string | undefined {
  if (!inOwnTree(cwd, root)) return undefined;
  return `coyote: warning: the workspace is Coyote's own source tree (${cwd}); ` +
    `run it from your project, or pass -C DIR\n`;
}
