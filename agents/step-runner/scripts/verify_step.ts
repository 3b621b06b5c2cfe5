/**
 * step-runner: run the step plan's own "Test commands" through execute_command. A failure goes
 * back to the coder with its tail while fix attempts remain (`max_fix_attempts`), else the step
 * fails. No declared commands: nothing to run, recorded as such.
 */
type Ctx = {
  exec(command: string, opts?: { cwd?: string; timeout_ms?: number }): Promise<
    { exit_code: number | null; stdout: string; stderr: string; denied?: string }
  >;
};

export default async function verifyStep(
  state: Record<string, unknown>,
  ctx: Ctx,
): Promise<Record<string, unknown>> {
  const cwd = String(state.project_dir ?? ".");
  const checks: Record<string, unknown>[] = [];
  for (const command of (state.test_commands ?? []) as string[]) {
    const t0 = Date.now();
    const r = await ctx.exec(command, { cwd, timeout_ms: 600_000 });
    const exit = r.denied ? null : r.exit_code;
    checks.push({ command, exit_code: exit, duration_ms: Date.now() - t0 });
    if (exit !== 0) {
      const fixes = Number(state.fix_attempts ?? 0);
      const tail = (r.denied ? `denied: ${r.denied}` : `${r.stdout}\n${r.stderr}`).trim().slice(
        -3000,
      );
      if (fixes < Number(state.max_fix_attempts ?? 2)) {
        return {
          checks,
          verify_failed: true,
          fix_attempts: fixes + 1,
          fix_instructions:
            `The step's test command \`${command}\` failed (exit ${exit}):\n${tail}\nFix the cause.`,
          _next: "implement",
        };
      }
      return { checks, verify_failed: true, _next: "end_failed" };
    }
  }
  return { checks, verify_failed: false, fix_instructions: "", _next: "edge_case_sweep" };
}
