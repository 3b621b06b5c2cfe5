/**
 * The terminal picker (core/frontends/slash/picker.ts) driven key by key: position digits for the
 * session picker; for the `/rewind` picker (turns newest first) a digit is the turn's number, as
 * in `/rewind N` (a fresh user typed `1` meaning turn 1 and got the newest turn).
 */
import assert from "node:assert/strict";
import { pick } from "../core/frontends/slash/picker.ts";

const keys = (...ks: string[]) => () => Promise.resolve(ks.shift() ?? null);
const turns = [3, 2, 1].map((n) => ({ id: String(n), label: `turn ${n}: prompt ${n}` }));

Deno.test("picker: digits pick by position in the session picker, by id where the labels number the lines", async () => {
  let drawn = "";
  const write = (t: string) => void (drawn += t);
  assert.equal(await pick(turns, keys("1"), write), "3", "position 1 is the first line");
  assert.match(drawn, /› 1\. turn 3/);
  drawn = "";
  assert.equal(await pick(turns, keys("1"), write, "Rewind?", { digitsPickIds: true }), "1");
  assert.doesNotMatch(drawn, /\d\. turn/, "no position numbers beside the turn numbers");
  assert.match(drawn, /› turn 3: prompt 3\n {2}turn 2/);
  assert.equal(await pick(turns, keys("2"), write, "Rewind?", { digitsPickIds: true }), "2");
  // A digit no choice has does nothing; arrows and Enter still work.
  assert.equal(
    await pick(turns, keys("7", "\x1b[B", "\r"), write, "Rewind?", { digitsPickIds: true }),
    "2",
  );
  assert.equal(await pick(turns, keys("\x1b"), write, "Rewind?", { digitsPickIds: true }), null);
});
