/**
 * Path helpers shared by the fs tools: resolving model-given paths against the
 * session's working directory and showing paths back to the model.
 * @module
 */
import { isAbsolute, relative, resolve, sep as SEPARATOR } from "../../core/util/path.ts";
import type { ToolContext, ToolResult } from "../../sdk/mod.ts";

/** Absolute path of `p` (relative paths resolve against `cwd`; `~/` expands to $HOME). */
export function resolvePath(cwd: string, p: string): string {
  if (p === "~" || p.startsWith("~/")) {
    const home = Deno.env.get("HOME");
    if (home) return resolve(home, p.slice(2));
  }
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}

/** `abs` relative to `cwd` when inside it (POSIX separators), else `abs` itself. */
export function displayPath(cwd: string, abs: string): string {
  if (abs === cwd) return ".";
  const rel = relative(cwd, abs);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return abs;
  return SEPARATOR === "/" ? rel : rel.replaceAll(SEPARATOR, "/");
}

/** A user-level tool error (`isError: true`): the model sees `message`, nothing is thrown. */
export function toolError(message: string): ToolResult {
  return { content: message, isError: true };
}

/** A one-line description of a filesystem error for the model (no stack). */
export function describeFsError(err: unknown, shown: string): string {
  if (err instanceof Deno.errors.NotFound) return `File not found: ${shown}`;
  if (err instanceof Deno.errors.PermissionDenied) return `Permission denied: ${shown}`;
  if (err instanceof Deno.errors.IsADirectory) return `${shown} is a directory`;
  if (err instanceof Deno.errors.NotADirectory) return `${shown}: a parent is not a directory`;
  return `${shown}: ${err instanceof Error ? err.message : String(err)}`;
}

/** Reads a UTF-8 file through the ACP client when it offers `fs` (unsaved buffers), else from disk. */
export function readText(ctx: ToolContext, abs: string): Promise<string> {
  return ctx.host?.readTextFile ? ctx.host.readTextFile(abs) : Deno.readTextFile(abs);
}

/** Writes a UTF-8 file (creating parent folders) through the ACP client when it offers `fs`, else to disk. */
export async function writeText(ctx: ToolContext, abs: string, content: string): Promise<void> {
  if (ctx.host?.writeTextFile) return ctx.host.writeTextFile(abs, content);
  const dir = abs.slice(0, abs.lastIndexOf(SEPARATOR)) || SEPARATOR;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(abs, content);
}

/**
 * Why `abs` must not be opened, when it is a special file: a FIFO with no writer, a terminal or a
 * socket blocks the read forever, `/dev/zero` never ends, and a write to a FIFO waits for a reader.
 * Null for regular files, folders and missing paths (the callers handle those). `Deno.stat`
 * follows symlinks, so a link to `/dev/tty` counts as the device.
 */
export async function specialFile(abs: string, shown: string): Promise<string | null> {
  let st: Deno.FileInfo;
  try {
    st = await Deno.stat(abs);
  } catch {
    return null;
  }
  if (st.isFile || st.isDirectory) return null;
  const what = st.isFifo
    ? "a named pipe (FIFO)"
    : st.isSocket
    ? "a socket"
    : st.isCharDevice || st.isBlockDevice
    ? "a device"
    : "not a regular file";
  return `${shown} is ${what}; only regular files can be read or edited`;
}
