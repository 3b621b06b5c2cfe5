/**
 * adversary: the verdict, computed, never generated (seed 002).
 *
 *   ADVERSARIAL_REVIEW: CONFORMS
 *   Criteria: N/N met (all with tests).
 *
 * iff there are criteria, all are MET, the holistic pass found nothing and no stage faulted;
 * otherwise
 *
 *   ADVERSARIAL_REVIEW: DIVERGES
 *   Criteria: X/N met, Y partial, Z unmet/diverged.
 *   Complaints:
 *   1. <a PIPELINE-FAULT first, when any>
 *   2. Acceptance criterion "<quoted>" — Unmet — <what the diff does or omits> (file:line) — <fix>
 *
 * Both end with a `Verification runs:` section (the recorded runs, or a marker saying none were
 * declared or the review never reached them). If computing the verdict itself throws, the crash
 * guard prints a bare DIVERGES with a "verdict computation error" line and no section.
 */
type Verdict = {
  criterion_id: string;
  status: string;
  evidence: { file: string; line: number; note: string }[];
  test: { file: string; line: number } | null;
  explanation: string;
  fix: string;
};
type Extra = { kind: string; file: string; line: number; complaint: string; fix: string };
type Check = {
  command: string;
  status: "PASS" | "FAIL" | "SKIPPED";
  exit_code: number | null;
  duration_ms: number;
  tail?: string;
  reason?: string;
};

const KIND: Record<string, string> = {
  absence: "Absence",
  scope_drift: "Scope drift",
  substitution: "Substitution",
  gamed_test: "Gamed test",
  out_of_scope: "Out of scope",
};

function where(evidence: Verdict["evidence"]): string {
  const refs = evidence.filter((e) => e.file && !String(e.note).startsWith("PIPELINE-FAULT:"))
    .map((e) => `${e.file}:${e.line}`);
  return refs.length ? ` (${refs.join(", ")})` : "";
}

function title(status: string): string {
  return status === "PARTIAL" ? "Partial" : status === "DIVERGED" ? "Diverged" : "Unmet";
}

export function verificationSection(state: Record<string, unknown>): string {
  if (!state.checks_reached) {
    return "Verification runs: not run (the review stopped before the verification stage).";
  }
  const checks = (state.checks ?? []) as Check[];
  if (!checks.length) return "Verification runs: none declared.";
  const lines = ["Verification runs:"];
  for (const c of checks) {
    if (c.status === "SKIPPED") {
      lines.push(`- SKIPPED \`${c.command}\` (${c.reason ?? "no time left of the deadline"})`);
      continue;
    }
    const secs = (c.duration_ms / 1000).toFixed(1);
    lines.push(`- ${c.status} \`${c.command}\` (exit ${c.exit_code ?? "none"}, ${secs} s)`);
    if (c.status === "FAIL" && c.tail) {
      for (const l of c.tail.trimEnd().split("\n").slice(-20)) lines.push(`    ${l}`);
    }
  }
  return lines.join("\n");
}

export function computeVerdict(state: Record<string, unknown>): string {
  const criteria = (state.criteria ?? []) as { id: string; text: string }[];
  const verdicts = (state.verdicts ?? []) as Verdict[];
  const extras = (state.extras ?? []) as Extra[];
  const faults = [...(state.faults ?? []) as string[]];
  const lastError = state.last_error as { node?: string; message?: string } | undefined;
  if (lastError?.node === "holistic") {
    faults.push(`PIPELINE-FAULT: holistic: ${lastError.message ?? "failed"}`);
  }
  const n = criteria.length;
  let met = 0, partial = 0, unmet = 0;
  const complaints: string[] = [...faults];
  if (n === 0 && !faults.length) {
    complaints.push(
      "No acceptance criteria were found: without a plan to check against, nothing can conform. Give the plan's acceptance criteria in the request.",
    );
  }
  criteria.forEach((c, i) => {
    const v = verdicts[i];
    const faulted = v?.evidence?.some((e) => String(e.note).startsWith("PIPELINE-FAULT:"));
    const status = !v ? "UNMET" : faulted ? "UNMET" : v.status;
    if (status === "MET") return void met++;
    if (status === "PARTIAL") partial++;
    else unmet++;
    const what = v ? v.explanation : "no verdict was recorded for it";
    const fix = v?.fix ? ` — ${v.fix}` : "";
    complaints.push(
      `Acceptance criterion "${c.text}" — ${title(status)} — ${what}${
        v ? where(v.evidence) : ""
      }${fix}`,
    );
  });
  for (const x of extras) {
    complaints.push(`${KIND[x.kind] ?? x.kind} — ${x.complaint} (${x.file}:${x.line}) — ${x.fix}`);
  }
  const conforms = n > 0 && met === n && extras.length === 0 && faults.length === 0;
  const head = conforms
    ? ["ADVERSARIAL_REVIEW: CONFORMS", `Criteria: ${n}/${n} met (all with tests).`]
    : [
      "ADVERSARIAL_REVIEW: DIVERGES",
      `Criteria: ${met}/${n} met, ${partial} partial, ${unmet} unmet/diverged.`,
      "Complaints:",
      ...complaints.map((c, i) => `${i + 1}. ${c}`),
    ];
  return [...head, "", verificationSection(state)].join("\n");
}

export default function verdict(state: Record<string, unknown>): Record<string, unknown> {
  try {
    return { report: computeVerdict(state) };
  } catch (e) {
    return {
      report: `ADVERSARIAL_REVIEW: DIVERGES\nverdict computation error: ${
        (e as Error)?.message ?? e
      }`,
    };
  }
}
