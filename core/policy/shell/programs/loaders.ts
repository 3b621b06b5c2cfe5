/**
 * Programs that load code from their operands or from files in the working directory (issue 16,
 * tenth attacker pass; docs/permissions.md "Auto-allow yields"): `run-parts DIR` runs every
 * executable in a folder, `pydoc3 NAME` imports a module from the working directory, `ctest` and
 * `cpack` evaluate CMake scripts (`-S s.cmake`, `--config c.cmake`, `CTestTestfile.cmake`,
 * `CPackConfig.cmake`; `execute_process` runs programs), `pygmentize -x -l lx.py:Lexer` imports a
 * Python file. {@link codeLoader} judges them as the project's code
 * ({@link Classification.projectCode}): while an `Execute` deny or ask rule exists they ask
 * unless an allow rule names them. {@link MORE_INTERPRETERS} are interpreters judged as
 * shell/commands.ts's `INTERPRETERS` (a program text asks as code the guard does not see, a
 * script file as the project's code). Programs without any rule are checked by their operands in
 * core/policy/project_files.ts.
 * @module
 */
import { type Classification, hasWild, projectCode } from "../classification.ts";

/**
 * Interpreters beyond shell/commands.ts's table: `erl -s mod` / `-eval`, `escript f`, `octave
 * f.m`, `guile`, `racket`, `sbcl --load`, `runghc`, `swipl`, `texlua`, … (their eval options are
 * matched by the interpreter rule's `-e`/`-c`/`--eval` pattern, anything else with an operand is
 * a script of the project).
 */
export const MORE_INTERPRETERS: readonly string[] = [
  "erl",
  "escript",
  "elixir",
  "iex",
  "octave",
  "octave-cli",
  "scilab",
  "guile",
  "racket",
  "sbcl",
  "clisp",
  "ecl",
  "runghc",
  "runhaskell",
  "ghci",
  "ocaml",
  "swipl",
  "texlua",
  "jruby",
  "jython",
  "raku",
  "perl6",
  "bb",
  "clojure",
  "clj",
  "janet",
  "qjs",
  "rhino",
  "php-cgi",
];

/** Options that only print information: the program loads nothing. */
const INFO = /^(-h|--help|-V|--version)$/;

/**
 * Programs that always run or import the project's files (whatever the operands): test and
 * packaging drivers that read CMake scripts from the working directory, module loaders that put
 * the working directory first on the import path, and task runners whose task files are code.
 */
const ALWAYS: Record<string, string> = {
  "run-parts": "runs every executable file in the folder it names",
  pydoc:
    "imports the modules it names (or, with -k/-p/-b, every module) from the working directory",
  pydoc3:
    "imports the modules it names (or, with -k/-p/-b, every module) from the working directory",
  ctest:
    "evaluates CTest scripts (CTestTestfile.cmake, -S/--script files) and runs the project's tests",
  cpack: "evaluates CPack configuration (CPackConfig.cmake, --config files), CMake code",
  "sphinx-build": "runs the documentation's conf.py",
  mkdocs: "runs the hooks and plugins mkdocs.yml names",
  "pre-commit": "runs the hooks .pre-commit-config.yaml names",
  invoke: "runs tasks.py",
  inv: "runs tasks.py",
  fab: "runs fabfile.py",
  doit: "runs dodo.py",
  scons: "runs SConstruct",
  waf: "runs wscript",
  gulp: "runs gulpfile.js",
  grunt: "runs Gruntfile.js",
  jest: "runs the project's tests and configuration",
  vitest: "runs the project's tests and configuration",
  mocha: "runs the project's tests",
  jupyter: "runs notebooks and kernels (nbconvert --execute, execute, …)",
  papermill: "runs notebooks",
  "ansible-playbook": "runs playbooks (local commands included)",
  vagrant: "evaluates the Vagrantfile (Ruby)",
  behave: "runs the project's step files",
  nosetests: "runs the project's tests",
};

/** pygmentize options whose value follows (`-l LEXER`, `-lpython`): letters after them are the value. */
const PYGMENTIZE_VALUED = new Set(["l", "f", "F", "o", "O", "P", "S", "a", "N"]);

/**
 * The project-code classification of a program that loads code from its operands or the working
 * directory ({@link ALWAYS}, `pygmentize -x`), or undefined when `name args` is not one.
 */
export function codeLoader(name: string, args: string[]): Classification | undefined {
  const words = [name, ...args];
  const why = ALWAYS[name];
  if (why !== undefined) {
    if (args.length && args.every((a) => INFO.test(a))) return undefined;
    if (name === "run-parts" && args.some((a) => /^--(test|list)$/.test(a))) return undefined;
    return projectCode(words, `"${name}" ${why}`);
  }
  if (name === "pygmentize") {
    // `-x` lets -l/-f name a Python file whose class is loaded (`-l lx.py:CustomLexer`).
    const x = args.some((a) => {
      if (hasWild(a)) return true;
      if (!/^-[^-]/.test(a)) return false;
      for (const ch of a.slice(1)) {
        if (ch === "x") return true;
        if (PYGMENTIZE_VALUED.has(ch)) return false;
      }
      return false;
    });
    if (x) {
      return projectCode(words, `"pygmentize -x" imports the lexer or formatter file it names`);
    }
  }
  return undefined;
}

/** Every program {@link codeLoader} has a rule for (for the guard's list of known programs). */
export const LOADER_PROGRAMS: readonly string[] = [...Object.keys(ALWAYS), "pygmentize"];
