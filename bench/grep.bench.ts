/**
 * Benchmark: `fs_grep` (through the tool's own `run`, the same code path the
 * engine uses) against ripgrep (`rg`, Debian's package) on one generated tree.
 *
 * Tree (issue 2, "Benchmarks"): 50 000 files, ~500 MB, mixed sizes, some
 * `.gitignore`d folders (root and nested `.gitignore`), some binary files, a
 * git repository so that `rg` applies `.gitignore` like `fs_grep` does. It is
 * generated under `$TMPDIR/coyote-bench-grep/<mode>` (outside the repo) and **removed when the
 * bench ends** (~500 MB); `BENCH_KEEP=1` keeps it and reuses it on the next run (a `.complete`
 * marker records the parameters).
 *
 * Reports, per pattern (a rare literal and a rare regex): the median of 3 runs
 * of `fs_grep` and of `rg`, in ms, and their ratio (target ≤ 3).
 * `BENCH_QUICK=1` uses a 5 000-file tree (~50 MB) as a smoke run.
 * Without `rg` on PATH the comparison is skipped with a message on stderr and
 * only fs_grep's times are reported.
 *
 * Run alone: `deno run --allow-all bench/grep.bench.ts`.
 * @module
 */
import { fsGrepTool } from "../plugins/fs/mod.ts";
import type { ToolContext, ToolResult } from "../sdk/mod.ts";

import { type BenchResult, median } from "./stats.ts";

const ROOT = `${Deno.env.get("TMPDIR") ?? "/tmp"}/coyote-bench-grep`;
const TREE_VERSION = 2;

/** Words for the synthetic source text (no pattern below occurs in them). */
const WORDS = (
  "const let function return import export from class interface type async await " +
  "if else for while switch case break continue value result error data item list map " +
  "string number boolean object array index count total buffer stream reader writer " +
  "config option path file line column token parser lexer node tree visit walk emit"
).split(" ");

