/**
 * Programs that run a shell string: `bash -c`/`sh -c` (and the other shells,
 * `busybox sh`) and `eval`. The string goes back to the parser and is checked
 * recursively (`scripts` of the {@link Classification}); a string that is not
 * a literal (WILD) is unknown, and a shell reading a script file or its input
 * asks.
 *
 * Examples (rows of tests/guard_test.ts): `bash -lc 'git status && ls'` and
 * `eval 'ls -la'` allowed; `bash -c "$X"` asks (not a literal).
 * @module
 */
import { WILD } from "../../rules.ts";
import {
  allow,
  ask,
  type Classification,
  hasWild,
  opaque,
  projectCode,
} from "../classification.ts";
import { SAFE_SET_OPTIONS, SAFE_SHOPT } from "./builtins.ts";

/** Programs that are shells: `-c STRING` runs STRING. */
export const SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);

/** `eval ARGS…`: the arguments joined by spaces are a command line. */
export function evalCommand(args: string[]): Classification {
  const src = args.some(hasWild) ? null : args.join(" ");
  return allow(`eval runs its arguments as a command line`, {
    readOnly: false,
    scripts: [{ via: "eval", src }],
  });
}

/** `bash`/`sh`/…: `-c STRING` runs STRING; anything else runs a script or reads commands. */
export function shell(name: string, args: string[]): Classification {
  const words = [name, ...args];
  if (name === "busybox") {
    if (args[0] !== "sh" && args[0] !== "ash") {
      return opaque(words, `"busybox" runs arbitrary applets`);
    }
    return shell("sh", args.slice(1));
  }
  let i = 0;
  let stdin = false;
  const rc = startupFiles(name, args);
  for (; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith(WILD)) return opaque(words, `${name} with unknown arguments`);
    if (a === "--") {
      i++;
      break;
    }
    // An rc file is a script the guard does not see; a shell option not known to be safe may
    // make the shell evaluate text as code (`-O expand_aliases`, `-o xtrace` with PS4).
    if (a === "--rcfile" || a === "--init-file") {
      return projectCode(words, `${name} ${a} runs a startup file the guard does not see`);
    }
    if (a === "-o" || a === "+o" || a === "-O" || a === "+O") {
      const o = args[++i] ?? "";
      if (a[0] === "-" && !(a[1] === "o" ? SAFE_SET_OPTIONS : SAFE_SHOPT).has(o)) {
        return opaque(words, `${name} ${a} ${o} is not a shell option known to be safe`);
      }
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
          ...(rc ? { projectCode: rc } : {}),
        });
      }
      if (a.startsWith("-") && a.includes("s")) stdin = true;
      continue;
    }
    break;
  }
  // Without a script operand (or with `-s` / `-`) the shell reads its commands from its input:
  // `echo 'rm -rf v' | bash`, `bash <<< 'cmd'` run a string the guard does not see.
  const info = args.length > 0 && args.every((a) => /^(--version|--help)$/.test(a));
  if (!info && (stdin || i >= args.length || args[i] === "-")) {
    return opaque(words, `"${name}" reads the commands it runs from its input`);
  }
  return projectCode(words, `"${name}" runs a script or reads commands from its input`);
}

/**
 * Why `name ARGS` runs start-up files the guard does not see, or undefined: an interactive or
 * login shell (`-i`, `-l`, `--login`, `--interactive`, also bundled as `-lc`/`-ic`; `-o login` /
 * `-o interactive` are not safe options and ask already) reads `~/.bashrc`, `~/.profile`,
 * `~/.bash_profile`, `~/.bash_login`, `~/.bash_logout`, `$ENV`, zsh's `~/.zshrc`/`~/.zlogin`; zsh
 * reads `$ZDOTDIR/.zshenv` always (unless `-f`/`--no-rcs`/`-d`). Counted as the project's code
 * ({@link projectCode}: asks while an `Execute` deny or ask rule exists; issue 16, tenth attacker
 * pass — such files planted in a writable home or workspace ran a denied program).
 */
export function startupFiles(name: string, args: readonly string[]): string | undefined {
  let login = false, interactive = false, norc = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (/^[-+][oO]$/.test(a)) {
      i++; // the option's name (`-o posix`)
      continue;
    }
    if (a === "--" || !/^[-+]/.test(a) || a === "-") break;
    if (a === "--login") login = true;
    else if (a === "--interactive") interactive = true;
    else if (a === "--no-rcs" && name === "zsh") norc = true;
    else if (/^-[a-zA-Z]+$/.test(a)) {
      if (a.includes("l")) login = true;
      if (a.includes("i")) interactive = true;
      if (name === "zsh" && /[fd]/.test(a)) norc = true;
    }
  }
  if (login || interactive) {
    return `${name} ${login ? "-l" : "-i"} runs start-up files the guard does not see (${
      login ? "~/.profile, ~/.bash_profile, ~/.zlogin" : "~/.bashrc, ~/.zshrc, $ENV"
    })`;
  }
  if (name === "zsh" && !norc) return "zsh runs ~/.zshenv, a start-up file the guard does not see";
  return undefined;
}
