/**
 * Programs that run another command or a shell string in a way the guard does not analyse
 * (issue 16 §5 "auto-allow yields", docs/permissions.md "Auto-allow yields"): they are
 * {@link opaque}, so while an `Execute` deny or ask rule exists they ask with that rule instead of
 * running unasked in the sandbox. Examples (rows of tests/auto_allow_yields_test.ts):
 * `flock /tmp/l rm -rf v`, `ssh-agent rm -rf v`, `tar cf x.tar --to-command='rm -rf v' f`,
 * `rsync -e 'rm -rf v' a b:`, `PAGER='rm -rf v' man ls`.
 * @module
 */
import { type Classification, opaque } from "../classification.ts";
import { WILD } from "../../rules.ts";

/** Programs whose operands include a command (or a shell string) they run. */
export const COMMAND_RUNNERS: ReadonlySet<string> = new Set([
  "flock",
  "ssh-agent",
  "chroot",
  "chrt",
  "taskset",
  "unshare",
  "nsenter",
  "prlimit",
  "setpriv",
  "runuser",
  "su",
  "sg",
  "watch",
  "script",
  "dbus-run-session",
  "systemd-run",
  "firejail",
  "bwrap",
  "proot",
  "fakeroot",
  "fakechroot",
  "faketime",
  "strace",
  "ltrace",
  "gdb",
  "valgrind",
  "perf",
  "catchsegv",
  "xvfb-run",
  "parallel",
  "entr",
  "expect",
  "tmux",
  "screen",
  "at",
  "batch",
  "busybox",
  "toybox",
  "dtach",
  "crontab",
  "unbuffer",
  "rlwrap",
  "pkexec",
  "daemonize",
  "start-stop-daemon",
  "nq",
  "tsp",
  "pueue",
]);

/**
 * Editors and calculators that run the commands they read, from their arguments or from stdin
 * (`printf '!rm v\nq\n' | ed -s`, `ex -s -c '!cmd'`, `vim -es`, `dc -e '!cmd'`, m4's
 * `esyscmd`): whatever their arguments, they are {@link opaque}.
 */
export const COMMAND_READERS: ReadonlySet<string> = new Set([
  "ed",
  "ex",
  "vi",
  "vim",
  "nvim",
  "view",
  "vimdiff",
  "gvim",
  "emacs",
  "emacsclient",
  "dc",
  "m4",
  "gnuplot",
]);

/** Options of other programs that name a command they run, by program. */
const RUNS_OPTION: Record<string, RegExp> = {
  fd: /^(-[A-Za-z]*[xX]|--exec(-batch)?(=|$))/,
  fdfind: /^(-[A-Za-z]*[xX]|--exec(-batch)?(=|$))/,
  split: /^--filter(=|$)/,
  sort: /^--compress-program(=|$)/,
  zip: /^(-TT|--unzip-command)/,
  wget: /^--use-askpass(=|$)/,
  scp: /^-[A-Za-z0-9]*S/,
  sftp: /^-[A-Za-z0-9]*S/,
  // socat addresses EXEC:cmd and SYSTEM:cmd (also the write half of `A!!B`).
  socat: /(^|!!)(exec|system):/i,
};

/** Options of `tar` that run a program (GNU tar). */
const TAR_RUNS =
  /^--(to-command|checkpoint-action|use-compress-program|rsh-command|info-script|new-volume-script)(=|$)/;

/**
 * The classification of a program that runs a command the guard does not analyse, or undefined
 * when `name args` is not one.
 */
export function runner(name: string, args: string[]): Classification | undefined {
  const words = [name, ...args];
  if (COMMAND_RUNNERS.has(name)) {
    return opaque(words, `"${name}" runs a command the guard does not analyse`);
  }
  if (COMMAND_READERS.has(name)) {
    return opaque(words, `"${name}" runs the commands it reads from its arguments or its input`);
  }
  const runs = RUNS_OPTION[name];
  if (runs && args.some((a) => runs.test(a) || a.startsWith(WILD))) {
    return opaque(words, `${name} with an option or address that runs a command`);
  }
  if (name === "tar") {
    const short = (a: string, i: number) =>
      (a.startsWith("-") && !a.startsWith("--") || i === 0 && !a.startsWith("-")) &&
      /[IF]/.test(a.replace(/^-/, "").split("=")[0]);
    if (args.some((a, i) => TAR_RUNS.test(a) || short(a, i) || a.startsWith(WILD))) {
      return opaque(words, `tar with an option that runs a program (--to-command, -I, -F, …)`);
    }
  }
  if (name === "rsync") {
    if (
      args.some((a) =>
        /^--(rsh|rsync-path)(=|$)/.test(a) || /^-[A-Za-z]*e/.test(a) || a.startsWith(WILD)
      )
    ) {
      return opaque(words, `rsync -e/--rsh runs a program`);
    }
  }
  if (name === "man" && args.some((a) => /^(-[A-Za-z]*[PH]|--(pager|html)(=|$))/.test(a))) {
    return opaque(words, `man -P/-H runs a program`);
  }
  return undefined;
}

/**
 * Variables that make a program run a command or load code (`PAGER`, `EDITOR`, `LESSOPEN`,
 * `GIT_SSH_COMMAND`, `LD_PRELOAD`, `NODE_OPTIONS`, `BASH_ENV`, …): set for a command, they are
 * code the guard does not see.
 */
export const CODE_VARIABLE =
  /^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|BASH_ENV|ENV|PROMPT_COMMAND|SHELL|BROWSER|LESSOPEN|LESSCLOSE|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|NODE_OPTIONS|NODE_PATH|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|GIT_EXEC_PATH|GIT_ASKPASS|SSH_ASKPASS|GIT_EXTERNAL_DIFF|GIT_SSH|GIT_SSH_COMMAND|GIT_PROXY_COMMAND|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_DIR|GIT_TEMPLATE_DIR|\w*PAGER|\w*EDITOR|VISUAL|TAR_OPTIONS|RSYNC_RSH|MAKEFLAGS|MFLAGS)$/;
