/**
 * Shared by the benchmark modules: the result shape `bench/run.ts` prints and
 * the median they report.
 * @module
 */

/** One measured number. `target` is human text such as `≤ 60 ms`. */
export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  target?: string;
  pass?: boolean;
}

/** The median of `xs` (mean of the two middle values for an even count); NaN when empty. */
export function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
