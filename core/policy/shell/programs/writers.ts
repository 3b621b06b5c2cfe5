/**
 * Read-only programs that also write files named in their arguments: `tee`
 * (its operands), `sort -o FILE` / `-T DIR` (also `--output`,
 * `--temporary-directory`, inside clusters), `uniq IN OUT`. The command
 * stays allowed and read-only; the files are `writes` of its
 * {@link Classification}, which the policy checks as Write accesses. An
 * argument list it cannot read (an unknown option of `uniq` or `tee`, an
 * unknown word among `sort`'s options) asks (fail closed).
 *
 * Examples (rows of tests/guard_test.ts): `echo x | tee out.txt` allowed;
 * `echo x | tee /etc/x` and `sort -o /etc/x a.txt` ask (writes outside the
 * workspace).
 * @module
 */
import { WILD } from "../../rules.ts";
import { allow, ask, type Classification } from "../classification.ts";
import { longOpt, longValue, operands } from "../options.ts";

/** `sort`: `-o FILE` and `-T DIR` are written; `--compress-program` runs a program. */
export function sort(args: string[]): Classification {
  const words = ["sort", ...args];
  const writes: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") break;
    if (a.startsWith(WILD)) return ask(words, `sort with an unknown option may write a file`);
    if (longOpt(a, "--compress-program")) {
      return ask(words, `sort --compress-program runs a program`);
    }
    if (a === "-o" || a === "-T") writes.push(args[++i] ?? WILD);
    else if (longOpt(a, "--output") || longOpt(a, "--temporary-directory")) {
      writes.push(longValue(args, i) ?? WILD);
      if (!a.includes("=")) i++;
    } else if (/^-[^-]*[oT]/.test(a)) {
      // A cluster: the first o/T takes the rest of the word or the next word.
      const at = a.search(/[oT]/);
      const rest = a.slice(at + 1);
      writes.push(rest || (args[++i] ?? WILD));
    }
  }
  // -T DIR: sort writes its temporary files into DIR.
  return allow(`read-only command "sort"`, { writes: writes.map((w) => w) });
}

/** `uniq [IN [OUT]]`: OUT is written. */
export function uniq(args: string[]): Classification {
  const words = ["uniq", ...args];
  const ops = operands(args, {
    flags: "cdDiuz",
    valued: "fsw",
    longFlags: [
      "--count",
      "--repeated",
      "--all-repeated",
      "--ignore-case",
      "--unique",
      "--zero-terminated",
      "--help",
      "--version",
    ],
    longValued: ["--skip-fields", "--skip-chars", "--check-chars", "--group"],
  });
  if (ops === undefined) return ask(words, `uniq with unknown arguments may write a file`);
  return allow(`read-only command "uniq"`, { writes: ops.length > 1 ? [ops[1]] : [] });
}

/** `tee FILE…`: every FILE but `-` is written. */
export function tee(args: string[]): Classification {
  const words = ["tee", ...args];
  // `--output-error[=MODE]` takes an optional value in the same word.
  const files = operands(args.filter((a) => !longOpt(a, "--output-error")), {
    flags: "aip",
    longFlags: ["--append", "--ignore-interrupts", "--help", "--version"],
  });
  if (files === undefined) return ask(words, `tee with an unknown option`);
  return allow(`"tee" writes only the files it names`, {
    writes: files.filter((f) => f !== "-"),
    readOnly: true,
  });
}
