/** step-runner: the reviewer's revision request goes back to the coder. */
export default function revise(state: Record<string, unknown>): Record<string, unknown> {
  const ask = String(state.input || state.choice || "").trim();
  return {
    fix_instructions: `The user asked for a revision: ${ask}`,
    fix_attempts: 0,
    _next: "implement",
  };
}
