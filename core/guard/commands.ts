/**
 * What the guard knows about individual programs: which are read-only (allowed
 * by the default policy), which merely wrap another command (`sudo`, `env`,
 * `timeout`, `xargs`, `find -exec`, …, whose inner command is checked on its
 * own), which run a shell string (`bash -c`, `sh -c`, `eval`, parsed
 * recursively), and which write files named in their arguments (`tee`,
 * `sort -o`, `uniq IN OUT`).
 *
 * Every function here fails closed: an option it does not know, or an
 * argument whose value is unknown (WILD) where it could change the meaning,
 * makes the command "not read-only", which the default policy turns into ask.
 * @module
 */
import { WILD } from "./rules.ts";

/** The default-policy view of one simple command. */
export interface Classification {
  /** True when the default policy allows the command itself. */
  allowed: boolean;
  /** Why (names the program and, when not allowed, the reason). */
  reason: string;
  /** True when the command only reads its arguments (explicit Write rules do not apply to them). */
  readOnly: boolean;
  /** Inner simple commands (wrappers, `find -exec`, `xargs`), checked on their own; `assigns` from `env NAME=v`. */
  inner: InnerCommand[];
  /** Shell strings run by `bash -c` / `sh -c` / `eval`: the text, or null when not a literal. */
  scripts: { via: string; src: string | null }[];
  /** Files the command writes (tee, sort -o, uniq IN OUT), checked as Write accesses. */
  writes: string[];
  /** `cd`/`pushd` target (WILD when unknown, "~" for home) for relative-path resolution. */
  cd?: string;
}

/** A command run by another one. */
export interface InnerCommand {
  words: string[];
  assigns: string[];
  /** True when unknown (WILD) words are input only known at run time (`xargs`), never a filename glob. */
  unknownArgs?: boolean;
  /** True for `find -exec`: a word that is only WILD is a path `find` found beneath its start paths. */
  findItems?: boolean;
}

/** Programs that only read, whatever their arguments. */
const PURE_READ_ONLY = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "pwd",
  "echo",
  "printf",
  "grep",
  "egrep",
  "fgrep",
  "which",
  "whoami",
  "id",
  "uname",
  "file",
  "stat",
  "du",
  "df",
  "cut",
  "tr",
  "diff",
  "cmp",
  "comm",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "true",
  "false",
  "test",
  "[",
  ":",
  "seq",
  "nl",
  "tac",
  "rev",
  "od",
  "hexdump",
  "md5sum",
  "sha1sum",
  "sha224sum",
  "sha256sum",
  "sha384sum",
  "sha512sum",
  "b2sum",
  "cksum",
  "sleep",
  "type",
  "column",
  "paste",
  "fold",
  "expand",
  "unexpand",
  "strings",
  "nproc",
  "arch",
  "uptime",
  "groups",
  "tty",
  "locale",
  "cal",
  "join",
  "fmt",
  "free",
  "whereis",
  "lsb_release",
  "getconf",
  "cd",
  "pushd",
  "popd",
  "dirs",
  "read",
  "shift",
  "exit",
  "return",
  "break",
  "continue",
  "wait",
  "jobs",
  "umask",
  "hash",
  "let",
  "shopt",
  "unset",
]);
// `set`/`shopt`/`unset`/`umask` only change the shell that runs this one command line.

/** `git` subcommands that only read (with extra checks below). */
const GIT_READ_ONLY = new Set([
  "status",
  "diff",
  "log",
  "show",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "blame",
  "describe",
  "shortlog",
  "cat-file",
  "show-ref",
  "merge-base",
  "name-rev",
  "count-objects",
  "version",
  "whatchanged",
  "grep",
  "branch",
  "tag",
  "remote",
  "stash",
  "reflog",
  "worktree",
  "rev-list",
  "diff-tree",
  "diff-files",
  "diff-index",
  "for-each-ref",
  "check-ignore",
  "ls-remote",
  "var",
]);

