/**
 * How a word of the mvdan-sh tree becomes the text the program would receive:
 * quotes removed, backslash escapes resolved, `~` expanded; any part whose
 * value is only known at run time (`$X`, `$(…)`, unquoted `*`/`?`/`[…]`,
 * brace expansion) becomes the {@link WILD} character, which the matchers in
 * rules.ts treat as unknown. Pure functions on a word's parts and their node
 * types; the tree walk (flatten.ts) calls them.
 * @module
 */
import { WILD } from "../rules.ts";

/** A node of the mvdan-sh tree (a GopherJS object whose fields are getters). */
// deno-lint-ignore no-explicit-any
export type Node = any;

/** True when unquoted literal text holds an unescaped glob character (`*`, `?`, `[…]`). */
export function hasGlobChar(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === "\\") i++;
    else if (c === "*" || c === "?") return true;
    else if (c === "[" && v.indexOf("]", i + 2) > i) return true;
  }
  return false;
}

/** Text of a word (its parts and their node types) as the program receives it; WILD for run-time values. */
export function wordText(parts: Node[], types: string[], home: string): string {
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
export function hasBraceExpansion(parts: Node[], types: string[]): boolean {
  // Build the word with quoted parts masked, then look for an unescaped, unquoted brace group.
  let s = "";
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (types[i] === "Lit") s += (p.Value as string).replace(/\\./gs, "__");
    else s += "_";
  }
  return /\{[^{}]*(,|\.\.)[^{}]*\}/.test(s);
}
