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
import { secretName } from "../redact.ts";
export { secretName };

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
  /**
   * Shell variables the command assigns (`read NAME`, `printf -v NAME`,
   * `mapfile NAME`, `getopts … NAME`), checked like `NAME=value` assignments
   * (dangerous names such as `PS4`, `HOME`, `GIT_*` ask).
   */
  sets?: string[];
  /**
   * Hosts the command connects to (`git ls-remote URL`, `git fetch`), as
   * `host[:port]`, or WILD when the host is only known from configuration or
   * at run time. Each is a `Net` decision.
   */
  net?: string[];
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
  "shift",
  "exit",
  "return",
  "break",
  "continue",
  "wait",
  "umask",
  "hash",
  "let",
]);
// `cd`/`pushd`/`popd` are followed by the policy (core/guard/policy.ts); `read`, `test`, `jobs`,
// `shopt`, `unset`, `set` have their own rules in {@link classify}.

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
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * True when `arg` is the long option `full` (`--expression`) as a GNU
 * (getopt_long) or git (parse-options) program reads it: the whole name or
 * any prefix of it of at least one letter (`--exp`, `--e`), with or without
 * `=value`. Programs reject an ambiguous prefix, so taking every prefix as
 * this option only ever makes the guard stricter.
 */
export function longOpt(arg: string, full: string): boolean {
  if (!arg.startsWith("--") || arg.length < 3) return false;
  const eq = arg.indexOf("=");
  const name = eq < 0 ? arg : arg.slice(0, eq);
  return name.length >= 3 && full.startsWith(name);
}

/** True when `arg` is any of the long options `fulls` (see {@link longOpt}). */
export const anyLongOpt = (arg: string, fulls: string[]) => fulls.some((f) => longOpt(arg, f));

/** The value of a long option given as `--opt=value` or `--opt value` (advances nothing). */
function longValue(args: string[], i: number): string | undefined {
  const a = args[i];
  const eq = a.indexOf("=");
  return eq >= 0 ? a.slice(eq + 1) : args[i + 1];
}

/**
 * Operands of a program with the simple option grammar `opts` (single letters
 * in `flags`; letters in `valued` take a value): everything after `--`, and
 * every word not starting with `-`. Long options must be listed (by full
 * name, prefixes accepted) in `longFlags`/`longValued`. Undefined when an
 * option is unknown or unknown at run time (fail closed).
 */
function operands(
  args: string[],
  opts: { flags: string; valued?: string; longFlags?: string[]; longValued?: string[] },
): string[] | undefined {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith(WILD)) return undefined;
    if (a === "--") return [...out, ...args.slice(i + 1)];
    if (!a.startsWith("-") || a === "-") {
      out.push(a);
      continue;
    }
    if (a.startsWith("--")) {
      if (anyLongOpt(a, opts.longValued ?? [])) {
        if (!a.includes("=")) i++;
        continue;
      }
      if (anyLongOpt(a, opts.longFlags ?? []) && !a.includes("=")) continue;
      return undefined;
    }
    for (let k = 1; k < a.length; k++) {
      if (opts.valued?.includes(a[k])) {
        if (k === a.length - 1) i++;
        break;
      }
      if (!opts.flags.includes(a[k])) return undefined;
    }
  }
  return out;
}

/**
 * Where a command changes the shell's working directory: `cd DIR`,
 * `pushd DIR`, also behind `builtin` / `command`. `target` is the directory
 * (`~` for home), or WILD when it is only known at run time (`cd -`,
 * `popd`, `pushd +1`, a bare `pushd`, an unknown option). Undefined when the
 * command does not change directory.
 */
export function cdTarget(words: string[]): string | undefined {
  let w = words;
  while (w[0] === "builtin" || w[0] === "command") {
    w = w.slice(1);
    while (w[0] === "-p" || w[0] === "--") w = w.slice(1);
  }
  const [name, ...args] = w;
  if (name !== "cd" && name !== "pushd" && name !== "popd" && name !== "chdir") return undefined;
  if (name === "popd") return WILD;
  const ops = operands(args, { flags: name === "cd" ? "LPe@" : "n" });
  if (ops === undefined || ops.length > 1) return WILD;
  const t = ops[0];
  if (t === undefined) return name === "pushd" ? WILD : "~";
  if (t === "-" || (name === "pushd" && /^[+-]\d+$/.test(t))) return WILD;
  return t;
}

