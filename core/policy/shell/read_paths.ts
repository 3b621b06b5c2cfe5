/**
 * The paths a read-only command reads, lists or stats ({@link readPaths}):
 * the default "reads outside the workspace ask" applies to them as it does to
 * fs_read (docs/permissions.md). Tables per program of the options whose
 * value is a path and of those whose value is not, GNU long options matched
 * by prefix, `find`'s start paths, and for `git` its path-like words.
 * @module
 */
import { WILD } from "../rules.ts";
import { longOpt } from "./options.ts";

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
