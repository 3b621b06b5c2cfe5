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

let segmenter: Intl.Segmenter | undefined;

/**
 * The index at or before `end` (UTF-16 code units) where `s` can be cut without splitting a
 * character: never between the two halves of a surrogate pair (a lone surrogate is invalid
 * Unicode that strict JSON servers reject), and, looking 32 code units around `end`, not inside a
 * grapheme cluster (`Intl.Segmenter`, created at the first cut: an emoji with its skin tone or
 * ZWJ sequence, a letter with its combining marks). A cluster longer than that window is cut
 * on a code point boundary instead. `end` is clamped to `[0, s.length]`.
 */
export function cutIndex(s: string, end: number): number {
  if (end >= s.length) return s.length;
  if (end <= 0) return 0;
  let at = end;
  const c = s.charCodeAt(at);
  if (c >= 0xdc00 && c <= 0xdfff && at > 0) {
    const p = s.charCodeAt(at - 1);
    if (p >= 0xd800 && p <= 0xdbff) at--;
  }
  try {
    segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
    const from = Math.max(0, at - 32);
    let best = -1;
    for (const seg of segmenter.segment(s.slice(from, Math.min(s.length, at + 32)))) {
      const i = from + seg.index;
      if (i > at) break;
      best = i;
    }
    if (best > from || from === 0) return Math.max(0, best);
  } catch { /* no Intl.Segmenter: the code point cut stands */ }
  return at;
}

/** At most `max` code units of `s` from its start, cut where {@link cutIndex} allows. */
export function headText(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, cutIndex(s, max));
}

/** `s` from `start` on, the start moved back to a character boundary ({@link cutIndex}). */
export function textFrom(s: string, start: number): string {
  return start <= 0 ? s : s.slice(cutIndex(s, start));
}

/** The last at most `max` code units of `s`, starting at a boundary {@link cutIndex} allows. */
export function tailText(s: string, max: number): string {
  if (s.length <= max) return s;
  const want = s.length - max;
  for (let i = want; i < Math.min(s.length, want + 33); i++) {
    if (cutIndex(s, i) === i) return s.slice(i);
  }
  const c = s.charCodeAt(want);
  return s.slice(c >= 0xdc00 && c <= 0xdfff ? want + 1 : want);
}