/** Options of `set` that only make the shell stricter or quieter (nothing evaluated, nothing exported). */
const SAFE_SET_LETTERS = "euECfnbhBmvT";
const SAFE_SET_OPTIONS = new Set([
  "errexit",
  "nounset",
  "pipefail",
  "errtrace",
  "noclobber",
  "noglob",
  "noexec",
  "notify",
  "hashall",
  "braceexpand",
  "verbose",
  "functrace",
]);
/** `shopt` options that only change how globs match (the guard's glob checks are a superset). */
const SAFE_SHOPT = new Set(["nullglob", "failglob", "globstar", "dotglob"]);

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

/**
 * Names that are dangerous to set for a command: they change which program
 * runs, what it loads or reads as configuration (`HOME` → `~/.gitconfig`,
 * `XDG_CONFIG_HOME`, `GIT_*`), what the shell evaluates as code (`PS4` with
 * `set -x`, `PS0`–`PS3`, `PROMPT_COMMAND`, `BASH_ENV`, `$"…"` catalogues) or
 * where `cd` goes (`CDPATH`, `PWD`, `OLDPWD`).
 */
export function dangerousEnvName(name: string): boolean {
  return /^(PATH|IFS|BASH_ENV|ENV|PS[0-4]|SHELLOPTS|BASHOPTS|PROMPT_COMMAND|PAGER|EDITOR|VISUAL|MANPAGER|BROWSER|NODE_OPTIONS|NODE_PATH|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|LUA_INIT|HOME|ZDOTDIR|CDPATH|PWD|OLDPWD|TMPDIR|COYOTE_CONFIG_DIR|RIPGREP_CONFIG_PATH|GREP_OPTIONS|TEXTDOMAIN|TEXTDOMAINDIR|BASH_XTRACEFD|BASH_LOADABLES_PATH|EXECIGNORE|GLOBIGNORE|HISTFILE|INPUTRC|GCONV_PATH|LOCPATH|NLSPATH|MAGIC|LESSOPEN|LESSCLOSE|SSH_ASKPASS|SUDO_ASKPASS|OPENSSL_CONF|CURL_HOME|WGETRC|POSIXLY_CORRECT)$/
    .test(name) ||
    /^(LD_|DYLD_|GIT_|XDG_|BASH_FUNC_|DENO_|NPM_CONFIG_|npm_config_)/.test(name);
}

/**
 * Environment prefixes (`NAME=value cmd`) that leave an allow rule matching:
 * locale, time zone, colour and terminal size. Any other prefix makes
 * `Execute(…)` allow rules not match (issue 11 §2, narrow rules).
 */