/** The classification of a command the default policy asks about. */
function ask(_words: string[], why: string, extra: Partial<Classification> = {}): Classification {
  return {
    allowed: false,
    reason: why,
    readOnly: false,
    inner: [],
    scripts: [],
    writes: [],
    ...extra,
  };
}

function allow(why: string, extra: Partial<Classification> = {}): Classification {
  return {
    allowed: true,
    reason: why,
    readOnly: true,
    inner: [],
    scripts: [],
    writes: [],
    ...extra,
  };
}

const hasWild = (s: string) => s.includes(WILD);
const show = (s: string) => JSON.stringify(s.replaceAll(WILD, "…"));

/** Option grammar of a wrapper: short/long flags without value, options taking a value. */
interface OptSpec {
  flags: string[];
  valued: string[];
  /** Accept `-NUMBER` (nice). */
  numeric?: boolean;
}

/**
 * Index of the first operand after the options of `args` per `spec`, or -1
 * when an option is unknown or a value is missing (fail closed).
 */
function skipOptions(args: string[], spec: OptSpec): number {
  const flags = new Set(spec.flags);
  const valued = new Set(spec.valued);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (hasWild(a) && a.startsWith(WILD)) return -1;
    if (a === "--") return i + 1;
    if (!a.startsWith("-") || a === "-") return i;
    if (hasWild(a)) return -1;
    if (a.startsWith("--")) {
      const name = a.split("=")[0];
      if (valued.has(name)) {
        if (!a.includes("=")) i++;
        if (i >= args.length) return -1;
        continue;
      }
      if (flags.has(name) && !a.includes("=")) continue;
      return -1;
    }
    if (spec.numeric && /^-\d+$/.test(a)) continue;
    if (valued.has(a)) {
      i++;
      if (i >= args.length) return -1;
      continue;
    }
    if (valued.has(a.slice(0, 2))) continue; // -n10
    // cluster of short flags, the last may take a value
    let ok = true;
    for (let k = 1; k < a.length; k++) {
      const o = "-" + a[k];
      if (flags.has(o)) continue;
      if (valued.has(o)) {
        if (k === a.length - 1) {
          i++;
          if (i >= args.length) return -1;
        }
        break;
      }
      ok = false;
      break;
    }
    if (!ok) return -1;
  }
  return args.length;
}

const WRAPPERS: Record<string, OptSpec> = {
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

const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);

/** Names that are dangerous to set for a command: they change which program runs or what it loads. */
export function dangerousEnvName(name: string): boolean {
  return /^(PATH|IFS|BASH_ENV|ENV|PS4|SHELLOPTS|BASHOPTS|PROMPT_COMMAND|PAGER|EDITOR|VISUAL|MANPAGER|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PERL5OPT|PERL5LIB|RUBYOPT|HOME|CDPATH|TMPDIR|XDG_CONFIG_HOME|COYOTE_CONFIG_DIR|RIPGREP_CONFIG_PATH|GREP_OPTIONS)$/
    .test(name) || /^(LD_|DYLD_|GIT_|BASH_FUNC_|DENO_|NPM_CONFIG_|npm_config_)/.test(name);
}

/**
 * Classifies one simple command (words after env-prefix assignments) for the
 * default policy. `words[0]` is a literal program name.
 */
