/**
 * coder: the validation loop's verify step (seed 003: verify → fixer → re-verify). Runs the build
 * and test commands — `verify_commands` (one per line) or, when empty, the ones the project
 * declares: deno (deno.json tasks build/test, else `deno test`), npm/pnpm/yarn (package.json
 * scripts build/test, the package manager from the lock file), cargo, go, python (pytest), make
 * (a `test:` target) — through execute_command (guard and OS sandbox apply), stopping at the first
 * failure. Emits `validation_loop_iteration` {attempt, passed, failing_command} after each run and
 * `validation_loop_rerun` {attempt} before a run that follows a fix. Routes: passed → self_review;
 * failed with fix attempts left → implement (with the failure's tail); else → end_failure.
 */
type ExecResult = { exit_code: number | null; stdout: string; stderr: string; denied?: string };
type Ctx = {
  exec(command: string, opts?: { cwd?: string; timeout_ms?: number }): Promise<ExecResult>;
  event(name: string, data: Record<string, unknown>): void;
};

const TAIL = 3_000;

function readJson(text: string): Record<string, unknown> | undefined {
  try {
    // deno.jsonc / package.json: drop // and /* */ comments outside strings, then parse.
    return JSON.parse(
      text.replace(/("(?:\\.|[^"\\])*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_m, s) => s ?? ""),
    );
  } catch {
    return undefined;
  }
}

/** The project's build and test commands, from the files `have` (name → text, or "" if unread). */
export function detectCommands(have: Record<string, string>): string[] {
  const deno = have["deno.json"] ?? have["deno.jsonc"];
  if (deno !== undefined) {
    const tasks = (readJson(deno)?.tasks ?? {}) as Record<string, unknown>;
    return [
      ...(tasks.build ? ["deno task build"] : []),
      tasks.test ? "deno task test" : "deno test -A",
    ];
  }
  if (have["package.json"] !== undefined) {
    const scripts = (readJson(have["package.json"])?.scripts ?? {}) as Record<string, unknown>;
    const pm = "pnpm-lock.yaml" in have ? "pnpm" : "yarn.lock" in have ? "yarn" : "npm";
    const out = [];
    if (scripts.build) out.push(`${pm} run build`);
    if (scripts.test) out.push(`${pm} test`);
    return out;
  }
  if ("Cargo.toml" in have) return ["cargo build", "cargo test"];
  if ("go.mod" in have) return ["go build ./...", "go test ./..."];
  if ("pyproject.toml" in have || "pytest.ini" in have || "setup.py" in have) {
    return ["python3 -m pytest -q"];
  }
  if (have["Makefile"] !== undefined && /^test\s*:/m.test(have["Makefile"])) return ["make test"];
  return [];
}

const MARKERS = [
  "deno.json",
  "deno.jsonc",
  "package.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  "Cargo.toml",
  "go.mod",
  "pyproject.toml",
  "pytest.ini",
  "setup.py",
  "Makefile",
];
const READ = new Set(["deno.json", "deno.jsonc", "package.json", "Makefile"]);

async function commands(state: Record<string, unknown>, ctx: Ctx, cwd: string): Promise<string[]> {
  const declared = String(state.verify_commands ?? "").split("\n").map((l) => l.trim()).filter(
    Boolean,
  );
  if (declared.length) return declared;
  const ls = await ctx.exec(
    `for f in ${MARKERS.join(" ")}; do [ -e "$f" ] && echo "$f"; done; true`,
    { cwd },
  );
  const have: Record<string, string> = {};
  for (const f of ls.stdout.split("\n").filter(Boolean)) {
    have[f] = READ.has(f) ? (await ctx.exec(`cat ${f}`, { cwd })).stdout : "";
  }
  return detectCommands(have);
}

export default async function verify(
  state: Record<string, unknown>,
  ctx: Ctx,
): Promise<Record<string, unknown>> {
  const cwd = String(state.project_dir ?? ".");
  const fixes = Number(state.fix_attempts ?? 0);
  const attempt = fixes + 1;
  if (fixes > 0) ctx.event("validation_loop_rerun", { attempt });
  const cmds = await commands(state, ctx, cwd);
  const runs: Record<string, unknown>[] = [];
  let failing: { command: string; exit_code: number | null; tail: string } | undefined;
  for (const command of cmds) {
    const started = Date.now();
    const r = await ctx.exec(command, { cwd, timeout_ms: 600_000 });
    const exit = r.denied ? null : r.exit_code;
    runs.push({
      command,
      exit_code: exit,
      duration_ms: Date.now() - started,
      ...(r.denied ? { denied: r.denied } : {}),
    });
    if (exit !== 0) {
      const out = r.denied ? `denied: ${r.denied}` : `${r.stdout}\n${r.stderr}`.trim();
      failing = { command, exit_code: exit, tail: out.slice(-TAIL) };
      break;
    }
  }
  const passed = !failing;
  ctx.event("validation_loop_iteration", {
    attempt,
    passed,
    failing_command: failing?.command ?? null,
  });
  const log = cmds.length
    ? runs.map((r) => `attempt ${attempt}: \`${r.command}\` exit ${r.exit_code}`)
    : [`attempt ${attempt}: no build or test commands found (set the verify_commands variable)`];
  const base = {
    verify_passed: passed,
    verify_runs: runs,
    verify_log: log,
    failing_command: failing?.command ?? "",
  };
  if (passed) return { ...base, fix_instructions: "", _next: "self_review" };
  const max = Number(state.max_fix_attempts ?? 3);
  if (fixes < max) {
    return {
      ...base,
      fix_attempts: fixes + 1,
      fix_instructions:
        `Verification failed (attempt ${attempt}; ${max - fixes} fix attempt(s) left): \`${
          failing!.command
        }\` exited ${failing!.exit_code}.\n` +
        `Its output ends with:\n${
          failing!.tail
        }\nFind and fix the cause; do not weaken or skip tests.`,
      _next: "implement",
    };
  }
  return { ...base, _next: "end_failure" };
}