export function safePrefixName(name: string): boolean {
  return /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|TERM|COLUMNS|LINES|CI)$/.test(
    name,
  );
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
      return setBuiltin(words);
    case "shopt": {
      // `shopt` / `shopt -p` print; `-s`/`-u` change options: only glob-matching ones are known safe.
      const changes = args.some((a) => /^-[a-z]*[su]/.test(a));
      const names = args.filter((a) => !a.startsWith("-"));
      if (args.some((a) => a.startsWith(WILD) || (a.startsWith("-") && !/^-[spqo]+$/.test(a)))) {
        return ask(words, `shopt with an unknown option`);
      }
      if (
        changes && (args.some((a) => /^-[a-z]*o/.test(a)) || names.some((n) => !SAFE_SHOPT.has(n)))
      ) {
        return ask(
          words,
          `"shopt" changes a shell option that may make the shell evaluate text as code or change directory (only ${
            [...SAFE_SHOPT].join(", ")
          } are known safe)`,
        );
      }
      return allow(`"shopt" ${changes ? "changes glob matching" : "prints shell options"}`);
    }
    case "read": {
      // read [-ers] [-a ARRAY] [-d DELIM] [-i TEXT] [-n N] [-N N] [-p PROMPT] [-t T] [-u FD] [NAME…]
      const ops = operands(args, { flags: "ers", valued: "adinNptu" });
      const arr = args.findIndex((a) => /^-[ers]*a/.test(a));
      const targets = [...(ops ?? [])];
      if (arr >= 0) {
        const a = args[arr];
        targets.push(a.slice(a.indexOf("a") + 1) || args[arr + 1] || WILD);
      }
      return targetsCheck(
        words,
        ops === undefined ? undefined : targets.length ? targets : ["REPLY"],
      );
    }
    case "mapfile":
    case "readarray": {
      if (args.some((a) => /^-[^-]*C/.test(a))) return ask(words, `${name} -C runs a callback`);
      const ops = operands(args, { flags: "t", valued: "dnOsuc" });
      return targetsCheck(words, ops === undefined ? undefined : ops.length ? ops : ["MAPFILE"]);
    }
    case "getopts": {
      const ops = operands(args, { flags: "" });
      return targetsCheck(words, ops === undefined || ops.length < 2 ? undefined : [ops[1]]);
    }
    case "printf": {
      let i = 0;
      const sets: string[] = [];
      for (; i < args.length; i++) {
        const a = args[i];
        if (a === "--") break;
        if (a === "-v") sets.push(args[++i] ?? WILD);
        else if (a.startsWith("-v")) sets.push(a.slice(2));
        else break;
      }
      if (!sets.length) return allow(`read-only command "printf"`);
      return targetsCheck(words, sets);
    }
    case "unset": {
      const ops = operands(args, { flags: "fvn" });
      if (ops === undefined || ops.some((n) => !IDENT.test(n))) {
        return ask(words, `"unset" of a subscript or computed name evaluates it as arithmetic`);
      }
      return allow(`"unset" only removes variables of this command line's shell`);
    }
    case "test":
    case "[": {
      // `test -v 'a[$(cmd)]'` evaluates the subscript (runs cmd).
      for (let i = 0; i < args.length; i++) {
        if ((args[i] === "-v" || args[i] === "-R") && !IDENT.test(args[i + 1] ?? "")) {
          return ask(words, `"${name} ${args[i]}" on a subscript evaluates it as arithmetic`);
        }
      }
      return allow(`read-only command "${name}"`);
    }
    case "jobs":
      // `jobs -x CMD` runs CMD.
      if (args.some((a) => !/^(-[lnprs]+|%.*)$/.test(a))) {
        return ask(words, `"jobs" with -x or an unknown option runs a command`);
      }
      return allow(`read-only command "jobs"`);
    case "jq":
      if (
        args.some((a) =>
          /\benv\b|\$ENV|\binput_filename\b/.test(a) ||
          anyLongOpt(a, ["--rawfile", "--slurpfile"]) ||
          a.startsWith(WILD)
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
        args.some((a) => longOpt(a, "--pre") || hasWild(a) && a.startsWith(WILD))
      ) {
        return ask(words, `rg --pre runs a program on every file`);
      }
      // --hostname-bin runs the given program to learn the host name (for hyperlinks).
      if (args.some((a) => longOpt(a, "--hostname-bin"))) {
        return ask(words, `rg --hostname-bin runs a program`);
      }
      return allow(`read-only command "rg"`);
    case "sort": {
      const writes: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (a === "--") break;
        if (a.startsWith(WILD)) return ask(words, `sort with an unknown option may write a file`);
        if (longOpt(a, "--compress-program")) {
          return ask(words, `sort --compress-program runs a program`);
        }
        if (a === "-o" || a === "-T") writes.push(args[++i] ?? WILD);
        else if (longOpt(a, "--output") || longOpt(a, "--temporary-directory")) {
          writes.push(longValue(args, i) ?? WILD);
          if (!a.includes("=")) i++;
        } else if (/^-[^-]*[oT]/.test(a)) {
          // A cluster: the first o/T takes the rest of the word or the next word.
          const at = a.search(/[oT]/);
          const rest = a.slice(at + 1);
          writes.push(rest || (args[++i] ?? WILD));
        }
      }
      // -T DIR: sort writes its temporary files into DIR.
      return allow(`read-only command "sort"`, { writes: writes.map((w) => w) });
    }
    case "uniq": {
      const ops = operands(args, {
        flags: "cdDiuz",
        valued: "fsw",
        longFlags: [
          "--count",
          "--repeated",
          "--all-repeated",
          "--ignore-case",
          "--unique",
          "--zero-terminated",
          "--help",
          "--version",
        ],
        longValued: ["--skip-fields", "--skip-chars", "--check-chars", "--group"],
      });
      if (ops === undefined) return ask(words, `uniq with unknown arguments may write a file`);
      return allow(`read-only command "uniq"`, { writes: ops.length > 1 ? [ops[1]] : [] });
    }
    case "tee": {
      // `--output-error[=MODE]` takes an optional value in the same word.
      const files = operands(args.filter((a) => !longOpt(a, "--output-error")), {
        flags: "aip",
        longFlags: ["--append", "--ignore-interrupts", "--help", "--version"],
      });
      if (files === undefined) return ask(words, `tee with an unknown option`);
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
      if (args.some((a) => /^-[^-]*s/.test(a) || longOpt(a, "--set") || a.startsWith(WILD))) {
        return ask(words, `date -s sets the clock`);
      }
      return allow(`read-only command "date"`);
    case "hostname":
      if (args.length) return ask(words, `hostname with arguments changes the host name`);
      return allow(`read-only command "hostname"`);
  }
  return ask(words, `"${name}" is not a read-only command`);
}

