/**
 * Package trees inside the home's toolchain stores (./home_view.ts `scanSecrets`): folders a
 * build unpacked — the scan does not go into them, and their names (an npm package `cookie`) are
 * not read as credentials.
 * @module
 */

/**
 * Entries that make a folder a package or an install prefix (`package.json`, `Cargo.toml`,
 * `go.mod`, `pyproject.toml`, `setup.py`, `*.gemspec`, `pom.xml`; `bin` next to `lib`): files a
 * build unpacked, not a place a program keeps a profile — the scan checks its git config and does
 * not go deeper.
 */
export function packageFolder(names: ReadonlySet<string>, entries: Deno.DirEntry[]): boolean {
  for (
    const n of ["package.json", "Cargo.toml", "go.mod", "pyproject.toml", "setup.py", "pom.xml"]
  ) {
    if (names.has(n)) return true;
  }
  return (names.has("bin") && names.has("lib")) || entries.some((e) => e.name.endsWith(".gemspec"));
}

/**
 * Whether folder `p` is a package (see {@link packageFolder}) or holds package versions (Deno's
 * and pnpm's `<name>/<version>/package.json`): an npm package named `cookie` or
 * `google-auth-library` is code a build needs, not a credential, whatever its name says.
 */
export function packageTree(p: string): boolean {
  const isPkg = (dir: string) => {
    try {
      const entries = [...Deno.readDirSync(dir)];
      return packageFolder(new Set(entries.map((e) => e.name)), entries);
    } catch {
      return false;
    }
  };
  if (isPkg(p)) return true;
  try {
    if (Deno.statSync(`${p}/registry.json`).isFile) return true; // Deno's npm cache: a package's metadata
  } catch { /* none */ }
  try {
    let n = 0;
    for (const e of Deno.readDirSync(p)) {
      if (e.isDirectory && isPkg(`${p}/${e.name}`)) return true;
      if (++n >= 3) break;
    }
  } catch { /* unreadable: not a package */ }
  return false;
}
