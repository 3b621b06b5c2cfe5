/**
 * The text of the built-in commands that only report (one text for the REPL and ACP): `/status`,
 * `/agents`, `/skills`, `/memory` (the instruction files loaded, numbered; the REPL opens one in
 * `$EDITOR`, core/frontends/repl/commands.ts).
 * @module
 */
import type { AgentSession } from "../../session/types.ts";
import { costUsd, modelInfo } from "../../config/models.ts";

/** Token usage so far (the frontend's count of its turns). */
export interface UsageSoFar {
  prompt_tokens: number;
  completion_tokens: number;
  requests: number;
}

/**
 * `/status`: model (and its window), provider base URL, agent, session, workspace, trust,
 * permission mode, OS sandbox, tokens and cost so far (`not reported` when the server sent no
 * usage), MCP servers, custom commands. One `label  value` per line.
 */
export function statusText(
  session: AgentSession,
  usage: UsageSoFar | undefined,
  custom: number,
): string {
  const config = session.workspace.app.config;
  const info = modelInfo(config, session.model);
  const t = session.workspace.trust;
  const sb = session.sandbox;
  // The permission mode, when this build's policy has one (docs/modes.md).
  const mode = (session as { mode?: unknown }).mode ??
    (session.policy as { mode?: unknown }).mode;
  const u = usage ?? { prompt_tokens: 0, completion_tokens: 0, requests: 0 };
  const cost = costUsd(u, info.price);
  const rows: [string, string][] = [
    ["model", `${session.model} (context window ${info.contextWindow} tokens)`],
    // The server the requests go to: the first thing to check when it misbehaves.
    ["provider", session.workspace.providerConfig.baseURL],
    ["agent", session.agent],
    ["session", session.id],
    ["workspace", session.cwd],
    [
      "trust",
      t.trusted
        ? `trusted (${t.source === "flag" ? "--trust-workspace" : `${t.source}: ${t.path}`})`
        : "not trusted (project config, plugins, MCP servers and commands of the workspace are off; /trust)",
    ],
    ...(typeof mode === "string" ? [["mode", mode] as [string, string]] : []),
    [
      "sandbox",
      sb
        ? `${
          sb.active ? `on (${sb.backend}${sb.autoAllow ? ", auto_allow" : ""})` : "off"
        } — ${sb.reason}`
        : "none",
    ],
    [
      "tokens",
      `${
        u.requests && !(u.prompt_tokens + u.completion_tokens)
          ? "not reported"
          : `${
            u.prompt_tokens + u.completion_tokens
          } (${u.prompt_tokens} in, ${u.completion_tokens} out)`
      } in ${u.requests} model request(s)` +
      (cost !== undefined ? ` · $${cost.toFixed(4)}` : " · no price for this model"),
    ],
  ];
  const mcp = session.mcp?.servers ?? [];
  rows.push([
    "mcp",
    mcp.length
      ? mcp.map((s) =>
        `${s.name} (${s.type}): ${s.status}${s.status === "connected" ? `, ${s.tools} tools` : ""}`
      ).join("; ")
      : "no servers",
  ]);
  rows.push(["commands", `${custom} custom (/help lists them)`]);
  const w = Math.max(...rows.map(([k]) => k.length)) + 2;
  return rows.map(([k, v]) => `${k.padEnd(w)}${v}`).join("\n");
}

/** `/agents`: every agent of the workspace, `*` marking the session's, with its description. */
export function agentsText(session: AgentSession): string {
  const reg = session.workspace.agents;
  return reg.names().map((n) => {
    const d = (reg.get(n) as { description?: string } | undefined)?.description ?? "";
    return `${n === session.agent ? "*" : " "} ${n}${d ? ` — ${d.split("\n")[0]}` : ""}`;
  }).join("\n") + "\n(/agent NAME switches)";
}

/** `/skills`: every skill of the workspace, marking those loaded in this session. */
export function skillsText(session: AgentSession): string {
  const skills = session.workspace.skills;
  if (!skills.length) return "No skills in this workspace (.coyote/skills/, plugins).";
  return skills.map((k) =>
    `${k.name}${session.skills.loaded.includes(k.name) ? " (loaded)" : ""} — ${k.description}`
  ).join("\n") + "\n(/skill NAME loads one)";
}

/** The instruction files of the session's workspace, outermost first (absolute paths). */
export function instructionFiles(session: AgentSession): string[] {
  const ins = session.workspace.instructions;
  if (!ins) return [];
  return ins.files?.map((f) => f.path) ?? ins.path.split(", ");
}

/** `/memory`: the instruction files loaded, numbered. */
export function memoryText(session: AgentSession, editor: boolean): string {
  const files = instructionFiles(session);
  if (!files.length) {
    return "No instruction files loaded (AGENTS.md, COYOTE.md, CLAUDE.md or GEMINI.md; /init writes AGENTS.md).";
  }
  return files.map((f, i) => `${i + 1}. ${f}`).join("\n") +
    (editor ? "\n(/memory N opens one in $EDITOR; the change applies to new sessions)" : "");
}
