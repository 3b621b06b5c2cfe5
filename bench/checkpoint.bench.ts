/**
 * Benchmark: what a turn's checkpoint costs (issue 18, core/session/checkpoints/store.ts) on a
 * generated repository of 10,000 files (100 folders × 100 files of ~1 KB, a git repository with
 * one commit): the first turn's checkpoint (a fresh store: every file is read and stored) and,
 * after that — once the store watches the workspace (`CheckpointStore.watch`, what a session
 * starts after its first checkpoint: inotify watches and a baseline scan, timed too) — the
 * checkpoint of a turn whose workspace has one file changed (only that path is staged; median of
 * 15, target ≤ 30 ms). Also a rewind of that one file,
 * and as a floor for reading the numbers on a busy machine, `git status` of the same tree.
 * Each number is the `CheckpointStore` call the session makes, git processes included.
 *
 * Run alone: `deno task bench checkpoint`.
 * @module
 */
import { join } from "node:path";
import { CheckpointStore } from "../core/session/checkpoints/store.ts";
import { type BenchResult, median } from "./stats.ts";

const DIRS = 100;
const PER_DIR = 100;

async function git(cwd: string, ...args: string[]): Promise<void> {
  const o = await new Deno.Command("git", {
    args: ["-c", "user.name=b", "-c", "user.email=b@b", ...args],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!o.success) throw new Error(new TextDecoder().decode(o.stderr));
}

export default async function (): Promise<BenchResult[]> {
  const ws = await Deno.makeTempDir({ prefix: "coyote-bench-cp-ws-" });
  const data = await Deno.makeTempDir({ prefix: "coyote-bench-cp-data-" });
  try {
    const line = "export const value = 'some ordinary source text of a module';\n";
    for (let d = 0; d < DIRS; d++) {
      await Deno.mkdir(join(ws, `src/m${d}`), { recursive: true });
      for (let f = 0; f < PER_DIR; f++) {
        await Deno.writeTextFile(
          join(ws, `src/m${d}/f${f}.ts`),
          `// ${d}/${f}\n` + line.repeat(16),
        );
      }
    }
    await git(ws, "init", "-q");
    await git(ws, "add", "-A");
    await git(ws, "commit", "-q", "-m", "init");

    let t0 = performance.now();
    const store = await CheckpointStore.open(data, ws);
    const first = await store.create("first turn");
    const firstMs = performance.now() - t0;
    // What a session does after its first checkpoint, while the model works on the next
    // request: the change detector's watches and its baseline scan (./store.ts `watch`).
    t0 = performance.now();
    await store.watch();
    const watchMs = performance.now() - t0;
    if (store.watchError) throw new Error(`no watcher: ${store.watchError}`);

    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      await Deno.writeTextFile(join(ws, `src/m${i}/f${i}.ts`), `// changed ${i}\n`);
      t0 = performance.now();
      await store.create(`turn ${i + 2}`);
      times.push(performance.now() - t0);
    }
    const unchanged: number[] = [];
    for (let i = 0; i < 5; i++) {
      t0 = performance.now();
      await store.create("unchanged");
      unchanged.push(performance.now() - t0);
    }
    // The floor on this machine now: git's own scan of the same tree (its index, its stat cache).
    const scan: number[] = [];
    for (let i = 0; i < 5; i++) {
      t0 = performance.now();
      await git(ws, "status", "--porcelain");
      scan.push(performance.now() - t0);
    }
    const base = await store.create("before one-file change");
    await Deno.writeTextFile(join(ws, "src/m0/f0.ts"), "// rewound away\n");
    t0 = performance.now();
    await store.restore(base, "bench rewind");
    const rewindMs = performance.now() - t0;
    void first;
    store.close();
    const med = median(times);
    return [
      { name: "first turn (fresh store, 10k files)", value: firstMs, unit: "ms" },
      {
        name: "after the first turn, in the background: watches + baseline scan",
        value: watchMs,
        unit: "ms",
      },
      {
        name: "per turn, 1-file change (10k files), median",
        value: med,
        unit: "ms",
        target: "≤ 30 ms",
        pass: med <= 30,
      },
      { name: "per turn, nothing changed, median", value: median(unchanged), unit: "ms" },
      { name: "baseline: git status of the tree, median", value: median(scan), unit: "ms" },
      { name: "rewind of a 1-file change (checkpoint + restore)", value: rewindMs, unit: "ms" },
    ];
  } finally {
    await Deno.remove(ws, { recursive: true });
    await Deno.remove(data, { recursive: true });
  }
}
