/**
 * What the guard knows about individual programs: {@link classify} decides
 * for one simple command whether the default policy allows it. Programs that
 * only read, whatever their arguments, are the table here
 * ({@link PURE_READ_ONLY}), with the few whose options decide inline (`jq`,
 * `rg`, `tree`, `date`, `hostname`); so are the environment names that are
 * dangerous to set ({@link dangerousEnvName}) or safe as a command's prefix
 * ({@link safePrefixName}). Program families with rules of their own live in
 * `programs/`: `wrappers.ts` (programs that merely wrap another command:
 * `sudo`, `env`, `timeout`, `xargs`, `find -exec`, …, whose inner command is
 * checked on its own), `shells.ts` (programs that run a shell string:
 * `bash -c`, `sh -c`, `eval`, parsed recursively), `writers.ts` (read-only
 * programs that write files named in their arguments: `tee`, `sort -o`,
 * `uniq IN OUT`), `git.ts` and `git_repo.ts`, `sed.ts`, `builtins.ts` (shell
 * builtins and `cd`), `unknown.ts` (programs the guard has no rule for that
 * look like wrappers). What read-only commands read is `read_paths.ts`;
 * option grammars are `options.ts`.
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
  opaque,
  projectCode,
  show,
} from "./classification.ts";
import { anyLongOpt, longOpt } from "./options.ts";
import { builtin, cdTarget } from "./programs/builtins.ts";
import { readOnlySedScript, sed } from "./programs/sed.ts";
import { git, gitNormalized, gitRepoHost } from "./programs/git.ts";
import { find, wrapper, WRAPPERS } from "./programs/wrappers.ts";
import {
  COMMAND_READERS,
  COMMAND_RUNNERS,
  expandLongOptions,
  loader,
  runner,
} from "./programs/runners.ts";
import { evalCommand, shell, SHELLS } from "./programs/shells.ts";
import { sort, tee, uniq } from "./programs/writers.ts";
import {
  NAMES_PROGRAMS,
  namesAProgramItRuns,
  OTHER_PROGRAMS,
  RUNS_NO_CODE,
} from "./programs/unknown.ts";
import { codeLoader, LOADER_PROGRAMS, MORE_INTERPRETERS } from "./programs/loaders.ts";
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
  "umask",
  "hash",
  "let",
]);
// `cd`/`pushd`/`popd` are followed by the policy (core/policy/policy.ts); `read`, `test`, `jobs`,
// `shopt`, `unset`, `set` have their own rules in {@link classify}.

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
  // A variant's name is judged as the program it stands for only where that is stricter or
  // analyses what it runs (`python3.11 -c`, `rbash -c 'rm …'`); else it is an unknown program,
  // never a read-only one (`grep2` may be anything).
  const canon = canonicalProgram(words[0]);
  if (canon !== words[0]) {
    const c = classify([canon, ...words.slice(1)]);
    if (c.opaque || c.projectCode || c.scripts.length || c.inner.length) return c;
    return { ...unknownProgram(words), projectCode: noRuleFor(words[0]) };
  }
  const name = words[0];
  // `--to-com=sh` is tar's `--to-command` to getopt_long: abbreviations are judged as the option.
  const args = expandLongOptions(name, words.slice(1));
  words = [name, ...args];
  if (name.includes("/")) {
    return projectCode(
      words,
      `${show(name)} is run by path, not by name (only well-known read-only commands are allowed)`,
    );
  }

  if (name in WRAPPERS) return wrapper(name, args);
  if (SHELLS.has(name)) return shell(name, args);
  if (name === "eval") return evalCommand(args);
  if (PURE_READ_ONLY.has(name)) {
    const extra: Partial<Classification> = {};
    if (name === "cd" || name === "pushd") {
      const target = args.find((a) => !a.startsWith("-") || a === "-");
      extra.cd = target === undefined ? "~" : target === "-" ? WILD : target;
    } else if (name === "popd") extra.cd = WILD;
    // `hash -p PATH NAME` makes NAME run PATH.
    if (name === "hash" && args.some((a) => /^-[a-z]*p/.test(a) || a.startsWith(WILD))) {
      return opaque(words, `"hash -p" sets which program a name runs`);
    }
    return allow(`read-only command "${name}"`, extra);
  }
  const b = builtin(name, args);
  if (b) return b;
  const r = runner(name, args) ?? codeLoader(name, args);
  if (r) return r;
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
        return opaque(words, `rg --pre runs a program on every file`);
      }
      // --hostname-bin runs the given program to learn the host name (for hyperlinks).
      if (args.some((a) => longOpt(a, "--hostname-bin"))) {
        return opaque(words, `rg --hostname-bin runs a program`);
      }
      return allow(`read-only command "rg"`);
    case "sort":
      return sort(args);
    case "uniq":
      return uniq(args);
    case "tee":
      return tee(args);
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
  // Options that load a library, plugin or module, or pick a program (`openssl -engine ./e.so`,
  // `gcc -fplugin=`, `node --require`, `some-tool --plugin p.so`): the programs above have
  // option rules of their own; for interpreters, build tools and unknown programs this is code.
  const l = loader(name, args);
  if (l) return l;
  if (INTERPRETERS.has(name)) {
    // A program text on the command line (`python -c`, `perl -e`, `node -e`, `deno eval`, or
    // one only known at run time) is code the guard does not see; a script file is the project's.
    // Without a script operand (or `-`) the program is read from the input: `python3 <<< '…'`,
    // `echo '…' | node`; database shells run the commands of their arguments and input
    // (`sqlite3 db '.shell cmd'`, psql `\!`, mysql `system`).
    const operand = args.find((a) => !a.startsWith("-"));
    const info = args.length > 0 && args.every((a) => INFO_OPTION.test(a));
    return DB_SHELLS.has(name) || (!info && (operand === undefined || operand === "-")) ||
        args.some((x) =>
          hasWild(x) || /^-[a-zA-Z]*[ceEpr]|^--(eval|print|command|exec)|^eval$/.test(x)
        )
      ? opaque(words, `"${name}" evaluates a program text the guard does not see`)
      : projectCode(words, `"${name}" runs a script the guard does not see`);
  }
  if (BUILD_TOOLS.has(name) || name === "bunx") {
    return projectCode(
      words,
      `"${name}" runs the project's scripts or build code, which the guard does not see`,
      runsCommand(name, args),
    );
  }
  if (
    AWK.has(name) && args.some((x) =>
      hasWild(x) ||
      /system|getline|[|>]|^-[^-]*f|^--file|^-E|^--exec|@load|@[A-Za-z_]\w*\s*\(|^-l|^--load|^-i|^--include|^-W/
        .test(
          x,
        )
    )
  ) {
    return opaque(
      words,
      `${name} with system(), getline, a pipe, a redirection or a program file runs code the guard does not see`,
    );
  }
  const wraps = namesAProgramItRuns(name, args, isKnownProgram);
  if (wraps) return opaque(words, wraps);
  const c = isKnownProgram(name)
    ? ask(words, `"${name}" is not a read-only command`)
    : unknownProgram(words);
  // Only programs known to run no code count as understood (./programs/unknown.ts RUNS_NO_CODE):
  // any other yields to an Execute deny or ask rule, as a project's code does.
  // awk and the code loaders reach here when their own rule found nothing that runs code.
  const understood = RUNS_NO_CODE.has(name) || AWK.has(name) || LOADER_PROGRAMS.includes(name);
  return understood ? c : { ...c, projectCode: noRuleFor(name) };
}

/** Why a program outside ./programs/unknown.ts `RUNS_NO_CODE` is not understood. */
const noRuleFor = (name: string) =>
  `the guard has no rule for what "${name}" runs (its options, configuration or the project's files may run code; an allow rule naming it, Execute(${name} *), runs it)`;

