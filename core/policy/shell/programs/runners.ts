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
  // `capsh -- -c 'cmd'` and `--shell=`, `nix-shell --run`/`--command` and its shell.nix.
  "capsh",
  "nix-shell",
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
  // `less +CMD` runs CMD as less commands at start (`+!cmd` is a shell escape).
  less: /^\+|^--?lesskey/,
  // `ncat -e/-c/--exec/--sh-exec/--lua-exec`, `nc -e/-c` run a command per connection.
  ncat: /^(-[A-Za-z0-9]*[ec]|--(exec|sh-exec|lua-exec)(=|$))/,
  nc: /^(-[A-Za-z0-9]*[ec]|--(exec|sh-exec)(=|$))/,
  netcat: /^(-[A-Za-z0-9]*[ec]|--(exec|sh-exec)(=|$))/,
  // socat addresses EXEC:cmd and SYSTEM:cmd (also the write half of `A!!B`).
  socat: /(^|!!)(exec|system):/i,
};

/**
 * Options of programs that load a library, plugin, engine or module into the program, or choose
 * the program it runs (`openssl -engine ./e.so`: the library's constructor runs), by program.
 */
const LOADS_OPTION: Record<string, RegExp> = {
  openssl: /^-(provider|provider-path|config)$|^-\w*engine/,
  curl: /^--(engine|config)(=|$)|^-[A-Za-z]*K/,
  node: /^(-[A-Za-z]*r|--(require|import|loader|experimental-loader|env-file[\w-]*)(=|$))/,
  nodejs: /^(-[A-Za-z]*r|--(require|import|loader|experimental-loader|env-file[\w-]*)(=|$))/,
  bun: /^(-[A-Za-z]*r|--(preload|require|import|env-file)(=|$))/,
  deno: /^--(preload|import|require|env-file|env)(=|$)/,
  perl: /^-[A-Za-z]*[Mmd]/,
  ruby: /^(-[A-Za-z]*[rI]|--require)/,
  php: /^-[A-Za-z]*[dz]/,
  lua: /^-[A-Za-z]*[lI]/,
  luajit: /^-[A-Za-z]*[lj]/,
  java: /^-(javaagent|agentpath|agentlib|XX:On|XX:\+?Flight|Xbootclasspath)/,
  // -F reads a configuration (ProxyCommand, LocalCommand), -I loads a PKCS#11 library.
  ssh: /^-[A-Za-z0-9]*[FI]/,
  scp: /^-[A-Za-z0-9]*F/,
  sftp: /^-[A-Za-z0-9]*F/,
  // The shell package scripts run in, and configuration files that can set it.
  npm: /^--(script-shell|shell|userconfig|globalconfig|node-options)(=|$)/,
  pnpm: /^--(script-shell|shell|userconfig|globalconfig|node-options)(=|$)/,
  yarn: /^--(script-shell|shell|userconfig|globalconfig|node-options)(=|$)/,
  gcc: /^(-fplugin|-fpass-plugin|-wrapper|-B|--?specs|-Xclang|-fuse-ld|--ld-path|-Wl,.*plugin)/,
};
for (const cc of ["cc", "c++", "g++", "clang", "clang++", "tcc"]) {
  LOADS_OPTION[cc] = LOADS_OPTION.gcc;
}
/**
 * Options that load a library, plugin, engine or module in any program (`--plugin ./p.so`,
 * `-engine`, `--load`, `--preload`, `--require`, `--javaagent`, `-fplugin=`), that name a program
 * it runs (`--diff-program=…`, `--*-command`, `--*-cmd`, `--pager`, `--editor`, `--exec`,
 * `--wrapper`, `--askpass`, `--rsh`; `--no-pager` is not one), and an option value
 * that is a shared library (`--x=./lib.so`): the general rule for programs whose options the
 * guard does not know (shell/commands.ts `classify` applies it after the programs it knows, so
 * `rg --engine=pcre2` stays read-only).
 */
const GENERIC_LOADER =
  /^--?(?!no-)[\w-]*(program|command|cmd|pager|editor)(=|$)|^--?(exec|wrapper|askpass|rsh)(=|$)|^--?([\w-]*plugin[\w-]*|engine|provider|provider-path|load|load-(?:extension|plugin|module|library|lib)s?|preload|require|loader|experimental-loader|javaagent|agentpath|agentlib)(=|:|$)|^-[^=]*=.*\.(so(\.\d+)*|dylib|dll)$/i;

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
 * {@link opaque} when `name args` loads a library, plugin, engine or module, or picks the program
 * it runs, by one of its options ({@link LOADS_OPTION}, and {@link GENERIC_LOADER}); `ssh -o
 * ProxyCommand=…`; `openssl engine` loads engines. Undefined otherwise. For programs the guard
 * has no option table of its own (interpreters, build tools, unknown programs).
 */
