/**
 * Start-up benchmarks (issue 2, "Benchmarks"), against the scripted model
 * server (tests/support/model_server.ts, in this process, no artificial
 * latency), with the `deno run` flags of the `coyote` task:
 *
 * - `coyote --version`: median wall time, ≤ an empty `deno run` (measured interleaved) + 5 ms.
 * - process start → first model request arriving at the server: median, ≤ 2.5 × the floor "a
 *   Deno process posts one request to a local server", each run followed by one of the floor
 *   (issue 22).
 * - a 2-turn headless session with one `execute_command` call: median wall (≤ 350 ms)
 *   and peak RSS (≤ 70 MB, issue 22; `/usr/bin/time -f %M`, max of the runs).
 * - size of the default agent's first request (system prompt + tool schemas), chars / 4 (≤ 5k).
 *
 * `BENCH_RUNS=N` sets the repetitions (default 15). One warm-up run each fills
 * Deno's module and V8 code caches, as an installed binary would have them.
 * Run alone: `deno run --allow-all bench/startup.bench.ts`.
 * @module
 */
import { startModelServer } from "../tests/support/model_server.ts";
import { childEnv, coyoteCommand, makeCoyoteEnv } from "../tests/support/run_coyote.ts";
import { type BenchResult, median } from "./stats.ts";

const RUNS = Number(Deno.env.get("BENCH_RUNS") ?? 15);

const now = () => performance.timeOrigin + performance.now();

async function spawn(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  wrapTime = false,
): Promise<{ code: number; stdout: string; stderr: string; start: number; end: number }> {
  const { cmd, args: full } = coyoteCommand(args);
  const [c, a] = wrapTime ? ["/usr/bin/time", ["-f", "%M", cmd, ...full]] : [cmd, full];
  const start = now();
  const out = await new Deno.Command(c, {
    args: a,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const end = now();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
    start,
    end,
  };
}

export default async function (): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const env = await makeCoyoteEnv();
  const cwd = await Deno.makeTempDir({ prefix: "coyote-bench-ws-" });
  await Deno.writeTextFile(`${cwd}/README.md`, "bench workspace\n");
  try {
    // 1. --version
    const plain = childEnv(env);
    await spawn(["--version"], cwd, plain);
    const v: number[] = [];
    const empty: number[] = [];
    const emptyFile = `${cwd}/empty.ts`;
    await Deno.writeTextFile(emptyFile, "");
    for (let i = 0; i < RUNS; i++) {
      const r = await spawn(["--version"], cwd, plain);
      if (r.code !== 0) throw new Error(`--version failed: ${r.stderr}`);
      v.push(r.end - r.start);
      const e0 = now();
      await new Deno.Command(Deno.execPath(), {
        args: ["run", "--quiet", emptyFile],
        env: plain,
        clearEnv: true,
        stdout: "null",
        stderr: "null",
      }).output();
      empty.push(now() - e0);
    }
    const vMed = median(v), eMed = median(empty);
    results.push({
      name: "coyote --version (median)",
      value: vMed,
      unit: "ms",
      target: `≤ empty deno run + 5 = ${(eMed + 5).toFixed(1)}`,
      pass: vMed <= eMed + 5,
    });
    results.push({ name: "  floor: an empty deno run (median)", value: eMed, unit: "ms" });

    // 2. start → first request; 3. 2-turn session; 4. first request size
    const firstReq: number[] = [];
    let pending: ((t: number) => void) | null = null;
    const server = await startModelServer({
      repeat: true,
      script: [
        { tool_calls: [{ name: "execute_command", arguments: { command: "echo hello" } }] },
        { text: "The command printed hello." },
      ],
      onRequest: (req) => {
        if (pending && req.index % 2 === 0) {
          pending(req.time);
          pending = null;
        }
      },
    });
    try {
      const e = childEnv(env, { baseURL: server.baseURL });
      const args = [
        "--headless",
        "--output-format",
        "json",
        "--allow",
        "Execute(echo hello)",
        "run echo hello",
      ];
      const once = async (wrap = false) => {
        const got = new Promise<number>((res) => (pending = res));
        const r = await spawn(args, cwd, e, wrap);
        if (r.code !== 0) throw new Error(`session failed (${r.code}): ${r.stderr.slice(-2000)}`);
        const res = JSON.parse(r.stdout);
        if (res.usage.requests !== 2) {
          throw new Error(`expected 2 model requests, got ${res.usage.requests}`);
        }
        return { ...r, first: await got };
      };
      await once();
      const walls: number[] = [];
      const floor: number[] = [];
      let arrived: (t: number) => void = () => {};
      const floorServer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
        arrived(now());
        return req.body?.cancel().then(() => new Response("{}")) ?? new Response("{}");
      });
      const post = `await fetch("http://127.0.0.1:${floorServer.addr.port}/v1/chat/completions", ` +
        `{ method: "POST", body: "{}" }).then((r) => r.text());`;
      for (let i = 0; i < RUNS; i++) {
        const r = await once();
        walls.push(r.end - r.start);
        firstReq.push(r.first - r.start);
        const f0 = now();
        const at = new Promise<number>((res) => (arrived = res));
        await new Deno.Command(Deno.execPath(), {
          args: ["eval", "--quiet", post],
          env: e,
          clearEnv: true,
          stdout: "null",
          stderr: "null",
        }).output();
        floor.push((await at) - f0);
      }
      await floorServer.shutdown();
      const fMed = median(firstReq), flMed = median(floor);
      results.push({
        name: "process start → first model request (median)",
        value: fMed,
        unit: "ms",
        target: `≤ 2.5 × floor = ${(2.5 * flMed).toFixed(1)}`,
        pass: fMed <= 2.5 * flMed,
      });
      results.push({
        name: "  floor: a Deno process posts one request to a local server (median)",
        value: flMed,
        unit: "ms",
      });
      const wMed = median(walls);
      results.push({
        name: "2-turn headless session, 1 shell call (median wall)",
        value: wMed,
        unit: "ms",
        target: "≤ 350",
        pass: wMed <= 350,
      });

      let rss = NaN;
      try {
        const rs: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await once(true);
          const kb = Number(r.stderr.trim().split("\n").at(-1));
          if (Number.isFinite(kb)) rs.push(kb / 1024);
        }
        rss = Math.max(...rs);
      } catch (err) {
        console.error(
          `startup.bench: RSS via /usr/bin/time unavailable: ${(err as Error).message}`,
        );
      }
      results.push({
        name: "2-turn headless session peak RSS (max)",
        value: rss,
        unit: "MB",
        target: "≤ 70",
        pass: rss <= 70,
      });

      // deno-lint-ignore no-explicit-any
      const body = server.requests[0].body as any;
      const system = body.messages.find((m: { role: string }) => m.role === "system")?.content ??
        "";
      const chars = JSON.stringify(system).length + JSON.stringify(body.tools ?? []).length;
      const tokens = chars / 4;
      results.push({
        name: "first request: system prompt + tool schemas",
        value: tokens,
        unit: "tokens",
        target: "≤ 5000",
        pass: tokens <= 5000,
      });
      results.push({
        name: "  of which tool schemas",
        value: JSON.stringify(body.tools ?? []).length / 4,
        unit: "tokens",
      });
    } finally {
      await server.close();
    }
  } finally {
    await env.cleanup();
    await Deno.remove(cwd, { recursive: true });
  }
  return results;
}

if (import.meta.main) {
  for (const r of await (await import("./startup.bench.ts")).default()) console.log(r);
}
