/**
 * Graph script nodes (issue 8 §1):
 * - `.ts` / `.js` / `.mjs`: a module whose default export is `(state, ctx) => object` (or a
 *   promise of one). It runs in a process of its own, the plugin host's child
 *   (core/extensions/plugin_host/process.ts, host_main.ts `module` entry): killable outright (SIGKILL on
 *   timeout and cancellation), its JavaScript heap capped like a plugin's (`--max-old-space-size`,
 *   `$COYOTE_PLUGIN_MAX_HEAP_MB` or 512 MB; in a compiled binary a watchdog on the process's
 *   size), with the permissions the node declares ∩ the policy (none by default) — as `deno run`
 *   flags of the process, or, in a compiled binary, of a Worker inside it (a path grant holding a
 *   symbolic link that leads out of it refuses the start, as for a plugin). The script is
 *   compiled by the plugin host's compiler (self-contained: no imports) and loaded from a `data:`
 *   URL (works inside the compiled binary) under the plugin bootstrap (worker_main.ts, role
 *   `script`) and script_main.ts. `ctx` reaches back to the host over messages: `exec(command,
 *   {cwd?, timeout_ms?})` runs a shell command through `execute_command` (guard, OS sandbox,
 *   events — like the model's own calls), `read(path)` / `write(path, text)` go through
 *   `fs_read` / `fs_write`, and `event(name, data)` emits a graph event (e.g.
 *   `validation_loop_iteration`). Whatever the script does, its node ends in bounded time with an
 *   error naming the script: a throw (while loading or running), `self.close()` / `Deno.exit()`
 *   / an uncaught error ("crashed"), its process dying ("killed", "exited", "out of memory"), a
 *   message over {@link MAX_SCRIPT_MESSAGE_BYTES}, or the node timeout; more than 16 `ctx` calls
 *   at once are refused and events past 1000 per run dropped. A process that finished a run is
 *   kept (up to 4 per script, 8 in all, for a minute) for the next run of the same script, so a
 *   warm script node costs a message round trip; one that failed, timed out or was cancelled is
 *   killed.
 * - `.sh`: run through `execute_command` as `bash < script` (on stdin: the guard sees a read, so a
 *   script under `.coyote/` runs) with the state as JSON in `GRAPH_STATE`, or, beyond 32 KiB, in a
 *   file named by `GRAPH_STATE_FILE` (plus the caller's `env`; `$0` set through `BASH_ARGV0`);
 *   it prints one JSON object on stdout.
 * Either way the returned object's keys merge into the state; `_next` routes. What a `.ts`
 * script prints (console, `Deno.stdout`, `process.stdout`, its own child processes) goes to
 * Coyote's stderr, never to its stdout (the ACP / stream-json protocol).
 * @module
 */
import { compilePluginSource } from "../extensions/plugin_host/source.ts";
import { IS_COMPILED, PluginProcess } from "../extensions/plugin_host/process.ts";
import { childEnvFor, NO_PERMISSIONS } from "../extensions/plugin_host/grant.ts";
import { DEFAULT_MAX_MEMORY_MB, defaultMaxHeapMB } from "../extensions/plugin_host/limits.ts";
import { workerSource } from "../extensions/plugin_host/worker_main.ts";
import { findEscapingLink } from "../extensions/plugin_host/links.ts";
import { scriptMain } from "./script_main.ts";
import { NodeError } from "./errors.ts";

/** Above this many bytes of state JSON, `.sh` scripts get a file instead of the variable (R4). */
export const STATE_ENV_LIMIT = 32 * 1024;

/** What a script's `ctx.exec` returns (a denied command has `denied` and no exit code). */
export interface ExecResult {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  duration_ms: number;
  denied?: string;
}

/** The host side of a script's `ctx`. */
export interface ScriptServices {
  exec(
    command: string,
    opts: { cwd?: string; timeout_ms?: number },
    signal: AbortSignal,
  ): Promise<ExecResult>;
  read(path: string, signal: AbortSignal): Promise<string | undefined>;
  write(path: string, text: string, signal: AbortSignal): Promise<void>;
  event(name: string, data: Record<string, unknown>): void;
}

/** Longest message a script's process may send (its result, a call, an event), in bytes. */
export const MAX_SCRIPT_MESSAGE_BYTES = 32 * 1024 * 1024;
/** Events a script may emit per run; later ones are dropped. */
const MAX_EVENTS = 1000;
/** `ctx` calls a script may have in flight at once; more are refused. */
const MAX_INFLIGHT = 16;
/** Idle processes kept per script (and grant), and in all. */
const MAX_IDLE = 4;
const MAX_IDLE_TOTAL = 8;
/** An idle process unused this long is ended (ms). */
const IDLE_MS = 60_000;

