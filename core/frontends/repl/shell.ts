/**
 * `!cmd` in the REPL: the user's own shell command, through the guard and in the session's OS
 * sandbox ({@link shell}).
 * @module
 */
import { colorFor, styles } from "../render/style.ts";
import { safeText } from "../../util/terminal_safe.ts";
import { err, type ReplContext } from "./context.ts";

/**
 * `!cmd`: the user's own shell command. The guard decides first — a deny rule refuses it; an
 * `ask` is answered by the user having typed it — then it runs in the session's OS sandbox
 * (core/policy/sandbox/), output straight to the terminal, stdin closed.
 */
export async function shell(ctx: ReplContext, command: string): Promise<void> {
  if (!command) return ctx.say("usage: !COMMAND");
  const s = styles(colorFor(Deno.stderr.isTerminal()));
  const verdict = await ctx.session.policy.evaluate({ type: "execute", command }).catch((e) => ({
    decision: "deny" as const,
    reason: `the guard could not evaluate it (${(e as Error).message})`,
  }));
  if (verdict.decision === "deny") {
    err(s.red(`denied: ${safeText(verdict.reason)}\n`));
    return;
  }
  const sb = ctx.session.commandSandbox;
  await sb?.ready();
  const plan = sb
    ? sb.prepare(command, ctx.session.cwd, "bash", { dotEntries: false })
    : { program: "bash", args: ["-c", command], env: Deno.env.toObject(), sandboxed: false };
  if ("refused" in plan) {
    err(s.red(`${safeText(plan.refused.replace(/^error: /, ""))}\n`));
    return;
  }
  const ctrl = new AbortController();
  const onInt = () => ctrl.abort();
  Deno.addSignalListener("SIGINT", onInt);
  try {
    const child = new Deno.Command(plan.program, {
      args: plan.args,
      cwd: ctx.session.cwd,
      env: plan.env,
      clearEnv: true,
      stdin: "null",
      stdout: "inherit",
      stderr: "inherit",
      signal: ctrl.signal,
    }).spawn();
    const st = await child.status;
    // The exit status always, as a shell prompt would show it (0 too; a signal by name).
    const status = st.signal ? `killed by ${st.signal}` : `exit ${st.code}`;
    const where = plan.sandboxed ? "" : " (not sandboxed)";
    err((st.success ? s.dim : s.red)(`${st.success ? "✓" : "✗"} ${status}${where}\n`));
    // The sandbox's clean-up: `.git`/`.coyote`/`.mcp.json` the command created are removed (the
    // dot-entry rule is off: the user typed the command).
    const note = "after" in plan ? plan.after?.() : undefined;
    if (note) err(s.dim(`${safeText(note)}\n`));
  } catch (e) {
    err(s.red(`could not run: ${safeText((e as Error).message)}\n`));
  } finally {
    Deno.removeSignalListener("SIGINT", onInt);
  }
}
