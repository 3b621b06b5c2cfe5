/**
 * The session picker of `/resume` (REPL) and of `coyote -r` / `coyote resume` without an id on a
 * terminal: the stored sessions of this workspace (not sub-agents'), newest first, one per line;
 * Up/Down (or k/j) move, Enter picks, a digit 1–9 picks that line at once, Escape, `q` or Ctrl+C
 * cancel. Drawn on the writer given (stderr), redrawn in place.
 * @module
 */
import { listStoredSessions, localTime } from "../../transcript/store.ts";
import { safeLine } from "../../util/terminal_safe.ts";

/** One line of the picker. */
export interface PickChoice {
  id: string;
  label: string;
}

/** Most sessions listed. */
export const PICK_MAX = 20;

/** The sessions of `cwd` (root sessions only), newest first, as picker lines. */
export async function sessionChoices(dataDir: string, cwd: string): Promise<PickChoice[]> {
  const list = (await listStoredSessions(dataDir, { cwd })).filter((s) => !s.parent);
  return list.slice(0, PICK_MAX).map((s) => ({
    id: s.id,
    label: `${s.id.slice(0, 8)}  ${localTime(s.updated)}  ${
      safeLine(s.name ? `[${s.name}] ${s.title}` : s.title || "(no prompt yet)")
    }`,
  }));
}

/**
 * What one key does to the picker at `at` of `n` lines. With `ids` (the choices' ids, in order), a
 * digit picks the choice whose id is that digit (the `/rewind` picker: `3` is turn 3, as in
 * `/rewind 3`, wherever it is listed), not the line at that position.
 */
export function pickKey(
  key: string,
  at: number,
  n: number,
  ids?: readonly string[],
): { at: number } | { pick: number } | { cancel: true } | null {
  if (key === "\x1b[A" || key === "\x1bOA" || key === "k") return { at: (at - 1 + n) % n };
  if (key === "\x1b[B" || key === "\x1bOB" || key === "j") return { at: (at + 1) % n };
  if (key === "\r" || key === "\n") return { pick: at };
  if (ids && /^[0-9]$/.test(key)) {
    const i = ids.indexOf(key);
    return i < 0 ? null : { pick: i };
  }
  if (/^[1-9]$/.test(key) && Number(key) <= n) return { pick: Number(key) - 1 };
  if (key === "\x1b" || key === "q" || key === "\x03" || key === "\x04") return { cancel: true };
  return null;
}

/**
 * Shows `choices` and resolves the picked id, or null when cancelled (or `readKey` ends). Draws
 * with `write`; the list is replaced by one line saying what was picked. `opts.digitsPickIds`:
 * a digit picks the choice of that id and lines carry no position number (their labels number
 * them; see {@link pickKey}).
 */
export async function pick(
  choices: PickChoice[],
  readKey: () => Promise<string | null>,
  write: (text: string) => void,
  title = "Resume which session? (↑/↓ or number, Enter picks, Esc cancels)",
  opts: { digitsPickIds?: boolean } = {},
): Promise<string | null> {
  if (!choices.length) return null;
  let at = 0;
  const ids = opts.digitsPickIds ? choices.map((c) => c.id) : undefined;
  const lines = () =>
    choices.map((c, i) =>
      ids
        ? `${i === at ? "›" : " "} ${c.label}`
        : `${i === at ? "›" : " "} ${i < 9 ? i + 1 : " "}. ${c.label}`
    );
  write(`${title}\n${lines().join("\n")}\n`);
  const clear = () => write(`\x1b[${choices.length}A\r\x1b[J`);
  for (;;) {
    const key = await readKey();
    const r = key === null ? { cancel: true as const } : pickKey(key, at, choices.length, ids);
    if (!r) continue;
    if ("at" in r) {
      at = r.at;
      clear();
      write(`${lines().join("\n")}\n`);
      continue;
    }
    clear();
    if ("cancel" in r) {
      write("cancelled\n");
      return null;
    }
    write(`${choices[r.pick].label}\n`);
    return choices[r.pick].id;
  }
}
