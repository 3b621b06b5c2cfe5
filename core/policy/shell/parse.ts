/**
 * Shell parsing for the execute guard, on npm `mvdan-sh` (the GopherJS build
 * of mvdan/sh, a full POSIX/Bash parser; synchronous once loaded).
 *
 * The parser is loaded lazily by {@link loadShellParser} (a literal dynamic
 * import, so it stays out of start-up). {@link parseShell} turns a command
 * line into a flat {@link ShellScript} (script.ts): the plainest lines through
 * the fast path (fast_path.ts), the rest through mvdan-sh and the tree walk
 * of flatten.ts, which reduces words to text with words.ts.
 * @module
 */
import type { ShellScript } from "./script.ts";
import { lexSimple } from "./fast_path.ts";
import { Flattener, type Loaded } from "./flatten.ts";
import type { Node } from "./words.ts";

/** The result of {@link parseShell}: a script, or the parser's error message. */
export type ParseResult = { ok: true; script: ShellScript } | { ok: false; error: string };

let loaded: Loaded | undefined;
let loading: Promise<Loaded> | undefined;
/** Milliseconds the last {@link loadShellParser} took (0 before the first load). */
export let parserLoadMs = 0;

/** True once the parser is loaded (then {@link parseShell} may be called). */
export function shellParserLoaded(): boolean {
  return loaded !== undefined;
}

/**
 * Loads mvdan-sh once (≈70 ms on a 2-core machine) and calibrates the
 * redirection operator codes by parsing a probe, so a different build of the
 * package cannot silently misclassify `>` and `<`.
 */
export function loadShellParser(): Promise<void> {
  if (loaded) return Promise.resolve();
  loading ??= (async () => {
    const t0 = performance.now();
    const mod = await import("mvdan-sh");
    // deno-lint-ignore no-explicit-any
    const sh = (mod as any).default ?? mod;
    const syntax = sh.syntax;
    const parser = syntax.NewParser(syntax.Variant(syntax.LangBash));
    const ops = new Map<number, string>();
    const probe = ": >a >>a <a <>a <&0 >&1 >|a <<<a &>a &>>a <<E\nE\n";
    const names = [">", ">>", "<", "<>", "<&", ">&", ">|", "<<<", "&>", "&>>", "<<"];
    const f = parser.Parse(probe, "");
    const redirs = f.Stmts[0].Redirs;
    for (let i = 0; i < names.length; i++) ops.set(redirs[i].Op, names[i]);
    const f2 = parser.Parse(": <<-E\n\tE\n", "");
    ops.set(f2.Stmts[0].Redirs[0].Op, "<<-");
    if (ops.size !== 12) throw new Error("mvdan-sh: unexpected redirection operator codes");
    const first = (src: string) => parser.Parse(src, "").Stmts[0].Cmd;
    const word0 = (src: string) => first(src).Args[1].Parts[0];
    const codes = {
      transform: word0("echo ${x@Q}").Exp.Op,
      assign: first("(( a = 1 ))").X.Op,
      arithTests: new Set<number>(
        ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"].map((o) => first(`[[ a ${o} 1 ]]`).X.Op),
      ),
      varTests: new Set<number>(["-v", "-R"].map((o) => first(`[[ ${o} a ]]`).X.Op)),
    };
    if (
      codes.arithTests.size !== 6 || codes.varTests.size !== 2 ||
      codes.transform === word0("echo ${x:-a}").Exp.Op
    ) throw new Error("mvdan-sh: unexpected operator codes");
    loaded = { syntax, parser, ops, codes };
    parserLoadMs = performance.now() - t0;
    return loaded;
  })();
  return loading.then(() => {});
}

/**
 * Parses `src` as Bash. Requires {@link loadShellParser} to have completed.
 * Never throws for bad input: a parse error is returned as `{ok: false}`.
 */
export function parseShell(
  src: string,
  home: string,
  opts: { fastPath?: boolean } = {},
): ParseResult {
  if (opts.fastPath !== false) {
    const fast = lexSimple(src);
    if (fast) return { ok: true, script: fast };
  }
  if (!loaded) throw new Error("parseShell: call loadShellParser() first");
  let file: Node;
  try {
    file = loaded.parser.Parse(src, "");
  } catch (e) {
    // deno-lint-ignore no-explicit-any
    const err = e as any;
    const msg = typeof err?.Error === "function" ? err.Error() : String(err?.message ?? err);
    return { ok: false, error: msg };
  }
  const script: ShellScript = {
    commands: [],
    decls: [],
    redirects: [],
    params: [],
    hazards: [],
    globs: [],
  };
  try {
    new Flattener(loaded, src, home, script).stmts(file.Stmts);
  } catch (e) {
    return { ok: false, error: `cannot analyse: ${(e as Error)?.message ?? e}` };
  }
  return { ok: true, script };
}