/** Deterministic PRNG (mulberry32) so the tree is the same on every machine. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A text buffer of about `size` bytes of code-like lines. */
function textBuffer(size: number, seed: number): Uint8Array {
  const r = rng(seed);
  const lines: string[] = [];
  let n = 0;
  while (n < size) {
    const indent = "  ".repeat(Math.floor(r() * 4));
    const words: string[] = [];
    const count = 3 + Math.floor(r() * 10);
    for (let i = 0; i < count; i++) words.push(WORDS[Math.floor(r() * WORDS.length)]);
    const line = `${indent}${words.join(" ")}(${Math.floor(r() * 1000)});`;
    lines.push(line);
    n += line.length + 1;
  }
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

/** File size (bytes) for file number `i`: mostly small, a few large; mean ≈ 10 KB. */
function sizeFor(i: number): number {
  const k = i % 100;
  if (k < 60) return 3_000 + (i % 7) * 300; // ~3.9 KB
  if (k < 90) return 11_000 + (i % 5) * 500; // ~12 KB
  if (k < 99) return 25_000 + (i % 3) * 2_000; // ~27 KB
  return 140_000 + (i % 4) * 10_000; // ~155 KB
}

/** Tree parameters for one mode. */
interface TreeSpec {
  files: number;
  dirs: number;
  subdirs: number;
}

const SPECS: Record<string, TreeSpec> = {
  full: { files: 50_000, dirs: 100, subdirs: 10 },
  quick: { files: 5_000, dirs: 20, subdirs: 5 },
  /** For the test that the bench cleans up after itself. */
  tiny: { files: 200, dirs: 10, subdirs: 2 },
};

/** Which tree `runGrepBench` uses and whether it survives the run. */
export interface GrepBenchOptions {
  mode?: "full" | "quick" | "tiny";
  /** Folder holding `<mode>/` (default `$TMPDIR/coyote-bench-grep`). */
  root?: string;
  /** Keep the tree for the next run (default: env `BENCH_KEEP=1`). */
  keep?: boolean;
}

/** The rare literal and the rare regex the bench searches for. */
export const NEEDLE_LITERAL = "coyoteNeedleLiteral";
export const NEEDLE_REGEX = "fn\\s+zz_needle_[0-9]{3}\\b";

/**
 * Creates (once) the bench tree for `mode` and returns its path and total size.
 * Layout: `dNNN/sNN/fNNNNN.ts`; every 10th top dir has an ignored `build/`
 * (nested `.gitignore`), the root `.gitignore` ignores `*.log` and `vendor/`;
 * 1 % of files are binaries (`.bin`, NUL bytes, some containing the literal).
 */
export async function ensureTree(
  mode: "full" | "quick" | "tiny",
  root = ROOT,
): Promise<{ dir: string; bytes: number; files: number }> {
  const spec = SPECS[mode];
  const dir = `${root}/${mode}`;
  const marker = `${dir}/.complete`;
  const want = JSON.stringify({ v: TREE_VERSION, ...spec });
  try {
    const m = JSON.parse(await Deno.readTextFile(marker));
    if (JSON.stringify({ v: m.v, files: m.files, dirs: m.dirs, subdirs: m.subdirs }) === want) {
      return { dir, bytes: m.bytes, files: m.fileCount };
    }
  } catch { /* not there yet */ }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  console.error(
    `grep bench: generating ${spec.files} files under ${dir} (removed at the end; BENCH_KEEP=1 keeps it) ...`,
  );
  const t0 = performance.now();
  const bases = Array.from({ length: 8 }, (_, i) => textBuffer(260_000, i + 1));
  const binary = new Uint8Array(64 * 1024);
  {
    const r = rng(99);
    for (let i = 0; i < binary.length; i++) binary[i] = Math.floor(r() * 256);
    binary.set(new TextEncoder().encode(NEEDLE_LITERAL), 30_000);
  }
  const enc = new TextEncoder();
  const perDir = Math.ceil(spec.files / (spec.dirs * spec.subdirs));
  const jobs: { path: string; data: Uint8Array }[] = [];
  let idx = 0;
  for (let d = 0; d < spec.dirs && idx < spec.files; d++) {
    const dname = `d${String(d).padStart(3, "0")}`;
    for (let s = 0; s < spec.subdirs && idx < spec.files; s++) {
      // Every 10th top dir: its last subdir is `build/`, ignored by a nested .gitignore.
      const ignored = d % 10 === 3 && s === spec.subdirs - 1;
      const sname = ignored ? "build" : `s${String(s).padStart(2, "0")}`;
      const sub = `${dir}/${dname}/${sname}`;
      await Deno.mkdir(sub, { recursive: true });
      if (ignored) await Deno.writeTextFile(`${dir}/${dname}/.gitignore`, "build/\n");
      for (let f = 0; f < perDir && idx < spec.files; f++, idx++) {
        const i = idx;
        if (i % 100 === 57) {
          jobs.push({ path: `${sub}/f${i}.bin`, data: binary });
          continue;
        }
        const size = sizeFor(i);
        const base = bases[i % bases.length];
        const start = (i * 7919) % (base.length - size);
        let data = base.subarray(start, start + size);
        // Rare matches: a literal in 1 of 2 500 files, a regex match in 1 of 3 000.
        if (i % 2_500 === 11 || i % 3_000 === 17) {
          const extra = i % 2_500 === 11
            ? `// marker ${NEEDLE_LITERAL} here\n`
            : `fn   zz_needle_${String(i % 1000).padStart(3, "0")} (x)\n`;
          const e = enc.encode(extra);
          const copy = new Uint8Array(data.length + e.length);
          copy.set(data.subarray(0, Math.floor(size / 2)));
          copy.set(e, Math.floor(size / 2));
          copy.set(data.subarray(Math.floor(size / 2)), Math.floor(size / 2) + e.length);
          data = copy;
        }
        const ext = i % 50 === 49 ? "log" : "ts";
        jobs.push({ path: `${sub}/f${i}.${ext}`, data });
      }
    }
  }
  let bytes = 0;
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      bytes += job.data.length;
      await Deno.writeFile(job.path, job.data);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  // Root ignores; a vendor/ folder with matches that must not be reported.
  await Deno.writeTextFile(`${dir}/.gitignore`, "*.log\nvendor/\n");
  await Deno.mkdir(`${dir}/vendor`, { recursive: true });
  await Deno.writeTextFile(`${dir}/vendor/lib.ts`, `// ${NEEDLE_LITERAL}\n`);
  // A git repository, so rg honours .gitignore too (rg requires one by default).
  await new Deno.Command("git", { args: ["init", "-q", dir], stdout: "null", stderr: "null" })
    .output()
    .catch(() => Deno.mkdir(`${dir}/.git`));
  await Deno.writeTextFile(
    marker,
    JSON.stringify({ v: TREE_VERSION, ...spec, bytes, fileCount: jobs.length + 3 }),
  );
  console.error(
    `grep bench: ${jobs.length} files, ${(bytes / 1e6).toFixed(0)} MB in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`,
  );
  return { dir, bytes, files: jobs.length + 3 };
}

function ctxFor(cwd: string): ToolContext {
  const noop = () => {};
  return {
    cwd,
    signal: new AbortController().signal,
    toolCallId: "bench",
    log: { debug: noop, info: noop, warn: noop, error: noop },
    progress: noop,
    requestPermission: () => Promise.resolve(false),
  };
}

async function timeFsGrep(dir: string, pattern: string): Promise<{ ms: number; lines: number }> {
  const t0 = performance.now();
  const res = await fsGrepTool.run({ pattern }, ctxFor(dir)) as ToolResult;
  const ms = performance.now() - t0;
  if (res.isError) throw new Error(`fs_grep failed: ${res.content}`);
  return { ms, lines: res.content.split("\n").filter((l) => /^[^\s].*:\d+:/.test(l)).length };
}

async function rgAvailable(): Promise<boolean> {
  try {
    const o = await new Deno.Command("rg", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
    return o.success;
  } catch {
    return false;
  }
}

async function timeRg(dir: string, pattern: string): Promise<{ ms: number; lines: number }> {
  const t0 = performance.now();
  const o = await new Deno.Command("rg", {
    args: ["-n", "--no-heading", "--color", "never", "-e", pattern, "."],
    cwd: dir,
    stdout: "piped",
    stderr: "null",
  }).output();
  const ms = performance.now() - t0;
  const text = new TextDecoder().decode(o.stdout);
  return { ms, lines: text.split("\n").filter((l) => l.length > 0).length };
}

/** Runs the grep bench; see the module doc. */
export default async function runGrepBench(opts: GrepBenchOptions = {}): Promise<BenchResult[]> {
  const mode = opts.mode ?? (Deno.env.get("BENCH_QUICK") === "1" ? "quick" : "full");
  const root = opts.root ?? ROOT;
  const keep = opts.keep ?? Deno.env.get("BENCH_KEEP") === "1";
  try {
    return await measure(await ensureTree(mode, root));
  } finally {
    if (!keep) {
      await Deno.remove(`${root}/${mode}`, { recursive: true }).catch(() => {});
      // The parent too, when no other mode's tree is kept in it.
      await Deno.remove(root).catch(() => {});
    }
  }
}

async function measure(
  tree: { dir: string; bytes: number; files: number },
): Promise<BenchResult[]> {
  const hasRg = await rgAvailable();
  if (!hasRg) {
    console.error(
      "grep bench: `rg` not found on PATH (apt-get install ripgrep); skipping the rg comparison",
    );
  }
  const out: BenchResult[] = [];
  const label = `${(tree.files / 1000).toFixed(0)}k files/${(tree.bytes / 1e6).toFixed(0)} MB`;
  for (const [kind, pattern] of [["literal", NEEDLE_LITERAL], ["regex", NEEDLE_REGEX]] as const) {
    // One warm-up run each (page cache), then 3 measured runs.
    await timeFsGrep(tree.dir, pattern);
    if (hasRg) await timeRg(tree.dir, pattern);
    const ours: number[] = [];
    const theirs: number[] = [];
    let ourLines = 0;
    let rgLines = 0;
    for (let i = 0; i < 3; i++) {
      const a = await timeFsGrep(tree.dir, pattern);
      ours.push(a.ms);
      ourLines = a.lines;
      if (hasRg) {
        const b = await timeRg(tree.dir, pattern);
        theirs.push(b.ms);
        rgLines = b.lines;
      }
    }
    const ourMs = median(ours);
    out.push({ name: `fs_grep ${kind} (${label})`, value: Math.round(ourMs), unit: "ms" });
    if (hasRg) {
      const rgMs = median(theirs);
      out.push({ name: `rg ${kind} (${label})`, value: Math.round(rgMs), unit: "ms" });
      const ratio = ourMs / rgMs;
      out.push({
        name: `fs_grep/rg ratio ${kind}`,
        value: Math.round(ratio * 100) / 100,
        unit: "x",
        target: "≤ 3×",
        pass: ratio <= 3 && ourLines === rgLines,
      });
      if (ourLines !== rgLines) {
        console.error(`grep bench: ${kind}: fs_grep found ${ourLines} lines, rg ${rgLines}`);
      }
    }
  }
  return out;
}

if (import.meta.main) {
  for (const r of await runGrepBench()) console.log(JSON.stringify(r));
}
