/**
 * State reducers (issue 8 §1, R4): how a node's write to a state key combines with its current
 * value. `overwrite` (the default for keys without a reducer), `append` (push one value onto a
 * list), `extend`/`concat` (push every element of a list), `merge` (shallow object merge), `sum`,
 * `max`, `min` (numbers). A write of the wrong shape for its reducer is a {@link ReducerError}.
 * @module
 */
import type { ReducerName } from "../protocol/graph_spec.ts";

export class ReducerError extends Error {
  override name = "ReducerError";
}

/** Combines `incoming` into `current` for `key` with `reducer`. Pure: never mutates its inputs. */
export function reduce(
  reducer: ReducerName | undefined,
  key: string,
  current: unknown,
  incoming: unknown,
): unknown {
  const fail = (want: string) =>
    new ReducerError(
      `state key "${key}" (reducer ${reducer}): expected ${want}, got ${kind(incoming)}`,
    );
  switch (reducer ?? "overwrite") {
    case "overwrite":
      return incoming;
    case "append":
      return [...asList(current, key, reducer!), incoming];
    case "extend":
    case "concat":
      if (!Array.isArray(incoming)) throw fail("a list");
      return [...asList(current, key, reducer!), ...incoming];
    case "merge":
      if (!isObject(incoming)) throw fail("an object");
      if (current !== undefined && current !== null && !isObject(current)) {
        throw new ReducerError(
          `state key "${key}" (reducer merge): current value is not an object`,
        );
      }
      return { ...(current as object ?? {}), ...incoming };
    case "sum":
    case "max":
    case "min": {
      if (typeof incoming !== "number") throw fail("a number");
      if (current === undefined || current === null) return incoming;
      if (typeof current !== "number") {
        throw new ReducerError(
          `state key "${key}" (reducer ${reducer}): current value is not a number`,
        );
      }
      return reducer === "sum"
        ? current + incoming
        : reducer === "max"
        ? Math.max(current, incoming)
        : Math.min(current, incoming);
    }
  }
  throw new ReducerError(`unknown reducer ${reducer}`);
}

function asList(current: unknown, key: string, reducer: string): unknown[] {
  if (current === undefined || current === null) return [];
  if (!Array.isArray(current)) {
    throw new ReducerError(`state key "${key}" (reducer ${reducer}): current value is not a list`);
  }
  return current;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function kind(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "a list" : typeof v;
}
