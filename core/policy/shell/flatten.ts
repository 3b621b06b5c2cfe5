/**
 * The walk over the mvdan-sh tree that flattens a parsed command line into a
 * {@link ShellScript} ({@link Flattener}): every simple command anywhere in
 * the tree (pipelines, `&&`/`||`/`;` lists, subshells, blocks, `$(…)` and
 * backtick substitutions, process substitutions, heredoc bodies, function
 * bodies, loops, `if`/`case`), every redirection, every declaration
 * (`export`/`local`/`declare`…), every parameter expansion, and the
 * constructs where Bash evaluates text as code (hazards, script.ts). Word
 * text comes from words.ts; the operator codes it compares with are
 * calibrated when parse.ts loads the parser ({@link Loaded}).
 * @module
 */
import { WILD } from "../rules.ts";
import type { ShellRedirect, ShellScript } from "./script.ts";
import { hasBraceExpansion, hasGlobChar, type Node, wordText } from "./words.ts";

/** The loaded mvdan-sh: its `syntax` package, a Bash parser and the operator codes calibrated by parse.ts. */
export interface Loaded {
  // deno-lint-ignore no-explicit-any
  syntax: any;
  parser: Node;
  ops: Map<number, string>;
  /** Operator codes calibrated from probes: `@` transformation, arithmetic `=`, `[[` arithmetic comparisons, `-v`/`-R`. */
  codes: { transform: number; assign: number; arithTests: Set<number>; varTests: Set<number> };
}

/**
 * Typed traversal of the mvdan-sh tree. mvdan-sh wraps every Go node in a JS
 * object whose fields are getters, so `syntax.Walk` and generic property
 * probing are slow (≈35 µs per node); visiting only the fields each node type
 * has keeps a verdict well under a millisecond. An unknown node type throws,
 * which the caller turns into "cannot analyse" (fail closed).
 */
export class Flattener {
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
          if (lt === "WordIter") {
            // `for PATH in ./bin; do ls; done` assigns its variable as `PATH=./bin` does.
            const name = loop.Name?.Value;
            if (name) {
              this.out.commands.push({ words: [], assigns: [name], text: this.#slice(loop) });
            }
            for (const w of loop.Items ?? []) this.globbed(w);
          } else if (lt === "CStyleLoop") {
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

/** A numeric literal of Bash arithmetic: decimal, octal, `0x…`, `BASE#DIGITS`. */
const NUMERIC = /^(0[xX][0-9a-fA-F]+|[0-9]+(#[0-9a-zA-Z@_]+)?)$/;

/** True when `w` is one literal identifier (no subscript, no expansion). */
function plainName(w: Node): boolean {
  const parts = w?.Parts ?? [];
  return parts.length === 1 && typeof parts[0].Value === "string" && parts[0].Parts === undefined &&
    /^[A-Za-z_][A-Za-z0-9_]*$/.test(parts[0].Value);
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