export function classify(words: string[]): Classification {
  const name = words[0];
  const args = words.slice(1);
  if (name.includes("/")) {
    return ask(
      words,
      `${show(name)} is run by path, not by name (only well-known read-only commands are allowed)`,
    );
  }

  if (name in WRAPPERS) return wrapper(name, args);
  if (SHELLS.has(name)) return shell(name, args);
  if (name === "eval") {
    const src = args.some(hasWild) ? null : args.join(" ");
    return allow(`eval runs its arguments as a command line`, {
      readOnly: false,
      scripts: [{ via: "eval", src }],
    });
  }
  if (PURE_READ_ONLY.has(name)) {
    const extra: Partial<Classification> = {};
    if (name === "cd" || name === "pushd") {
      const target = args.find((a) => !a.startsWith("-") || a === "-");
      extra.cd = target === undefined ? "~" : target === "-" ? WILD : target;
    } else if (name === "popd") extra.cd = WILD;
    // `hash -p PATH NAME` makes NAME run PATH.
    if (name === "hash" && args.some((a) => /^-[a-z]*p/.test(a) || a.startsWith(WILD))) {
      return ask(words, `"hash -p" sets which program a name runs`);
    }
    return allow(`read-only command "${name}"`, extra);
  }
  switch (name) {
    case "set":
      // `set` alone prints every variable (secrets included); `set -e` / `set -o pipefail` only set options.
      if (!args.length || args.some((a) => !/^[-+][a-zA-Z]*$/.test(a) && !/^[a-z]+$/.test(a))) {
        return ask(
          words,
          `"set" without options prints every shell variable (may contain secrets)`,
        );
      }
      return allow(`"set" only changes shell options`);
    case "jq":
      if (
        args.some((a) =>
          /\benv\b|\$ENV|\binput_filename\b|--rawfile|--slurpfile/.test(a) || a.startsWith(WILD)
        )
      ) {
        return ask(
          words,
          `jq with env/$ENV or file-loading options may read secrets or other files`,
        );
      }
      return allow(`read-only command "jq"`);
    case "find":
      return find(args);
    case "sed":
      return sed(args);
    case "git":
      return git(args);
    case "rg":
      if (
        args.some((a) =>
          a === "--pre" || a.startsWith("--pre=") || hasWild(a) && a.startsWith(WILD)
        )
      ) {
        return ask(words, `rg --pre runs a program on every file`);
      }
      // --hostname-bin runs the given program to learn the host name (for hyperlinks).
      if (args.some((a) => a === "--hostname-bin" || a.startsWith("--hostname-bin="))) {
        return ask(words, `rg --hostname-bin runs a program`);
      }
      return allow(`read-only command "rg"`);
    case "sort": {
      const writes: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (a.startsWith(WILD)) return ask(words, `sort with an unknown option may write a file`);
        if (a === "-o" || a === "--output") writes.push(args[++i] ?? WILD);
        else if (a.startsWith("--output=")) writes.push(a.slice(9));
        else if (/^-[^-]*o/.test(a)) {
          const rest = a.slice(a.indexOf("o") + 1);
          writes.push(rest || (args[++i] ?? WILD));
        } else if (a.startsWith("--compress-program")) {
          return ask(words, `sort --compress-program runs a program`);
        }
      }
      return allow(`read-only command "sort"`, { writes });
    }
    case "uniq": {
      const ops = args.filter((a) => !a.startsWith("-") || a === "-");
      if (args.some((a) => a.startsWith(WILD))) {
        return ask(words, `uniq with unknown arguments may write a file`);
      }
      return allow(`read-only command "uniq"`, { writes: ops.length > 1 ? [ops[1]] : [] });
    }
    case "tee": {
      const files = args.filter((a) => !a.startsWith("-") || a === "-" || a.startsWith(WILD));
      return allow(`"tee" writes only the files it names`, {
        writes: files.filter((f) => f !== "-"),
        readOnly: true,
      });
    }
    case "tree":
      // -o FILE writes it, also inside a cluster (`-ao out`); -R (with -H) writes 00Tree.html
      // into every folder it visits.
      if (args.some((a) => /^-[^-]*[oR]/.test(a) || a.startsWith(WILD))) {
        return ask(words, `tree -o/-R writes files`);
      }
      return allow(`read-only command "tree"`);
    case "date":
      if (args.some((a) => /^(-s|--set)/.test(a) || a.startsWith(WILD))) {
        return ask(words, `date -s sets the clock`);
      }
      return allow(`read-only command "date"`);
    case "hostname":
      if (args.length) return ask(words, `hostname with arguments changes the host name`);
      return allow(`read-only command "hostname"`);
  }
  return ask(words, `"${name}" is not a read-only command`);
}

