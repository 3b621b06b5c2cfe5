/**
 * The shape of the guard's verdict on one simple command (a
 * {@link Classification}) and the helpers every program family uses to build
 * one. Fail closed: {@link ask} is the default answer.
 * @module
 */
import { WILD } from "../rules.ts";

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
  /**
   * Why the command runs code the guard does not see (a `-c` config key, an alias, a script
   * file, `find -delete`, an interpreter's program text, a build tool's scripts): such a
   * command is never fully understood, so while any `Execute` deny or ask rule exists it asks
   * (the OS sandbox's auto-allow yields, and an allow rule on the program does not cover it).
   */
  opaque?: string;
  /**
   * Why the command runs code of the project the guard does not see (a build tool's scripts,
   * an interpreter's script file, a program run by path, a shell reading a script): while an
   * `Execute` deny or ask rule exists it asks unless an allow rule names the command (the user
   * chose to run the project's code; auto-allow alone does not).
   */
  projectCode?: string;
  /**
   * A program the guard has no rule for: the words inside its arguments (split at blanks and
   * shell punctuation, paths to their last part). It may run what they name, so while an
   * `Execute` deny or ask rule names one of them as its program (`Execute(rm *)` and
   * `hyperfine 'rm -rf v'`) the command asks, as {@link opaque} does (core/policy/walk.ts).
   */
  mentions?: string[];
  /**
   * A program the guard has no rule for: its operands and option values as written. One that
   * names an executable, a folder of executables or a module in the working directory is the
   * project's code it may run (core/policy/project_files.ts `projectFileOperand`).
   */
  operands?: string[];
}

/** A command run by another one. */
export interface InnerCommand {
  words: string[];
  assigns: string[];
  /** True when unknown (WILD) words are input only known at run time (`xargs`), never a filename glob. */
  unknownArgs?: boolean;
  /** True for `find -exec`: a word that is only WILD is a path `find` found beneath its start paths. */
  findItems?: boolean;
  /**
   * True when it runs in another working directory than the outer command (`find -execdir`,
   * `-okdir`, `sudo -D DIR`): it is walked as run beneath the outer folders (core/policy/
   * context.ts `ScriptCtx.elsewhere`), so `git` there counts as git after `cd` (a repository
   * configuration written in the workspace).
   */
  elsewhere?: boolean;
  /**
   * True when a package manager or runner runs it (`uv run pytest`): an allow rule that covers
   * the outer command also covers the project's code it runs (its {@link Classification.projectCode}
   * does not ask again); what it evaluates ({@link Classification.opaque}) still does.
   */
  chosen?: boolean;
}

/** The classification of a command the default policy asks about. */
export function ask(
  _words: string[],
  why: string,
  extra: Partial<Classification> = {},
): Classification {
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

/** {@link ask} for a command that runs code the guard does not see ({@link Classification.opaque}). */
export function opaque(
  words: string[],
  why: string,
  extra: Partial<Classification> = {},
): Classification {
  return ask(words, why, { opaque: why, ...extra });
}

/** {@link ask} for a command that runs the project's code ({@link Classification.projectCode}). */
export function projectCode(
  words: string[],
  why: string,
  extra: Partial<Classification> = {},
): Classification {
  return ask(words, why, { projectCode: why, ...extra });
}

export function allow(why: string, extra: Partial<Classification> = {}): Classification {
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

export const hasWild = (s: string) => s.includes(WILD);
export const show = (s: string) => JSON.stringify(s.replaceAll(WILD, "…"));
export const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
