/**
 * adversary: the check of one criterion died (max_iterations, provider failure, invalid result
 * twice). That criterion gets a schema-shaped UNMET verdict carrying a `PIPELINE-FAULT: criterion`
 * evidence marker; the other criteria keep their verdicts.
 */
export default function criterionFault(state: Record<string, unknown>): Record<string, unknown> {
  const c = (state.criterion ?? {}) as { id?: string };
  const id = c.id ?? "?";
  const msg = (state.last_error as { message?: string } | undefined)?.message ?? "the check failed";
  return {
    output: {
      criterion_id: id,
      status: "UNMET",
      evidence: [{ file: "", line: 0, note: `PIPELINE-FAULT: criterion ${id}: ${msg}` }],
      test: null,
      explanation: `The check of this criterion died (${msg}); it was not judged.`,
      fix: "Re-run the review; if it dies again, check the criterion by hand.",
    },
  };
}
