/**
 * Programs the guard has no rule for (issue 16 class 5, docs/permissions.md "Auto-allow yields"):
 * {@link namesAProgramItRuns} tells when one looks like a wrapper of another command
 * (`some-wrapper rm -rf v`, `foo -- rm -rf v`), which makes it opaque, so it yields while an
 * `Execute` deny or ask rule exists; {@link NAMES_PROGRAMS} are the programs that name programs
 * without running them (`man rm`, `which rm`, `apt-get install git`) and stay auto-allowed;
 * {@link RUNS_NO_CODE} are the only programs without a rule of their own that the guard counts as
 * understood: any other may run code it does not see, and yields (eleventh attacker pass).
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
    // `.` and `..` as operands are folders (`prettier --check .`), not the `.` builtin.
    if (isKnownProgram(a) && a !== "." && a !== "..") {
      return `"${name}" may run the program it names (${
        show(a)
      }), which the guard does not analyse`;
    }
  }
  return undefined;
}

/**
 * Programs without a rule of their own that run no code whatever their operands (file, archive
 * and process tools): the only ones such a command counts as understood (eleventh attacker pass,
 * issue 16 class 5). Every other program the guard has no rule for, or knows only by name, may run
 * code from its arguments, its configuration or the project that the guard does not see — `groff
 * -U` (`.sy`), `sftp -D`/`scp -S` (a program as the server or transport), `gpg` (an
 * `agent-program` in its home's gpg.conf), `keytool -J-agentpath:` (a JVM library), `terraform
 * apply` (`local-exec` provisioners), `socat EXEC:`, `zip -TT`, `patch` (an ed script runs `ed`,
 * whose `!` runs a command) — so while an `Execute` deny or ask rule exists it asks, unless an
 * allow rule names it (shell/commands.ts; core/policy/walk.ts, as a project's code). An allow list
 * rather than a list of the programs that run code, which can never be complete. Options that
 * load code are still checked for these (core/policy/shell/programs/runners.ts `LOADS_OPTION` and
 * the general rule, `tar --to-command`, `curl --engine`, `fd -x`, `socat EXEC:`, `nc -e`, `less
 * +CMD`, `curl -K`). Not here on purpose: `wget` (`-e use_askpass=…`), `scp`/`sftp` (`-o ProxyCommand`,
 * `-D`), `apt`/`apt-get` (`-o` hooks), `patch` (ed scripts), `gh` (extensions, aliases).
 */
export const RUNS_NO_CODE: ReadonlySet<string> = new Set([
  "rm",
  "rmdir",
  "mv",
  "cp",
  "dd",
  "shred",
  "unlink",
  "link",
  "truncate",
  "chmod",
  "chown",
  "chgrp",
  "ln",
  "install",
  "mkdir",
  "mkfifo",
  "mktemp",
  "touch",
  "sync",
  "split",
  "csplit",
  "kill",
  "pkill",
  "killall",
  "pgrep",
  "pidof",
  "ps",
  "yes",
  "expr",
  "bc",
  "base64",
  "base32",
  "xxd",
  "iconv",
  "shuf",
  "numfmt",
  "envsubst",
  "gettext",
  "tar",
  "gzip",
  "gunzip",
  "zcat",
  "bzip2",
  "bunzip2",
  "bzcat",
  "xz",
  "unxz",
  "xzcat",
  "lzma",
  "unlzma",
  "zstd",
  "unzstd",
  "zstdcat",
  "lz4",
  "unlz4",
  "unzip",
  "7z",
  "7za",
  "shellcheck",
  // Lookups that name programs without running them.
  "man",
  "whatis",
  "apropos",
  "whereis",
  "which",
  "type",
  "help",
  "apt-cache",
  "dpkg-query",
  "readelf",
  "objdump",
  "nm",
  // Their code-running options have rules (./runners.ts RUNS_OPTION, LOADS_OPTION).
  "curl",
  "openssl",
  "fd",
  "fdfind",
  "zip",
  "nc",
  "ncat",
  "netcat",
  "socat",
  "less",
]);
