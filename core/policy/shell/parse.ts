/**
 * Shell parsing for the execute guard, on npm `mvdan-sh` (the GopherJS build
 * of mvdan/sh, a full POSIX/Bash parser; synchronous once loaded).
 *
 * The parser is loaded lazily by {@link loadShellParser} (a literal dynamic
 * import, so it stays out of start-up). {@link parseShell} turns a command
 * line into a flat {@link ShellScript}: every simple command anywhere in the
 * tree (pipelines, `&&`/`||`/`;` lists, subshells, blocks, `$(…)` and
 * backtick substitutions, process substitutions, heredoc bodies, function
 * bodies, loops, `if`/`case`), every redirection, every declaration
 * (`export`/`local`/`declare`…) and every parameter expansion.
 *
 * Words are reduced to the text the program would receive: quotes removed,
 * backslash escapes resolved, `~` expanded; any part whose value is only known
 * at run time (`$X`, `$(…)`, unquoted `*`/`?`/`[…]`, brace expansion) becomes
 * the {@link WILD} character, which the matchers in rules.ts treat as unknown.
 * @module
 */
import { WILD } from "../rules.ts";

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

/** The result of {@link parseShell}: a script, or the parser's error message. */
export type ParseResult = { ok: true; script: ShellScript } | { ok: false; error: string };

// deno-lint-ignore no-explicit-any
type Node = any;

interface Loaded {
  // deno-lint-ignore no-explicit-any
  syntax: any;
  parser: Node;
  ops: Map<number, string>;
  /** Operator codes calibrated from probes: `@` transformation, arithmetic `=`, `[[` arithmetic comparisons, `-v`/`-R`. */
  codes: { transform: number; assign: number; arithTests: Set<number>; varTests: Set<number> };
}

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

/**
 * Typed traversal of the mvdan-sh tree. mvdan-sh wraps every Go node in a JS
 * object whose fields are getters, so `syntax.Walk` and generic property
 * probing are slow (≈35 µs per node); visiting only the fields each node type
 * has keeps a verdict well under a millisecond. An unknown node type throws,
 * which the caller turns into "cannot analyse" (fail closed).
 */
class Flattener {
  #nodeType: (n: Node) => string;
  #ops: Map<number, string>;
  #codes: Loaded["codes"];
  #slice: (n: Node) => string;
  /** Whether the last word visited by {@link word} holds an unquoted glob / a run-time value. */
  #glob = false;
  #dynamic = false;
  constructor(l: Loaded, src: string, private home: string, private out: ShellScript) {
    this.#nodeType = l.syntax.NodeType;
    this.#ops = l.ops;
    this.#codes = l.codes;
    this.#slice = makeSlicer(src);
  }

