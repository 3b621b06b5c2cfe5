/**
 * Two builds on one data dir (issue 22 item 7; `deno task bench builds`): an installed Coyote and
 * a checkout, or two checkouts, started alternately with the same `COYOTE_DATA_DIR`. Build A is
 * this tree; build B is a copy whose `explore` agent text differs by one line, so its generated
 * built-ins (core/agents/builtins.gen.json) are stale and it takes the data-dir cache path. Each
 * start runs `coyote agents list --json` (it loads the agent registry). A **miss** is a start that
 * parsed the built-ins again: it (re)writes a `builtin-cache/*.json` entry. Reported: misses over
 * the alternating starts after each build's first (target 0), and whether build A wrote anything
 * at all (it never should: its built-ins come from the generated module).
 * `BENCH_RUNS=N` alternations (default 6).
 * @module
 */
import { join } from "node:path";
import { type BenchResult, median } from "./stats.ts";
import {
  childEnv,
  coyoteTaskFlags,
  makeCoyoteEnv,
  REPO_ROOT,
} from "../tests/support/run_coyote.ts";

const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 6);

async function copyProgram(to: string): Promise<void> {
  for (
    const p of ["main.ts", "deno.json", "deno.lock", "core", "plugins", "sdk", "agents", "skills"]
  ) {
    await new Deno.Command("cp", { args: ["-r", join(REPO_ROOT, p), to] }).output();
  }
}

async function entries(dir: string): Promise<Map<string, number>> {
  const m = new Map<string, number>();
  try {
    for await (const e of Deno.readDir(dir)) {
      const st = await Deno.stat(join(dir, e.name));
      m.set(e.name, st.mtime?.getTime() ?? 0);
    }
  } catch { /* not created yet */ }
  return m;
}

export default async function (): Promise<BenchResult[]> {
  const env = await makeCoyoteEnv();
  const b = await Deno.makeTempDir({ prefix: "coyote-build-b-" });
  const cwd = await Deno.makeTempDir({ prefix: "coyote-builds-ws-" });
  try {
    await copyProgram(b);
    const explore = join(b, "agents/explore/config.yaml");
    await Deno.writeTextFile(explore, (await Deno.readTextFile(explore)) + "\n# build B\n");
    const cache = join(env.dataDir, "builtin-cache");
    const e = childEnv(env);
    const start = async (root: string) => {
      const t = performance.now();
      const o = await new Deno.Command(Deno.execPath(), {
        args: ["run", ...coyoteTaskFlags(), join(root, "main.ts"), "agents", "list", "--json"],
        cwd,
        env: e,
        clearEnv: true,
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!o.success) throw new Error(new TextDecoder().decode(o.stderr));
      return performance.now() - t;
    };
    let misses = 0;
    let aWrites = 0;
    let bFirst = false;
    const wall: Record<"A" | "B", number[]> = { A: [], B: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const [name, root] of [["A", REPO_ROOT], ["B", b]] as const) {
        const before = await entries(cache);
        const ms = await start(root);
        const after = await entries(cache);
        const wrote = [...after].some(([f, t]) => before.get(f) !== t);
        if (name === "A" && wrote) aWrites++;
        if (name === "B" && i === 0) bFirst = wrote;
        if (i > 0 && wrote) misses++;
        if (i > 0) wall[name].push(ms);
      }
    }
    return [
      {
        name: "two builds alternating on one data dir: misses after each build's first start",
        value: misses,
        unit: "starts",
        target: "= 0",
        pass: misses === 0,
      },
      {
        name: "build with fresh generated built-ins: data-dir cache writes",
        value: aWrites,
        unit: "starts",
        target: "= 0",
        pass: aWrites === 0,
      },
      {
        name: "build B's first start parsed and cached its built-ins (the bench can see a miss)",
        value: bFirst ? 1 : 0,
        unit: "",
        target: "= 1",
        pass: bFirst,
      },
      { name: "agents list start, build A (median)", value: median(wall.A), unit: "ms" },
      { name: "agents list start, build B (median)", value: median(wall.B), unit: "ms" },
    ];
  } finally {
    await env.cleanup();
    await Deno.remove(b, { recursive: true }).catch(() => {});
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
}