function wrapper(name: string, args: string[]): Classification {
  const spec = WRAPPERS[name];
  const words = [name, ...args];
  if (name === "command" && /^-[pvV]*[vV][pvV]*$/.test(args[0] ?? "")) {
    return allow(`"command -v" only looks a name up`);
  }
  let at = skipOptions(args, spec);
  if (at < 0) {
    return ask(words, `cannot tell which command "${name}" runs (unknown or unsupported option)`);
  }
  const unsafe = name === "sudo" || name === "doas";
  const base = (inner: InnerCommand[], why: string, extra: Partial<Classification> = {}) =>
    unsafe
      ? ask(words, `"${name}" runs a command with other privileges`, { inner, ...extra })
      : allow(why, { readOnly: false, inner, ...extra });

  if (name === "env") {
    if (args.some((a) => /^(-C|--chdir|-S|--split-string)/.test(a))) {
      return ask(words, `env -C / -S is not supported by the guard`);
    }
    const assigns: string[] = [];
    while (at < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[at])) {
      assigns.push(args[at++].split("=")[0]);
    }
    if (at < args.length && args[at].startsWith(WILD)) {
      return ask(words, `env runs an unknown command`);
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
    if (inner[0].startsWith(WILD)) return ask(words, `xargs runs an unknown command`);
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
  if (inner[0].startsWith(WILD)) return ask(words, `"${name}" runs an unknown command`);
  return base([{ words: inner, assigns: [] }], `"${name}" runs the command after it`);
}

function shell(name: string, args: string[]): Classification {
  const words = [name, ...args];
  if (name === "busybox") {
    if (args[0] !== "sh" && args[0] !== "ash") {
      return ask(words, `"busybox" runs arbitrary applets`);
    }
    return shell("sh", args.slice(1));
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith(WILD)) return ask(words, `${name} with unknown arguments`);
    if (a === "--") break;
    if (
      a === "-o" || a === "+o" || a === "-O" || a === "+O" || a === "--rcfile" ||
      a === "--init-file"
    ) {
      i++;
      continue;
    }
    if (/^--[a-z-]+$/.test(a)) continue;
    if (/^[-+][a-zA-Z]+$/.test(a)) {
      if (a.startsWith("-") && a.includes("c")) {
        let j = i + 1;
        while (j < args.length && /^[-+][a-zA-Z]+$/.test(args[j]) && !args[j].startsWith("--")) j++;
        const src = args[j];
        if (src === undefined) return ask(words, `${name} -c without a command string`);
        return allow(`${name} -c runs its command string`, {
          readOnly: false,
          scripts: [{ via: `${name} -c`, src: hasWild(src) ? null : src }],
        });
      }
      continue;
    }
    break;
  }
  return ask(words, `"${name}" runs a script or reads commands from its input`);
}

/**
 * One `sed` command the guard knows to be read-only: line addresses (`1,3`,
 * `$`, `/re/`) with `p`, `d`, `q`, `n`, `N`, `P`, `D` or `=`, and `s/re/text/`
 * with only the `g`, `p`, `i`, `I` or number flags. Anything else (`w`, `W`,
 * `r`, `R`, `e`, the `e`/`w` flags of `s`, other delimiters) is not recognised
 * and asks.
 */
const SED_ADDR = String.raw`(?:\d+|\$|/(?:[^/\\]|\\.)*/)`;
const SED_COMMAND = new RegExp(
  String.raw`^\s*(?:${SED_ADDR}(?:\s*,\s*${SED_ADDR})?\s*!?\s*)?` +
    String.raw`(?:[pdqnNPD=]|s/(?:[^/\\]|\\.)*/(?:[^/\\]|\\.)*/[gpiI0-9]*)\s*$`,
);