/** Where a script runs inside its process (see RpcLimits.isolate in core/extensions/plugin_host/limits.ts). */
export type ScriptIsolate = "process" | "worker";

function dataUrl(js: string): string {
  const bytes = new TextEncoder().encode(js);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return `data:text/javascript;base64,${btoa(bin)}`;
}

const compiled = new Map<string, Promise<string>>();

/** One script process: the plugin host's child running {@link scriptMain}. */
interface ScriptProc {
  proc: PluginProcess;
  key: string;
  /** RSS (MiB) once the script module was evaluated. */
  baselineMiB?: number;
  /** Set when the process ended while idle (then it is dropped from the pool). */
  dead?: boolean;
  idleTimer?: ReturnType<typeof setTimeout>;
}

function grantOf(p: Deno.PermissionOptions): Deno.PermissionOptionsObject {
  return p && typeof p === "object" ? { ...NO_PERMISSIONS, ...p, import: false } : NO_PERMISSIONS;
}

function spawn(
  key: string,
  name: string,
  code: string,
  perms: Deno.PermissionOptionsObject,
  maxHeapMB: number,
  isolate: ScriptIsolate,
): ScriptProc {
  const source = `${
    workerSource({ role: "script", childEnv: childEnvFor(perms) })
  }(${scriptMain.toString()})(${JSON.stringify(dataUrl(code))});\n`;
  let proc: PluginProcess;
  try {
    proc = new PluginProcess(`script:${name}`, perms, maxHeapMB, {
      label: "script",
      maxMessageBytes: MAX_SCRIPT_MESSAGE_BYTES,
    });
  } catch (e) {
    throw new NodeError(`script ${name}: cannot start its process: ${(e as Error).message}`);
  }
  const sp: ScriptProc = { proc, key };
  proc.postMessage({
    type: "module",
    isolate: IS_COMPILED ? "worker" : isolate,
    name,
    permissions: perms,
    source,
  });
  return sp;
}

/**
 * Compiles (cached by text) and runs a `.ts`/`.js` script in its own heap-capped process; see
 * the module doc.
 * @param o.maxHeapMB heap limit of the script's process (default: the plugins',
 *   `$COYOTE_PLUGIN_MAX_HEAP_MB` or 512; 0 = V8's default)
 * @param o.maxMemoryMB growth of the script's process (RSS, Linux) past its size once loaded at
 *   which it is killed: memory outside the JavaScript heap, or in isolates the script starts by
 *   other means than `Worker` (default 1024, the plugins')
 * @param o.isolate where the script runs in its process (default `"process"` under `deno run`;
 *   always `"worker"` in a compiled binary)
 * @throws NodeError naming the script for every failure: compile error, a throw (while loading
 *   or running), a crash (`self.close()`, `Deno.exit()`, an uncaught error), the process ending
 *   (killed, out of memory, a message over {@link MAX_SCRIPT_MESSAGE_BYTES}), the timeout;
 *   the signal's reason when cancelled
 */
