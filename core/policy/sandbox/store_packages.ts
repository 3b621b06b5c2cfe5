/**
 * Package trees inside the home's toolchain stores (./home_scan.ts `scanSecrets`): folders a
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
 * `rel`: `p` relative to the store; every folder it lists goes through `listDir` and every other
 * path it stats is passed to `note` first (the scan's cache records them: ./home_scan.ts).
 */
export function packageTree(
  p: string,
  rel: string,
  listDir: (abs: string, rel: string) => Deno.DirEntry[],
  note: (rel: string, follow: boolean) => void,
): boolean {
  const isPkg = (dir: string, r: string) => {
    try {
      const entries = listDir(dir, r);
      return packageFolder(new Set(entries.map((e) => e.name)), entries);
    } catch {
      return false;
    }
  };
  if (isPkg(p, rel)) return true;
  note(`${rel}/registry.json`, true);
  try {
    if (Deno.statSync(`${p}/registry.json`).isFile) return true; // Deno's npm cache: a package's metadata
  } catch { /* none */ }
  try {
    let n = 0;
    for (const e of listDir(p, rel)) {
      if (e.isDirectory && isPkg(`${p}/${e.name}`, `${rel}/${e.name}`)) return true;
      if (++n >= 3) break;
    }
  } catch { /* unreadable: not a package */ }
  return false;
}
