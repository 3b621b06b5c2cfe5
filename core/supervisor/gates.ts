/**
 * Gates as code (issue 17): the decisions the seeds' coordinator (agents/sisyphus) made in prompt
 * text, as pure functions over the texts and paths they depend on. The stateful hook that applies
 * them to a session's requests is ./gate_keeper.ts (loaded when a coordinator's turn starts).
 *
 * - {@link parseIntent}: the Phase 0 line `Intent: <what> — class: <class>`.
 * - {@link parsePlanReview}: the plan-review skill's last `PLAN_REVIEW: OKAY|REJECT` line.
 * - {@link parseAdversary}: the adversary's `ADVERSARIAL_REVIEW: CONFORMS|DIVERGES|UNMET` line and
 *   the complaints after it.
 * - {@link reviewerTriggers}: which reviewers must run after an implementation, from the changed
 *   paths (broad scope, attack surface, spec).
 * - {@link securityVerdict}: PASS/FAIL of a security review's `[Severity] …` findings under a
 *   posture (Critical always blocks; `standard` blocks High too, `hardened` High and Medium — the
 *   ladder agents/security-reviewer states to the reviewer).
 * - {@link gateSettings}: the `gates:` setting of config.yaml with its defaults (validated there,
 *   core/config/config.ts).
 * @module
 */

import type { GatesConfig, Posture } from "../config/config.ts";
export type { GatesConfig, Posture };

/** {@link GatesConfig} with every default filled in. */
export type GateSettings = {
  coordinators: string[];
  implementation_agents: string[];
  posture: Posture;
  allow_divergent_completion: boolean;
  allow_insecure_completion: boolean;
  allow_unreviewed_completion: boolean;
  allow_conflicted_completion: boolean;
  broad_scope: { coders: number; files: number; boundaries: string[] };
  attack_surface: string[];
  spec_files: string[];
};

/** Default architectural boundaries (globs over workspace-relative paths). */
export const DEFAULT_BOUNDARIES = [
  "**/protocol/**",
  "**/sdk/**",
  "**/api/**",
  "**/migrations/**",
  "**/schema*",
];
/** Default attack-surface globs: auth, crypto, secrets, shell exec, network, dependency manifests. */
export const DEFAULT_ATTACK_SURFACE = [
  "**/*auth*",
  "**/*login*",
  "**/*password*",
  "**/*crypto*",
  "**/*secret*",
  "**/*token*",
  "**/*exec*",
  "**/*shell*",
  "**/*spawn*",
  "**/*http*",
  "**/*socket*",
  "**/*network*",
  "**/package.json",
  "**/package-lock.json",
  "**/yarn.lock",
  "**/pnpm-lock.yaml",
  "**/deno.json",
  "**/deno.lock",
  "**/Cargo.toml",
  "**/Cargo.lock",
  "**/go.mod",
  "**/go.sum",
  "**/requirements*.txt",
  "**/pyproject.toml",
];
/** Default spec files: a plan or an acceptance list. */
export const DEFAULT_SPEC_FILES = [
  "PLAN.md",
  "plan.md",
  "plans",
  "ACCEPTANCE.md",
  "acceptance.md",
  ".coyote/plan.md",
];

/** The setting with defaults (`raw` already validated by core/config/config.ts). */
export function gateSettings(raw: GatesConfig | undefined): GateSettings {
  const r = raw ?? {};
  return {
    coordinators: r.coordinators ?? ["sisyphus"],
    implementation_agents: r.implementation_agents ?? ["coder", "step-runner"],
    posture: r.posture ?? "standard",
    allow_divergent_completion: r.allow_divergent_completion ?? false,
    allow_insecure_completion: r.allow_insecure_completion ?? false,
    allow_unreviewed_completion: r.allow_unreviewed_completion ?? false,
    allow_conflicted_completion: r.allow_conflicted_completion ?? false,
    broad_scope: {
      coders: r.broad_scope?.coders ?? 2,
      files: r.broad_scope?.files ?? 5,
      boundaries: r.broad_scope?.boundaries ?? DEFAULT_BOUNDARIES,
    },
    attack_surface: r.attack_surface ?? DEFAULT_ATTACK_SURFACE,
    spec_files: r.spec_files ?? DEFAULT_SPEC_FILES,
  };
}

/** The Phase 0 line: `Intent: <text> — class: <class>` (an em/en dash or `-`/`--`, any case). */
export function parseIntent(text: string): { text: string; class: string } | null {
  const m = /^[\s>*_`-]*Intent:[*_`]*\s*(.+?)\s*(?:—|–|--|-)\s*class:\s*([^\n`*_]+?)[\s`*_.]*$/im
    .exec(
      text,
    );
  return m ? { text: m[1].trim(), class: m[2].trim() } : null;
}

/** The last `PLAN_REVIEW: OKAY|REJECT` line of a text (a line of its own), or null. */
export function parsePlanReview(text: string): "OKAY" | "REJECT" | null {
  const all = [...text.matchAll(/^[\s*`_]*PLAN_REVIEW:\s*(OKAY|REJECT)\b/gm)];
  return (all.at(-1)?.[1] as "OKAY" | "REJECT" | undefined) ?? null;
}

/** The adversary's verdict line and the complaints that follow it (its report, verbatim). */
export function parseAdversary(
  text: string,
): { verdict: "CONFORMS" | "DIVERGES" | "UNMET"; complaints: string } | null {
  const all = [...text.matchAll(/^[\s*`_]*ADVERSARIAL_REVIEW:\s*(CONFORMS|DIVERGES|UNMET)\b/gm)];
  const m = all.at(-1);
  if (!m) return null;
  const rest = text.slice(m.index!);
  const at = rest.indexOf("Complaints:");
  return {
    verdict: m[1] as "CONFORMS" | "DIVERGES" | "UNMET",
    complaints: at >= 0 ? rest.slice(at).trim() : "",
  };
}

/** A glob over `/`-separated relative paths: `**` any folders (or none), `*` and `?` within a name. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*" && glob[i + 1] === "*") {
      i++;
      if (glob[i + 1] === "/") {
        i++;
        re += "(?:.*/)?";
      } else re += ".*";
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "i");
}

