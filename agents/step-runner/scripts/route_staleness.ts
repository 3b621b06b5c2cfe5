/** step-runner: a major deviation between the plan and the code stops for approval. */
export default function routeStaleness(state: Record<string, unknown>): Record<string, unknown> {
  return { _next: state.has_major_deviation === true ? "gate_deviation" : "implement" };
}
