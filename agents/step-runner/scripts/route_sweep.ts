/** step-runner: broad or risky changes get an independent review before the handoff. */
export default function routeSweep(state: Record<string, unknown>): Record<string, unknown> {
  return {
    _next: state.needs_independent_review === true ? "independent_review" : "write_handoff",
  };
}
