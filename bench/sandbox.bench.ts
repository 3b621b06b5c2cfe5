/**
 * OS sandbox benchmarks (issue 11, "Benchmarks"; `deno task bench sandbox`):
 *
 * - sandbox overhead per command: median wall time of `execute_command`'s runner for `true`
 *   inside the session sandbox (bwrap) minus outside it (target ≤ 15 ms), the two alternating: each
 *   sandboxed command finds its launching shell started ahead after the previous one
 *   (core/policy/sandbox/launch_ahead.ts), as a session's commands do between model turns; the
 *   same started cold (a session's first command) is reported without a target;
 * - a 2-turn headless session with one shell call, in process: `createSession` → prompt → the
 *   scripted model asks for `execute_command {true}` → it runs sandboxed → the model answers;
 *   median wall time (target ≤ 150 ms). Against tests/support/model_server.ts (no latency).
 *
 * Also reported, without a target: the after-command scan (core/policy/sandbox/protected.ts
 * `findProtected` with the dot-entry and host-run review, once per command before and once after)
 * of a workspace of 200 source folders, a git index, a `CACHEDIR.TAG` folder and a venv
 * (`python3 -m venv --without-pip`, when python3 is there); and the machine's floor (a bare `bwrap` with only a PID namespace
 * and a read-only root, minus a bare `bash -c true`, both spawned directly) — namespace creation
 * is the kernel's cost, which no profile can undercut.
 *
 * `BENCH_RUNS=N` sets the repetitions (default 30). Fails (no numbers) when no sandbox backend
 * works on this machine.
 * @module
 */
import { Policy } from "../core/policy/policy.ts";
import { CommandSandbox, detectBackend } from "../core/policy/sandbox/mod.ts";
import { runCommand } from "../plugins/exec/mod.ts";
import { createSession } from "../core/session/runtime.ts";
import { startModelServer } from "../tests/support/model_server.ts";
import { testApp } from "../tests/support/fixtures.ts";
import { findProtected } from "../core/policy/sandbox/protected.ts";
import { type BenchResult, median } from "./stats.ts";

const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 30);

