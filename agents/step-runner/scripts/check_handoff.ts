/**
 * step-runner: the handoff must exist with front matter `step`, `title`, `result` (complete |
 * partial | blocked) and every section of the handoff protocol. Problems go back to write_handoff
 * once; a second failure fails the step.
 */
type Ctx = { read(path: string): Promise<string | undefined> };

export const SECTIONS = [
  "Summary",
  "Completed",
  "Not completed",
  "Deviations",
  "Downstream plan updates",
  "Edge cases discovered",
  "Evidence",
  "Notes for next step",
];

export function handoffProblems(text: string | undefined): string[] {
  if (text === undefined) return ["the handoff file was not written"];
  const problems: string[] = [];
  const fm = text.match(/^---\r?\n([\s\S]*?)\r?\n---/)?.[1] ?? "";
  for (const k of ["step", "title", "result"]) {
    if (!new RegExp(`^${k}:\\s*\\S`, "m").test(fm)) problems.push(`front matter has no \`${k}\``);
  }
  const result = fm.match(/^result:\s*(\S+)/m)?.[1];
  if (result && !["complete", "partial", "blocked"].includes(result)) {
    problems.push(`result must be complete, partial or blocked (got ${result})`);
  }
  for (const s of SECTIONS) {
    if (!new RegExp(`^#+\\s*${s}\\s*$`, "im").test(text)) {
      problems.push(`section "${s}" is missing`);
    }
  }
  return problems;
}

export default async function checkHandoff(
  state: Record<string, unknown>,
  ctx: Ctx,
): Promise<Record<string, unknown>> {
  const problems = handoffProblems(await ctx.read(String(state.handoff_file)));
  if (!problems.length) return { handoff_problems: "", _next: "gate_user_review" };
  const text = `The handoff is incomplete: ${problems.join("; ")}. Rewrite it.`;
  return { handoff_problems: text, _next: state.handoff_problems ? "end_failed" : "write_handoff" };
}
