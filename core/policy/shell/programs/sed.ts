/**
 * `sed`: read-only when it edits nothing in place, reads no script file and
 * every script only prints, deletes, quits or substitutes to stdout.
 *
 * Examples (rows of tests/guard_test.ts): `sed -n 1,3p f` and
 * `sed --expression=p f` allowed; `sed -i`, `sed --in-pl` (any prefix of
 * `--in-place`), `sed --exp='1e cmd'`, `sed 's/x/y/w out'` ask.
 * @module
 */
import { WILD } from "../../rules.ts";
import { allow, ask, type Classification, opaque, show } from "../classification.ts";
import { anyLongOpt, longOpt } from "../options.ts";

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
export function sed(args: string[]): Classification {
  const words = ["sed", ...args];
  const scripts: string[] = [];
  let operandScript = true;
  let inPlace = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") break;
    if (a.startsWith(WILD)) return opaque(words, `sed with an unknown option`);
    if (!a.startsWith("-") || a === "-") continue;
    // GNU sed takes any unambiguous prefix of a long option (`--exp`, `--in-pl`).
    if (longOpt(a, "--in-place") || (!a.startsWith("--") && /^-[^-]*i/.test(a))) {
      // Its script is still read: `sed -i 'e rm -rf x'` runs a command (GNU sed `e`).
      inPlace = true;
      continue;
    }
    if (longOpt(a, "--file") || (!a.startsWith("--") && /^-[^-]*f/.test(a))) {
      return opaque(words, `"sed -f" runs a script file the guard cannot see`);
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
        return opaque(words, `sed option ${show(a)} is not known to the guard`);
      }
    } else if (/^-[^-]*e/.test(a)) {
      const rest = a.slice(a.indexOf("e") + 1);
      scripts.push(rest !== "" ? rest : args[++i] ?? WILD);
      operandScript = false;
    } else if (/^-[^-]*l$/.test(a)) i++;
    else if (!/^-[nrEsuzb]+$/.test(a) && !/^-[^-]*l/.test(a)) {
      return opaque(words, `sed option ${show(a)} is not known to the guard`);
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
    return opaque(words, `sed script ${show(bad)} is not one the guard knows to be read-only`);
  }
  if (inPlace) return ask(words, `"sed -i" edits files in place`);
  return allow(`read-only command "sed" (print/delete/substitute to stdout)`);
}
