/**
 * Option grammars as GNU getopt_long and git parse-options read them: long
 * options by unambiguous prefix (`--exp` is `--expression`), short clusters,
 * `--` ending the options. Used by every program family to find operands and
 * the options that run programs or write files (issue 11 §2, abbreviated long
 * options). Every function fails closed on an unknown option.
 * @module
 */
import { WILD } from "../rules.ts";
import { hasWild } from "./classification.ts";

/**
 * True when `arg` is the long option `full` (`--expression`) as a GNU
 * (getopt_long) or git (parse-options) program reads it: the whole name or
 * any prefix of it of at least one letter (`--exp`, `--e`), with or without
 * `=value`. Programs reject an ambiguous prefix, so taking every prefix as
 * this option only ever makes the guard stricter.
 */
export function longOpt(arg: string, full: string): boolean {
  if (!arg.startsWith("--") || arg.length < 3) return false;
  const eq = arg.indexOf("=");
  const name = eq < 0 ? arg : arg.slice(0, eq);
  return name.length >= 3 && full.startsWith(name);
}

/** True when `arg` is any of the long options `fulls` (see {@link longOpt}). */
export const anyLongOpt = (arg: string, fulls: string[]) => fulls.some((f) => longOpt(arg, f));

/** The value of a long option given as `--opt=value` or `--opt value` (advances nothing). */
export function longValue(args: string[], i: number): string | undefined {
  const a = args[i];
  const eq = a.indexOf("=");
  return eq >= 0 ? a.slice(eq + 1) : args[i + 1];
}

/**
 * Operands of a program with the simple option grammar `opts` (single letters
 * in `flags`; letters in `valued` take a value): everything after `--`, and
 * every word not starting with `-`. Long options must be listed (by full
 * name, prefixes accepted) in `longFlags`/`longValued`. Undefined when an
 * option is unknown or unknown at run time (fail closed).
 */
export function operands(
  args: string[],
  opts: { flags: string; valued?: string; longFlags?: string[]; longValued?: string[] },
): string[] | undefined {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith(WILD)) return undefined;
    if (a === "--") return [...out, ...args.slice(i + 1)];
    if (!a.startsWith("-") || a === "-") {
      out.push(a);
      continue;
    }
    if (a.startsWith("--")) {
      if (anyLongOpt(a, opts.longValued ?? [])) {
        if (!a.includes("=")) i++;
        continue;
      }
      if (anyLongOpt(a, opts.longFlags ?? []) && !a.includes("=")) continue;
      return undefined;
    }
    for (let k = 1; k < a.length; k++) {
      if (opts.valued?.includes(a[k])) {
        if (k === a.length - 1) i++;
        break;
      }
      if (!opts.flags.includes(a[k])) return undefined;
    }
  }
  return out;
}

/** Option grammar of a wrapper: short/long flags without value, options taking a value. */
export interface OptSpec {
  flags: string[];
  valued: string[];
  /** Accept `-NUMBER` (nice). */
  numeric?: boolean;
}

/**
 * Index of the first operand after the options of `args` per `spec`, or -1
 * when an option is unknown or a value is missing (fail closed).
 */
export function skipOptions(args: string[], spec: OptSpec): number {
  const flags = new Set(spec.flags);
  const valued = new Set(spec.valued);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (hasWild(a) && a.startsWith(WILD)) return -1;
    if (a === "--") return i + 1;
    if (!a.startsWith("-") || a === "-") return i;
    if (hasWild(a)) return -1;
    if (a.startsWith("--")) {
      const name = a.split("=")[0];
      if (valued.has(name)) {
        if (!a.includes("=")) i++;
        if (i >= args.length) return -1;
        continue;
      }
      if (flags.has(name) && !a.includes("=")) continue;
      return -1;
    }
    if (spec.numeric && /^-\d+$/.test(a)) continue;
    if (valued.has(a)) {
      i++;
      if (i >= args.length) return -1;
      continue;
    }
    if (valued.has(a.slice(0, 2))) continue; // -n10
    // cluster of short flags, the last may take a value
    let ok = true;
    for (let k = 1; k < a.length; k++) {
      const o = "-" + a[k];
      if (flags.has(o)) continue;
      if (valued.has(o)) {
        if (k === a.length - 1) {
          i++;
          if (i >= args.length) return -1;
        }
        break;
      }
      ok = false;
      break;
    }
    if (!ok) return -1;
  }
  return args.length;
}
