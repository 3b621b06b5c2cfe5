/**
 * step-runner: route by the coder's marker line (CODER_COMPLETE / CODER_REJECTED / CODER_FAILED).
 * A failure keeps the coder's report as `coder_failure` for the STEP_FAILED output (what failed
 * and the last check's output; without it the step's failure said nothing about why).
 */
export default function routeCoderResult(state: Record<string, unknown>): Record<string, unknown> {
  const out = String(state.output ?? "");
  if (/^\s*CODER_COMPLETE\b/.test(out)) return { _next: "verify" };
  if (/^\s*CODER_REJECTED\b/.test(out)) return { _next: "end_rejected" };
  return { _next: "end_failed", coder_failure: `Coder's report:\n${out.trim()}\n` };
}