export async function runModuleScript(
  o: {
    name: string;
    text: string;
    state: Record<string, unknown>;
    timeoutMs: number;
    permissions: Deno.PermissionOptions;
    services: ScriptServices;
    maxHeapMB?: number;
    maxMemoryMB?: number;
    isolate?: ScriptIsolate;
  },
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const key = `${o.name}\u0000${o.text}`;
  let js = compiled.get(key);
  if (!js) compiled.set(key, js = compilePluginSource(o.text, o.name));
  let code: string;
  try {
    code = await js;
  } catch (e) {
    compiled.delete(key);
    throw new NodeError((e as Error).message);
  }
  if (signal.aborted) throw signal.reason ?? new Error("cancelled");
  const perms = grantOf(o.permissions);
  const heap = o.maxHeapMB ?? defaultMaxHeapMB();
  const isolate = o.isolate ?? "process";
  const maxMemory = o.maxMemoryMB ?? DEFAULT_MAX_MEMORY_MB;
  const poolKey = `${key}\u0000${JSON.stringify(perms)}\u0000${heap}\u0000${isolate}`;
  let sp = takeIdle(poolKey);
  if (!sp) {
    // Deno follows links inside a path grant: a grant with a link leading out is refused, as a
    // plugin's is (core/extensions/plugin_host/links.ts).
    if (
      (Array.isArray(perms.read) && perms.read.length) ||
      (Array.isArray(perms.write) && perms.write.length)
    ) {
      const problem = await findEscapingLink(perms);
      if (problem) throw new NodeError(`script ${o.name}: refused to start: ${problem}`);
    }
    if (signal.aborted) throw signal.reason ?? new Error("cancelled");
    sp = spawn(poolKey, o.name, code, perms, heap, isolate);
  }
  const proc = sp.proc;
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const run = new AbortController();
  const both = AbortSignal.any([signal, timeout, run.signal]);
  let reusable = false;
  let watch: ReturnType<typeof setInterval> | undefined;
  try {
    const value = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const fail = (message: string) => reject(new NodeError(`script ${o.name} ${message}`));
      both.addEventListener("abort", () => {
        if (signal.aborted) reject(signal.reason ?? new Error("cancelled"));
        else if (timeout.aborted) fail(`timed out after ${o.timeoutMs / 1000} s`);
      }, { once: true });
      proc.onexit = (reason) => {
        sp.dead = true;
        fail(
          `failed: ${reason}${
            reason.startsWith("out of memory") && heap > 0
              ? " (COYOTE_PLUGIN_MAX_HEAP_MB sets the limit)"
              : ""
          }`,
        );
      };
      // The heap cap in a compiled binary (whose V8 flags are fixed), and memory outside the
      // JavaScript heap everywhere: the process's growth past its size once loaded.
      watch = setInterval(() => {
        if (sp.baselineMiB === undefined) return;
        const rss = proc.rssMiB();
        if (rss === undefined) return;
        const grown = rss - sp.baselineMiB;
        if (IS_COMPILED && heap > 0 && grown > heap) {
          fail(`failed: out of memory: the script's process grew past its limit of ${heap} MB`);
        } else if (grown > maxMemory) {
          fail(
            `failed: memory limit exceeded (its process grew ${
              Math.round(grown)
            } MiB > ${maxMemory} MiB)`,
          );
        }
      }, 50);
      Deno.unrefTimer(watch as unknown as number);
      let events = 0;
      let inflight = 0;
      proc.onmessage = async (data: unknown) => {
        const m = data as Record<string, unknown> | null;
        if (!m || typeof m !== "object") return;
        if (m.type === "ready") {
          sp.baselineMiB ??= proc.rssMiB();
        } else if (m.type === "result") {
          const v = m.value;
          if (!v || typeof v !== "object" || Array.isArray(v)) {
            fail("must return one JSON object");
          } else resolve(v as Record<string, unknown>);
        } else if (m.type === "error") {
          fail(
            `${m.phase === "load" ? "failed while loading" : "failed"}: ${
              String(m.message).slice(0, 2000)
            }`,
          );
        } else if (m.type === "crash") {
          fail(`crashed: ${String(m.message).slice(0, 2000)}`);
        } else if (m.type === "event") {
          if (++events > MAX_EVENTS) return;
          const d = m.data && typeof m.data === "object" && !Array.isArray(m.data)
            ? m.data as Record<string, unknown>
            : {};
          o.services.event(String(m.name).slice(0, 200), d);
        } else if (m.type === "call") {
          const args = (m.args && typeof m.args === "object" ? m.args : {}) as Record<
            string,
            // deno-lint-ignore no-explicit-any
            any
          >;
          const reply = (r: Record<string, unknown>) => {
            if (!run.signal.aborted) proc.postMessage({ type: "reply", id: m.id, ...r });
          };
          if (inflight >= MAX_INFLIGHT) {
            return reply({ error: `more than ${MAX_INFLIGHT} ctx calls at once` });
          }
          inflight++;
          try {
            let value: unknown;
            if (m.op === "exec") {
              const opts = args.opts && typeof args.opts === "object" ? args.opts : {};
              value = await o.services.exec(String(args.command), {
                ...(typeof opts.cwd === "string" ? { cwd: opts.cwd } : {}),
                ...(typeof opts.timeout_ms === "number" ? { timeout_ms: opts.timeout_ms } : {}),
              }, both);
            } else if (m.op === "read") value = await o.services.read(String(args.path), both);
            else if (m.op === "write") {
              value = await o.services.write(String(args.path), String(args.text), both);
            } else throw new Error(`unknown operation ${String(m.op)}`);
            reply({ value: value ?? null });
          } catch (err) {
            reply({ error: (err as Error).message });
          } finally {
            inflight--;
          }
        }
      };
      proc.postMessage({ type: "run", state: o.state });
    });
    reusable = true;
    return value;
  } finally {
    clearInterval(watch);
    run.abort();
    proc.onmessage = undefined;
    if (reusable && !sp.dead) putIdle(sp);
    else proc.terminate();
  }
}

