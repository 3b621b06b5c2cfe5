/**
 * npm `picomatch` for `fs_glob` and `fs_grep`'s `glob`, loaded on first use.
 * @module
 */

type PicomatchFn = (
  glob: string,
  opts?: Record<string, unknown>,
) => (path: string) => boolean;
let picomatchMod:
  | { pm: PicomatchFn; scan: (g: string) => { base: string; glob: string } }
  | undefined;
/** npm `picomatch`, loaded lazily (kept out of the start-up path). */
export async function picomatch() {
  if (!picomatchMod) {
    const mod = await import("picomatch");
    // deno-lint-ignore no-explicit-any
    const pm = ((mod as any).default ?? mod) as PicomatchFn & {
      scan: (g: string) => { base: string; glob: string };
    };
    picomatchMod = { pm, scan: (g) => pm.scan(g) };
  }
  return picomatchMod;
}