/**
 * A program the guard has no rule for: a default question, with the words inside its arguments
 * ({@link Classification.mentions}): it may run what they name (`hyperfine 'rm -rf v'`, `gosu
 * root rm -rf v`, `duckdb -c '.shell rm -rf v'`; issue 16, ninth attacker pass).
 */
function unknownProgram(words: string[]): Classification {
  const mentions = new Set<string>();
  // Programs that only name programs (`man rm`, `apt-cache show git`) run none of them.
  for (const a of NAMES_PROGRAMS.has(words[0]) ? [] : words.slice(1)) {
    for (const w of a.split(/[\s;|&(){}<>"'`!$=,:\\]+/)) {
      const b = w.slice(w.lastIndexOf("/") + 1);
      if (/^[A-Za-z_][\w.+-]*$/.test(b)) mentions.add(b);
    }
  }
  // Its operands and option values, which may name the project's code it runs (project_files.ts).
  const operands = words.slice(1).map((a) => a.startsWith("-") ? a.slice(a.indexOf("=") + 1) : a);
  return ask(words, `"${words[0]}" is not a read-only command`, {
    ...(mentions.size ? { mentions: [...mentions] } : {}),
    operands: operands.filter((a) => a && !a.startsWith("-")),
  });
}

/**
 * The program a name stands for when the name itself has no rule but a variant the guard knows
 * does (issue 16, ninth attacker pass): a versioned interpreter (`python3.11` → `python3`,
 * `perl5.36.0`, `ruby3.1`, `tclsh8.6`, `ksh93` → the name without the version), a Debian
 * alternative or build (`vim.basic`, `bash.static`, `mksh-static`, `gdb-multiarch`), a
 * restricted or text-UI variant (`rbash`, `rvim`, `gdbtui`). Else `name` itself.
 */
export function canonicalProgram(name: string): string {
  if (name.includes("/") || isKnownProgram(name)) return name;
  const candidates: string[] = [];
  const v = /^([A-Za-z][A-Za-z+_-]*?)(\d+)((?:\.\d+)*)$/.exec(name);
  if (v) candidates.push(`${v[1]}${v[2]}`, v[1]);
  const alt = /^(.+?)(?:[.-](?:basic|tiny|nox|gtk\d*|athena|static|multiarch|minimal|full))$/.exec(
    name,
  );
  if (alt) candidates.push(alt[1]);
  if (/^r[a-z]/.test(name)) candidates.push(name.slice(1));
  if (/tui$/.test(name)) candidates.push(name.slice(0, -3));
  return candidates.find((c) => c !== name && isKnownProgram(c)) ?? name;
}

let knownPrograms: Set<string> | undefined;
/** Every program name the guard has a rule for, built on first use. */
function isKnownProgram(word: string): boolean {
  knownPrograms ??= new Set([
    ...PURE_READ_ONLY,
    ...Object.keys(WRAPPERS),
    ...SHELLS,
    ...INTERPRETERS,
    ...BUILD_TOOLS,
    ...COMMAND_RUNNERS,
    ...COMMAND_READERS,
    ...OTHER_PROGRAMS,
    ...LOADER_PROGRAMS,
  ]);
  return knownPrograms.has(word) || /(^|\/)s?bin\/[^/]+$/.test(word);
}

/**
 * Interpreters: `-c`/`-e` program texts are {@link Classification.opaque}, script files
 * {@link Classification.projectCode}.
 */
const INTERPRETERS = new Set([
  "source",
  ".",
  "python",
  "python2",
  "python3",
  "pypy",
  "pypy3",
  "perl",
  "ruby",
  "irb",
  "php",
  "node",
  "nodejs",
  "deno",
  "bun",
  "tsx",
  "ts-node",
  "lua",
  "luajit",
  "Rscript",
  "R",
  "julia",
  "tclsh",
  "wish",
  "expect",
  "osascript",
  "pwsh",
  "powershell",
  "fish",
  "csh",
  "tcsh",
  "rc",
  "gdb",
  "lldb",
  "sqlite3",
  "psql",
  "mysql",
  "jshell",
  "groovy",
  "ipython",
  "ipython3",
  "pdb",
  "pdb3",
  "ipdb",
  ...MORE_INTERPRETERS,
]);
/**
 * Build tools, package managers and runners that run a project's scripts or build code
 * (`make`, `npm run`/`install`, `npx`, `cargo build` with `build.rs`, `go generate`, …):
 * {@link Classification.projectCode}.
 */
const BUILD_TOOLS = new Set([
  "bazel",
  "bazelisk",
  "buck2",
  "pants",
  "zig",
  "composer",
  "nx",
  "turbo",
  "lerna",
  "earthly",
  "make",
  "gmake",
  "bmake",
  "cmake",
  "ninja",
  "meson",
  "npm",
  "npx",
  "pnpm",
  "pnpx",
  "yarn",
  "corepack",
  "cargo",
  "rustc",
  "go",
  "gradle",
  "gradlew",
  "mvn",
  "mvnw",
  "ant",
  "sbt",
  "lein",
  "mix",
  "rake",
  "bundle",
  "gem",
  "pip",
  "pip3",
  "pipx",
  "uv",
  "uvx",
  "poetry",
  "pdm",
  "hatch",
  "tox",
  "nox",
  "pytest",
  "just",
  "task",
  "gcc",
  "cc",
  "clang",
  "tcc",
  "dotnet",
  "swift",
  "java",
  "javac",
  "kotlin",
  "scala",
  "parallel",
  "watch",
  "strace",
  "ltrace",
  "script",
  "screen",
  "tmux",
  "ssh",
  "docker",
  "podman",
  "kubectl",
  "mise",
  "direnv",
  "conda",
  "mamba",
  "micromamba",
  "pipenv",
  "pixi",
  "rye",
]);
/**
 * Subcommands of package managers and environment runners that run the command after them
 * (`npm exec -- rm -rf v`, `pnpm dlx`, `uv run`, `poetry run`, `docker exec ctr cmd`); `npx`,
 * `pnpx`, `bunx` and `uvx` run their operands.
 */
const COMMAND_SUBCOMMANDS: Record<string, string[]> = {
  npm: ["exec", "x"],
  pnpm: ["exec", "dlx"],
  yarn: ["exec", "dlx"],
  bun: ["x", "exec"],
  uv: ["run", "tool"],
  poetry: ["run"],
  pdm: ["run"],
  hatch: ["run"],
  pipx: ["run"],
  corepack: ["*"],
  docker: ["exec", "run"],
  podman: ["exec", "run"],
  kubectl: ["exec"],
  mise: ["exec", "x"],
  direnv: ["exec"],
  conda: ["run"],
  mamba: ["run"],
  micromamba: ["run"],
  pipenv: ["run"],
  pixi: ["run", "exec"],
  rye: ["run"],
};
const COMMAND_OPERANDS = new Set(["npx", "pnpx", "bunx", "uvx"]);

/**
 * What a package manager or runner runs (see {@link COMMAND_SUBCOMMANDS}), as inner commands
 * checked on their own so that deny and ask rules see it (`--deny 'Execute(rm *)'` denies
 * `npm exec -- rm -rf v` even under `--allow 'Execute(npm*)'`): since the guard does not know
 * each runner's options, every suffix that starts at an operand is a candidate (at most 6); a
 * `-c`/`--call` string is a shell string.
 */
function runsCommand(name: string, args: string[]): Partial<Classification> {
  let at = -1;
  if (COMMAND_OPERANDS.has(name)) at = 0;
  else {
    const subs = COMMAND_SUBCOMMANDS[name];
    const i = args.findIndex((a) => !a.startsWith("-"));
    if (subs && i >= 0 && (subs.includes(args[i]) || subs.includes("*"))) at = i + 1;
  }
  if (at < 0) return {};
  const inner: InnerCommand[] = [];
  const scripts: Classification["scripts"] = [];
  for (let i = at; i < args.length && inner.length < 6; i++) {
    const a = args[i];
    if (a === "-c" || a === "--call") {
      const src = args[i + 1];
      scripts.push({ via: `${name} ${a}`, src: src === undefined || hasWild(src) ? null : src });
      i++;
    } else if (a.startsWith("--call=")) {
      const src = a.slice(7);
      scripts.push({ via: `${name} --call`, src: hasWild(src) ? null : src });
    } else if (!a.startsWith("-") && !a.startsWith(WILD)) {
      inner.push({ words: args.slice(i), assigns: [], chosen: true });
    }
  }
  return { inner, scripts };
}

/** Options that only print (`node --version`): no program is read from the input. */
const INFO_OPTION = /^(--version|-V|-v|--help|-h)$/;
/** Database shells (in {@link INTERPRETERS}): their arguments and input are commands they run. */
const DB_SHELLS = new Set(["sqlite3", "psql", "mysql"]);
/** awk variants: their program is code (`system()`, pipes, `getline`). */
const AWK = new Set(["awk", "gawk", "mawk", "nawk", "busybox-awk"]);
