/**
 * Programs that merely wrap another command, whose inner command the policy
 * checks on its own ({@link InnerCommand}): `sudo`, `doas`, `nice`, `nohup`,
 * `setsid`, `stdbuf`, `builtin`, `exec`, `ionice`, `time`, `timeout`,
 * `command`, `setarch` (and `linux64`, `x86_64`, `i386`, …), `choom`,
 * `uclampset`, `runcon`, `eatmydata`, `numactl`, `cgexec`, `torsocks`,
 * `proxychains`, `env` (with its `NAME=value` assignments), `xargs` (input
 * appended, `-I` replacements unknown) and `find` (its `-exec`/`-ok`
 * commands, whose `{}` is a found path, and the `-fprint` files it writes);
 * the option grammar of each ({@link WRAPPERS}) says where the inner command
 * starts. An option it does not know asks (fail closed).
 *
 * Examples (rows of tests/guard_test.ts): `timeout 5 ls` and
 * `env FOO=1 ls` allowed; `sudo ls` asks (other privileges); `env` alone
 * asks (prints the environment); `find . -delete` asks.
 * @module
 */
import { WILD } from "../../rules.ts";
import { allow, ask, type Classification, type InnerCommand, opaque } from "../classification.ts";
import { type OptSpec, skipOptions } from "../options.ts";

/** `setarch`'s options (also those of `linux64`, `x86_64`, `i386`, … which are links to it). */
const SETARCH: OptSpec = {
  flags: [
    "-v",
    "-R",
    "-F",
    "-Z",
    "-L",
    "-X",
    "-B",
    "-I",
    "-S",
    "-T",
    "-3",
    "--verbose",
    "--addr-no-randomize",
    "--fdpic-funcptrs",
    "--mmap-page-zero",
    "--addr-compat-layout",
    "--read-implies-exec",
    "--32bit",
    "--short-inode",
    "--whole-seconds",
    "--sticky-timeouts",
    "--uname-2.6",
    "--3gb",
    "--4gb",
  ],
  valued: [],
};
/** Names under which `setarch` runs with the architecture implied (no ARCH operand). */
const SETARCH_LINKS = [
  "linux32",
  "linux64",
  "i386",
  "i486",
  "i586",
  "i686",
  "x86_64",
  "uname26",
  "aarch64",
  "armv7l",
  "armv8l",
  "ppc",
  "ppc64",
  "ppc64le",
  "s390",
  "s390x",
];