/** Whether `glob` matches `path` or one of its folders (a glob on a name with stars matches its folder: `src/auth` for `src/auth/x.ts`). */
export function pathMatches(path: string, glob: string | RegExp): boolean {
  const re = typeof glob === "string" ? globToRegExp(glob) : glob;
  const parts = path.split("/");
  for (let i = parts.length; i > 0; i--) if (re.test(parts.slice(0, i).join("/"))) return true;
  return false;
}

function matching(paths: string[], globs: string[]): string[] {
  const res = globs.map(globToRegExp);
  return paths.filter((p) => res.some((r) => pathMatches(p, r)));
}

/** One reviewer a trigger asks for, and why. */
export interface ReviewerTrigger {
  reviewer: "code-reviewer" | "security-reviewer" | "adversary";
  trigger: "broad_scope" | "attack_surface" | "spec";
  reason: string;
}

/**
 * The reviewers an implementation calls for, in the seeds' order (code-reviewer, adversary,
 * security-reviewer): broad scope (≥ `coders` coders in the request, ≥ `files` changed files, or a
 * changed path under a boundary), spec (one of `spec_files` exists: `specFound`), attack surface
 * (a changed path matches `attack_surface`).
 */
export function reviewerTriggers(
  changed: string[],
  coders: number,
  specFound: string | null,
  s: GateSettings,
): ReviewerTrigger[] {
  const out: ReviewerTrigger[] = [];
  const b = s.broad_scope;
  const crossed = matching(changed, b.boundaries);
  const why = coders >= b.coders
    ? `${coders} coders in this request (broad_scope.coders ${b.coders})`
    : changed.length >= b.files
    ? `${changed.length} files changed (broad_scope.files ${b.files})`
    : crossed.length
    ? `architectural boundary crossed: ${crossed.slice(0, 5).join(", ")}`
    : null;
  if (why) out.push({ reviewer: "code-reviewer", trigger: "broad_scope", reason: why });
  if (specFound) {
    out.push({ reviewer: "adversary", trigger: "spec", reason: `a spec exists: ${specFound}` });
  }
  const hit = matching(changed, s.attack_surface);
  if (hit.length) {
    out.push({
      reviewer: "security-reviewer",
      trigger: "attack_surface",
      reason: `attack surface touched: ${hit.slice(0, 5).join(", ")}`,
    });
  }
  return out;
}

/** Severities of the security-review skill, most severe first. */
export const SEVERITIES = ["Critical", "High", "Medium", "Low"] as const;
export type Severity = typeof SEVERITIES[number];

/** Counts of `[Severity] …` finding lines (the security-review skill's format; `**High**` too). */
export function parseFindings(text: string): Record<Severity, number> {
  const n: Record<Severity, number> = { Critical: 0, High: 0, Medium: 0, Low: 0 };
  for (
    const m of text.matchAll(/^[\s>*\-\d.)]*(?:\[|\*\*)(Critical|High|Medium|Low)(?:\]|\*\*)/gim)
  ) {
    const k = m[1][0].toUpperCase() + m[1].slice(1).toLowerCase();
    n[k as Severity]++;
  }
  return n;
}

/**
 * The severities that block under a posture: Critical in every posture (the seed: committed
 * secrets, host-endangering code), `standard` High too, `hardened` High and Medium — the same
 * ladder agents/security-reviewer/config.yaml gives the reviewer, so its own
 * `SECURITY_REVIEW:` line and the computed verdict agree.
 */
export function blockingSeverities(p: Posture): Severity[] {
  return p === "hardened"
    ? ["Critical", "High", "Medium"]
    : p === "standard"
    ? ["Critical", "High"]
    : ["Critical"];
}

/** PASS/FAIL of a security review under `posture`, with the counts and the reason. */
export function securityVerdict(
  text: string,
  posture: Posture,
): { verdict: "PASS" | "FAIL"; counts: Record<Severity, number>; reason: string } {
  const counts = parseFindings(text);
  const blocking = blockingSeverities(posture).filter((s) => counts[s] > 0);
  const tally = SEVERITIES.map((s) => `${counts[s]} ${s}`).join(", ");
  return blocking.length
    ? {
      verdict: "FAIL",
      counts,
      reason: `${tally}; ${blocking.join(" and ")} block under posture ${posture}`,
    }
    : {
      verdict: "PASS",
      counts,
      reason: `${tally}; nothing blocks under posture ${posture}`,
    };
}

/**
 * Whether an implementation child's run failed: its status is `failed`, or its result's marker
 * line (the first non-empty line: agents/coder and agents/step-runner end with it) is
 * `CODER_FAILED`, `CODER_REJECTED`, `STEP_FAILED` or `STEP_REJECTED`. Null when it did not fail,
 * else the marker (or `failed`). Such a run does not make reviewers required by itself
 * (docs/subagents.md "Gates": the reviewers review an implementation that succeeded).
 */
export function implementationFailure(status: string, text: string): string | null {
  if (status === "failed") return "failed";
  const m = /^\s*[*`_]*((?:CODER|STEP)_(?:FAILED|REJECTED))\b/.exec(text);
  return m ? m[1] : null;
}
