/**
 * adversary: the deterministic contract gate over the criterion verdicts.
 * - A verdict whose evidence carries a `PIPELINE-FAULT:` marker is UNMET, whatever status it claims.
 * - MET needs evidence of the change AND a proving test; for a "tests pass"-style criterion a
 *   recorded green run of the declared commands stands in for the test.
 * - A rejected MET is re-checked once (round 0 → `recheck_map`, told why); still rejected after
 *   that, it is PARTIAL.
 * Verdicts stay aligned with `criteria` (position i judges criterion i, whatever id it claims).
 */
type Verdict = {
  criterion_id: string;
  status: string;
  evidence: { file: string; line: number; note: string }[];
  test: { file: string; line: number } | null;
  explanation: string;
  fix: string;
};
type Criterion = { id: string; text: string };
type Check = { command: string; status: string };

const FAULT = "PIPELINE-FAULT:";

export function isFaulted(v: Verdict): boolean {
  return (v.evidence ?? []).some((e) =>
    String(e?.note ?? "").startsWith(FAULT) || String(e?.file ?? "").startsWith(FAULT)
  );
}

/** "The tests pass", "CI is green", "the build succeeds": satisfied by a recorded green run. */
export function isRunCriterion(text: string): boolean {
  return /\b(tests?|test suite|suite|ci|build|checks?|lint)\b[^.]*\b(pass(es)?|green|succeeds?|clean)\b/i
    .test(text) || /\bpass(es)?\b[^.]*\b(tests?|suite|checks?)\b/i.test(text);
}

function greenRun(checks: Check[]): boolean {
  return checks.length > 0 && checks.every((c) => c.status === "PASS");
}

/** Why the gate rejects a verdict, or "" when it stands. */
export function rejection(v: Verdict, c: Criterion, checks: Check[]): string {
  if (v.status !== "MET") return "";
  if (!v.evidence?.length) return "MET without evidence of the change (file and line)";
  if (!v.test) {
    if (isRunCriterion(c.text) && greenRun(checks)) return "";
    return isRunCriterion(c.text)
      ? "MET for a run criterion without a recorded green run of the declared commands"
      : "MET without a proving test (cite the test's file and line)";
  }
  return "";
}

function normalise(v: unknown, c: Criterion): Verdict {
  const o = (v && typeof v === "object" ? v : {}) as Partial<Verdict>;
  return {
    criterion_id: c.id,
    status: typeof o.status === "string" ? o.status : "UNMET",
    evidence: Array.isArray(o.evidence) ? o.evidence : [],
    test: o.test ?? null,
    explanation: typeof o.explanation === "string" ? o.explanation : "no verdict was recorded",
    fix: typeof o.fix === "string" ? o.fix : "",
  };
}

export default function critGate(state: Record<string, unknown>): Record<string, unknown> {
  const criteria = (state.criteria ?? []) as Criterion[];
  const checks = (state.checks ?? []) as Check[];
  const round = Number(state.gate_round ?? 0);
  let verdicts = criteria.map((c, i) => normalise((state.verdicts as unknown[] ?? [])[i], c));
  if (round >= 1) {
    const recheck = (state.recheck ?? []) as Criterion[];
    const again = (state.rechecked ?? []) as unknown[];
    verdicts = verdicts.map((v) => {
      const j = recheck.findIndex((r) => r.id === v.criterion_id);
      return j >= 0 ? normalise(again[j], criteria.find((c) => c.id === v.criterion_id)!) : v;
    });
  }
  const notes: string[] = [];
  const rejected: (Criterion & { rejection: string })[] = [];
  verdicts = verdicts.map((v, i) => {
    if (isFaulted(v)) {
      if (v.status !== "UNMET") {
        notes.push(`${v.criterion_id}: PIPELINE-FAULT evidence forces UNMET`);
      }
      return { ...v, status: "UNMET" };
    }
    const why = rejection(v, criteria[i], checks);
    if (!why) return v;
    if (round === 0) {
      rejected.push({ ...criteria[i], rejection: why });
      return v;
    }
    notes.push(`${v.criterion_id}: ${why}; re-check exhausted, counted PARTIAL`);
    return {
      ...v,
      status: "PARTIAL",
      explanation: `${v.explanation} (gate: ${why}; re-check exhausted)`,
    };
  });
  if (round === 0 && rejected.length) {
    return { verdicts, recheck: rejected, gate_round: 1, gate_notes: notes, _next: "recheck_map" };
  }
  return { verdicts, recheck: [], gate_round: round + 1, gate_notes: notes, _next: "holistic" };
}
