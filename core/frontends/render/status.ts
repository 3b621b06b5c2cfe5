/**
 * The live status block under the output while a turn (or `/compact`) runs on a terminal: the
 * spinner line (frame, elapsed seconds, what the root agent is doing), then one line per running
 * sub-agent — its agent id, its elapsed time and its last action (the title of its last tool call,
 * or "thinking") — at most {@link MAX_CHILD_ROWS} of them (fewer on a short terminal), then
 * `+N more`. Every line is cut to the terminal width, so the block is exactly as many rows as
 * lines and can be erased by moving up over them (core/frontends/render/mod.ts).
 * @module
 */

/** Most sub-agent lines shown under the spinner line; the rest are counted in `+N more`. */
export const MAX_CHILD_ROWS = 6;

/** A running sub-agent as the status block shows it. */
export interface ChildStatus {
  /** Its agent id (`explore-1a2b3c4d`). */
  id: string;
  /** When it started (ms, the renderer's clock). */
  start: number;
  /** Its last action: a tool call's title, or "thinking". */
  action: string;
}

function cut(line: string, width: number): string {
  const chars = [...line];
  return chars.length > width ? chars.slice(0, Math.max(1, width - 1)).join("") + "…" : line;
}

/** `5s`, `1m05s`. */
function secs(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/**
 * The lines of the status block (no newlines, unstyled, each at most `width - 1` columns).
 * `height`: the terminal's rows; the block never takes more than `height - 3` of them.
 */
export function statusLines(a: {
  frame: string;
  elapsedMs: number;
  label: string;
  children: ChildStatus[];
  now: number;
  width: number;
  height: number;
}): string[] {
  const w = Math.max(10, a.width - 1);
  const rows = Math.min(MAX_CHILD_ROWS, Math.max(0, a.height - 4));
  const kids = a.children;
  const many = kids.length > rows;
  const shown = many ? kids.slice(0, Math.max(0, rows - 1)) : kids;
  const head = `${a.frame} ${secs(a.elapsedMs)}${a.label ? ` ${a.label}` : ""}${
    rows === 0 && kids.length ? ` · ${kids.length} sub-agent(s) running` : ""
  }`;
  const lines = [cut(head, w)];
  for (const c of shown) {
    lines.push(cut(`  ↳ ${c.id} ${secs(a.now - c.start)} · ${c.action || "thinking"}`, w));
  }
  if (many && rows > 0) lines.push(cut(`  +${kids.length - shown.length} more`, w));
  return lines;
}
