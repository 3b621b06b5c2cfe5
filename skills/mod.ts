/**
 * Built-in skills (Agent Skills `SKILL.md`), embedded in the binary with
 * `import … with { type: "text" }` and parsed by core/extensions/skills/load.ts like any user skill. The
 * folder name is the skill's name.
 * @module
 */
import codeReview from "./code-review/SKILL.md" with { type: "text" };
import delegationProtocol from "./delegation-protocol/SKILL.md" with { type: "text" };
import handoffProtocol from "./handoff-protocol/SKILL.md" with { type: "text" };
import parallelResearch from "./parallel-research/SKILL.md" with { type: "text" };
import planAuthoring from "./plan-authoring/SKILL.md" with { type: "text" };
import planReview from "./plan-review/SKILL.md" with { type: "text" };
import securityReview from "./security-review/SKILL.md" with { type: "text" };
import stepImplementation from "./step-implementation/SKILL.md" with { type: "text" };
import verificationGates from "./verification-gates/SKILL.md" with { type: "text" };

/** One embedded `SKILL.md`: folder name, display path, text. */
export interface BuiltinSkillFile {
  name: string;
  path: string;
  text: string;
}

const file = (name: string, text: string): BuiltinSkillFile => ({
  name,
  path: `builtin:skills/${name}/SKILL.md`,
  text,
});

/** The skills that ship with Coyote, by name. */
export const builtinSkillFiles: BuiltinSkillFile[] = [
  file("code-review", codeReview),
  file("delegation-protocol", delegationProtocol),
  file("handoff-protocol", handoffProtocol),
  file("parallel-research", parallelResearch),
  file("plan-authoring", planAuthoring),
  file("plan-review", planReview),
  file("security-review", securityReview),
  file("step-implementation", stepImplementation),
  file("verification-gates", verificationGates),
];