/** Whether a sed script only prints, deletes or substitutes to stdout ({@link SED_COMMAND}). */
export function readOnlySedScript(script: string): boolean {
  if (script.includes(WILD) || script.includes("\n")) return false;
  return script.split(";").every((c) => c.trim() === "" || SED_COMMAND.test(c));
}

/**
 * `sed` is read-only when it edits nothing in place (`-i`, `--in-place`), takes
 * no script file (`-f`) and every script is a {@link readOnlySedScript} (the
 * first operand, or each `-e` / `--expression` value). Its file operands are
 * reads (see {@link readPaths}).
 */
function sed(args: string[]): Classification {
  const words = ["sed", ...args];
  const scripts: string[] = [];
  let operandScript = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") break;
    if (a.startsWith(WILD)) return ask(words, `sed with an unknown option`);
    if (a === "--in-place" || a.startsWith("--in-place=") || /^-[^-]*i/.test(a)) {
      return ask(words, `"sed -i" edits files in place`);
    }
    if (a === "--file" || a.startsWith("--file=") || /^-[^-]*f/.test(a)) {
      return ask(words, `"sed -f" runs a script file the guard cannot see`);
    }
    if (a === "--expression" || a.startsWith("--expression=")) {
      scripts.push(a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[++i] ?? WILD);
      operandScript = false;
    } else if (/^-[^-]*e/.test(a)) {
      const rest = a.slice(a.indexOf("e") + 1);
      scripts.push(rest !== "" ? rest : args[++i] ?? WILD);
      operandScript = false;
    } else if (/^-[^-]*l$/.test(a)) i++;
  }
  if (operandScript) {
    const first = args.find((a, k) => !a.startsWith("-") && !/^-[^-]*l$/.test(args[k - 1] ?? ""));
    scripts.push(first ?? WILD);
  }
  const bad = scripts.find((sc) => !readOnlySedScript(sc));
  if (bad !== undefined) {
    return ask(words, `sed script ${show(bad)} is not one the guard knows to be read-only`);
  }
  return allow(`read-only command "sed" (print/delete/substitute to stdout)`);
}

function find(args: string[]): Classification {
  const words = ["find", ...args];
  const inner: InnerCommand[] = [];
  const writes: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith(WILD)) return ask(words, `find with an unknown argument may run or delete`);
    if (a === "-exec" || a === "-execdir" || a === "-ok" || a === "-okdir") {
      const cmd: string[] = [];
      let j = i + 1;
      for (; j < args.length && args[j] !== ";" && args[j] !== "+"; j++) {
        cmd.push(args[j].replaceAll("{}", WILD));
      }
      if (j >= args.length || !cmd.length) {
        return ask(words, `find ${a} without a complete command`);
      }
      if (cmd[0].startsWith(WILD)) return ask(words, `find ${a} runs an unknown command`);
      inner.push({ words: cmd, assigns: [], findItems: true });
      i = j;
    } else if (a === "-delete") return ask(words, `find -delete deletes files`);
    else if (a === "-fprint" || a === "-fprint0" || a === "-fls" || a === "-fprintf") {
      writes.push(args[i + 1] ?? WILD);
      i += a === "-fprintf" ? 2 : 1;
    }
  }
  return allow(`read-only command "find"`, { inner, writes, readOnly: inner.length === 0 });
}

