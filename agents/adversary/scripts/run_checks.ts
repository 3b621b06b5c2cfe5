/**
 * adversary: run ONLY the verification commands the request declared (never invented or
 * detected), once each, in order, under one total deadline (`checks_deadline_s`, default 3300 s).
 * Each run is recorded: command, exit code, duration, status PASS | FAIL | SKIPPED (no budget
 * left) and, for a failure, the tail of its output. Commands run through execute_command (the
 * guard and the OS sandbox apply); a denied command is a FAIL saying so.
 */
type Exec = (command: string, opts?: { cwd?: string; timeout_ms?: number }) => Promise<{
  exit_code: number | null;
  stdout: string;
  stderr: string;
  denied?: string;
}>;

const TAIL = 2_000;

export default async function runChecks(
  state: Record<string, unknown>,
  ctx: { exec: Exec; now?: () => number },
): Promise<Record<string, unknown>> {
  const now = ctx.now ?? Date.now;
  const commands = ((state.verification_commands ?? []) as unknown[]).map(String).filter((c) =>
    c.trim()
  );
  const deadlineMs = Number(state.checks_deadline_s ?? 3300) * 1000;
  const cwd = String(state.project_dir ?? ".");
  const started = now();
  const checks = [];
  for (const command of commands) {
    const left = deadlineMs - (now() - started);
    if (left <= 0) {
      checks.push({
        command,
        status: "SKIPPED",
        exit_code: null,
        duration_ms: 0,
        reason: `no time left of the ${deadlineMs / 1000} s deadline`,
      });
      continue;
    }
    const t0 = now();
    const r = await ctx.exec(command, { cwd, timeout_ms: left });
    const duration_ms = now() - t0;
    if (r.denied) {
      checks.push({
        command,
        status: "FAIL",
        exit_code: null,
        duration_ms,
        tail: `denied: ${r.denied}`,
      });
      continue;
    }
    const pass = r.exit_code === 0;
    const out = `${r.stdout}${r.stderr ? `\n${r.stderr}` : ""}`;
    checks.push({
      command,
      status: pass ? "PASS" : "FAIL",
      exit_code: r.exit_code,
      duration_ms,
      ...(pass ? {} : { tail: out.slice(-TAIL) }),
    });
  }
  return { checks, checks_reached: true };
}
