/**
 * Programs the guard has no rule for (issue 16 class 5, docs/permissions.md "Auto-allow yields"):
 * {@link namesAProgramItRuns} tells when one looks like a wrapper of another command
 * (`some-wrapper rm -rf v`, `foo -- rm -rf v`), which makes it opaque, so it yields while an
 * `Execute` deny or ask rule exists; {@link NAMES_PROGRAMS} are the programs that name programs
 * without running them (`man rm`, `which rm`, `apt-get install git`) and stay auto-allowed.
 * @module
 */
import { show } from "../classification.ts";

/**
 * Programs whose operand is a program's name that they do not run: they look it up, document,
 * install, signal or copy it (`man rm`, `which rm`, `apt-get install git`, `pkill node`,
 * `cp /usr/bin/rm x`). Exempt from {@link namesAProgramItRuns}.
 */
export const NAMES_PROGRAMS: ReadonlySet<string> = new Set([
  "man",
  "info",
  "whatis",
  "apropos",
  "whereis",
  "which",
  "type",
  "help",
  "tldr",
  "apt",
  "apt-get",
  "apt-cache",
  "dpkg",
  "dpkg-query",
  "rpm",
  "dnf",
  "yum",
  "zypper",
  "apk",
  "pacman",
  "brew",
  "port",
  "snap",
  "flatpak",
  "pgrep",
  "pkill",
  "killall",
  "pidof",
  "kill",
  "systemctl",
  "service",
  "update-alternatives",
  "readelf",
  "objdump",
  "nm",
  "cp",
  "mv",
  "ln",
  "install",
  "rm",
  "rmdir",
  "unlink",
  "mkdir",
  "touch",
  "chmod",
  "chown",
  "chgrp",
  "truncate",
  "shred",
  // Names lexers (`-l python3`); its code-loading `-x` has a rule (./loaders.ts).
  "pygmentize",
]);

/** Program names the guard knows beyond its tables, as another program's operand (`foo rm -rf v`). */
export const OTHER_PROGRAMS: readonly string[] = [
  "rm",
  "rmdir",
  "mv",
  "cp",
  "dd",
  "shred",
  "unlink",
  "truncate",
  "chmod",
  "chown",
  "chgrp",
  "ln",
  "install",
  "mkdir",
  "touch",
  "kill",
  "pkill",
  "killall",
  "curl",
  "wget",
  "nc",
  "ncat",
  "socat",
  "git",
  "find",
  "sed",
  "tar",
  "rsync",
  "scp",
  "sftp",
  "tee",
  "jq",
  "rg",
  "fd",
  "mount",
  "umount",
  "mkfs",
  "awk",
  "gawk",
];
/**
 * Why an unknown program looks like a wrapper of another command (issue 16 class 5): its first
 * operand after its options, or its second after a first that is not a plain subcommand word
 * (`cgexec -g cpu:x rm`, `foo -n 0 rm`), is a program the guard knows (`isKnownProgram`: shell/commands.ts's
 * tables and {@link OTHER_PROGRAMS}) or a path in a `bin` folder, or it has `--` followed by a word (`foo -- rm -rf v`). Such a command is
 * {@link opaque}: while an `Execute` deny or ask rule exists it yields instead of running unasked.
 * Programs that only name programs ({@link NAMES_PROGRAMS}) are not. Undefined otherwise.
 */
export function namesAProgramItRuns(
  name: string,
  args: string[],
  isKnownProgram: (word: string) => boolean,
): string | undefined {
  if (NAMES_PROGRAMS.has(name)) return undefined;
  let seen = 0;
  let first = "";
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith("-")) {
        return `"${name}" may run the command after "--" (${
          show(next)
        }), which the guard does not analyse`;
      }
      return undefined;
    }
    if (a.startsWith("-")) continue;
    seen++;
    if (seen === 1) first = a;
    if (seen > 2 || seen === 2 && /^[a-z][a-z0-9-]*$/.test(first)) return undefined;
    if (isKnownProgram(a)) {
      return `"${name}" may run the program it names (${
        show(a)
      }), which the guard does not analyse`;
    }
  }
  return undefined;
}
