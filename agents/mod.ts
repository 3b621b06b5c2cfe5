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

/** One embedded agent file: its name (folder or base name), form, display path and text. */
export interface BuiltinAgentFile {
  name: string;
  form: "config" | "markdown" | "graph";
  /** Shown in messages and `coyote agents list`: `builtin:agents/<name>/config.yaml`. */
  path: string;
  text: string;
}

const folder = (name: string, text: string): BuiltinAgentFile => ({
  name,
  form: "config",
  path: `builtin:agents/${name}/config.yaml`,
  text,
});

const graph = (name: string, text: string): BuiltinAgentFile => ({
  name,
  form: "graph",
  path: `builtin:agents/${name}/graph.yaml`,
  text,
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
  graph("adversary", adversaryGraph),
  graph("coder", coderGraph),
  graph("step-runner", stepRunnerGraph),
];

/** Name of the agent used when none is chosen (`-a`, config `agent`). */
export const DEFAULT_AGENT = "sisyphus";
