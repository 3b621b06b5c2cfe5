/** step-runner: route by the coder's marker line (CODER_COMPLETE / CODER_REJECTED / CODER_FAILED). */
export default function routeCoderResult(state: Record<string, unknown>): Record<string, unknown> {
  const out = String(state.output ?? "");
  if (/^\s*CODER_COMPLETE\b/.test(out)) return { _next: "verify" };
  if (/^\s*CODER_REJECTED\b/.test(out)) return { _next: "end_rejected" };
  return { _next: "end_failed" };
}
