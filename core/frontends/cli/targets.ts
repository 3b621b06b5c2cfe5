/**
 * Checks the paths command-line flags name before anything runs: a flag the user typed that names
 * something missing is a usage error (exit 2, README "Exit codes"), never a warning followed by a
 * model request that runs without it. Checked here, for every frontend and subcommand alike:
 *
 * - `--plugin PATH`: a plugin module (`.ts`, `.mts`, `.js`, `.mjs`) or a folder holding one of its
 *   entry files (core/extensions/plugin_host/discover.ts `resolveEntry`). Whether the module then loads is
 *   the plugin host's business (a crashing plugin is reported and loses nothing).
 * - `--add-dir DIR`: an existing directory. Returned absolute (relative to the directory the
 *   command runs in, after `-C`), so an ACP session in another folder reads the same one.
 *
 * Names resolved per workspace (`--agent`, `--skill`, an id-shaped `--session`) are checked where
 * the workspace is known: before the first request in one-shot, headless and REPL runs; from
 * `session/new` in ACP (the session's `cwd` may hold the agent or skill). `-C` and `-f` are checked
 * where they are used: core/frontends/cli/mod.ts (`-C`) and core/frontends/cli/prompt.ts (`-f`).
 * @module
 */
import { resolve } from "../../util/path.ts";
import { resolveEntry } from "../../extensions/plugin_host/discover.ts";

/** A flag naming something missing; the message is one line naming the flag and the path. */
export class FlagTargetError extends Error {
  override name = "FlagTargetError";
}

/** `~` and `~/x` as the shell would expand them (a quoted `--plugin '~/p.ts'` stays unexpanded). */
function expandHome(p: string): string {
  if (p !== "~" && !p.startsWith("~/")) return p;
  return (Deno.env.get("HOME") ?? "") + p.slice(1);
}

/** `PATH`, plus the absolute path in parentheses when it differs (so a relative one is clear). */
function named(typed: string, abs: string): string {
  return typed === abs ? typed : `${typed} (${abs})`;
}

/** Why `path` is not a usable plugin, or undefined when it is one. */
export async function pluginPathProblem(
  typed: string,
  cwd: string,
): Promise<string | undefined> {
  const abs = resolve(cwd, expandHome(typed));
  try {
    await Deno.stat(abs);
  } catch (e) {
    return e instanceof Deno.errors.NotFound
      ? `${named(typed, abs)}: no such file or folder`
      : `${named(typed, abs)}: cannot read it: ${(e as Error).message}`;
  }
  const r = await resolveEntry(abs);
  if (!("error" in r)) return undefined;
  // resolveEntry's reason, without the path it starts with (named once, as typed).
  const why = r.error.startsWith(`${abs}: `) ? r.error.slice(abs.length + 2) : r.error;
  return `${named(typed, abs)}: ${why}`;
}

/**
 * Checks `--plugin` and `--add-dir` values against the file system.
 * @param cwd the directory relative paths are taken from (the process cwd after `-C`)
 * @returns the `--add-dir` values as absolute paths
 * @throws FlagTargetError for the first flag that names something missing or unusable
 */
export async function checkFlagTargets(
  flags: { plugin?: string[]; addDir?: string[] },
  cwd: string,
): Promise<{ addDirs: string[] }> {
  for (const p of flags.plugin ?? []) {
    const problem = await pluginPathProblem(p, cwd);
    if (problem) throw new FlagTargetError(`--plugin ${problem}`);
  }
  const addDirs: string[] = [];
  for (const d of flags.addDir ?? []) {
    const abs = resolve(cwd, expandHome(d));
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(abs);
    } catch (e) {
      throw new FlagTargetError(
        e instanceof Deno.errors.NotFound
          ? `--add-dir ${named(d, abs)}: no such directory`
          : `--add-dir ${named(d, abs)}: cannot read it: ${(e as Error).message}`,
      );
    }
    if (!info.isDirectory) throw new FlagTargetError(`--add-dir ${named(d, abs)}: not a directory`);
    addDirs.push(abs);
  }
  return { addDirs };
}
