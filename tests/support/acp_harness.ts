/**
 * Test harness for `coyote --acp-server`: spawns `main.ts` as a subprocess with the
 * `coyote` task's permission flags and drives it with the ACP SDK's own client
 * (`acp.client()` + `ndJsonStream` over the child's stdio).
 *
 * Every stdout line is recorded raw so tests can assert that each one parses as a
 * JSON-RPC 2.0 message ({@link AcpHarness.assertStdoutPure}). The fake client implements
 * `session/request_permission` (answers from a queue), `fs/*` and `terminal/*` (real files
 * and real processes), recording every call.
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";

import { coyoteTaskEnv, coyoteTaskFlags, MAIN_TS } from "./run_coyote.ts";
import { type ModelServer, type Script, startModelServer } from "./model_server.ts";
import assert from "node:assert/strict";

/** `run` plus the `coyote` task's flags (read from deno.json), never `-A`. */
export const COYOTE_FLAGS = ["run", ...coyoteTaskFlags()];
export { MAIN_TS };

export interface HarnessOptions {
  /** Environment for the child (merged over a clean env with PATH/HOME). */
  env: Record<string, string>;
  /** Extra CLI arguments after `--acp-server`. */
  args?: string[];
  clientCapabilities?: acp.ClientCapabilities;
  /**
   * Answers permission requests in order (an option id); default `reject_once`. `"cancelled"`
   * answers cancelled; `"hold"` never answers until the agent cancels the request.
   */
  permissionAnswers?: string[];
  /** Skip the automatic `initialize`. */
  noInitialize?: boolean;
  /**
   * `fs/read_text_file` of a missing file answers a bare `-32603 Internal error` (as some
   * editors do) instead of `-32002 Resource not found`.
   */
  opaqueFsErrors?: boolean;
  /**
   * Answers `elicitation/create` (ACP unstable) in order; `"hold"` never answers until the
   * agent cancels. Offer the capability with `clientCapabilities: {elicitation: {form: {}}}`.
   */
  elicitationAnswers?: (Record<string, unknown> | "hold")[];
  /**
   * These methods (`fs/read_text_file`, `fs/write_text_file`, `terminal/create`) are never
   * answered for a path ending in `.hold` (a command line naming `.hold`) until the agent
   * withdraws them with `$/cancel_request` (recorded in `fsCancelled`).
   */
  holdFs?: string[];
}

export interface TerminalRecord {
  id: string;
  command: string;
  args: string[];
  cwd?: string;
  released: boolean;
  /** `terminal/kill` was received. */
  killed?: boolean;
  child: Deno.ChildProcess;
  output: string;
  exit?: { exitCode: number | null; signal: string | null };
}

export interface AcpHarness {
  child: Deno.ChildProcess;
  agent: acp.ClientContext;
  connection: acp.ClientConnection;
  init?: acp.InitializeResponse;
  /** Raw stdout lines. */
  lines: string[];
  /** All `session/update` notifications in arrival order. */
  updates: acp.SessionNotification[];
  permissionRequests: acp.RequestPermissionRequest[];
  /** Index into `updates` at the moment each permission request arrived. */
  permissionAt: number[];
  /** `elicitation/create` requests (params) in arrival order. */
  elicitations: Record<string, unknown>[];
  fsCalls: { method: string; path: string }[];
  /** `fs/*` requests the agent withdrew with `$/cancel_request` (`holdFs`). */
  fsCancelled: { method: string; path: string }[];
  terminals: TerminalRecord[];
  /** stderr text so far. */
  stderr(): string;
  updatesFor(sessionId: string): acp.SessionUpdate[];
  /** Throws unless every stdout line is one JSON-RPC 2.0 message. */
  assertStdoutPure(): void;
  /** Closes stdin and waits for the process to exit; returns its exit code. */
  close(): Promise<number>;
}

/** True when `v` is a JSON-RPC 2.0 request, notification or response. */
export function isJsonRpc(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const m = v as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return false;
  if (typeof m.method === "string") return true;
  return "id" in m && (("result" in m) !== ("error" in m));
}

