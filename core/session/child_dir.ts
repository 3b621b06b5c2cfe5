/**
 * A sub-agent that works in another directory — its own git worktree (core/supervisor/worktree.ts,
 * issue 17: parallel coders do not share one working tree): opened with `cwd`
 * (core/session/types.ts `SessionOptions.cwd`), the session's
 *
 * - workspace root is that directory: the file tools' and commands' working directory, the
 *   transcript's `cwd` (the workspace it shares otherwise — client, agents, skills, MCP servers);
 * - guard is its parent tree's root policy moved there (core/policy/policy.ts `forWorkspace`):
 *   inside it the defaults allow, outside it — the parent's working tree included — they ask
 *   (headless: refused); the root's rules and permission mode are followed at each decision and
 *   the child's "always" answers go to the root's policy; the parent's tool set still bounds it;
 * - OS sandbox is its own (./sandbox.ts `rootSandbox` on that moved policy): bwrap binds the
 *   directory writable instead of the parent's workspace, which stays read-only, a linked
 *   worktree's git dirs are mounted read-only (core/policy/sandbox/home_view.ts), and the data dir
 *   the worktree lies in is an empty dir around it (core/policy/sandbox/profile.ts); its
 *   `execute_command` runs there.
 * @module
 */
import type { PolicyLike } from "../engine/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import type { Policy } from "../policy/policy.ts";
import type { CommandSandbox } from "../policy/sandbox/mod.ts";
import type { Workspace } from "./workspace.ts";
import type { AgentSession } from "./types.ts";
import { narrowPolicy } from "./tool_set.ts";
import { rootSandbox, sandboxExec } from "./sandbox.ts";

/** What a session opened in another directory uses instead of its parent's. */
export interface ChildDir {
  /** The parent's workspace with `cwd` (and `newPolicy`) moved to the directory. */
  ws: Workspace;
  /** The session's own sandbox (it closes it). */
  sandbox: CommandSandbox;
  /** The moved policy object (the child's lineage guard: graph scripts' grants, `forWorkspace`). */
  guard: Policy;
  /** The session's base policy: the moved guard, sandbox-guarded, bounded by the parent's tools. */
  policy: PolicyLike;
  /** The parent's tool list with `execute_command` running in {@link sandbox}. */
  tools(parentTools: AnyTool[]): AnyTool[];
}

/**
 * See the module doc. `dir`: an absolute path; `root`: the policy object of the parent's tree
 * (core/session/lineage.ts `Lineage.guard`), moved to `dir`.
 */
export async function childInDir(
  ws: Workspace,
  dir: string,
  parent: AgentSession,
  root: Policy,
): Promise<ChildDir> {
  const moved = root.forWorkspace(dir);
  // The root's rules added since (session "always" answers) and its mode, at each decision.
  let seen = root.rules().length;
  const follow = () => {
    if (moved === root) return;
    if (moved.mode !== root.mode) moved.setMode(root.mode);
    for (const r of root.rules().slice(seen)) moved.addRule(r.decision, r.text, r.source);
    seen = root.rules().length;
  };
  const inDir: Workspace = { ...ws, cwd: dir, newPolicy: () => ws.newPolicy().forWorkspace(dir) };
  const { sandbox, rootPolicy } = await rootSandbox(inDir, (l) => ws.log(l), moved);
  const guarded: PolicyLike = {
    evaluate: (a) => (follow(), rootPolicy.evaluate(a)),
    addRule: (d, r, src) => root.addRule(d, r, src),
  };
  return {
    ws: inDir,
    sandbox,
    guard: moved,
    policy: narrowPolicy(guarded, new Set(parent.toolNames())),
    tools: (list) => sandboxExec(inDir, sandbox, list),
  };
}
