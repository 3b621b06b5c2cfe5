/**
 * The status block under the output (core/frontends/render/status.ts): one line per running
 * sub-agent with its id, elapsed time and last action, capped rows with `+N more`, every line cut
 * to the terminal width (so erasing it moves up exactly its rows).
 */
import assert from "node:assert/strict";
import { MAX_CHILD_ROWS, statusLines } from "../core/frontends/render/status.ts";

const kids = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `explore-0000000${i}`,
    start: 1000 * i,
    action: i % 2 ? "Read src/a.ts" : "thinking",
  }));

Deno.test("status: a line per child, then +N more past the cap", () => {
  const base = { frame: "⠋", elapsedMs: 12_400, label: "Collect sub-agents", now: 20_000 };
  const two = statusLines({ ...base, children: kids(2), width: 80, height: 40 });
  assert.deepEqual(two, [
    "⠋ 12s Collect sub-agents",
    "  ↳ explore-00000000 20s · thinking",
    "  ↳ explore-00000001 19s · Read src/a.ts",
  ]);
  const nine = statusLines({ ...base, children: kids(9), width: 80, height: 40 });
  assert.equal(nine.length, 1 + MAX_CHILD_ROWS);
  assert.equal(nine.at(-1), "  +4 more");
  // A short terminal: fewer rows; a tiny one: a count on the spinner line.
  assert.deepEqual(statusLines({ ...base, children: kids(3), width: 80, height: 6 }), [
    "⠋ 12s Collect sub-agents",
    "  ↳ explore-00000000 20s · thinking",
    "  +2 more",
  ]);
  assert.deepEqual(statusLines({ ...base, children: kids(3), width: 80, height: 4 }), [
    "⠋ 12s Collect sub-agents · 3 sub-agent(s) running",
  ]);
});

Deno.test("status: every line fits the width; minutes past 60 s", () => {
  const lines = statusLines({
    frame: "⠋",
    elapsedMs: 65_000,
    label: "x".repeat(200),
    children: [{ id: "explore-12345678", start: 0, action: "y".repeat(200) }],
    now: 125_000,
    width: 40,
    height: 24,
  });
  for (const l of lines) assert.ok([...l].length <= 39, l);
  assert.match(lines[0], /^⠋ 1m05s x+…$/);
  assert.match(lines[1], /^ {2}↳ explore-12345678 2m05s · y+…$/);
});