/**
 * A command that assigns the shell variables `targets` (undefined when its
 * options could not be read): each must be a plain name (`read 'a[$(cmd)]'`
 * evaluates the subscript); the policy checks the names like assignments.
 */
function targetsCheck(words: string[], targets: string[] | undefined): Classification {
  if (targets === undefined) return ask(words, `cannot tell which variables "${words[0]}" sets`);
  const bad = targets.find((t) => !IDENT.test(t));
  if (bad !== undefined) {
    return ask(
      words,
      `"${words[0]}" assigns ${
        show(bad)
      }, which is not a plain variable name (a subscript is evaluated as code)`,
    );
  }
  return allow(`"${words[0]}" only sets variables of this command line's shell`, { sets: targets });
}

/**
 * `set`: without arguments it prints every variable (secrets included);
 * `set -- ARGS` sets the positional parameters; option changes are allowed
 * only for {@link SAFE_SET_LETTERS} / {@link SAFE_SET_OPTIONS} — `-x` makes
 * the shell expand `PS4` (code), `-a` exports every later assignment,
 * `-k`, `-H`, `-P`, `-o posix` change how later text is read.
 */
function setBuiltin(words: string[]): Classification {
  const args = words.slice(1);
  if (!args.length) {
    return ask(words, `"set" without options prints every shell variable (may contain secrets)`);
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--" || a === "-") return allow(`"set" sets the positional parameters`);
    if (a === "-o" || a === "+o") {
      const o = args[++i];
      if (o === undefined) return ask(words, `"set -o" without a name prints every option`);
      if (!SAFE_SET_OPTIONS.has(o)) return ask(words, `"set -o ${o}" is not a known-safe option`);
      continue;
    }
    if (/^[-+][a-zA-Z]+$/.test(a)) {
      const letters = a.slice(1);
      for (const l of letters) {
        if (l === "o") continue;
        if (!SAFE_SET_LETTERS.includes(l)) {
          return ask(
            words,
            `"set ${
              a[0]
            }${l}" changes how the shell evaluates or exports what follows (only -${SAFE_SET_LETTERS} and -o ${
              [...SAFE_SET_OPTIONS].join("|")
            } are known safe)`,
          );
        }
      }
      if (letters.includes("o")) {
        const o = args[++i];
        if (o === undefined || !SAFE_SET_OPTIONS.has(o)) {
          return ask(words, `"set ${a} ${o ?? ""}" is not a known-safe option`);
        }
      }
      continue;
    }
    return allow(`"set" sets the positional parameters`);
  }
  return allow(`"set" only changes shell options`);
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
    if (!a.startsWith("-") || a === "-") continue;
    // GNU sed takes any unambiguous prefix of a long option (`--exp`, `--in-pl`).
    if (longOpt(a, "--in-place") || (!a.startsWith("--") && /^-[^-]*i/.test(a))) {
      return ask(words, `"sed -i" edits files in place`);
    }
    if (longOpt(a, "--file") || (!a.startsWith("--") && /^-[^-]*f/.test(a))) {
      return ask(words, `"sed -f" runs a script file the guard cannot see`);
    }
    if (longOpt(a, "--expression")) {
      scripts.push(a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[++i] ?? WILD);
      operandScript = false;
    } else if (longOpt(a, "--line-length")) {
      if (!a.includes("=")) i++;
    } else if (a.startsWith("--")) {
      const known = [
        "--quiet",
        "--silent",
        "--debug",
        "--posix",
        "--regexp-extended",
        "--separate",
        "--sandbox",
        "--unbuffered",
        "--null-data",
        "--zero-terminated",
        "--follow-symlinks",
        "--binary",
        "--help",
        "--version",
      ];
      if (a.includes("=") || !anyLongOpt(a, known)) {
        return ask(words, `sed option ${show(a)} is not known to the guard`);
      }
    } else if (/^-[^-]*e/.test(a)) {
      const rest = a.slice(a.indexOf("e") + 1);
      scripts.push(rest !== "" ? rest : args[++i] ?? WILD);
      operandScript = false;
    } else if (/^-[^-]*l$/.test(a)) i++;
    else if (!/^-[nrEsuzb]+$/.test(a) && !/^-[^-]*l/.test(a)) {
      return ask(words, `sed option ${show(a)} is not known to the guard`);
    }
  }
  if (operandScript) {
    const first = args.find((a, k) =>
      (!a.startsWith("-") || args[k - 1] === "--") && !/^-[^-]*l$/.test(args[k - 1] ?? "") &&
      !longOpt(args[k - 1] ?? "", "--line-length")
    );
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

/** git global options that change nothing the guard relies on. */
const GIT_SAFE_GLOBAL = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-replace-objects",
  "--no-lazy-fetch",
]);
/** git global options that take a separate value (`-c a.b=c`, `-C dir`). */
const GIT_VALUED_GLOBAL = [
  "-c",
  "-C",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--super-prefix",
  "--attr-source",
];

