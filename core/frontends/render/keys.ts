/**
 * Keys one at a time for the terminal pickers (core/frontends/slash/picker.ts) and the one-key
 * permission prompt (./permission.ts). A terminal read can carry several keys (`tmux send-keys
 * Down Enter`, a fast typist, SSH): they are split with node:readline's own key decoder
 * (`emitKeypressEvents`), the one the REPL's line editor uses — escape sequences (CSI, SS3),
 * UTF-8 characters (also split across reads), Enter — and handed over in order.
 *
 * - One-shot runs (`coyote -r`'s picker, text mode's permission prompt) read stdin themselves:
 *   {@link openTerminalKeys}.
 * - The REPL gets split keys from its line editor's `keypress` events: {@link KeyHandoff} keeps the
 *   keys of one read for the reader that took the first of them.
 * @module
 */
import { EventEmitter } from "node:events";
import { emitKeypressEvents } from "node:readline";

/**
 * A lone Esc is told from an escape sequence after this long (ms), as in the REPL's line editor
 * (core/frontends/repl/mod.ts `escapeCodeTimeout`).
 */
export const ESCAPE_TIMEOUT_MS = 50;

/**
 * A decoder of terminal input: feed it the bytes of each read; `onKey` gets each key's bytes as a
 * string (`"\x1b[B"`, `"\r"`, `"é"`), in order, synchronously — except a lone Esc at the end of a
 * read, which comes {@link ESCAPE_TIMEOUT_MS} later unless more bytes continue it.
 */
export function keySplitter(onKey: (key: string) => void): (bytes: Uint8Array) => void {
  const input = new EventEmitter();
  emitKeypressEvents(input as never, { escapeCodeTimeout: ESCAPE_TIMEOUT_MS } as never);
  input.on("keypress", (str: string | undefined, key: { sequence?: string } | undefined) => {
    const k = key?.sequence ?? str;
    if (k) onKey(k);
  });
  return (bytes) => void input.emit("data", bytes);
}

/** Keys read from this process's stdin (see {@link openTerminalKeys}). */
export interface TerminalKeys {
  /** The next key; null at end of input, after {@link close}, or when `signal` aborts. */
  read(signal?: AbortSignal): Promise<string | null>;
  /** Restores the terminal mode; keys not read yet are dropped (no type-ahead into a later prompt). */
  close(): void;
}

// One read of stdin at a time, shared: a read still pending when a reader gave up (an abort, a
// lone Esc) hands its bytes to the next reader instead of losing them.
let pending: Promise<Uint8Array | null> | null = null;
function stdinRead(): Promise<Uint8Array | null> {
  if (!pending) {
    const buf = new Uint8Array(256);
    pending = Deno.stdin.read(buf).then((n) => (n === null ? null : buf.slice(0, n)));
  }
  return pending;
}

/**
 * Reads keys from stdin, a terminal in raw mode until {@link TerminalKeys.close} (not a terminal:
 * as it comes). For one-shot runs; the REPL reads keys through its line editor.
 */
export function openTerminalKeys(): TerminalKeys {
  const raw = Deno.stdin.isTerminal();
  if (raw) Deno.stdin.setRaw(true);
  const keys: string[] = [];
  let arrived: (() => void) | null = null;
  let closed = false;
  let ended = false;
  const feed = keySplitter((k) => {
    keys.push(k);
    arrived?.();
  });
  return {
    async read(signal) {
      while (!keys.length) {
        if (closed || ended || signal?.aborted) return null;
        const read = stdinRead();
        const woke = new Promise<"key" | "abort">((res) => {
          arrived = () => res("key");
          signal?.addEventListener("abort", () => res("abort"), { once: true });
        });
        const got = await Promise.race([read.then((b) => ({ b })), woke]);
        arrived = null;
        if (typeof got === "string") continue;
        pending = null;
        if (got.b === null) ended = true;
        else feed(got.b);
      }
      return keys.shift()!;
    },
    close() {
      if (closed) return;
      closed = true;
      keys.length = 0;
      if (raw) Deno.stdin.setRaw(false);
    },
  };
}

/**
 * Reads keys until `answer` maps one to a value (a key it returns null for is ignored); null at
 * end of input or when `signal` aborts. One prompt's reader: see {@link openTerminalKeys}.
 */
export async function answerKey<T>(
  answer: (key: string) => T | null,
  signal?: AbortSignal,
): Promise<T | null> {
  const keys = openTerminalKeys();
  try {
    for (;;) {
      const key = await keys.read(signal);
      if (key === null) return null;
      const v = answer(key);
      if (v !== null) return v;
    }
  } finally {
    keys.close();
  }
}

/**
 * The REPL's keys for one reader at a time. {@link offer} gets every key of the line editor's
 * `keypress` events; {@link next} waits for one. The keys of one read arrive together, before the
 * reader can ask again: those after the one it took are kept for it until the read's burst is
 * over (the next macrotask), then dropped.
 */
export class KeyHandoff {
  #waiter: ((key: string | null) => void) | null = null;
  #kept: string[] = [];
  #burst = false;

  /** A reader waits or is between keys of one read: typed keys are its, not the line editor's. */
  get active(): boolean {
    return this.#waiter !== null || this.#burst;
  }

  /** Offers a typed key; true when it is a reader's (given or kept for it). */
  offer(key: string): boolean {
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = null;
      this.#holdBurst();
      w(key);
      return true;
    }
    if (!this.#burst) return false;
    this.#kept.push(key);
    return true;
  }

  /** The next key; null when `signal` aborts. */
  next(signal: AbortSignal): Promise<string | null> {
    if (signal.aborted) return Promise.resolve(null);
    if (this.#kept.length) return Promise.resolve(this.#kept.shift()!);
    return new Promise((res) => {
      const onAbort = () => {
        this.#waiter = null;
        res(null);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiter = (k) => {
        signal.removeEventListener("abort", onAbort);
        res(k);
      };
    });
  }

  #holdBurst() {
    if (this.#burst) return;
    this.#burst = true;
    setTimeout(() => {
      this.#burst = false;
      this.#kept = [];
    }, 0);
  }
}
