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
