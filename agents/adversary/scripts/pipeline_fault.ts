/**
 * adversary: a stage of the pipeline (parse, diff_facts, run_checks) died. Record a
 * `PIPELINE-FAULT:` marker; the verdict turns any fault into DIVERGES with the fault as complaint 1.
 */
export default function pipelineFault(state: Record<string, unknown>): Record<string, unknown> {
  const e = state.last_error as { node?: string; message?: string } | undefined;
  return { faults: [`PIPELINE-FAULT: ${e?.node ?? "unknown stage"}: ${e?.message ?? "failed"}`] };
}
