/**
 * coder: a clean self-review finishes; a review with findings goes back to `implement` while
 * review attempts remain (`max_review_attempts`), else the change is rejected.
 */
export default function routeReview(state: Record<string, unknown>): Record<string, unknown> {
  if (state.review_clean === true) return { _next: "end_success" };
  const attempts = Number(state.review_attempts ?? 0);
  if (attempts < Number(state.max_review_attempts ?? 1)) {
    return {
      review_attempts: attempts + 1,
      fix_instructions: `Your self-review found problems; address them:\n${
        state.review_notes ?? ""
      }`,
      _next: "implement",
    };
  }
  return { _next: "end_rejected" };
}