/**
 * `git`'s words with its global options removed (`git --no-pager -c a.b=c
 * push` → `git push`), so rules about a subcommand (`Execute(git push:*)`)
 * see it whatever precedes it. Undefined when the words are not a git command
 * with a literal subcommand.
 */
export function gitNormalized(words: string[]): string[] | undefined {
  if (words[0] !== "git" && !words[0]?.endsWith("/git")) return undefined;
  let i = 1;
  let alias = false;
  for (; i < words.length; i++) {
    const a = words[i];
    if (a.startsWith(WILD)) return undefined;
    if (!a.startsWith("-")) break;
    // `-c alias.p=push` makes `git p` run `git push` (or a shell command with `!`).
    const value = GIT_VALUED_GLOBAL.includes(a) ? words[++i] ?? "" : a.replace(/^[^=]*=?/, "");
    if (/^alias\./i.test(value) || (a === "-c" && value.includes(WILD))) alias = true;
  }
  if (i >= words.length || i === 1) return undefined;
  return ["git", ...(alias ? [WILD] : []), ...words.slice(alias ? i + 1 : i)];
}

/** Subcommand options that name a program git runs (`--upload-pack='cmd'`), prefixes included. */
const GIT_PROGRAM_OPTIONS = [
  "--upload-pack",
  "--receive-pack",
  "--exec",
  "--output",
  "--open-files-in-pager",
];
/** git subcommands that connect to a remote repository. */
const GIT_NET = new Set([
  "fetch",
  "pull",
  "push",
  "clone",
  "ls-remote",
  "archive",
  "submodule",
  "remote",
  "fetch-pack",
  "send-pack",
  "lfs",
  "svn",
  "p4",
  "send-email",
  "request-pull",
]);

/**
 * Where a git repository argument lives: `host[:port]` for a URL
 * (`https://h/x`, `ssh://u@h:22/x`, scp-like `u@h:x`), null for a local path,
 * `""` for a remote's name (its URL is in the repository's configuration),
 * WILD when unknown or a transport that runs a program (`ext::cmd`).
 */
export function gitRepoHost(repo: string): string | null {
  if (repo.includes(WILD)) return WILD;
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(repo)) return WILD; // ext::, fd::, remote helpers
  const url = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(repo);
  if (url) {
    if (url[1].toLowerCase() === "file") return null;
    const hostPort = url[2].replace(/^[^@]*@/, "");
    return hostPort || WILD;
  }
  if (repo.startsWith("/") || repo.startsWith(".") || repo.startsWith("~")) return null;
  const scp = /^(?:[^@/:]+@)?(\[[^\]]+\]|[^/:]+):/.exec(repo);
  if (scp) return scp[1];
  if (repo.includes("/")) return null;
  return "";
}