function git(args: string[]): Classification {
  const words = ["git", ...args];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (
      a === "--no-pager" || a === "-P" || a === "--no-optional-locks" || a === "--literal-pathspecs"
    ) continue;
    // -C, --git-dir, --work-tree point git at another repository, whose config
    // (core.fsmonitor, core.pager, …) may run commands: not read-only.
    if (a.startsWith("-")) return ask(words, `git option ${show(a)} is not known to be read-only`);
    break;
  }
  const sub = args[i];
  if (sub === undefined) return allow(`"git" without a subcommand prints help`);
  const rest = args.slice(i + 1);
  const no = (why?: string) =>
    ask(words, why ?? `"git ${sub.replaceAll(WILD, "…")}" is not a read-only git command`);
  if (hasWild(sub) || !GIT_READ_ONLY.has(sub)) return no();
  if (rest.some((a) => a.startsWith(WILD))) return no(`git ${sub} with an unknown argument`);
  if (
    rest.some((a) =>
      a === "--output" || a.startsWith("--output=") || a === "-O" ||
      a.startsWith("--open-files-in-pager")
    )
  ) {
    return no(`git ${sub} --output writes a file`);
  }
  // `git grep -O<pager>` (also inside a cluster such as `-iOsh`) opens the matches with a program.
  if (sub === "grep" && rest.some((a) => /^-[^-]*O/.test(a))) {
    return no(`git grep -O runs a program on the matching files`);
  }
  const opts = rest.filter((a) => a.startsWith("-"));
  const positional = rest.filter((a) => !a.startsWith("-"));
  switch (sub) {
    case "branch": {
      const valued = new Set([
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
      ]);
      const listing = rest.some((a) => a === "-l" || a === "--list");
      const listFlags =
        /^(-a|--all|-r|--remotes|-l|--list|-v|-vv|--verbose|--show-current|--color(=.*)?|--no-color|--column(=.*)?|--no-column|-i|--ignore-case|--abbrev(=.*)?|--no-abbrev|--omit-empty|(--contains|--no-contains|--merged|--no-merged|--points-at|--sort|--format)(=.*)?)$/;
      for (let k = 0; k < rest.length; k++) {
        const a = rest[k];
        if (a.startsWith("-")) {
          if (!listFlags.test(a)) return no(`git branch ${a} changes branches`);
          if (valued.has(a)) k++;
        } else if (!listing) return no(`git branch with a name creates a branch`);
      }
      return allow(`read-only git command "git branch" (listing)`);
    }
    case "tag":
      if (rest.length && !rest.some((a) => a === "-l" || a === "--list")) {
        return no(`git tag with arguments changes tags`);
      }
      if (
        opts.some((a) =>
          /^(-[adsfmFue]|--(delete|annotate|sign|force|message|file|local-user|edit))/.test(a)
        )
      ) {
        return no(`git tag ${opts.join(" ")} changes tags`);
      }
      return allow(`read-only git command "git tag" (listing)`);
    case "remote":
      if (positional.length && !["show", "get-url"].includes(positional[0])) {
        return no(`git remote ${positional[0]} changes remotes`);
      }
      if (opts.some((a) => a !== "-v" && a !== "--verbose" && a !== "--all" && a !== "--push")) {
        return no();
      }
      return allow(`read-only git command "git remote"`);
    case "stash":
      if (!["list", "show"].includes(positional[0] ?? "")) {
        return no(`git stash ${positional[0] ?? ""} changes the stash`);
      }
      return allow(`read-only git command "git stash ${positional[0]}"`);
    case "reflog":
      if (positional.length && positional[0] !== "show") {
        return no(`git reflog ${positional[0]} changes the reflog`);
      }
      return allow(`read-only git command "git reflog"`);
    case "worktree":
      if (positional[0] !== "list") {
        return no(`git worktree ${positional[0] ?? ""} changes worktrees`);
      }
      return allow(`read-only git command "git worktree list"`);
  }
  return allow(`read-only git command "git ${sub}"`);
}

// ---------------------------------------------------------------------------
// The paths a read-only command reads (the default "reads outside the
// workspace ask" applies to them as it does to fs_read; docs/permissions.md).

/**
 * Read-only programs whose operands are files or directories they read, list
 * or stat, with the short options whose separate value is not a path
 * (`head -n 5`, `cut -d /`). A letter not listed is taken as a flag, so an
 * option value it does not know becomes an operand and is checked as a path
 * (the safe direction).
 */
