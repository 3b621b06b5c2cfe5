/**
 * Benchmark runner (`deno task bench [FILTER...]`): imports every
 * `bench/*.bench.ts` module (sorted by name; FILTER words select modules whose
 * file name contains one of them), awaits its default export
 * `async () => BenchResult[]`, and prints one table of all results:
 * name, value, unit, target, and PASS/FAIL when the module judged it.
 * Exits 1 when any result has `pass: false`.
 * @module
 */

import type { BenchResult } from "./stats.ts";
export type { BenchResult };

const dir = new URL(".", import.meta.url).pathname;
const filters = Deno.args;
const all = [...Deno.readDirSync(dir)]
  .filter((e) => e.isFile && e.name.endsWith(".bench.ts"))
  .map((e) => e.name)
  .sort();
const modules = all.map((n) => n.replace(/\.bench\.ts$/, ""));
if (filters.some((f) => f === "-h" || f === "--help")) {
  console.log(`usage: deno task bench [FILTER...]\nmodules: ${modules.join(", ")}`);
  Deno.exit(0);
}
const files = all.filter((n) => !filters.length || filters.some((f) => n.includes(f)));
if (!files.length) {
  console.error(`bench: no module matches ${filters.join(" ")}; modules: ${modules.join(", ")}`);
  Deno.exit(2);
}

// The start benches measure a run as installed: `deno task install` (and `deno task gen`) build the
// start bundle (scripts/bundle_start.ts); a stale or missing one is rebuilt first.
if (files.some((n) => /^(startup|acp|repl|builds)\./.test(n))) {
  const { bundleIsFresh } = await import("../core/frontends/cli/start_bundle.ts");
  const root = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
  if (!(await bundleIsFresh(root))) {
    console.error("bench: the start bundle is stale or missing; building it (deno task bundle) …");
    await (await import("../scripts/bundle_start.ts")).buildStartBundle();
  }
}

const rows: (BenchResult & { module: string })[] = [];
let failedModules = 0;
for (const name of files) {
  const t0 = performance.now();
  console.error(`bench: running ${name} …`);
  try {
    const mod = await import(`./${name}`);
    const results: BenchResult[] = await mod.default();
    for (const r of results) rows.push({ ...r, module: name.replace(/\.bench\.ts$/, "") });
    console.error(`bench: ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } catch (e) {
    failedModules++;
    console.error(`bench: ${name} failed: ${(e as Error)?.stack ?? e}`);
  }
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
}

const table = [
  ["module", "benchmark", "value", "unit", "target", "result"],
  ...rows.map((
    r,
  ) => [
    r.module,
    r.name,
    fmt(r.value),
    r.unit,
    r.target ?? "",
    r.pass === undefined ? "" : r.pass ? "PASS" : "FAIL",
  ]),
];
const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
const lines = table.map((row) =>
  row.map((c, i) => (i === 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd()
);
lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
console.log(lines.join("\n"));
const failed = rows.filter((r) => r.pass === false).length;
if (failed || failedModules) {
  console.log(`\n${failed} result(s) missed their target; ${failedModules} module(s) failed.`);
  Deno.exit(1);
}
