/**
 * Guard parts into verdicts: how a part's reason quotes what it is about
 * ({@link q}, {@link clip}, {@link by}) and how parts combine — the worst part
 * wins (deny > ask > allow, {@link SEVERITY}), and the verdict's reason is
 * the worst part's, counting the other parts with the same decision
 * ({@link aggregate}).
 * @module
 */
import type { ToolAccess } from "../../sdk/mod.ts";
import type { Decision, GuardVerdict } from "../protocol/types.ts";
import { type Rule, WILD } from "./rules.ts";
import type { GuardPart, PolicyAccess } from "./types.ts";

export const SEVERITY: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

export const q = (s: string) => JSON.stringify(s.replaceAll(WILD, "…"));
export const clip = (s: string, n = 160) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
export const by = (r: Rule) => `rule ${r.text} (from ${r.source})`;

/** Worst part wins (deny > ask > allow); the reason names the deciding rule or default and the sub-command. */
export function worstPart(parts: GuardPart[]): GuardPart {
  // Worst decision; among equals, an explicit rule beats a default, and a
  // definite finding beats a "only known at run time" one.
  const rank = (p: GuardPart) =>
    SEVERITY[p.decision] * 4 + (p.rule && p.rule !== "default" ? 2 : 0) +
    (/only known at run time/.test(p.reason) ? 0 : 1);
  let worst = parts[0];
  for (const p of parts) if (rank(p) > rank(worst)) worst = p;
  return worst;
}

export function aggregate(parts: GuardPart[], access: PolicyAccess): GuardVerdict {
  const worst = worstPart(parts);
  const same = parts.filter((p) => p.decision === worst.decision && p !== worst).length;
  let reason = worst.reason;
  if (worst.decision !== "allow" && same > 0) {
    reason += ` (and ${same} more part${same > 1 ? "s" : ""} ${
      worst.decision === "deny" ? "denied" : "asking"
    })`;
  }
  return {
    decision: worst.decision,
    reason,
    ...(worst.rule ? { rule: worst.rule } : {}),
    access: access as ToolAccess,
  };
}
