/**
 * Bounded waits of a session's turn and close: a promise raced against a time limit (ms) or
 * against an abort signal. Both resolve (never reject) whichever way the race ends; the
 * promise waited on keeps running.
 * @module
 */

/** Resolves when `p` settles or `ms` passed, whichever is first. */
export function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.then(() => {}, () => {}),
    new Promise<void>((r) => (timer = setTimeout(r, ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Resolves when `p` settles or `signal` aborts, whichever is first. */
export function untilAborted(p: Promise<unknown>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p.then(() => {}, () => {});
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    p.then(done, done);
  });
}
