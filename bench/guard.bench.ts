/**
 * Benchmark: the guard's verdict on an ordinary command once the shell parser
 * (mvdan-sh) is loaded — the per-command cost every `execute_command` pays
 * before it runs. Eight everyday commands, 50 rounds; reports the median and
 * p90 in ms (target: median ≤ 1 ms). The number used to be asserted by a timed
 * test in tests/guard_test.ts, which failed on a loaded machine; it lives here.
 *
 * Run alone: `deno task bench guard`.
 * @module
 */
import { Policy } from "../core/policy/policy.ts";
import { loadShellParser } from "../core/policy/shell/parse.ts";
import { type BenchResult, median } from "./stats.ts";

/** Everyday commands: pipes, redirections, `cd &&`, quoting. */
const COMMANDS = [
  "ls -la",
  "git status",
  "git diff HEAD~1 -- src",
  "npm test",
  "grep -rn 'foo bar' src | head -20",
  "cd src && ls",
  "cat a.txt | sort | uniq -c",
  "echo $HOME > out.txt",
];

export default async function (): Promise<BenchResult[]> {
  await loadShellParser();
  const cwd = Deno.makeTempDirSync({ prefix: "coyote-bench-guard-" });
  try {
    const out: BenchResult[] = [];
    // The default mode (auto) and plan mode (core/policy/mode.ts: the command is judged again
    // without Execute allow rules, and asks become denies).
    for (const mode of ["auto", "plan"] as const) {
      const policy = Policy.create(
        { ask: ["Execute(git commit:*)"] },
        { allow: ["Execute(npm run test:*)"], deny: [] },
        {
          workspace: cwd,
          configDir: `${cwd}/config`,
          dataDir: `${cwd}/data`,
          home: `${cwd}/home`,
          mode,
        },
      );
      for (const command of COMMANDS) await policy.evaluate({ type: "execute", command });
      const times: number[] = [];
      for (let round = 0; round < 50; round++) {
        for (const command of COMMANDS) {
          const t0 = performance.now();
          await policy.evaluate({ type: "execute", command });
          times.push(performance.now() - t0);
        }
      }
      const sorted = [...times].sort((a, b) => a - b);
      const med = median(times);
      const tag = mode === "auto" ? "" : ", plan mode";
      out.push(
        {
          name: `verdict${tag}, median`,
          value: med,
          unit: "ms",
          target: "≤ 1 ms",
          pass: med <= 1,
        },
        { name: `verdict${tag}, p90`, value: sorted[Math.floor(sorted.length * 0.9)], unit: "ms" },
      );
    }
    return out;
  } finally {
    Deno.removeSync(cwd, { recursive: true });
  }
}