export default async function (): Promise<BenchResult[]> {
  const root = await Deno.makeTempDir({ prefix: "coyote-bench-sbx-" });
  const ws = `${root}/ws`;
  const cfg = `${root}/cfg`;
  const data = `${root}/data`;
  for (const d of [ws, cfg, data]) await Deno.mkdir(d, { recursive: true });
  const results: BenchResult[] = [];
  try {
    const policy = Policy.create({}, { allow: [], deny: [] }, {
      workspace: ws,
      configDir: cfg,
      dataDir: data,
    });
    const sb = await CommandSandbox.create(policy, { mode: "required", autoAllow: true });
    if (!sb.status.active) throw new Error(`no OS sandbox here: ${sb.status.reason}`);
    const signal = new AbortController().signal;
    // The same sandbox without the launching shell started ahead (core/policy/sandbox/
    // launch_ahead.ts): what the first command of a session pays.
    const cold = {
      ready: () => sb.ready(),
      prepare: (c: string, cwd: string, sh: string) => sb.prepare(c, cwd, sh),
    };
    const once = async (sandboxed: boolean, launcher: typeof cold | CommandSandbox = sb) => {
      const t0 = performance.now();
      const o = await runCommand("true", {
        cwd: ws,
        timeoutMs: 10_000,
        signal,
        launcher: sandboxed ? launcher : undefined,
      });
      if (o.exitCode !== 0 || o.sandboxed !== sandboxed) {
        throw new Error(`true failed: ${o.exitCode} ${o.stderr}`);
      }
      return performance.now() - t0;
    };
    await once(true);
    await once(false);
    const inside: number[] = [];
    const outside: number[] = [];
    const coldInside: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      inside.push(await once(true));
      outside.push(await once(false));
    }
    for (let i = 0; i < RUNS; i++) coldInside.push(await once(true, cold));
    sb.close();
    // The machine's floor: bwrap with nothing but a read-only root and a PID namespace, spawned
    // directly (no Coyote code), against the same shell outside — what no profile can undercut.
    const spawnOnce = async (args: string[]) => {
      const t0 = performance.now();
      await new Deno.Command(args[0], { args: args.slice(1), stdin: "null", stdout: "null" })
        .output();
      return performance.now() - t0;
    };
    const bare: number[] = [];
    const floor: number[] = [];
    const bwrapPath = (await detectBackend()).backend!.path;
    for (let i = 0; i < RUNS; i++) {
      bare.push(await spawnOnce(["bash", "-c", "true"]));
      floor.push(
        await spawnOnce([bwrapPath, "--unshare-pid", "--ro-bind", "/", "/", "bash", "-c", "true"]),
      );
    }
    const overhead = median(inside) - median(outside);
    results.push(
      { name: "command `true` outside the sandbox (median)", value: median(outside), unit: "ms" },
      { name: "command `true` inside the sandbox (median)", value: median(inside), unit: "ms" },
      {
        name: "machine floor: bare bwrap (pid ns, ro /) minus bare bash, spawned directly (median)",
        value: median(floor) - median(bare),
        unit: "ms",
      },
      {
        name: "sandbox overhead per command (median)",
        value: overhead,
        unit: "ms",
        target: "≤ 15 ms",
        pass: overhead <= 15,
      },
      {
        name: "sandbox overhead, started cold (a session's first command; median)",
        value: median(coldInside) - median(outside),
        unit: "ms",
      },
    );

    // The after-command scan of a small project with a venv (what each command pays twice).
    const proj = `${root}/proj`;
    await new Deno.Command("bash", {
      args: [
        "-c",
        `mkdir -p proj && cd proj && git init -q . && for i in $(seq 1 200); do mkdir -p src/m$i && echo x > src/m$i/f.ts; done && git add src && mkdir -p target/debug && touch target/CACHEDIR.TAG && (python3 -m venv --without-pip .venv || true)`,
      ],
      cwd: root,
      stdout: "null",
      stderr: "null",
    }).output();
    const scan = () => {
      const t0 = performance.now();
      findProtected(proj, undefined, [], [], {
        dots: new Map(),
        unreadable: [],
        undecodable: [],
        cacheTags: new Set(),
        hostRun: new Map(),
      });
      return performance.now() - t0;
    };
    scan();
    const scans: number[] = [];
    for (let i = 0; i < Math.max(RUNS, 50); i++) scans.push(scan());
    results.push({
      name: "after-command scan, 200 folders + git index + CACHEDIR.TAG + venv (median)",
      value: median(scans),
      unit: "ms",
    });

    // 2-turn headless session with one sandboxed shell call, in process.
    const server = await startModelServer({
      repeat: true,
      script: [
        { tool_calls: [{ name: "execute_command", arguments: { command: "true" } }] },
        { text: "done" },
      ],
    });
    const env = { OPENAI_BASE_URL: server.baseURL, COYOTE_MODEL: "scripted" };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, Deno.env.get(k)]));
    for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
    try {
      const app = testApp({ cwd: ws, configDir: cfg, dataDir: data }, { noWorkspaceMcp: true });
      const session2 = async () => {
        const t0 = performance.now();
        const s = await createSession(app, {
          cwd: ws,
          permission: () => Promise.resolve("reject_once" as const),
          log: () => {},
        });
        let sandboxed = false;
        const r = await s.prompt("go", {
          onEvent: ({ update: e }) => {
            if (e.sessionUpdate === "tool_call_update" && e.status === "completed") {
              sandboxed = (e.rawOutput as { sandboxed?: boolean } | undefined)?.sandboxed === true;
            }
          },
        });
        await s.close();
        if (r.stopReason !== "end_turn" || !sandboxed || r.denied.length) {
          throw new Error(`session did not run the command sandboxed: ${JSON.stringify(r)}`);
        }
        return performance.now() - t0;
      };
      await session2();
      const walls: number[] = [];
      for (let i = 0; i < Math.min(RUNS, 20); i++) walls.push(await session2());
      const m = median(walls);
      results.push({
        name: "2-turn headless session, one sandboxed shell call (in process, median)",
        value: m,
        unit: "ms",
        target: "≤ 150 ms",
        pass: m <= 150,
      });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) Deno.env.delete(k);
        else Deno.env.set(k, v);
      }
      await server.close();
    }
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
  return results;
}
