/**
 * Spawns `main.ts` exactly as the `coyote` task of deno.json runs it (same
 * `deno run` permission flags, never `-A`, and the task's `NAME=value` variables), with an
 * isolated environment:
 * `COYOTE_CONFIG_DIR` / `COYOTE_DATA_DIR` in temp dirs and `OPENAI_BASE_URL`
 * pointing at a scripted model server.
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };

export const REPO_ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
export const MAIN_TS = `${REPO_ROOT}/main.ts`;

/** The words of the `coyote` task after its leading `NAME=value` environment assignments. */
function taskWords(): { env: Record<string, string>; words: string[] } {
  const all = denoJson.tasks.coyote.split(/\s+/).filter(Boolean);
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < all.length && /^[A-Z_][A-Z0-9_]*=/.test(all[i]); i++) {
    const eq = all[i].indexOf("=");
    env[all[i].slice(0, eq)] = all[i].slice(eq + 1);
  }
  return { env, words: all.slice(i) };
}

/**
 * The environment the `coyote` task sets (its leading `NAME=value` words, e.g.
 * `DENO_NO_UPDATE_CHECK=1` so a source run makes no traffic but the model server's).
 */
export function coyoteTaskEnv(): Record<string, string> {
  return taskWords().env;
}

/** The `deno run` flags of the `coyote` task (between `run` and `main.ts`). */
export function coyoteTaskFlags(): string[] {
  const words = taskWords().words;
  const run = words.indexOf("run");
  const main = words.findIndex((w) => w.endsWith("main.ts"));
  if (words[0] !== "deno" || run < 0 || main < 0) {
    throw new Error(`unexpected coyote task: ${denoJson.tasks.coyote}`);
  }
  return words.slice(run + 1, main);
}

/** The full command line (`deno`, args) for `coyote <args>`. */
export function coyoteCommand(args: string[]): { cmd: string; args: string[] } {
  return { cmd: Deno.execPath(), args: ["run", ...coyoteTaskFlags(), MAIN_TS, ...args] };
}

export interface CoyoteEnv {
  configDir: string;
  dataDir: string;
  /** Removes both temp dirs. */
  cleanup(): Promise<void>;
}

/** Fresh temp config and data dirs. */
export async function makeCoyoteEnv(): Promise<CoyoteEnv> {
  const configDir = await Deno.makeTempDir({ prefix: "coyote-cfg-" });
  const dataDir = await Deno.makeTempDir({ prefix: "coyote-data-" });
  return {
    configDir,
    dataDir,
    cleanup: async () => {
      await Deno.remove(configDir, { recursive: true }).catch(() => {});
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** Environment for a child: isolated dirs, provider pointing at `baseURL` (if given), no inherited OpenAI vars. */
export function childEnv(
  env: CoyoteEnv,
  opts: { baseURL?: string; model?: string; extra?: Record<string, string> } = {},
): Record<string, string> {
  const e: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`,
    COYOTE_CONFIG_DIR: env.configDir,
    COYOTE_DATA_DIR: env.dataDir,
    NO_COLOR: "1",
    ...coyoteTaskEnv(),
  };
  if (opts.baseURL) {
    e.OPENAI_BASE_URL = opts.baseURL;
    e.OPENAI_API_KEY = "test-key-not-secret";
    e.COYOTE_MODEL = opts.model ?? "scripted";
  }
  return { ...e, ...opts.extra };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The process id the run had (of bash when `inherit` was given: it `exec`s coyote). */
  pid: number;
}

/** Runs coyote to completion (stdin: `stdin` text or /dev/null). */
export async function runCoyote(
  args: string[],
  opts: {
    cwd: string;
    env: Record<string, string>;
    stdin?: string;
    timeoutMs?: number;
    /** Bash redirections opened for coyote to inherit (`9>>/tmp/f`): it starts under bash. */
    inherit?: string;
  },
): Promise<RunResult> {
  const c = coyoteCommand(args);
  const { cmd, args: full } = opts.inherit
    ? { cmd: "bash", args: ["-c", `exec ${opts.inherit}; exec "$@"`, "bash", c.cmd, ...c.args] }
    : c;
  const child = new Deno.Command(cmd, {
    args: full,
    cwd: opts.cwd,
    env: opts.env,
    clearEnv: true,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    await w.close();
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, opts.timeoutMs ?? 60_000);
  try {
    const out = await child.output();
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
      pid: child.pid,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Parses stream-json output; throws naming the line when a line is not JSON. */
export function parseJsonLines(stdout: string): Record<string, unknown>[] {
  return stdout.split("\n").filter((l) => l.length).map((l, i) => {
    try {
      return JSON.parse(l);
    } catch {
      throw new Error(`stdout line ${i + 1} is not JSON: ${l.slice(0, 200)}`);
    }
  });
}

/**
 * The text of each tool call's final `tool_call_update` in a `stream-json` run's stdout, by
 * `toolCallId` (ACP `session/update` content blocks joined).
 */
export function toolCallTexts(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of stdout.trim().split("\n").filter(Boolean).map((x) => JSON.parse(x))) {
    const u = l.update;
    if (u?.sessionUpdate === "tool_call_update" && u.content) {
      out[u.toolCallId] = (u.content as { content?: { text?: string } }[])
        .map((c) => c.content?.text ?? "").join("");
    }
  }
  return out;
}

/**
 * A CLI test's world: a fresh {@link makeCoyoteEnv} (with `config` written as its config.yaml when
 * given) and an empty working folder `cwd` (real path); `close` removes both.
 */
export async function cliWorld(prefix: string, config?: string) {
  const env = await makeCoyoteEnv();
  if (config) await Deno.writeTextFile(`${env.configDir}/config.yaml`, config);
  const cwd = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  return {
    env,
    cwd,
    async close() {
      await env.cleanup();
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    },
  };
}
