/**
 * The script model of the execute guard: the flat {@link ShellScript} that
 * parse.ts (full parser, via the tree walk in flatten.ts) and fast_path.ts
 * (plain command lines) produce for one command line — every simple command,
 * declaration, redirection, parameter expansion, code-evaluating construct
 * and filename glob in it. Shapes only; the policy (core/policy/policy.ts)
 * decides on them.
 * @module
 */

/** One simple command: `FOO=1 git status -s` → words `["git","status","-s"]`, assigns `["FOO"]`. */
export interface ShellCommand {
  words: string[];
  /** Names of env-prefix assignments (or of plain `NAME=value` statements). */
  assigns: string[];
  /** The command's source text. */
  text: string;
}

/** A declaration builtin: `export A=1`, `local x`, `declare -p`. */
export interface ShellDecl {
  variant: string;
  names: string[];
  flags: string[];
  text: string;
}

/** A redirection. `access` is what it does to `target`: write (`>`, `>>`, `&>`, `>|`), read (`<`), both (`<>`), or none (fd duplication, heredocs). */
export interface ShellRedirect {
  op: string;
  access: "write" | "read" | "readwrite" | "none";
  /** Target word (WILD for unknown parts); undefined for heredocs. */
  target?: string;
  text: string;
}

/** A parameter expansion `$NAME` / `${NAME…}`; `name` undefined when indirect (`${!x}`). */
export interface ShellParam {
  name?: string;
}

/**
 * A construct where Bash evaluates text as code although a parser sees data
 * (issue 11 §2, "strings bash evaluates as code"): prompt expansion
 * `${x@P}` and the other transformation operators, indirect expansion
 * `${!x}`, arithmetic on anything but numeric literals (`$((x))`,
 * `[[ $a -eq 1 ]]`, `${a[i]}`, `${@:x}` — a value such as `a[$(cmd)]` runs
 * `cmd`), `[[ -v NAME ]]` on a subscript, command substitutions inside an
 * extended glob, `$"…"` translations, computed names given to `declare`.
 * The policy asks for each (fail closed).
 */
export interface ShellHazard {
  what: string;
  text: string;
}

/** The flattened content of one parsed command line. */
export interface ShellScript {
  commands: ShellCommand[];
  decls: ShellDecl[];
  redirects: ShellRedirect[];
  params: ShellParam[];
  /** Code-evaluating constructs (see {@link ShellHazard}); empty for plain command lines. */
  hazards?: ShellHazard[];
  /**
   * Words Bash expands as filename globs (unquoted `*`, `?`, `[…]`, extended
   * globs) in command arguments, `for` lists and array assignments, as text
   * with WILD for unknown parts: a glob lists its directory, so a glob outside
   * the workspace is a read outside (`echo /*`).
   */
  globs?: ShellGlob[];
}

/** A word Bash expands as a filename glob; `dynamic` when other parts of it are run-time values (`$X/*`). */
export interface ShellGlob {
  text: string;
  dynamic: boolean;
}
