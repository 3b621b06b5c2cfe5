/**
 * The built-in commands that are agent turns (one text for the REPL, ACP and headless runs):
 * `/init` (write or update AGENTS.md, like Claude Code's `/init` writes CLAUDE.md) and `/review`
 * (the current `git diff` reviewed by the `code-reviewer` agent and, when a plan or acceptance
 * criteria exist, by the `adversary`, both spawned through `agent__spawn` — the supervisor path
 * every sub-agent takes; an agent that cannot spawn reviews the diff itself by the same rules).
 * @module
 */
import type { AgentSession } from "../../session/types.ts";

/** The prompt of `/init [what to stress]`. */
export function initPrompt(args: string): string {
  return [
    "Write or update the file AGENTS.md at the root of this repository: the instructions a coding",
    "agent (and a new contributor) needs to work here. Read the repository first — README, build",
    "and package files (deno.json, package.json, Makefile, pyproject.toml, Cargo.toml, go.mod …),",
    "CI configuration, the source layout, existing instruction files (AGENTS.md, CLAUDE.md,",
    "COYOTE.md, .cursorrules, .github/copilot-instructions.md) — then write, concisely:",
    "- what the project is, in two or three lines;",
    "- the commands to build, test (all tests and one test), lint and format, exactly as they run;",
    "- the layout: which folder holds what, and where to start reading;",
    "- the conventions a change must follow (style, naming, errors, tests, commit messages) that",
    "  the code or its docs show — not generic advice.",
    "If AGENTS.md exists, keep what is still true, correct what is not, add what is missing; do",
    "not duplicate another instruction file, point to it. Use fs_write or fs_patch for the file.",
    "Answer with a short summary of what you wrote or changed.",
    ...(args.trim() ? ["", `The user adds: ${args.trim()}`] : []),
  ].join("\n");
}

/** The open items of the session's last plan (`todo__write`), as `- [status] text` lines. */
function planLines(session: Pick<AgentSession, "history">): string[] {
  const plans = session.history().filter((u) => u.sessionUpdate === "plan") as unknown as {
    entries: { content: string; status: string }[];
  }[];
  return (plans.at(-1)?.entries ?? []).map((e) => `- [${e.status}] ${e.content}`);
}

/**
 * The prompt of `/review [focus or plan file]`. A plan exists when the session has a todo list,
 * or the argument names a file of the workspace (its path is handed to the adversary).
 */
export function reviewPrompt(
  session: Pick<AgentSession, "history" | "toolNames" | "cwd">,
  args: string,
): string {
  const plan = planLines(session);
  const arg = args.trim();
  let planFile = "";
  if (arg && !/\s/.test(arg)) {
    try {
      if (Deno.statSync(arg.startsWith("/") ? arg : `${session.cwd}/${arg}`).isFile) planFile = arg;
    } catch { /* not a file: a focus */ }
  }
  const canSpawn = session.toolNames().includes("agent__spawn");
  const lines = [
    "Review the current change in this repository: the output of `git diff HEAD` (staged and",
    "unstaged changes; when it is empty, `git diff HEAD~1`). Read-only: do not edit files.",
  ];
  if (canSpawn) {
    lines.push(
      "1. Spawn the `code-reviewer` agent with agent__spawn; its prompt: review the current",
      "   `git diff HEAD` of this repository" + (arg && !planFile ? `, focus: ${arg}` : "") + ".",
    );
    if (plan.length || planFile) {
      lines.push(
        "2. A plan exists: also spawn the `adversary` agent with agent__spawn, its prompt the",
        "   plan's acceptance criteria" + (planFile ? ` (read them from ${planFile})` : "") +
          " and the instruction to check the current diff against them.",
        "Collect both with agent__collect.",
      );
    } else lines.push("Collect it with agent__collect.");
    lines.push(
      "Then report: the findings, most severe first, one per line",
      "(`[critical|major|minor|nit] path:line — problem — suggested fix`), and one verdict line.",
    );
  } else {
    lines.push(
      "Review it yourself, as the code-reviewer agent would: correctness and edge cases, error",
      "handling, tests that would fail if the change were wrong, naming, consistency. Findings",
      "most severe first, one per line (`[critical|major|minor|nit] path:line — problem —",
      "suggested fix`), then one verdict line (`approve` or `changes requested`).",
    );
    if (plan.length || planFile) {
      lines.push("Also check the diff against the plan below: all of it, and only it.");
    }
    if (arg && !planFile) lines.push(`Focus: ${arg}`);
  }
  if (plan.length) lines.push("", "The plan of this session:", ...plan);
  return lines.join("\n");
}
