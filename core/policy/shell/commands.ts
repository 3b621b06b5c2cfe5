/**
 * What the guard knows about individual programs: which are read-only (allowed
 * by the default policy), which merely wrap another command (`sudo`, `env`,
 * `timeout`, `xargs`, `find -exec`, …, whose inner command is checked on its
 * own), which run a shell string (`bash -c`, `sh -c`, `eval`, parsed
 * recursively), and which write files named in their arguments (`tee`,
 * `sort -o`, `uniq IN OUT`), and what read-only commands read
 * ({@link readPaths}). Program families with rules of their own live in
 * `programs/`: `git.ts` and `git_repo.ts`, `sed.ts`, `builtins.ts` (shell
 * builtins and `cd`); option grammars in `options.ts`.
 *
 * Every function here fails closed: an option it does not know, or an
 * argument whose value is unknown (WILD) where it could change the meaning,
 * makes the command "not read-only", which the default policy turns into ask.
 * @module
 */
import { WILD } from "../rules.ts";
import { secretName } from "../../tools/redact.ts";
import {
  allow,
  ask,
  type Classification,
  hasWild,
  type InnerCommand,
  show,
} from "./classification.ts";
import { anyLongOpt, longOpt, longValue, operands, type OptSpec, skipOptions } from "./options.ts";
import { builtin, cdTarget } from "./programs/builtins.ts";
import { readOnlySedScript, sed } from "./programs/sed.ts";
import { git, gitNormalized, gitRepoHost } from "./programs/git.ts";
export { secretName };
export type { Classification, InnerCommand };
export { anyLongOpt, cdTarget, gitNormalized, gitRepoHost, longOpt, readOnlySedScript };

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
// `cd`/`pushd`/`popd` are followed by the policy (core/policy/policy.ts); `read`, `test`, `jobs`,
// `shopt`, `unset`, `set` have their own rules in {@link classify}.

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
  const b = builtin(name, args);
  if (b) return b;
  switch (name) {
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
