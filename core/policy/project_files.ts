/**
 * Operands of a program the guard has no rule for that name the project's code (issue 16, tenth
 * attacker pass; docs/permissions.md "Auto-allow yields"): such a program may run or import
 * what it is given, as `run-parts rp` runs `rp/*` and `pydoc3 evil` imports `./evil.py`. While
 * an `Execute` deny or ask rule exists, core/policy/walk.ts asks with it when
 * {@link projectFileOperand} finds one (unless an allow rule names the command). Only the file
 * system at the time of the check is seen: a file the same command line creates is not.
 * @module
 */
import { resolvePath, WILD } from "./rules.ts";

/** Extensions of files a program loads as code when given `FILE:NAME` (`lx.py:CustomLexer`). */
const CODE_EXT = /\.(py|pyc|pyw|js|mjs|cjs|ts|mts|cts|rb|pl|pm|lua|tcl|php|so|dylib|dll|jar)$/;
/** A Python-style module or `module:attribute` name (`evil`, `pkg.mod`, `main:app`). */
const MODULE = /^([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_][\w.]*)?$/;
/** Programs without a rule that read scripts without running them (linters, formatters). */
const CHECKERS = new Set(["shellcheck", "shfmt", "checkbashisms", "bashate", "prettier"]);

/**
 * Why one of `operands` (a program without a rule, `name`) is the project's code it may run or
 * import, seen from each working directory in `cwds`: an executable file (`foo ./build.sh`), a
 * folder that holds executable files (`run-parts`-like), a `FILE:NAME` whose file has a code
 * extension (`lx.py:CustomLexer`), or a module name whose `NAME.py` or `NAME/__init__.py`
 * exists in the working directory (`pydoc3 evil`, `gunicorn main:app`). Undefined when none is
 * (also when `cwds` is null: the walk asks about an unknown directory on its own).
 */
export function projectFileOperand(
  name: string,
  operands: readonly string[] | undefined,
  cwds: readonly string[] | null,
  home: string,
): string | undefined {
  if (!operands?.length || !cwds || CHECKERS.has(name)) return undefined;
  for (const cwd of cwds) {
    for (const w of operands) {
      if (w.includes(WILD) || w.length > 4096) continue;
      const abs = resolvePath(w, cwd, home);
      const kind = executable(abs);
      if (kind) return `"${name}" may run ${JSON.stringify(w)}, ${kind}`;
      const colon = w.lastIndexOf(":");
      if (colon > 0 && CODE_EXT.test(w.slice(0, colon))) {
        if (isFile(resolvePath(w.slice(0, colon), cwd, home))) {
          return `"${name}" may load code from ${JSON.stringify(w.slice(0, colon))}`;
        }
      }
      const m = MODULE.exec(w);
      if (m) {
        const mod = resolvePath(m[1], cwd, home);
        if (isFile(`${mod}.py`) || isFile(`${mod}/__init__.py`)) {
          return `"${name}" may import ${JSON.stringify(m[1])} from the working directory`;
        }
      }
    }
  }
  return undefined;
}

/** What makes `abs` code to run: an executable file, or a folder holding one; else undefined. */
function executable(abs: string): string | undefined {
  let st: Deno.FileInfo;
  try {
    st = Deno.statSync(abs);
  } catch {
    return undefined;
  }
  if (st.isFile) return (st.mode ?? 0) & 0o111 ? "an executable file" : undefined;
  if (!st.isDirectory) return undefined;
  try {
    let n = 0;
    for (const e of Deno.readDirSync(abs)) {
      if (++n > 500) break;
      if (!e.isFile && !e.isSymlink) continue;
      if (isExecutableFile(`${abs}/${e.name}`)) return "a folder of executable files";
    }
  } catch {
    return undefined;
  }
  return undefined;
}

function isExecutableFile(p: string): boolean {
  try {
    const s = Deno.statSync(p);
    return s.isFile && ((s.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}
