/**
 * Built-in agents, embedded in the binary: each file is imported as text
 * (`import … with { type: "text" }`), so `deno compile` ships them and nothing reads Coyote's own
 * directory at run time. They are parsed by the same code as user files (core/agents/), so a
 * built-in is exactly what a user could write:
 *
 * - `<name>/config.yaml` — Coyote's folder form (sisyphus and its specialists);
 * - `<name>.md` — the Markdown form (front matter + instructions), as Claude Code writes agents;
 * - `<name>/graph.yaml` — graph agents (coder, step-runner, adversary; run by core/graph/).
 * @module
 */
import coyote from "./coyote.md" with { type: "text" };
import sisyphus from "./sisyphus/config.yaml" with { type: "text" };
import explore from "./explore/config.yaml" with { type: "text" };
import librarian from "./librarian/config.yaml" with { type: "text" };
import oracle from "./oracle/config.yaml" with { type: "text" };
import codeReviewer from "./code-reviewer/config.yaml" with { type: "text" };
import securityReviewer from "./security-reviewer/config.yaml" with { type: "text" };
import adversaryGraph from "./adversary/graph.yaml" with { type: "text" };
import coderGraph from "./coder/graph.yaml" with { type: "text" };
import stepRunnerGraph from "./step-runner/graph.yaml" with { type: "text" };
import adversaryCritGateTs from "./adversary/scripts/crit_gate.ts" with { type: "text" };
import adversaryCriterionFaultTs from "./adversary/scripts/criterion_fault.ts" with {
  type: "text",
};
import adversaryDiffFactsTs from "./adversary/scripts/diff_facts.ts" with { type: "text" };
import adversaryPipelineFaultTs from "./adversary/scripts/pipeline_fault.ts" with { type: "text" };
import adversaryRunChecksTs from "./adversary/scripts/run_checks.ts" with { type: "text" };
import adversaryVerdictTs from "./adversary/scripts/verdict.ts" with { type: "text" };
import coderRouteComplexityTs from "./coder/scripts/route_complexity.ts" with { type: "text" };
import coderRouteReviewTs from "./coder/scripts/route_review.ts" with { type: "text" };
import coderVerifyTs from "./coder/scripts/verify.ts" with { type: "text" };
import stepRunnerCheckHandoffTs from "./step-runner/scripts/check_handoff.ts" with { type: "text" };
import stepRunnerResolveStepTs from "./step-runner/scripts/resolve_step.ts" with { type: "text" };
import stepRunnerReviseTs from "./step-runner/scripts/revise.ts" with { type: "text" };
import stepRunnerRouteCoderResultTs from "./step-runner/scripts/route_coder_result.ts" with {
  type: "text",
};
import stepRunnerRouteStalenessTs from "./step-runner/scripts/route_staleness.ts" with {
  type: "text",
};
import stepRunnerRouteSweepTs from "./step-runner/scripts/route_sweep.ts" with { type: "text" };
import stepRunnerVerifyStepTs from "./step-runner/scripts/verify_step.ts" with { type: "text" };

/** One embedded agent file: its name (folder or base name), form, display path and text. */
export interface BuiltinAgentFile {
  name: string;
  form: "config" | "markdown" | "graph";
  /** Shown in messages and `coyote agents list`: `builtin:agents/<name>/config.yaml`. */
  path: string;
  text: string;
  /** A graph's embedded scripts by path relative to its folder. */
  files?: Record<string, string>;
}

const folder = (name: string, text: string): BuiltinAgentFile => ({
  name,
  form: "config",
  path: `builtin:agents/${name}/config.yaml`,
  text,
});

const graph = (name: string, text: string, files: Record<string, string>): BuiltinAgentFile => ({
  name,
  form: "graph",
  path: `builtin:agents/${name}/graph.yaml`,
  text,
  files,
});

/** The agents that ship with Coyote (plugins, the user and the workspace may add or shadow). */
export const builtinAgentFiles: BuiltinAgentFile[] = [
  { name: "coyote", form: "markdown", path: "builtin:agents/coyote.md", text: coyote },
  folder("sisyphus", sisyphus),
  folder("explore", explore),
  folder("librarian", librarian),
  folder("oracle", oracle),
  folder("code-reviewer", codeReviewer),
  folder("security-reviewer", securityReviewer),
  graph("adversary", adversaryGraph, {
    "scripts/crit_gate.ts": adversaryCritGateTs,
    "scripts/criterion_fault.ts": adversaryCriterionFaultTs,
    "scripts/diff_facts.ts": adversaryDiffFactsTs,
    "scripts/pipeline_fault.ts": adversaryPipelineFaultTs,
    "scripts/run_checks.ts": adversaryRunChecksTs,
    "scripts/verdict.ts": adversaryVerdictTs,
  }),
  graph("coder", coderGraph, {
    "scripts/route_complexity.ts": coderRouteComplexityTs,
    "scripts/route_review.ts": coderRouteReviewTs,
    "scripts/verify.ts": coderVerifyTs,
  }),
  graph("step-runner", stepRunnerGraph, {
    "scripts/check_handoff.ts": stepRunnerCheckHandoffTs,
    "scripts/resolve_step.ts": stepRunnerResolveStepTs,
    "scripts/revise.ts": stepRunnerReviseTs,
    "scripts/route_coder_result.ts": stepRunnerRouteCoderResultTs,
    "scripts/route_staleness.ts": stepRunnerRouteStalenessTs,
    "scripts/route_sweep.ts": stepRunnerRouteSweepTs,
    "scripts/verify_step.ts": stepRunnerVerifyStepTs,
  }),
];

/** Name of the agent used when none is chosen (`-a`, config `agent`). */
export const DEFAULT_AGENT = "sisyphus";