/** Idle script processes per script (and grant), reused for the next run of the same script. */
const idle = new Map<string, ScriptProc[]>();
let idleCount = 0;

function takeIdle(key: string): ScriptProc | undefined {
  const pool = idle.get(key);
  while (pool?.length) {
    const sp = pool.pop()!;
    idleCount--;
    clearTimeout(sp.idleTimer);
    if (!sp.dead) return sp;
  }
  return undefined;
}

function putIdle(sp: ScriptProc): void {
  const pool = idle.get(sp.key) ?? [];
  if (pool.length >= MAX_IDLE) return sp.proc.terminate();
  if (idleCount >= MAX_IDLE_TOTAL) {
    // The oldest idle process of any script makes room.
    for (const [k, list] of idle) {
      const old = list.shift();
      if (!old) continue;
      idleCount--;
      clearTimeout(old.idleTimer);
      old.proc.terminate();
      if (!list.length) idle.delete(k);
      break;
    }
  }
  const drop = () => {
    const list = idle.get(sp.key);
    const i = list?.indexOf(sp) ?? -1;
    if (i >= 0) {
      list!.splice(i, 1);
      idleCount--;
      if (!list!.length) idle.delete(sp.key);
    }
  };
  sp.proc.onexit = () => {
    sp.dead = true;
    clearTimeout(sp.idleTimer);
    drop();
  };
  sp.idleTimer = setTimeout(() => {
    drop();
    sp.proc.terminate();
  }, IDLE_MS);
  Deno.unrefTimer(sp.idleTimer as unknown as number);
  pool.push(sp);
  idle.set(sp.key, pool);
  idleCount++;
}

/** Ends every idle script process; resolves when they are gone (they also end with Coyote). */
export async function closeScriptWorkers(): Promise<void> {
  const all = [...idle.values()].flat();
  idle.clear();
  idleCount = 0;
  for (const sp of all) {
    clearTimeout(sp.idleTimer);
    sp.proc.terminate();
  }
  await Promise.all(all.map((sp) => sp.proc.closed));
}

function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs a `.sh` script through `services.exec` (execute_command) as `bash < path` with the state in `GRAPH_STATE`
 * (or `GRAPH_STATE_FILE` beyond {@link STATE_ENV_LIMIT}); parses its one JSON object.
 * `stateFile` writes the large state somewhere the command can read and returns the path.
 */
export async function runShellScript(
  o: {
    name: string;
    path: string;
    state: Record<string, unknown>;
    timeoutMs: number;
    services: ScriptServices;
    stateFile: (json: string) => Promise<{ path: string; cleanup: () => Promise<void> }>;
    /** More environment for the script (the original Coyote's `LLM_AGENT_VAR_*`, `AUTO_CONFIRM`). */
    env?: Record<string, string>;
    /** The script's own path, as its `$0` (bash's `BASH_ARGV0`): scripts find files beside them. */
    argv0?: string;
  },
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const json = JSON.stringify(o.state);
  let file: { path: string; cleanup: () => Promise<void> } | undefined;
  let prefix: string;
  if (new TextEncoder().encode(json).length > STATE_ENV_LIMIT) {
    file = await o.stateFile(json);
    prefix = `GRAPH_STATE_FILE=${shQuote(file.path)}`;
  } else prefix = `GRAPH_STATE=${shQuote(json)}`;
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) prefix += ` ${k}=${shQuote(v)}`;
  }
  if (o.argv0) prefix += ` BASH_ARGV0=${shQuote(o.argv0)}`;
  try {
    const r = await o.services.exec(`${prefix} bash < ${shQuote(o.path)}`, {
      timeout_ms: o.timeoutMs,
    }, signal);
    if (r.denied) throw new NodeError(`script ${o.name}: denied: ${r.denied}`);
    if (r.exit_code !== 0) {
      throw new NodeError(`script ${o.name} exited ${r.exit_code}: ${r.stderr.trim().slice(-500)}`);
    }
    const out = r.stdout.trim();
    const start = out.lastIndexOf("\n{") + 1;
    try {
      const v = JSON.parse(out.slice(out.startsWith("{") ? 0 : start));
      if (v && typeof v === "object" && !Array.isArray(v)) return v;
    } catch { /* below */ }
    throw new NodeError(
      `script ${o.name} must print one JSON object; it printed: ${out.slice(0, 200)}`,
    );
  } finally {
    await file?.cleanup();
  }
}