/** The wrappers and the options each takes before the command it runs. */
export const WRAPPERS: Record<string, OptSpec> = {
  sudo: {
    flags: [
      "-A",
      "-b",
      "-E",
      "-H",
      "-i",
      "-k",
      "-K",
      "-n",
      "-P",
      "-S",
      "-s",
      "-N",
      "--askpass",
      "--background",
      "--preserve-env",
      "--set-home",
      "--login",
      "--non-interactive",
      "--stdin",
      "--shell",
      "--reset-timestamp",
    ],
    valued: [
      "-u",
      "-g",
      "-h",
      "-p",
      "-C",
      "-D",
      "-r",
      "-t",
      "-U",
      "-T",
      "--user",
      "--group",
      "--host",
      "--prompt",
      "--close-from",
      "--chdir",
      "--role",
      "--type",
      "--other-user",
      "--command-timeout",
    ],
  },
  doas: { flags: ["-n", "-s"], valued: ["-u", "-C"] },
  nice: { flags: [], valued: ["-n", "--adjustment"], numeric: true },
  nohup: { flags: [], valued: [] },
  setsid: { flags: ["-c", "-f", "-w", "--ctty", "--fork", "--wait"], valued: [] },
  stdbuf: { flags: [], valued: ["-i", "-o", "-e", "--input", "--output", "--error"] },
  builtin: { flags: [], valued: [] },
  exec: { flags: ["-c", "-l"], valued: ["-a"] },
  ionice: { flags: ["-t", "--ignore"], valued: ["-c", "-n", "--class", "--classdata"] },
  time: { flags: ["-p", "--portability"], valued: [] },
  timeout: {
    flags: ["--preserve-status", "--foreground", "-v", "--verbose"],
    valued: ["-s", "-k", "--signal", "--kill-after"],
  },
  command: { flags: ["-p"], valued: [] },
  env: {
    flags: ["-i", "-0", "--ignore-environment", "--null", "-v", "--debug"],
    valued: ["-u", "--unset"],
  },
  // util-linux and friends that change one property of the process and exec the rest (issue 16
  // class 5, fifth pass): `setarch ARCH` (and its per-architecture names) run a shell without a
  // command, `runcon CONTEXT cmd` takes a context first.
  setarch: SETARCH,
  choom: { flags: [], valued: ["-n", "--adjust", "-p", "--pid"] },
  uclampset: {
    flags: ["-R", "--reset-on-fork", "-a", "--all-tasks", "-v", "--verbose", "-s", "--system"],
    valued: ["-m", "-M", "-p", "--pid"],
  },
  runcon: {
    flags: ["-c", "--compute"],
    valued: ["-u", "-r", "-t", "-l", "--user", "--role", "--type", "--range"],
  },
  eatmydata: { flags: [], valued: [] },
  numactl: {
    flags: ["-a", "--all", "-l", "--localalloc", "-b", "--balancing"],
    valued: [
      "-i",
      "-m",
      "-N",
      "-C",
      "-p",
      "-P",
      "-w",
      "--interleave",
      "--membind",
      "--cpunodebind",
      "--cpubind",
      "--physcpubind",
      "--preferred",
      "--preferred-many",
      "--weighted-interleave",
    ],
  },
  cgexec: { flags: ["--sticky"], valued: ["-g"] },
  torsocks: {
    flags: ["-i", "--isolate", "-d", "--debug", "-q", "--quiet"],
    valued: ["-u", "--user", "-p", "--pass", "-a", "--address", "-P", "--port"],
  },
  proxychains: { flags: ["-q"], valued: ["-f"] },
  proxychains4: { flags: ["-q"], valued: ["-f"] },
  xargs: {
    flags: [
      "-0",
      "-r",
      "-t",
      "-p",
      "-x",
      "-o",
      "--null",
      "--no-run-if-empty",
      "--verbose",
      "--interactive",
      "--exit",
      "--open-tty",
    ],
    valued: [
      "-a",
      "-d",
      "-E",
      "-I",
      "-L",
      "-n",
      "-P",
      "-s",
      "--arg-file",
      "--delimiter",
      "--eof",
      "--replace",
      "--max-lines",
      "--max-args",
      "--max-procs",
      "--max-chars",
      "--process-slot-var",
    ],
  },
};

for (const link of SETARCH_LINKS) WRAPPERS[link] = SETARCH;

