/**
 * Small file helpers shared by the caches and config writers.
 * @module
 */
import { join } from "./path.ts";

/**
 * Writes `text` to `path` through a temporary file beside it and a rename, so a concurrent reader
 * sees the old file or the new one, never half of one. `mode` as `Deno.writeTextFile` takes it.
 * @throws what `Deno.writeTextFile` / `Deno.rename` throw (the temporary file is removed first).
 */
export async function writeTextAtomic(
  path: string,
  text: string,
  opts: { mode?: number } = {},
): Promise<void> {
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(tmp, text, opts.mode === undefined ? {} : { mode: opts.mode });
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}

/**
 * {@link writeTextAtomic}, synchronous (for callers on a synchronous path, such as the sandbox
 * profile's home scan cache).
 * @throws what `Deno.writeTextFileSync` / `Deno.renameSync` throw (the temporary file is removed first).
 */
export function writeTextAtomicSync(path: string, text: string): void {
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    Deno.writeTextFileSync(tmp, text);
    Deno.renameSync(tmp, path);
  } catch (e) {
    try {
      Deno.removeSync(tmp);
    } catch { /* never written */ }
    throw e;
  }
}

/**
 * Keeps the `keep` newest files (by mtime) of `dir` whose names match `pattern` and removes the
 * rest; `except` (a full path) is never removed. Best effort: errors are ignored.
 */
export async function keepNewest(
  dir: string,
  pattern: RegExp,
  keep: number,
  except?: string,
): Promise<void> {
  const entries: { name: string; mtime: number }[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !pattern.test(e.name)) continue;
      const st = await Deno.stat(join(dir, e.name)).catch(() => null);
      entries.push({ name: e.name, mtime: st?.mtime?.getTime() ?? 0 });
    }
  } catch {
    return;
  }
  entries.sort((a, b) => b.mtime - a.mtime);
  for (const e of entries.slice(keep)) {
    const p = join(dir, e.name);
    if (p !== except) await Deno.remove(p).catch(() => {});
  }
}

/** Whether anything exists at `p`, a dangling symlink included (`lstat`; never throws). */
export function lexistsSync(p: string): boolean {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Whether `p` is a file or a symlink to one (`stat`; false when absent or unreadable). */
export function isFileSync(p: string): boolean {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
}

/** Whether `p` is a directory or a symlink to one (`stat`; false when absent or unreadable). */
export function isDirSync(p: string): boolean {
  try {
    return Deno.statSync(p).isDirectory;
  } catch {
    return false;
  }
}
