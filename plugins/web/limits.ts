/**
 * Limits of the `web` tools' inputs, shared by the tools (./mod.ts, ./search.ts) and their zod
 * schemas (./inputs.ts, which the tools import as types only).
 * @module
 */

/** Largest `max_chars` of `web_fetch` (chars). */
export const MAX_MAX_CHARS = 100_000;
/** `web_search` results when neither `max_results` nor config `web_search.max_results` says. */
export const DEFAULT_RESULTS = 5;
/** Largest `max_results` of `web_search`. */
export const MAX_RESULTS = 20;