/** `sudo`/`env`/`timeout`/`xargs`/…: the command after the wrapper's options, checked on its own. */
export function wrapper(name: string, args: string[]): Classification {
  const spec = WRAPPERS[name];
  const words = [name, ...args];
  if (name === "command" && /^-[pvV]*[vV][pvV]*$/.test(args[0] ?? "")) {
    return allow(`"command -v" only looks a name up`);
  }
  let at = skipOptions(args, spec);
  if (at < 0) {
    return opaque(
      words,
      `cannot tell which command "${name}" runs (unknown or unsupported option)`,
    );
  }
  if (name === "setarch") {
    if (!args.length || args[0].startsWith("-")) {
      return ask(words, `setarch without an architecture`);
    }
    at = skipOptions(args.slice(1), spec);
    if (at < 0) return opaque(words, `cannot tell which command "setarch" runs (unknown option)`);
    at++;
  }
  // `runcon CONTEXT cmd`: without options the first operand is the context.
  if (name === "runcon" && at === 0) at = 1;
  // setarch and its links run a shell that reads its commands from the input without a command.
  if ((name === "setarch" || SETARCH_LINKS.includes(name)) && at >= args.length) {
    return opaque(words, `"${name}" without a command runs a shell that reads its input`);
  }
  const unsafe = name === "sudo" || name === "doas";
  const base = (inner: InnerCommand[], why: string, extra: Partial<Classification> = {}) =>
    unsafe
      ? ask(words, `"${name}" runs a command with other privileges`, { inner, ...extra })
      : allow(why, { readOnly: false, inner, ...extra });

  if (name === "env") {
    if (args.some((a) => /^(-C|--chdir|-S|--split-string)/.test(a))) {
      return opaque(words, `env -C / -S is not supported by the guard`);
    }
    // env takes every word with a `=` before the command as an assignment, whatever its name:
    // `BASH_FUNC_ls%%=() { …; }` defines the function `ls` for a bash it starts, so a name that
    // is not a plain variable name, or a value that is a function definition, is code.
    const assigns: string[] = [];
    while (at < args.length && /^[^=-][^=]*=/.test(args[at])) {
      const a = args[at++];
      const n = a.slice(0, a.indexOf("="));
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(n) || /^\s*\(\s*\)/.test(a.slice(n.length + 1))) {
        return opaque(
          words,
          `env sets ${
            JSON.stringify(n)
          } to a function definition or a name that is not a variable (bash imports functions from such variables)`,
        );
      }
      assigns.push(n);
    }
    if (at < args.length && args[at].startsWith(WILD)) {
      return opaque(words, `env runs an unknown command`);
    }
    if (at >= args.length) {
      return ask(words, `"env" without a command prints the environment (may contain secrets)`);
    }
    return allow(`"env" runs the command after it`, {
      readOnly: false,
      inner: [{ words: args.slice(at), assigns }],
    });
  }
  if (name === "timeout") {
    if (at >= args.length) return ask(words, `timeout without a duration`);
    at++; // the duration
  }
  if (
    name === "time" || name === "exec" || name === "nohup" || name === "builtin" ||
    name === "command"
  ) {
    if (at >= args.length) return allow(`"${name}" without a command`);
  }
  if (name === "xargs") {
    // `-I R` / `--replace[=R]`: R in the command's words is replaced by each input line, which
    // may be anything (inside a `sh -c` string it is shell code).
    let repl: string | undefined;
    for (let k = 0; k < at; k++) {
      const a = args[k];
      if (a === "-I" || a === "--replace") repl = a === "-I" ? args[k + 1] : "{}";
      else if (a.startsWith("-I")) repl = a.slice(2);
      else if (a.startsWith("--replace=")) repl = a.slice(10);
    }
    const sub = (w: string) => (repl ? w.replaceAll(repl, WILD) : w);
    const inner = at < args.length ? [...args.slice(at).map(sub), WILD] : ["echo", WILD];
    if (inner[0].startsWith(WILD)) return opaque(words, `xargs runs an unknown command`);
    return allow(`"xargs" runs the command after it with input appended`, {
      readOnly: false,
      inner: [{ words: inner, assigns: [], unknownArgs: true }],
    });
  }
  if (at >= args.length) {
    if (unsafe) return ask(words, `"${name}" runs a command with other privileges`);
    return ask(words, `"${name}" without a command`);
  }
  const inner = args.slice(at);
  if (inner[0].startsWith(WILD)) return opaque(words, `"${name}" runs an unknown command`);
  // `exec -l sh`, `exec -a -sh sh`: a program named `-…` is a login shell (start-up files).
  const pre = args.slice(0, at);
  const login = name === "exec" &&
    (pre.some((a) => /^-[a-z]*l/.test(a)) ||
      pre.some((a, k) => pre[k - 1] === "-a" && /^-/.test(a)));
  // `sudo -D DIR` / `--chdir=DIR` runs it in another directory.
  const elsewhere = name === "sudo" &&
      pre.some((a) => /^(-[A-Za-z]*D|--chdir(=|$))/.test(a)) || undefined;
  return base(
    [{ words: inner, assigns: [], elsewhere }],
    `"${name}" runs the command after it`,
    login
      ? {
        projectCode:
          "exec -l / -a -NAME starts a login shell, which runs start-up files the guard does not see",
      }
      : {},
  );
}

/** `find`: `-exec`/`-ok` commands checked on their own, `-fprint` files written, `-delete` asks. */
export function find(args: string[]): Classification {
  const words = ["find", ...args];
  const inner: InnerCommand[] = [];
  const writes: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith(WILD)) return opaque(words, `find with an unknown argument may run or delete`);
    if (a === "-exec" || a === "-execdir" || a === "-ok" || a === "-okdir") {
      const cmd: string[] = [];
      let j = i + 1;
      for (; j < args.length && args[j] !== ";" && args[j] !== "+"; j++) {
        cmd.push(args[j].replaceAll("{}", WILD));
      }
      if (j >= args.length || !cmd.length) {
        return opaque(words, `find ${a} without a complete command`);
      }
      if (cmd[0].startsWith(WILD)) return opaque(words, `find ${a} runs an unknown command`);
      // -execdir/-okdir run it in the folder of each found item, not in find's directory.
      const elsewhere = a.endsWith("dir") || undefined;
      inner.push({ words: cmd, assigns: [], findItems: true, elsewhere });
      i = j;
    } else if (a === "-delete") return opaque(words, `find -delete deletes files (as rm does)`);
    else if (a === "-fprint" || a === "-fprint0" || a === "-fls" || a === "-fprintf") {
      writes.push(args[i + 1] ?? WILD);
      i += a === "-fprintf" ? 2 : 1;
    }
  }
  return allow(`read-only command "find"`, { inner, writes, readOnly: inner.length === 0 });
}
