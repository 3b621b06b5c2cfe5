/**
 * Protected names inside the workspace at every depth (docs/permissions.md "The OS sandbox"):
 * `.git`, `.coyote`, `.mcp.json`, compared case-insensitively. Git runs hooks and
 * `core.fsmonitor` from the `.git` of the folder it runs in, and Coyote started in a sub-folder
 * loads that folder's `.coyote/` (plugins, permission rules) and `.mcp.json` (servers) — trusted
 * when a parent folder is — so a sandboxed command must not write one at ANY depth: existing ones
 * are mounted read-only ({@link findProtected} feeds `deriveProfile`), and the ones a command
 * creates are removed after it (core/policy/sandbox/mod.ts compares a scan before and after).
 *
 * The scan walks directories only (symlinks are not followed, protected folders are not
 * entered, `node_modules` is skipped) and stops after {@link PROTECTED_SCAN_LIMIT} directories.
 * @module
 */

/** Names Coyote and git load code or rules from (lower case). */
export const PROTECTED_NAMES: ReadonlySet<string> = new Set([".git", ".coyote", ".mcp.json"]);

/** Directories examined per scan at most (a scan of a few thousand takes milliseconds). */
export const PROTECTED_SCAN_LIMIT = 20_000;

/**
 * Absolute paths (as found under `root`, not resolved) of every entry named like a protected
 * name, any case, at any depth below `root`. Unreadable directories are skipped.
 */
export function findProtected(root: string, limit = PROTECTED_SCAN_LIMIT): string[] {
  const out: string[] = [];
  const stack = [root];
  let scanned = 0;
  while (stack.length && scanned < limit) {
    const dir = stack.pop()!;
    scanned++;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = `${dir}/${e.name}`;
      if (PROTECTED_NAMES.has(e.name.toLowerCase())) out.push(path);
      else if (e.isDirectory && e.name !== "node_modules") stack.push(path);
    }
  }
  return out;
}