function git(args: string[]): Classification {
  const words = ["git", ...args];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (GIT_SAFE_GLOBAL.has(a)) continue;
    // -c, -C, --git-dir, --work-tree, --exec-path… point git at other configuration or
    // repositories (core.fsmonitor, core.pager, … run commands): not read-only.
    if (a.startsWith("-")) return ask(words, `git option ${show(a)} is not known to be read-only`);
    break;
  }
  const sub = args[i];
  if (sub === undefined) return allow(`"git" without a subcommand prints help`);
  const rest = args.slice(i + 1);
  const no = (why?: string) =>
    ask(words, why ?? `"git ${sub.replaceAll(WILD, "…")}" is not a read-only git command`);
  if (hasWild(sub)) return no();
  if (rest.some((a) => a.startsWith(WILD))) return no(`git ${sub} with an unknown argument`);
  const progOpt = rest.find((a) => anyLongOpt(a, GIT_PROGRAM_OPTIONS));
  if (progOpt !== undefined) {
    return no(`git ${sub} ${show(progOpt)} runs a program or writes a file`);
  }
  if (sub === "ls-remote" && rest.some((a) => /^-[^-]*u/.test(a))) {
    return no(`git ls-remote -u runs the program it names`);
  }
  const net = GIT_NET.has(sub) ? gitNetRepos(sub, rest) : [];
  if (!GIT_READ_ONLY.has(sub)) return { ...no(undefined), net };
  if (rest.some((a) => a === "-O")) return no(`git ${sub} -O writes a file`);
  // `git grep -O<pager>` (also inside a cluster such as `-iOsh`) opens the matches with a program.
  if (sub === "grep" && rest.some((a) => /^-[^-]*O/.test(a))) {
    return no(`git grep -O runs a program on the matching files`);
  }
  if (net.length) {
    const c = gitReadOnlyRest(sub, rest, no);
    return c.allowed ? { ...c, net, reason: `${c.reason} (connects to a remote repository)` } : c;
  }
  return gitReadOnlyRest(sub, rest, no);
}

/** Repository arguments of a networking git subcommand (see {@link gitRepoHost}); `""` = a remote named in config. */
function gitNetRepos(sub: string, rest: string[]): string[] {
  const positional = rest.filter((a) => !a.startsWith("-"));
  switch (sub) {
    case "remote":
      // `git remote show NAME` (unless -n) and `git remote update` contact remotes.
      if (positional[0] === "show" && !rest.includes("-n")) {
        return positional.length > 1 ? positional.slice(1) : [];
      }
      if (positional[0] === "update" || positional[0] === "prune") return [positional[1] ?? ""];
      if (positional[0] === "add" && rest.includes("-f")) return [positional[2] ?? WILD];
      return [];
    case "archive": {
      const r = rest.find((a) => longOpt(a, "--remote"));
      return r
        ? [r.includes("=") ? r.slice(r.indexOf("=") + 1) : rest[rest.indexOf(r) + 1] ?? WILD]
        : [];
    }
    case "lfs":
    case "svn":
    case "p4":
    case "send-email":
    case "request-pull":
      return [WILD];
    case "submodule":
      return positional[0] === "update" || positional[0] === "sync" || positional[0] === "add"
        ? [WILD]
        : [];
    default:
      // fetch/pull/push/ls-remote/clone [REPO] (options taking values may shift this: fail closed
      // by also counting the configured remote).
      return positional.length ? [positional[0]] : [""];
  }
}

function gitReadOnlyRest(
  sub: string,
  rest: string[],
  no: (why?: string) => Classification,
): Classification {
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
      if (
        opts.some((a) =>
          a !== "-v" && a !== "--verbose" && a !== "--all" && a !== "--push" && a !== "-n"
        )
      ) {
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
  "--random-source",
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

/** Long options readPaths knows by name; others are matched to these by prefix. */
const KNOWN_LONG = [
  ...PATH_LONG,
  ...NONPATH_LONG,
  "--regexp",
  "--expression",
  "--files",
  "--recursive",
  "--dereference-recursive",
  "--directories",
  "--arg",
  "--argjson",
  "--indent",
  "--args",
  "--jsonargs",
];

/**
 * The option a GNU program reads for `opt` (`--fil` → `--file`): the exact
 * name, else the known option it is a prefix of; when it is a prefix of
 * several, an option whose value is a path wins (the stricter reading).
 */
function canonicalLong(opt: string): string {
  if (KNOWN_LONG.includes(opt)) return opt;
  const c = KNOWN_LONG.filter((k) => longOpt(opt, k));
  if (c.length === 1) return c[0];
  return c.find((k) => PATH_LONG.has(k)) ?? opt;
}

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
      const opt = canonicalLong(eq < 0 ? a : a.slice(0, eq));
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
