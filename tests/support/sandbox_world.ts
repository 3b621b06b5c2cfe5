/**
 * Test worlds for the OS sandbox on real bwrap, the launcher called directly (no guard in
 * between, as with the guard forced open): a temporary root holding a workspace `ws`, a config
 * dir, a home and a data dir, the policy over them, and a way to run commands in the sandbox.
 *
 * - {@link commandWorld}: each `run(command)` in a fresh sandbox of the default settings, resolving
 *   the tool result's text (the after-command scan and cleanup tests);
 * - {@link limitsWorld}: one sandbox with the given limits for the world's life, `run` resolving
 *   the tool result (the process and memory limit tests).
 * @module
 */
import { join } from "node:path";
import { Policy } from "../../core/policy/policy.ts";
import {
  CommandSandbox,
  DEFAULT_SANDBOX,
  type SandboxStatus,
} from "../../core/policy/sandbox/mod.ts";
import type { SandboxLimits } from "../../core/policy/sandbox/limits.ts";
import { makeExecuteCommandTool } from "../../plugins/exec/mod.ts";
import { runTool, toolContext } from "./fixtures.ts";

const dec = new TextDecoder();

/** An active bwrap sandbox in mode `auto` (auto-allow on), for `sandboxGuard` unit rows. */
export const SANDBOX_ON: SandboxStatus = {
  mode: "auto",
  active: true,
  backend: "bwrap",
  autoAllow: true,
  reason: "",
};

/** Runs `cmd` in bash on the host (in `cwd`); resolves stdout then stderr. */
export async function sh(cmd: string, cwd?: string): Promise<string> {
  const o = await new Deno.Command("bash", { args: ["-c", cmd], cwd }).output();
  return dec.decode(o.stdout) + dec.decode(o.stderr);
}

/** Whether `p` exists (a dangling symlink counts). */
export const exists = (p: string) => Deno.lstat(p).then(() => true, () => false);

/**
 * An attacker pass's world: a temp root (real path; under `dir`, default the system temp dir)
 * holding `home` and `ws`, built by the bash text `script(home, ws)` run with `set -e` (it fails
 * the test when a step fails). `cleanup` makes everything writable again (a command may have
 * left read-only folders) and removes the root.
 */
export async function attackRoot(
  prefix: string,
  script: (home: string, ws: string) => string,
  dir?: string,
) {
  const root = await Deno.realPath(await Deno.makeTempDir({ dir, prefix }));
  const home = join(root, "home"), ws = join(root, "ws");
  const o = await new Deno.Command("bash", {
    args: ["-c", `set -e; mkdir -p '${home}' '${ws}'\n${script(home, ws)}`],
    stderr: "piped",
  }).output();
  if (!o.success) throw new Error(`world set-up failed: ${dec.decode(o.stderr)}`);
  return {
    root,
    home,
    ws,
    cleanup: async () => {
      await sh(`chmod -R u+rwx '${root}'`);
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** git's identity options for commits made by a test. */
export const GIT_ID = "-c user.name=a -c user.email=a@example.com";

/** The folders of a world under a new temporary root (real paths). */
async function folders(prefix: string) {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const ws = join(root, "ws"), home = join(root, "home"), data = join(root, "data");
  for (const d of [ws, join(root, "cfg"), home, data]) await Deno.mkdir(d, { recursive: true });
  return { root, ws, home, data, cfg: join(root, "cfg") };
}

/**
 * A world whose `setup` (bash, run in `ws` before the policy is made) prepares the workspace;
 * `run(command)` runs each command in a fresh sandbox of the default settings and resolves the
 * tool result's text. `cleanup` makes everything writable again, then removes the root.
 */
export async function commandWorld(prefix: string, setup?: string) {
  const { root, ws, home, data, cfg } = await folders(prefix);
  if (setup) await sh(setup, ws);
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: cfg,
    dataDir: data,
    home,
  });
  await policy.globsReady();
  const run = async (command: string) => {
    const sb = await CommandSandbox.create(policy, DEFAULT_SANDBOX);
    try {
      const r = await runTool(makeExecuteCommandTool(sb), { command }, toolContext({ cwd: ws }));
      return String(r.content);
    } finally {
      sb.close();
    }
  };
  return {
    root,
    ws,
    home,
    data,
    policy,
    run,
    cleanup: async () => {
      await sh(`chmod -R u+rwx '${root}'`);
      await Deno.remove(root, { recursive: true });
    },
  };
}

/**
 * A world with one sandbox (auto mode) of `limits` for its whole life; `run(command)` resolves the
 * tool result. `cleanup` closes the sandbox and removes the root.
 */
export async function limitsWorld(prefix: string, limits: SandboxLimits) {
  const { root, ws, home, cfg } = await folders(prefix);
  const policy = Policy.create({}, { allow: [], deny: [] }, {
    workspace: ws,
    configDir: cfg,
    home,
  });
  const sb = await CommandSandbox.create(policy, { mode: "auto", autoAllow: true, limits });
  const run = (command: string) =>
    runTool(makeExecuteCommandTool(sb), { command }, toolContext({ cwd: ws }));
  return {
    ws,
    sb,
    policy,
    run,
    cleanup: async () => {
      sb.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * Runs each of `commands` (id → shell command) through `execute_command` in a fresh session
 * sandbox of `policy` (the default `sandbox:` setting; bwrap must work), in `cwd`; returns the
 * tool results' text by id. The sandbox is closed afterwards.
 */
export async function sandboxOutputs(
  policy: Policy,
  commands: Record<string, string>,
  cwd: string,
): Promise<Record<string, string>> {
  await policy.globsReady();
  const sb = await CommandSandbox.create(policy, DEFAULT_SANDBOX);
  try {
    if (!sb.status.active) throw new Error(`the sandbox is off: ${sb.status.reason}`);
    const out: Record<string, string> = {};
    for (const [id, command] of Object.entries(commands)) {
      const r = await runTool(makeExecuteCommandTool(sb), { command }, toolContext({ cwd }));
      out[id] = String(r.content);
    }
    return out;
  } finally {
    sb.close();
  }
}
