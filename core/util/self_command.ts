/**
 * The command line that starts one of Coyote's own helper processes (a plugin's host, the
 * sandbox's home scan): in a `deno compile` binary the binary itself with the helper's hidden
 * first argument (main.ts dispatches it); under `deno run` the helper's entry module with
 * exactly the given flags, no config and no lock file.
 * @module
 */

/** `{cmd, args}` for the helper `hiddenArg` (compiled) or `deno run FLAGS… entry` (sources). */
export function selfCommand(
  hiddenArg: string,
  entry: URL,
  flags: readonly string[],
): { cmd: string; args: string[] } {
  if (Deno.build.standalone === true) return { cmd: Deno.execPath(), args: [hiddenArg] };
  return {
    cmd: Deno.execPath(),
    args: [
      "run",
      "--quiet",
      "--no-config",
      "--no-lock",
      "--no-prompt",
      ...flags,
      entry.protocol === "file:" ? decodeURIComponent(entry.pathname) : entry.href,
    ],
  };
}