  hazard(what: string, n: Node): void {
    this.out.hazards!.push({ what, text: this.#slice(n) });
  }

  /** Visits a word Bash subjects to filename expansion, recording it when it holds a glob. */
  globbed(w: Node): string {
    const t = this.word(w);
    if (this.#glob) this.out.globs!.push({ text: t, dynamic: this.#dynamic });
    return t;
  }

  stmts(list: Node[] | null | undefined): void {
    if (list) { for (const s of list) this.stmt(s); }
  }

  stmt(s: Node): void {
    if (!s) return;
    const cmd = s.Cmd;
    if (cmd) this.cmd(cmd);
    const redirs = s.Redirs;
    if (redirs) { for (const r of redirs) this.redirect(r); }
  }

  cmd(c: Node): void {
    const t = this.#nodeType(c);
    switch (t) {
      case "CallExpr": {
        const assigns: string[] = [];
        for (const a of c.Assigns ?? []) {
          const name = a.Name;
          if (name) assigns.push(name.Value);
          this.assign(a);
        }
        const words = (c.Args ?? []).map((w: Node) => this.globbed(w));
        this.out.commands.push({ words, assigns, text: this.#slice(c) });
        return;
      }
      case "DeclClause": {
        const names: string[] = [];
        const flags: string[] = [];
        let arrays = false;
        for (const a of c.Args ?? []) {
          const name = a.Name;
          if (name) names.push(name.Value);
          else if (a.Value) {
            const f = this.word(a.Value);
            flags.push(f);
            // `declare "a[$(cmd)]=1"`, `export "$x"`: a computed name or subscript is evaluated.
            if (!/^[-+][a-zA-Z]+$/.test(f)) {
              this.hazard("a computed name given to a declaration", a);
            } else if (/[aA]/.test(f)) arrays = true;
            else if (/^-[a-zA-Z]*[in]/.test(f)) {
              // -i: every later assignment is arithmetic; -n: a name reference is evaluated.
              this.hazard(`declaration option ${f} (evaluates assigned values)`, a);
            }
            continue;
          }
          // `declare -a x='(… $(cmd) …)'`: a quoted compound assignment is parsed again.
          if (arrays && a.Value && !a.Array) this.hazard("a quoted array assignment", a);
          this.assign(a);
        }
        this.out.decls.push({
          variant: c.Variant?.Value ?? "declare",
          names,
          flags,
          text: this.#slice(c),
        });
        return;
      }
      case "IfClause":
        this.stmts(c.Cond);
        this.stmts(c.Then);
        if (c.Else) this.cmd(c.Else);
        return;
      case "WhileClause":
        this.stmts(c.Cond);
        this.stmts(c.Do);
        return;
      case "ForClause": {
        const loop = c.Loop;
        if (loop) {
          const lt = this.#nodeType(loop);
          if (lt === "WordIter") { for (const w of loop.Items ?? []) this.globbed(w); }
          else if (lt === "CStyleLoop") {
            this.arithm(loop.Init);
            this.arithm(loop.Cond);
            this.arithm(loop.Post);
          } else throw new Error(`unsupported loop ${lt}`);
        }
        this.stmts(c.Do);
        return;
      }
      case "CaseClause":
        if (c.Word) this.word(c.Word);
        for (const item of c.Items ?? []) {
          for (const w of item.Patterns ?? []) this.word(w);
          this.stmts(item.Stmts);
        }
        return;
      case "Block":
      case "Subshell":
        this.stmts(c.Stmts);
        return;
      case "BinaryCmd":
        this.stmt(c.X);
        this.stmt(c.Y);
        return;
      case "FuncDecl":
        this.stmt(c.Body);
        return;
      case "ArithmCmd":
        this.arithm(c.X);
        return;
      case "TestClause":
        this.test(c.X);
        return;
      case "LetClause":
        for (const x of c.Exprs ?? []) this.arithm(x);
        return;
      case "TimeClause":
      case "CoprocClause":
        this.stmt(c.Stmt);
        return;
      default:
        throw new Error(`unsupported command node ${t}`);
    }
  }

  redirect(r: Node): void {
    const op = this.#ops.get(r.Op) ?? "?";
    const heredoc = op === "<<" || op === "<<-" || op === "<<<";
    const w = r.Word;
    const target = w ? this.word(w) : undefined;
    if (r.Hdoc) this.word(r.Hdoc);
    let access: ShellRedirect["access"] = "none";
    if (op === ">" || op === ">>" || op === ">|" || op === "&>" || op === "&>>") access = "write";
    else if (op === "<") access = "read";
    else if (op === "<>" || op === "?") access = "readwrite";
    else if (op === ">&" || op === "<&") {
      // `2>&1`, `>&-` duplicate/close descriptors; `>&file` writes a file.
      if (target !== undefined && !/^(\d+-?|-)$/.test(target)) {
        access = op === ">&" ? "write" : "read";
      }
    }
    this.out.redirects.push({
      op,
      access,
      target: heredoc ? undefined : target,
      text: this.#slice(r),
    });
  }

  assign(a: Node): void {
    if (a.Index) this.arithm(a.Index);
    if (a.Value) this.word(a.Value);
    const arr = a.Array;
    if (arr) {
      for (const e of arr.Elems ?? []) {
        if (e.Index) this.arithm(e.Index);
        if (e.Value) this.globbed(e.Value);
      }
    }
  }

  /**
   * Visits an arithmetic expression. Bash evaluates the value of every name
   * (and of every expanded word) in it as an expression again, so
   * `x='a[$(cmd)]'; echo $((x))` runs `cmd`: any operand other than a numeric
   * literal is a hazard, except the target of a plain `name = …`.
   */
  arithm(x: Node): void {
    if (!x) return;
    const t = this.#nodeType(x);
    switch (t) {
      case "Word":
        this.arithWord(x);
        return;
      case "BinaryArithm":
        if (x.Op === this.#codes.assign && this.#nodeType(x.X) === "Word" && plainName(x.X)) {
          this.word(x.X);
        } else this.arithm(x.X);
        this.arithm(x.Y);
        return;
      case "UnaryArithm":
      case "ParenArithm":
        this.arithm(x.X);
        return;
      default:
        throw new Error(`unsupported arithmetic node ${t}`);
    }
  }

  /** A word in an arithmetic context: a numeric literal, or a hazard. */
  arithWord(w: Node, extra?: RegExp): void {
    const text = this.word(w);
    const parts = w?.Parts ?? [];
    const lit = parts.length === 1 && this.#nodeType(parts[0]) === "Lit";
    if (lit && (NUMERIC.test(text) || (extra?.test(parts[0].Value) ?? false))) return;
    if (parts.length === 1 && this.#numericParam(parts[0])) return;
    this.hazard("arithmetic on a value that is not a number literal", w);
  }

  /**
   * A parameter expansion that is always a number: a length `${#x}` (also
   * `${#a[@]}`), or `$#`, `$?`, `$$`, `$!` (they cannot be assigned).
   */
  #numericParam(p: Node): boolean {
    if (this.#nodeType(p) !== "ParamExp" || p.Excl || p.Exp || p.Slice || p.Repl) return false;
    if (p.Length) return true;
    return !p.Index && /^[#?$!]$/.test(p.Param?.Value ?? "");
  }

  test(x: Node): void {
    if (!x) return;
    const t = this.#nodeType(x);
    switch (t) {
      case "Word":
        this.word(x);
        return;
      case "BinaryTest":
        if (this.#codes.arithTests.has(x.Op)) {
          // `[[ A -eq B ]]` evaluates A and B as arithmetic expressions.
          this.arithWord(x.X);
          this.arithWord(x.Y);
          return;
        }
        this.test(x.X);
        this.test(x.Y);
        return;
      case "UnaryTest":
        if (this.#codes.varTests.has(x.Op) && !plainName(x.X)) {
          this.hazard("[[ -v ]] on a subscript (evaluated as arithmetic)", x);
        }
        this.test(x.X);
        return;
      case "ParenTest":
        this.test(x.X);
        return;
      default:
        throw new Error(`unsupported test node ${t}`);
    }
  }

  /** Visits a word's nested commands and returns its text (WILD for run-time values). */
  word(word: Node): string {
    const parts: Node[] = word?.Parts ?? [];
    const types = parts.map((p) => this.#nodeType(p));
    for (let i = 0; i < parts.length; i++) this.part(parts[i], types[i]);
    const glob = types.some((t, i) =>
      t === "ExtGlob" || (t === "Lit" && hasGlobChar(parts[i].Value as string))
    );
    const text = wordText(parts, types, this.home);
    this.#glob = glob;
    // A brace expansion (`{/etc,/root}/*`) makes the folder the glob lists unknown too.
    this.#dynamic = (glob && text.startsWith(WILD) && hasBraceExpansion(parts, types)) ||
      types.some((t, i) =>
        t === "Lit"
          ? i === 0 && /^~[^/]/.test(parts[i].Value)
          : t === "DblQuoted"
          ? (parts[i].Parts ?? []).some((q: Node) => this.#nodeType(q) !== "Lit")
          : t !== "SglQuoted" && t !== "ExtGlob"
      );
    return text;
  }

  part(p: Node, t: string): void {
    switch (t) {
      case "Lit":
      case "SglQuoted":
        return;
      case "ExtGlob":
        // Bash expands `$(…)`, `$x` and backquotes inside `@(…)`; mvdan-sh keeps them as text.
        if (/[$`]/.test(p.Pattern?.Value ?? "")) {
          this.hazard("an expansion inside an extended glob", p);
        }
        return;
      case "DblQuoted":
        // `$"…"` is looked up in a message catalogue and the translation is expanded again.
        if (p.Dollar) this.hazard('a $"…" translated string', p);
        for (const q of p.Parts ?? []) this.part(q, this.#nodeType(q));
        return;
      case "ParamExp": {
        const name = p.Excl || !p.Param ? undefined : p.Param.Value;
        this.out.params.push({ name });
        if (p.Excl) this.hazard("indirect expansion ${!…}", p);
        if (p.Exp && p.Exp.Op === this.#codes.transform) {
          this.hazard("a transformation operator ${…@…}", p);
        }
        if (p.Index) {
          if (this.#nodeType(p.Index) === "Word") this.arithWord(p.Index, /^[@*]$/);
          else this.arithm(p.Index);
        }
        const sl = p.Slice;
        if (sl) {
          this.arithm(sl.Offset);
          this.arithm(sl.Length);
        }
        const repl = p.Repl;
        if (repl) {
          if (repl.Orig) this.word(repl.Orig);
          if (repl.With) this.word(repl.With);
        }
        const exp = p.Exp;
        if (exp?.Word) this.word(exp.Word);
        return;
      }
      case "CmdSubst":
      case "ProcSubst":
        this.stmts(p.Stmts);
        return;
      case "ArithmExp":
        this.arithm(p.X);
        return;
      case "BraceExp":
        for (const w of p.Elems ?? []) this.word(w);
        return;
      default:
        throw new Error(`unsupported word part ${t}`);
    }
  }
}

const RESERVED = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "case",
  "esac",
  "for",
  "select",
  "while",
  "until",
  "do",
  "done",
  "in",
  "function",
  "time",
  "coproc",
  "{",
  "}",
  "!",
  "[[",
  "]]",
  // declaration builtins and `let` have their own node types in mvdan-sh
  "export",
  "local",
  "declare",
  "readonly",
  "typeset",
  "nameref",
  "let",
]);
// Characters that are literal when unquoted in Bash (no expansion, no globbing, no syntax).
const PLAIN = /[A-Za-z0-9_\-.\/=:,@%+]/;

/**
 * Fast path for the plainest command lines, where Bash's grammar is regular:
 * words of plain characters and '…' / "…" quotes (double quotes without `$`,
 * backquote, backslash or `!`), separated by blanks and joined by `|`, `||`,
 * `&&`, `;`, `&`. Anything else (any expansion, glob, redirection, keyword,
 * comment, newline, non-ASCII) returns undefined and goes to mvdan-sh. The
 * result equals mvdan-sh's for every input it accepts; tests/guard_test.ts
 * checks that differentially on a corpus and on random command lines.
 * mvdan-sh wraps each Go node in getter objects, which makes a full parse cost
 * 0.1–1 ms; this keeps ordinary verdicts in the microseconds.
 */
export function lexSimple(src: string): ShellScript | undefined {
  const commands: ShellCommand[] = [];
  let raw: string[] = [];
  let words: string[] = [];
  let cur = "";
  let curRaw = "";
  let inWord = false;
  let start = 0;
  let lastOp = "start";
  const endWord = () => {
    if (!inWord) return;
    words.push(cur);
    raw.push(curRaw);
    cur = "";
    curRaw = "";
    inWord = false;
  };
  const endCommand = (end: number): boolean => {
    endWord();
    if (!words.length) return false;
    const assigns: string[] = [];
    let k = 0;
    for (; k < raw.length; k++) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(\+?)=/.exec(raw[k]);
      if (!m) break;
      if (m[2]) return false;
      assigns.push(m[1]);
    }
    if (raw.some((r) => RESERVED.has(r))) return false;
    commands.push({ words: words.slice(k), assigns, text: src.slice(start, end).trim() });
    words = [];
    raw = [];
    return true;
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === " " || c === "\t") {
      endWord();
    } else if (c === "'") {
      const j = src.indexOf("'", i + 1);
      if (j < 0) return undefined;
      cur += src.slice(i + 1, j);
      curRaw += src.slice(i, j + 1);
      inWord = true;
      i = j;
    } else if (c === '"') {
      const j = src.indexOf('"', i + 1);
      if (j < 0) return undefined;
      const body = src.slice(i + 1, j);
      if (/[$`\\!]/.test(body)) return undefined;
      cur += body;
      curRaw += src.slice(i, j + 1);
      inWord = true;
      i = j;
    } else if (c === "|" || c === "&" || c === ";") {
      let op = c;
      if ((c === "|" || c === "&") && src[i + 1] === c) op += c;
      const next = src[i + op.length];
      if (next === "|" || next === "&" || next === ";") return undefined;
      if (!endCommand(i)) return undefined;
      lastOp = op;
      i += op.length - 1;
      start = i + 1;
    } else if (PLAIN.test(c)) {
      cur += c;
      curRaw += c;
      inWord = true;
    } else return undefined;
  }
  endWord();
  if (words.length) {
    if (!endCommand(src.length)) return undefined;
  } else if (lastOp !== ";" && lastOp !== "&") return undefined;
  if (!commands.length) return undefined;
  return { commands, decls: [], redirects: [], params: [], hazards: [], globs: [] };
}

/** A numeric literal of Bash arithmetic: decimal, octal, `0x…`, `BASE#DIGITS`. */
const NUMERIC = /^(0[xX][0-9a-fA-F]+|[0-9]+(#[0-9a-zA-Z@_]+)?)$/;

/** True when `w` is one literal identifier (no subscript, no expansion). */
function plainName(w: Node): boolean {
  const parts = w?.Parts ?? [];
  return parts.length === 1 && typeof parts[0].Value === "string" && parts[0].Parts === undefined &&
    /^[A-Za-z_][A-Za-z0-9_]*$/.test(parts[0].Value);
}

/** True when unquoted literal text holds an unescaped glob character (`*`, `?`, `[…]`). */
function hasGlobChar(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === "\\") i++;
    else if (c === "*" || c === "?") return true;
    else if (c === "[" && v.indexOf("]", i + 2) > i) return true;
  }
  return false;
}

/** Source text of a node; mvdan offsets are UTF-8 byte offsets. */
function makeSlicer(src: string): (n: Node) => string {
  // deno-lint-ignore no-control-regex
  const ascii = /^[\x00-\x7f]*$/.test(src);
  const bytes = ascii ? undefined : new TextEncoder().encode(src);
  const dec = new TextDecoder();
  return (n: Node) => {
    try {
      const a = n.Pos().Offset();
      const b = n.End().Offset();
      return (ascii ? src.slice(a, b) : dec.decode(bytes!.subarray(a, b))).trim();
    } catch {
      return src;
    }
  };
}

/** Text of a word (its parts and their node types) as the program receives it; WILD for run-time values. */
function wordText(parts: Node[], types: string[], home: string): string {
  let out = "";
  let braceCandidate = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    switch (types[i]) {
      case "Lit": {
        let v: string = part.Value;
        if (i === 0 && v.startsWith("~")) {
          const m = /^~([^/]*)(\/.*)?$/s.exec(v)!;
          if (m[1] === "") v = home.replace(/([\\*?[])/g, "\\$1") + (m[2] ?? "");
          else v = WILD + (m[2] ?? "");
        }
        if (/[{}]/.test(v)) braceCandidate = true;
        out += unquotedLit(v);
        break;
      }
      case "SglQuoted":
        out += part.Dollar ? ansiC(part.Value) : part.Value;
        break;
      case "DblQuoted":
        for (const q of part.Parts ?? []) {
          out += typeof q.Value === "string" && q.Parts === undefined ? dquotedLit(q.Value) : WILD;
        }
        break;
      case "ProcSubst":
        // Bash passes a pipe's name: `/dev/fd/63`.
        out += `/dev/fd/${WILD}`;
        break;
      default:
        // ParamExp, CmdSubst, ArithmExp, ExtGlob, BraceExp, …
        out += WILD;
    }
  }
  if (braceCandidate && hasBraceExpansion(parts, types)) return WILD;
  return out;
}

/** Unquoted literal: `\x` → `x`, backslash-newline removed, unescaped glob characters → WILD. */
function unquotedLit(v: string): string {
  let out = "";
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === "\\") {
      if (i + 1 < v.length) {
        if (v[i + 1] !== "\n") out += v[i + 1];
        i++;
      }
    } else if (c === "*" || c === "?") out += WILD;
    else if (c === "[" && v.indexOf("]", i + 2) > i) {
      out += WILD;
      i = v.indexOf("]", i + 2);
    } else out += c;
  }
  return out;
}

/** Literal inside double quotes: only `\$ \` \" \\ \newline` are escapes. */
function dquotedLit(v: string): string {
  return v.replace(/\\([$`"\\\n])/g, (_, c) => (c === "\n" ? "" : c));
}

/** Decodes `$'…'` (Bash ANSI-C quoting); unknown escapes become WILD. */
function ansiC(v: string): string {
  const simple: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    a: "\x07",
    b: "\b",
    e: "\x1b",
    E: "\x1b",
    f: "\f",
    v: "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
  };
  return v.replace(
    /\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_, e: string) => {
      if (e in simple) return simple[e];
      if (e[0] === "x" || e[0] === "u" || e[0] === "U") {
        const cp = parseInt(e.slice(1), 16);
        return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : WILD;
      }
      if (/^[0-7]+$/.test(e)) {
        const cp = parseInt(e, 8);
        return cp > 0 ? String.fromCharCode(cp) : WILD;
      }
      return WILD;
    },
  );
}

/** True when unquoted text of the word holds `{…,…}` or `{a..b}` (Bash brace expansion). */
function hasBraceExpansion(parts: Node[], types: string[]): boolean {
  // Build the word with quoted parts masked, then look for an unescaped, unquoted brace group.
  let s = "";
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (types[i] === "Lit") s += (p.Value as string).replace(/\\./gs, "__");
    else s += "_";
  }
  return /\{[^{}]*(,|\.\.)[^{}]*\}/.test(s);
}
