/**
 * The helper module of the two-file example plugin (docs/plugins.md, "Tutorial:
 * a plugin in several files"): plain functions with no Coyote dependency, so
 * they are easy to unit-test.
 * @module
 */

/** Counts of one text: words (runs of letters/digits), lines, characters. */
export interface TextStats {
  words: number;
  lines: number;
  characters: number;
  /** The most frequent words, most frequent first (ties: alphabetical), lower-cased. */
  top: { word: string; count: number }[];
}

/** Computes {@link TextStats} of `text`; `topN` most frequent words (default 3). */
export function textStats(text: string, topN = 3): TextStats {
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  const counts = new Map<string, number>();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  const top = [...counts].map(([word, count]) => ({ word, count }))
    .sort((a, b) => b.count - a.count || a.word.localeCompare(b.word))
    .slice(0, topN);
  return {
    words: words.length,
    lines: text === "" ? 0 : text.split("\n").length,
    characters: [...text].length,
    top,
  };
}
