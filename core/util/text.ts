/**
 * Small text helpers shared across modules.
 * @module
 */

/**
 * Orders strings by UTF-16 code unit (`Array.prototype.sort`'s default order) as a comparator:
 * deterministic whatever the locale. Used instead of `localeCompare`, whose first call builds
 * V8's ICU collator (~7 ms, on the start-up path of every run that lists agents or sessions).
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The known key nearest to a typo'd one: optimal string alignment distance (Levenshtein plus
 * adjacent transpositions, so `modle` → `model` is 1) of at most 2, and less than the typo's
 * length; undefined when nothing is that close.
 */
export function closest(typo: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    const d = osaDistance(typo.toLowerCase(), k.toLowerCase());
    if (d < bestD && d < typo.length) [best, bestD] = [k, d];
  }
  return best;
}

/** Optimal string alignment distance: Levenshtein plus adjacent transpositions. */
export function osaDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** For messages: the nearest known name to `name`, as ` (did you mean "x"?)`, or "". */
export function didYouMean(name: string, known: string[]): string {
  const near = closest(name, known);
  return near ? ` (did you mean "${near}"?)` : "";
}
