/**
 * POSIX path functions with `node:path`'s results (`join`, `resolve`, `relative`, `dirname`,
 * `basename`, `extname`, `normalize`, `isAbsolute`, `sep`), for the modules on the start path.
 *
 * Why not `node:path`: importing it loads Node's compatibility layer behind it (its win32 half
 * pulls `assert`, `util`, `internal/errors`, `inspect`): ≈ 6 ms of every start on this machine
 * (issue 22), for string functions. Why not an npm path library: the portable ones (pathe) turn
 * `\` into `/`, and on Linux and macOS `\` is an ordinary character of a file name — a guard or
 * sandbox decision must not see `a\b` as `a/b`. `tests/path_test.ts` compares every function
 * with `node:path`'s posix functions on a corpus, so the two cannot drift.
 * @module
 */

/** The path separator. */
export const sep = "/";

/** `.`/`..` and repeated `/` resolved in `p` (no leading slash handling; see {@link normalize}). */
function collapse(p: string, absolute: boolean): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(seg);
  }
  return out.join("/");
}

/** Whether `p` is absolute (starts with `/`). */
export function isAbsolute(p: string): boolean {
  return p.startsWith("/");
}

/** `p` with `.`, `..` and repeated slashes resolved; a trailing slash is kept; `""` → `"."`. */
export function normalize(p: string): string {
  if (p === "") return ".";
  const abs = isAbsolute(p);
  const trailing = p.endsWith("/");
  let body = collapse(p, abs);
  if (body === "" && !abs) body = ".";
  if (body !== "" && trailing) body += "/";
  return abs ? `/${body}` : body;
}

/** The parts joined with `/` and {@link normalize}d; empty parts are skipped; none → `"."`. */
export function join(...parts: string[]): string {
  const joined = parts.filter((x) => x !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/**
 * The absolute path of the parts, right to left until one is absolute, then the process's
 * working directory (`Deno.cwd()`); normalized, no trailing slash.
 */
export function resolve(...parts: string[]): string {
  let acc = "";
  for (let i = parts.length - 1; i >= 0 && !isAbsolute(acc); i--) {
    if (parts[i] === "") continue;
    acc = acc === "" ? parts[i] : `${parts[i]}/${acc}`;
  }
  if (!isAbsolute(acc)) acc = acc === "" ? Deno.cwd() : `${Deno.cwd()}/${acc}`;
  return `/${collapse(acc, true)}`;
}

/** The path from `from` to `to` (both resolved first); `""` when they are the same. */
export function relative(from: string, to: string): string {
  const a = resolve(from), b = resolve(to);
  if (a === b) return "";
  const fa = a === "/" ? [] : a.slice(1).split("/");
  const fb = b === "/" ? [] : b.slice(1).split("/");
  let i = 0;
  while (i < fa.length && i < fb.length && fa[i] === fb[i]) i++;
  return [...fa.slice(i).map(() => ".."), ...fb.slice(i)].join("/");
}

/** `p` without trailing slashes, except a root of slashes only (→ `/`). */
function trimEnd(p: string): string {
  let end = p.length;
  while (end > 1 && p[end - 1] === "/") end--;
  return p.slice(0, end);
}

/**
 * The folder part of `p`: everything before its last `/` once trailing slashes are dropped —
 * `/a/b` → `/a`, `a` → `.`, `/` → `/`, `a//b` → `a/`, `//a` → `//` (node:path's results).
 */
export function dirname(p: string): string {
  if (p === "") return ".";
  const t = trimEnd(p);
  if (t === "/") return "/";
  const i = t.lastIndexOf("/");
  if (i < 0) return ".";
  if (i === 0) return "/";
  if (i === 1 && t[0] === "/") return "//";
  return t.slice(0, i);
}

/**
 * The last part of `p` (trailing slashes ignored), without `ext` when it ends with it and is not
 * all of it; `ext` equal to the whole of `p` gives `""` (as node:path does). With `ext`, `p` is a
 * name or path without a trailing slash (node:path's results differ for `basename("/", "y")`).
 */
export function basename(p: string, ext?: string): string {
  if (ext && ext === p) return "";
  const t = trimEnd(p);
  if (t === "/") return "";
  const base = t.slice(t.lastIndexOf("/") + 1);
  if (ext !== undefined && ext !== base && base.endsWith(ext)) {
    return base.slice(0, base.length - ext.length);
  }
  return base;
}

/** The extension of the last part, from its last `.` (not a leading one): `a.tar.gz` → `.gz`. */
export function extname(p: string): string {
  const base = basename(p);
  const i = base.lastIndexOf(".");
  if (i <= 0 || (i === 1 && base === "..")) return "";
  return base.slice(i);
}