export function loader(name: string, args: string[]): Classification | undefined {
  const own = LOADS_OPTION[name];
  const hit = args.find((a) => a.startsWith("-") && (own?.test(a) || GENERIC_LOADER.test(a)));
  if (hit !== undefined) {
    return opaque(
      [name, ...args],
      `${name} ${
        JSON.stringify(hit)
      } loads a library, plugin or module, or picks a program, the guard does not see`,
    );
  }
  // `-o ProxyCommand=…` (also `-oProxyCommand=…`) runs a command; PKCS11Provider and
  // SecurityKeyProvider load libraries.
  if (
    (name === "ssh" || name === "scp" || name === "sftp") &&
    args.some((a, i) =>
      (a.startsWith("-o") || args[i - 1] === "-o") &&
      /^(-o)?\s*(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|PKCS11Provider|SecurityKeyProvider|Include|Match)\b/i
        .test(a)
    )
  ) {
    return opaque([name, ...args], `${name} -o with a command or library option`);
  }
  if (MAKES.has(name)) {
    const hit = makeProgramText(args);
    if (hit) {
      return opaque([name, ...args], `${name} ${hit} runs a makefile text the guard does not see`);
    }
  }
  if (name === "openssl" && args[0] === "engine") {
    return opaque([name, ...args], `"openssl engine" loads engines (shared libraries)`);
  }
  return undefined;
}

const MAKES = new Set(["make", "gmake", "bmake"]);

/**
 * The option of a make command line that makes it run a makefile text rather than the
 * project's makefiles: `--eval=TEXT`/`-E TEXT`, or `-f`/`--file`/`--makefile` naming the input
 * (`-`), a device or process file (`/dev/stdin`, `/dev/fd/N` as `<(…)` passes,
 * `/proc/self/fd/0`) or a name only known at run time. Undefined otherwise.
 */
function makeProgramText(args: string[]): string | undefined {
  const special = (v: string | undefined) =>
    v === undefined || v === "-" || /^\/(dev|proc)\//.test(v) || v.includes(WILD);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") break;
    if (/^--eval(=|$)/.test(a)) return "--eval";
    const long = /^--(file|makefile)(=(.*))?$/.exec(a);
    if (long) {
      if (special(long[2] ? long[3] : args[i + 1])) return a;
      continue;
    }
    if (/^-[A-Za-z]/.test(a) && !a.startsWith("--")) {
      // A short cluster: -E and -f take a value (the rest of the word or the next word).
      const m = /^-[A-Za-z]*?([Ef])(.*)$/.exec(a);
      if (!m) continue;
      if (m[1] === "E") return "-E";
      if (special(m[2] || args[i + 1])) return `-f ${m[2] || args[i + 1] || ""}`.trim();
    }
  }
  return undefined;
}

/**
 * Variables that make a program run a command, load code or choose which program runs
 * (`PAGER`, `EDITOR`, `LESSOPEN`, `GIT_SSH_COMMAND`, `LD_*` (`LD_PRELOAD`, `LD_AUDIT`,
 * `LD_LIBRARY_PATH`), `GCONV_PATH`, `BASH_FUNC_*` (functions), `PS4`, `PATH`, `HOME` and
 * `XDG_CONFIG_*` (configuration that names programs), `OPENSSL_CONF`/`OPENSSL_ENGINES`,
 * `NODE_OPTIONS`, `BASH_ENV`, `PYTHONUSERBASE`, `PYTHONPYCACHEPREFIX`, …): set for a command, they are code the guard does not see.
 */