/** Spawns `coyote --acp-server` and connects the SDK client. */
export async function startAcp(opts: HarnessOptions): Promise<AcpHarness> {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    DENO_DIR: Deno.env.get("DENO_DIR") ?? "",
    ...coyoteTaskEnv(),
    NO_COLOR: "1",
    ...opts.env,
  };
  if (!env.DENO_DIR) delete env.DENO_DIR;
  const child = new Deno.Command("deno", {
    args: [...COYOTE_FLAGS, MAIN_TS, "--acp-server", ...(opts.args ?? [])],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env,
    clearEnv: true,
  }).spawn();
  let stderrText = "";
  const stderrDone = (async () => {
    const dec = new TextDecoder();
    for await (const c of child.stderr) stderrText += dec.decode(c, { stream: true });
  })();
  const lines: string[] = [];
  const [forSdk, forLog] = child.stdout.tee();
  const logDone = (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const c of forLog) {
      buf += dec.decode(c, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    }
    if (buf) lines.push(buf);
  })();

  const updates: acp.SessionNotification[] = [];
  const permissionRequests: acp.RequestPermissionRequest[] = [];
  const permissionAt: number[] = [];
  const elicitations: Record<string, unknown>[] = [];
  const elicitationAnswers = [...(opts.elicitationAnswers ?? [])];
  const answers = [...(opts.permissionAnswers ?? [])];
  const fsCalls: { method: string; path: string }[] = [];
  const fsCancelled: { method: string; path: string }[] = [];
  /** With `holdFs`, a `.hold` path waits for `$/cancel_request` (then answers -32800). */
  const held = (method: string, path: string, signal: AbortSignal): Promise<never> | null => {
    if (!opts.holdFs?.includes(method) || !path.endsWith(".hold")) return null;
    return new Promise((_, reject) => {
      signal.addEventListener("abort", () => {
        fsCancelled.push({ method, path });
        reject(acp.RequestError.requestCancelled());
      }, { once: true });
    });
  };
  const terminals: TerminalRecord[] = [];

  const app = acp.client({ name: "coyote-test-client" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
    })
    .onRequest("session/request_permission", ({ params, signal }) => {
      permissionRequests.push(params);
      permissionAt.push(updates.length);
      const a = answers.shift() ?? "reject_once";
      if (a === "cancelled") return { outcome: { outcome: "cancelled" } };
      if (a === "hold") {
        // Never answered by the "user": resolves only when the agent cancels the request.
        return new Promise((resolve) => {
          signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }), {
            once: true,
          });
        });
      }
      return { outcome: { outcome: "selected", optionId: a } };
    })
    .onRequest("elicitation/create", ({ params, signal }) => {
      elicitations.push(params as unknown as Record<string, unknown>);
      const a = elicitationAnswers.shift() ?? { action: "decline" };
      if (a === "hold") {
        return new Promise((resolve) => {
          signal.addEventListener("abort", () => resolve({ action: "cancel" }), { once: true });
        });
      }
      return a as acp.CreateElicitationResponse;
    })
    .onRequest("fs/read_text_file", async ({ params, signal }) => {
      fsCalls.push({ method: "fs/read_text_file", path: params.path });
      const hold = held("fs/read_text_file", params.path, signal);
      if (hold) return await hold;
      try {
        return { content: await Deno.readTextFile(params.path) };
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) {
          if (opts.opaqueFsErrors) throw new acp.RequestError(-32603, "Internal error");
          throw acp.RequestError.resourceNotFound(params.path);
        }
        throw e;
      }
    })
    .onRequest("fs/write_text_file", async ({ params, signal }) => {
      fsCalls.push({ method: "fs/write_text_file", path: params.path });
      const hold = held("fs/write_text_file", params.path, signal);
      if (hold) return await hold;
      await Deno.writeTextFile(params.path, params.content);
      return {};
    })
    .onRequest("terminal/create", async ({ params, signal }) => {
      const hold = [params.command, ...(params.args ?? [])].join(" ").includes(".hold")
        ? held("terminal/create", `${params.command} ${(params.args ?? []).join(" ")}.hold`, signal)
        : null;
      if (hold) {
        fsCalls.push({ method: "terminal/create", path: params.command });
        return await hold;
      }
      const id = `term-${terminals.length + 1}`;
      const c = new Deno.Command(params.command, {
        args: params.args ?? [],
        cwd: params.cwd ?? undefined,
        stdout: "piped",
        stderr: "piped",
        // Its own process group, so kill/release stop the command and its children (as editors do).
        detached: true,
      }).spawn();
      const rec: TerminalRecord = {
        id,
        command: params.command,
        args: params.args ?? [],
        cwd: params.cwd ?? undefined,
        released: false,
        child: c,
        output: "",
      };
      const dec = new TextDecoder();
      const pump = async (s: ReadableStream<Uint8Array>) => {
        for await (const chunk of s) rec.output += dec.decode(chunk, { stream: true });
      };
      const pumps = Promise.all([pump(c.stdout), pump(c.stderr)]);
      (rec as TerminalRecord & { done: Promise<unknown> }).done = Promise.all([c.status, pumps])
        .then(([st]) => {
          rec.exit = { exitCode: st.signal ? null : st.code, signal: st.signal ?? null };
        });
      terminals.push(rec);
      return { terminalId: id };
    })
    .onRequest("terminal/output", ({ params }) => {
      const t = terminals.find((x) => x.id === params.terminalId)!;
      return { output: t.output, truncated: false, ...(t.exit ? { exitStatus: t.exit } : {}) };
    })
    .onRequest("terminal/wait_for_exit", async ({ params }) => {
      const t = terminals.find((x) => x.id === params.terminalId)! as TerminalRecord & {
        done: Promise<unknown>;
      };
      await t.done;
      return t.exit!;
    })
    .onRequest("terminal/kill", ({ params }) => {
      const t = terminals.find((x) => x.id === params.terminalId)!;
      t.killed = true;
      killGroup(t.child);
      return {};
    })
    .onRequest("terminal/release", async ({ params }) => {
      const t = terminals.find((x) => x.id === params.terminalId)! as TerminalRecord & {
        done: Promise<unknown>;
      };
      t.released = true;
      killGroup(t.child);
      await t.done;
      return {};
    });

  const stream = acp.ndJsonStream(child.stdin, forSdk);
  const connection = app.connect(stream);
  const h: AcpHarness = {
    child,
    agent: connection.agent,
    connection,
    lines,
    updates,
    permissionRequests,
    permissionAt,
    elicitations,
    fsCalls,
    fsCancelled,
    terminals,
    stderr: () => stderrText,
    updatesFor: (sid) => updates.filter((u) => u.sessionId === sid).map((u) => u.update),
    assertStdoutPure() {
      for (const l of lines) {
        let v: unknown;
        try {
          v = JSON.parse(l);
        } catch {
          throw new Error(`stdout line is not JSON: ${JSON.stringify(l.slice(0, 200))}`);
        }
        if (!isJsonRpc(v)) throw new Error(`stdout line is not JSON-RPC 2.0: ${l.slice(0, 200)}`);
      }
    },
    async close() {
      connection.close();
      try {
        await child.stdin.close();
      } catch { /* already closed by the connection */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* exited */ }
      }, 15_000);
      const st = await child.status;
      clearTimeout(timer);
      await Promise.allSettled([stderrDone, logDone]);
      for (const t of terminals) {
        killGroup(t.child);
        await (t as TerminalRecord & { done: Promise<unknown> }).done.catch(() => {});
      }
      return st.code;
    },
  };
  if (!opts.noInitialize) {
    h.init = await h.agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: opts.clientCapabilities ?? {},
      clientInfo: { name: "coyote-test-client", version: "1.0.0" },
    });
  }
  return h;
}

