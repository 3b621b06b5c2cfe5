/**
 * The guard's cheap fast path: {@link lexSimple} lexes the plainest command
 * lines (plain words, simple quotes, `|` `||` `&&` `;` `&`) into a
 * {@link ShellScript} without loading mvdan-sh; anything else goes to the
 * full parser (parse.ts).
 * @module
 */
import type { ShellCommand, ShellScript } from "./script.ts";

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
