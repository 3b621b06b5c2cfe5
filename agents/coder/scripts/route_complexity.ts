/** coder: plans at or above `approval_threshold` stop for approval; smaller ones go straight on. */
export default function routeComplexity(state: Record<string, unknown>): Record<string, unknown> {
  const score = Number(state.complexity_score ?? 10);
  const threshold = Number(state.approval_threshold ?? 8);
  return { _next: score >= threshold ? "gate_approval" : "implement" };
}