function psTable(): { pid: number; ppid: number; stat: string }[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,stat="], stdout: "piped" })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 3).map(([pid, ppid, stat]) => ({
      pid: Number(pid),
      ppid: Number(ppid),
      stat,
    }));
}

/** Pids of every live (non-zombie) descendant of `root` (children, grandchildren, …). */
export function descendantPids(root: number): number[] {
  const table = psTable().filter((p) => !p.stat.startsWith("Z"));
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length) {
    const next = table.filter((p) => frontier.includes(p.ppid)).map((p) => p.pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** Those of `pids` that are still alive (zombies count as gone). */
export function alivePids(pids: number[]): number[] {
  const live = new Set(psTable().filter((p) => !p.stat.startsWith("Z")).map((p) => p.pid));
  return pids.filter((p) => live.has(p));
}

/** SIGKILLs the process group a client terminal's command leads (it was spawned detached). */
function killGroup(child: Deno.ChildProcess): void {
  try {
    Deno.kill(-child.pid, "SIGKILL");
  } catch {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
  }
}

/** Waits until `cond()` is true (polling every 10 ms) or throws after `ms`. */
export async function waitFor(cond: () => boolean, ms = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A workspace, data dirs and a scripted model server for an ACP test (see {@link acpTestEnv}). */
export interface AcpTestEnv {
  ws: string;
  data: string;
  ms: ModelServer;
  /** Variables for the ACP subprocess: isolated dirs, the scripted provider. */
  env: Record<string, string>;
  /** Chat requests the server received so far. */
  requests(): number;
  /** Their bodies as JSON text. */
  bodies(): string[];
  close(): Promise<void>;
}

/** Temp workspace and data dirs plus a scripted model server; `close()` removes them all. */
export async function acpTestEnv(
  script: Script | unknown[],
  prefix = "coyote-acp",
): Promise<AcpTestEnv> {
  const ws = await Deno.makeTempDir({ prefix: `${prefix}-ws-` });
  const data = await Deno.makeTempDir({ prefix: `${prefix}-data-` });
  const ms = await startModelServer({ script: script as Script });
  return {
    ws,
    data,
    ms,
    env: {
      COYOTE_DATA_DIR: `${data}/data`,
      COYOTE_CONFIG_DIR: `${data}/config`,
      OPENAI_BASE_URL: ms.baseURL,
      OPENAI_API_KEY: "test-key",
      COYOTE_MODEL: "scripted",
    },
    requests: () => ms.requests.length,
    bodies: () => ms.requests.map((r) => JSON.stringify(r.body)),
    async close() {
      await ms.close();
      await Deno.remove(ws, { recursive: true }).catch(() => {});
      await Deno.remove(data, { recursive: true }).catch(() => {});
    },
  };
}

/** Closes the ACP subprocess and asserts it left stdout pure and exited 0. */
export async function finishAcp(h: AcpHarness): Promise<void> {
  const code = await h.close();
  h.assertStdoutPure();
  assert.equal(code, 0, `acp server exit code (stderr: ${h.stderr().slice(-2000)})`);
}

/**
 * Waits until the session's MCP servers have all settled: the last `session_info_update` with
 * `_meta.coyote.mcpServers` lists none `starting` (a prompt sent earlier starts without the
 * tools of a server still starting, core/session/mcp_startup.ts).
 */
export async function waitForMcp(h: AcpHarness, sessionId: string, ms = 30_000): Promise<void> {
  const settled = () => {
    const last = h.updatesFor(sessionId).filter((u) =>
      u.sessionUpdate === "session_info_update" &&
      (u as { _meta?: { coyote?: { mcpServers?: unknown[] } } })._meta?.coyote?.mcpServers
    ).at(-1) as { _meta: { coyote: { mcpServers: { status: string }[] } } } | undefined;
    return !!last && last._meta.coyote.mcpServers.every((s) => s.status !== "starting");
  };
  await waitFor(settled, ms, "the session's MCP servers to settle");
}