const FILE_READERS: Record<string, string> = {
  cat: "",
  head: "nc",
  tail: "ncs",
  wc: "",
  file: "FeP",
  stat: "c",
  du: "dBt",
  tree: "LPIT",
  ls: "IwT",
  diff: "ILUCFDxS",
  cmp: "in",
  comm: "",
  sort: "tkSTo",
  uniq: "fsw",
  nl: "bdfhilnsvw",
  tac: "s",
  rev: "",
  od: "AtNjw",
  hexdump: "nse",
  md5sum: "",
  sha1sum: "",
  sha224sum: "",
  sha256sum: "",
  sha384sum: "",
  sha512sum: "",
  b2sum: "l",
  cksum: "al",
  column: "scoNRHWEl",
  paste: "d",
  fold: "w",
  expand: "t",
  unexpand: "t",
  strings: "nteT",
  join: "tjoea12v",
  fmt: "wgp",
  cut: "dfbc",
  realpath: "",
  readlink: "",
  grep: "mABCdD",
  egrep: "mABCdD",
  fgrep: "mABCdD",
  rg: "gtTmABCjMrEd",
  jq: "",
  // sed: `-e SCRIPT`, `-l N`; the first operand is the script unless -e/--expression gave one.
  sed: "el",
  // `date -f FILE` prints each line of FILE in its error messages; operands are +FORMATs.
  date: "dI",
  // `xargs -a FILE` reads its arguments from FILE (echo prints them); the rest is the command.
  xargs: "dEILnPs",
};
/** Short options whose value is a file the program reads (`grep -f FILE`, `diff -X FILE`). */
const PATH_SHORT: Record<string, string> = {
  grep: "f",
  egrep: "f",
  fgrep: "f",
  rg: "f",
  hexdump: "f",
  file: "mf",
  diff: "X",
  du: "X",
  jq: "fL",
  date: "fr",
  xargs: "a",
};
/** Long options whose value is a file the program reads, `=VALUE` or the next word. */
const PATH_LONG = new Set([
  "--file",
  "--files0-from",
  "--exclude-from",
  "--ignore-file",
  "--from-file",
  "--magic-file",
  "--reference",
  "--to-file",
  "--arg-file",
]);
/** Long options whose `=VALUE` is a pattern, glob or format, never a path. */
const NONPATH_LONG = new Set([
  "--regexp",
  "--glob",
  "--iglob",
  "--include",
  "--exclude",
  "--exclude-dir",
  "--ignore",
  "--hide",
  "--label",
  "--replace",
  "--format",
  "--printf",
  "--time-style",
  "--type",
  "--type-not",
  "--type-add",
  "--field-separator",
  "--delimiter",
  "--output-delimiter",
  "--date",
]);

/** The simple test for a word that may name a path outside the working directory. */
export function pathLike(w: string): boolean {
  return w.startsWith("/") || w.startsWith("~") || w.startsWith(WILD) ||
    w.split("/").includes("..");
}

/**
 * The paths a read-only command reads, lists or stats, for the default "reads
 * outside the workspace ask": its file operands (not the pattern of
 * `grep`/`rg` or the filter of `jq`), the values of file options
 * (`--file=PATH`, `grep -f PATH`), `"."` for a command that reads its working
 * directory when given no operand (`ls`, `find`, `tree`, `du`, `rg`,
 * `grep -r`), the start paths of `find`, and for `git` only its path-like
 * words ({@link pathLike}). Words may hold WILD (unknown parts). Undefined
 * when the program reads no paths named in its arguments (`echo`, `pwd`, …).
 */
