/**
 * The OS sandbox of a session's commands (core/policy/sandbox/): a root session derives it from
 * its own policy (session rules included) and owns it; a sub-agent shares its root's. The core
 * `execute_command` of the session's tool list is replaced by one that runs in it.
 * @module
 */
import type { PolicyLike } from "../engine/mod.ts";
import type { AnyTool } from "../protocol/types.ts";
import type { Policy } from "../policy/policy.ts";
import {
  CommandSandbox,
  DEFAULT_SANDBOX,
  guardForcedAllow,
  sandboxGuard,
} from "../policy/sandbox/mod.ts";
import { lazyTool, stubData } from "../tools/lazy.ts";
import { signalTree } from "../../plugins/exec/tree.ts";
import type { Workspace } from "./workspace.ts";

/** `execute_command` as generated (core/tools/lazy.ts): the core one, without a sandbox note. */
const EXEC = stubData("plugins", "execute_command");
/** `ast_grep` as generated: it runs the ast-grep program, so in the sandbox too. */
const AST_GREP = stubData("plugins", "ast_grep");
let fsModule: Promise<typeof import("../../plugins/fs/mod.ts")> | undefined;
/** Imports plugins/fs/mod.ts once, at the first `ast_grep` call (or when the tools are warmed). */
function loadFs(): Promise<typeof import("../../plugins/fs/mod.ts")> {
  return fsModule ??= import("../../plugins/fs/mod.ts");
}
let execModule: Promise<typeof import("../../plugins/exec/mod.ts")> | undefined;
/** Imports plugins/exec/mod.ts once: at the first call, or warmed after the first request. */
function loadExec(): Promise<typeof import("../../plugins/exec/mod.ts")> {
  return execModule ??= import("../../plugins/exec/mod.ts");
}

/**
 * A root session's sandbox, made from a new policy object of the workspace (`rootGuard`, its
 * "always" answers add rules to it), and that policy guarded by the sandbox's status
 * (`rootPolicy`, the session's policy). A sub-agent in its own worktree passes `policy`, its
 * guard moved there (./child_dir.ts).
 */
export async function rootSandbox(
  ws: Workspace,
  log: (line: string) => void,
  policy: Policy = ws.newPolicy(),
): Promise<{ sandbox: CommandSandbox; rootPolicy: PolicyLike; rootGuard: Policy }> {
  const app = ws.app;
  const sandbox = await CommandSandbox.create(policy, app.sandbox ?? DEFAULT_SANDBOX, {
    secrets: () => ws.secrets,
    log,
    killTree: (t) => signalTree(t, "SIGKILL"),
  });
  const rootPolicy = sandboxGuard(policy, sandbox.status, () => policy.mode);
  if (guardForcedAllow()) {
    log("coyote: warning: TEST MODE: the guard allows every access (COYOTE_TEST_GUARD=allow)");
  }
  return { sandbox, rootPolicy, rootGuard: policy };
}

/**
 * A tool list with the core `execute_command` replaced by one that runs in `sandbox` (its
 * description carrying the sandbox's note for the model while the sandbox is active), and the
 * core `ast_grep` by one that starts the ast-grep program in it, guarded like the workspace's
 * tools.
 */
export function withSandboxExec(
  ws: Workspace,
  sandbox: CommandSandbox,
  list: AnyTool[],
): AnyTool[] {
  return sandboxExec(ws, sandbox, list);
}

/**
 * The core `execute_command` running in `sandbox`, guarded like the workspace's tools; `like`: a
 * tool list whose `execute_command` and `ast_grep` (core or any session's sandboxed ones) it
 * replaces by ones running in `sandbox` (./child_dir.ts).
 */
export function sandboxExec(ws: Workspace, sandbox: CommandSandbox): AnyTool;
export function sandboxExec(ws: Workspace, sandbox: CommandSandbox, like: AnyTool[]): AnyTool[];
export function sandboxExec(
  ws: Workspace,
  sandbox: CommandSandbox,
  like?: AnyTool[],
): AnyTool | AnyTool[] {
  const note = sandbox.status.active ? sandbox.modelNote() : undefined;
  // A stub: plugins/exec/mod.ts `makeExecuteCommandTool(sandbox, note)` loads at the first call.
  const execTool = ws.protectTool(lazyTool(EXEC, {
    module: loadExec,
    tool: (m) => m.makeExecuteCommandTool(sandbox, note) as AnyTool,
    // The home view's store scan, in a helper process, while the model answers.
    warm: () => void sandbox.ready(),
  }, EXEC.description + (note ? ` ${note}` : "")));
  if (!like) return execTool;
  const astGrep = ws.protectTool(lazyTool(AST_GREP, {
    module: loadFs,
    tool: (m) => m.makeAstGrepTool(sandbox) as AnyTool,
  }));
  const isExec = (t: AnyTool) => t.name === EXEC.name && t.description.startsWith(EXEC.description);
  const isAstGrep = (t: AnyTool) =>
    t.name === AST_GREP.name && t.description === AST_GREP.description;
  return like.map((t) => isExec(t) ? execTool : isAstGrep(t) ? astGrep : t);
}
