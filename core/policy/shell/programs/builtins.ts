/**
 * Shell builtins that change only the shell running the command line, with
 * the rules that keep them from evaluating text as code (issue 11 §2):
 * `set`/`shopt` option changes, the variables `read`/`mapfile`/`printf -v`/
 * `getopts` assign, `unset`, `test -v`, `jobs -x`, `enable`; and {@link cdTarget}, the
 * directory changes the policy follows.
 *
 * Examples (rows of tests/guard_test.ts): `set -e -o pipefail` allowed,
 * `set -x` asks (it expands `PS4`); `read -r line < f` allowed,
 * `read 'a[$(cmd)]'` (opaque: code the guard does not see) and `read HOME` ask; `jobs -x cmd` asks;
 * `builtin cd ~/.ssh` is followed like `cd`.
 * @module
 */
import { WILD } from "../../rules.ts";
import { allow, ask, type Classification, IDENT, opaque, show } from "../classification.ts";
import { operands } from "../options.ts";

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
export const SAFE_SET_OPTIONS: ReadonlySet<string> = new Set([
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
export const SAFE_SHOPT: ReadonlySet<string> = new Set([
  "nullglob",
  "failglob",
  "globstar",
  "dotglob",
]);

/**
 * The classification of builtin `name` when this module knows it (`set`,
 * `shopt`, `read`, `mapfile`/`readarray`, `getopts`, `printf`, `unset`,
 * `test`/`[`, `jobs`); undefined otherwise.
 */
export function builtin(name: string, args: string[]): Classification | undefined {
  const words = [name, ...args];
  switch (name) {
    case "set":
      return setBuiltin(words);
    case "trap": {
      // trap [-lp] [ACTION SIGNAL…]: ACTION is a command line the shell runs later (as eval does).
      const ops = args.filter((a, i) => !(i === 0 && /^-[lp]+$/.test(a)) && a !== "--");
      if (ops.length < 2 || ops[0] === "" || ops[0] === "-") {
        return allow(`"trap" prints or resets signal actions`);
      }
      return allow(`"trap" runs its action as a command line`, {
        readOnly: false,
        scripts: [{ via: "trap", src: ops[0].includes(WILD) ? null : ops[0] }],
      });
    }
    case "shopt": {
      // `shopt` / `shopt -p` print; `-s`/`-u` change options: only glob-matching ones are known safe.
      const changes = args.some((a) => /^-[a-z]*[su]/.test(a));
      const names = args.filter((a) => !a.startsWith("-"));
      if (args.some((a) => a.startsWith(WILD) || (a.startsWith("-") && !/^-[spqo]+$/.test(a)))) {
        return opaque(words, `shopt with an unknown option`);
      }
      if (
        changes && (args.some((a) => /^-[a-z]*o/.test(a)) || names.some((n) => !SAFE_SHOPT.has(n)))
      ) {
        return opaque(
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
      if (args.some((a) => /^-[^-]*C/.test(a))) return opaque(words, `${name} -C runs a callback`);
      const ops = operands(args, { flags: "t", valued: "dnOsuc" });
      return targetsCheck(words, ops === undefined ? undefined : ops.length ? ops : ["MAPFILE"]);
    }
    case "wait": {
      // wait [-fn] [-p VAR] [ID…]: -p assigns the finished job's id to VAR.
      const sets: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const m = /^-[fn]*p(.*)$/.exec(args[i]);
        if (m) sets.push(m[1] || (args[++i] ?? WILD));
        // An unknown word may be `-p`: the word after it, unless a job id, may be a name.
        else if (
          args[i].startsWith(WILD) && i + 1 < args.length && !/^(\d+|%.*)$/.test(args[i + 1])
        ) {
          sets.push(args[i + 1]);
        }
      }
      return sets.length ? targetsCheck(words, sets) : allow(`read-only command "wait"`);
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
        return opaque(words, `"unset" of a subscript or computed name evaluates it as arithmetic`);
      }
      return allow(`"unset" only removes variables of this command line's shell`);
    }
    case "test":
    case "[": {
      // `test -v 'a[$(cmd)]'` evaluates the subscript (runs cmd).
      for (let i = 0; i < args.length; i++) {
        if ((args[i] === "-v" || args[i] === "-R") && !IDENT.test(args[i + 1] ?? "")) {
          return opaque(words, `"${name} ${args[i]}" on a subscript evaluates it as arithmetic`);
        }
      }
      return allow(`read-only command "${name}"`);
    }
    case "compgen":
      // -C runs a command, -F calls a function, -W expands its word list ($(…) runs).
      if (args.some((a) => /^-[A-Za-z]*[CFW]/.test(a) || a.startsWith(WILD))) {
        return opaque(words, `"compgen -C/-F/-W" runs a command or expands a word list as code`);
      }
      return allow(`read-only command "compgen"`);
    case "fc":
      // fc -e EDITOR runs a program on the history; fc -s runs history entries again.
      return opaque(words, `"fc" runs an editor or commands from the history`);
    case "enable":
      // `enable -f LIB NAME` loads a builtin from a shared library (its constructor runs);
      // `enable -n NAME` / `enable NAME` / `-d` change which code a command name runs.
      if (args.every((a) => /^-[aps]+$/.test(a))) {
        return allow(`"enable" lists the shell's builtins`);
      }
      return opaque(
        words,
        `"enable" with a name changes which code a command name runs (-f loads a shared library)`,
      );
    case "jobs":
      // `jobs -x CMD` runs CMD.
      if (args.some((a) => !/^(-[lnprs]+|%.*)$/.test(a))) {
        return opaque(words, `"jobs" with -x or an unknown option runs a command`);
      }
      return allow(`read-only command "jobs"`);
  }
  return undefined;
}

/**
 * A command that assigns the shell variables `targets` (undefined when its
 * options could not be read): each must be a plain name (`read 'a[$(cmd)]'`
 * evaluates the subscript); the policy checks the names like assignments.
 */
function targetsCheck(words: string[], targets: string[] | undefined): Classification {
  if (targets === undefined) {
    return opaque(words, `cannot tell which variables "${words[0]}" sets`);
  }
  const bad = targets.find((t) => !IDENT.test(t));
  if (bad !== undefined) {
    return opaque(
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
      if (!SAFE_SET_OPTIONS.has(o)) {
        return opaque(words, `"set -o ${o}" is not a known-safe option`);
      }
      continue;
    }
    if (/^[-+][a-zA-Z]+$/.test(a)) {
      const letters = a.slice(1);
      for (const l of letters) {
        if (l === "o") continue;
        if (!SAFE_SET_LETTERS.includes(l)) {
          return opaque(
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
          return opaque(words, `"set ${a} ${o ?? ""}" is not a known-safe option`);
        }
      }
      continue;
    }
    return allow(`"set" sets the positional parameters`);
  }
  return allow(`"set" only changes shell options`);
}