export function readPaths(words: string[]): string[] | undefined {
  const name = words[0];
  const args = words.slice(1);
  if (name === "find") return findStarts(args);
  if (name === "git") {
    const out: string[] = [];
    for (const a of args) {
      const v = a.startsWith("-") ? (a.includes("=") ? a.slice(a.indexOf("=") + 1) : "") : a;
      if (v && pathLike(v)) out.push(v);
    }
    return out;
  }
  if (!(name in FILE_READERS)) return undefined;
  const nonPath = FILE_READERS[name];
  const pathShort = PATH_SHORT[name] ?? "";
  const patterned = name === "grep" || name === "egrep" || name === "fgrep" || name === "rg" ||
    name === "sed";
  const paths: string[] = [];
  const ops: string[] = [];
  let hasPattern = false;
  let recursive = false;
  let jqArgs = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      ops.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith("-") || a === "-") {
      if (name === "xargs") break; // the command xargs runs is checked on its own
      ops.push(a);
      continue;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const opt = eq < 0 ? a : a.slice(0, eq);
      const value = eq < 0 ? undefined : a.slice(eq + 1);
      if (name === "rg" && opt === "--files") hasPattern = true; // lists files: no pattern
      else if ((opt === "--regexp" || (name === "sed" && opt === "--expression")) && patterned) {
        hasPattern = true;
        if (value === undefined) i++;
      } else if (PATH_LONG.has(opt)) {
        if (patterned && opt === "--file") hasPattern = true;
        if (name === "jq" && opt === "--from-file") hasPattern = true;
        const v = value ?? args[++i];
        if (v !== undefined) paths.push(v);
      } else if (name === "jq" && (opt === "--arg" || opt === "--argjson")) i += 2;
      else if (name === "jq" && opt === "--indent") i++;
      else if (name === "jq" && (opt === "--args" || opt === "--jsonargs")) jqArgs = true;
      else if (opt === "--recursive" || opt === "--dereference-recursive") recursive = true;
      else if (opt === "--directories" && value === "recurse") recursive = true;
      else if (value !== undefined && !NONPATH_LONG.has(opt) && pathLike(value)) paths.push(value);
      continue;
    }
    // A cluster of short options; a valued letter takes the rest of the word or the next word.
    for (let k = 1; k < a.length; k++) {
      const l = a[k];
      if (l === "r" || l === "R") recursive = true;
      const isPattern = patterned && l === "e";
      if (pathShort.includes(l) || nonPath.includes(l) || isPattern) {
        const v = k + 1 < a.length ? a.slice(k + 1) : args[++i];
        if (pathShort.includes(l)) {
          if (v !== undefined) paths.push(v);
          if (patterned || name === "jq") hasPattern = true;
        }
        if (isPattern) hasPattern = true;
        if (l === "d" && v === "recurse" && patterned) recursive = true;
        break;
      }
    }
  }
  if ((patterned || name === "jq") && !hasPattern) ops.shift();
  if (name === "jq" && jqArgs) ops.length = 0;
  if (name === "uniq") ops.splice(1); // the second operand is the output (a write)
  if (name === "date" || name === "xargs") ops.length = 0; // formats; the command it runs
  if (!ops.length) {
    const cwdReaders = name === "ls" || name === "tree" || name === "du" || name === "rg";
    if (cwdReaders || ((name === "grep" || name === "egrep" || name === "fgrep") && recursive)) {
      ops.push(".");
    }
  }
  return [...paths, ...ops];
}

/** `find`'s start paths (`.` when none) and `-files0-from` file. */
function findStarts(args: string[]): string[] {
  const out: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === "-H" || a === "-L" || a === "-P") continue;
    if (a === "-D" || a === "-O" || /^-O\d$/.test(a)) {
      if (a.length === 2) i++;
      continue;
    }
    break;
  }
  for (; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith("-") || a === "(" || a === "!" || a === ")" || a === ",") break;
    out.push(a);
  }
  if (!out.length) out.push(".");
  for (let k = i; k < args.length; k++) {
    if (args[k] === "-files0-from") out.push(args[k + 1] ?? WILD);
  }
  return out;
}