export const CODE_VARIABLE =
  /^(LD_\w+|DYLD_\w+|BASH_FUNC_.*|GCONV_PATH|PATH|HOME|XDG_CONFIG_HOME|XDG_CONFIG_DIRS|ZDOTDIR|SHELLOPTS|BASHOPTS|PS[0-4]|BASH_LOADABLES_PATH|OPENSSL_CONF|OPENSSL_ENGINES|OPENSSL_MODULES|PYTHONWARNINGS|PYTHONBREAKPOINT|LUA_INIT|LUA_INIT_\w+|LUA_PATH|LUA_CPATH|PERL5DB|PERLLIB|GIT_COMMON_DIR|BASH_ENV|ENV|PROMPT_COMMAND|SHELL|BROWSER|LESSOPEN|LESSCLOSE|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PYTHONUSERBASE|PYTHONNOUSERSITE|PYTHONPYCACHEPREFIX|NODE_OPTIONS|NODE_PATH|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|GIT_EXEC_PATH|GIT_ASKPASS|SSH_ASKPASS|GIT_EXTERNAL_DIFF|GIT_SSH|GIT_SSH_COMMAND|GIT_PROXY_COMMAND|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_DIR|GIT_TEMPLATE_DIR|\w*PAGER|\w*EDITOR|VISUAL|TAR_OPTIONS|RSYNC_RSH|MAKEFLAGS|MFLAGS)$/;

/**
 * Environment variables set for a command that the guard knows change no program's code or
 * options: locale, terminal and colour, CI markers, log levels, git's identity. Every other
 * upper-case name yields to an `Execute` deny or ask rule (core/policy/walk.ts `codeVariablePart`):
 * programs read options from such variables (`ZIPOPT='-TT sh'`, `MANOPT`, `LESS='+!…'`,
 * `LESSKEYIN`), which no list of bad names covers (the pass after the eleventh).
 */
export const SAFE_VARIABLE =
  /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|COLORTERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|CI|DEBUG|VERBOSE|NODE_ENV|RUST_LOG|RUST_BACKTRACE|CARGO_TERM_COLOR|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONHASHSEED|PYTHONIOENCODING|PYTHONUTF8|TMPDIR|GIT_AUTHOR_(NAME|EMAIL|DATE)|GIT_COMMITTER_(NAME|EMAIL|DATE)|GIT_TERMINAL_PROMPT|GIT_OPTIONAL_LOCKS|SOURCE_DATE_EPOCH|HTTPS?_PROXY|NO_PROXY|ALL_PROXY)$/;

/**
 * Long options that run or load code, by program, as getopt_long spells them in full: every
 * unambiguous prefix of a long option is that option (`tar --to-com=sh`, `sort --com=sh`,
 * `split --fil=sh`, `install --strip-p=sh`, `zip --unzip-c=…`, `nm --plu=lib`: the pass after the
 * eleventh). {@link expandLongOptions} spells such prefixes out before the option rules look.
 */
const LONG_CODE_OPTIONS: Record<string, readonly string[]> = {
  split: ["--filter"],
  sort: ["--compress-program"],
  install: ["--strip-program"],
  tar: [
    "--to-command",
    "--checkpoint-action",
    "--use-compress-program",
    "--info-script",
    "--new-volume-script",
    "--rsh-command",
    "--rmt-command",
  ],
  zip: ["--unzip-command"],
  nm: ["--plugin"],
  objdump: ["--plugin"],
  ar: ["--plugin"],
  ranlib: ["--plugin"],
  strip: ["--plugin"],
  awk: ["--exec", "--file", "--include", "--load", "--source"],
  gawk: ["--exec", "--file", "--include", "--load", "--source"],
  man: ["--pager", "--html", "--preprocessor", "--config-file"],
  less: ["--lesskey-file", "--lesskey-src", "--lesskey-content"],
  fd: ["--exec", "--exec-batch"],
  fdfind: ["--exec", "--exec-batch"],
  ncat: ["--exec", "--sh-exec", "--lua-exec"],
  sdiff: ["--diff-program"],
  diff3: ["--diff-program"],
};

/**
 * `args` with every long option of `name` that is a prefix (3 characters or more with the dashes)
 * of one of its code-running options ({@link LONG_CODE_OPTIONS}) spelled out in full, its
 * `=value` kept; other words as they are.
 */
export function expandLongOptions(name: string, args: string[]): string[] {
  const full = LONG_CODE_OPTIONS[name];
  if (!full) return args;
  return args.map((a) => {
    if (!a.startsWith("--") || a === "--") return a;
    const eq = a.indexOf("=");
    const opt = eq < 0 ? a : a.slice(0, eq);
    if (opt.length < 3 || full.includes(opt)) return a;
    const hit = full.find((f) => f.startsWith(opt));
    return hit ? hit + (eq < 0 ? "" : a.slice(eq)) : a;
  });
}
