/**
 * Graph script nodes (issue 8 §1):
 * - `.ts` / `.js` / `.mjs`: a module whose default export is `(state, ctx) => object` (or a
 *   promise of one). It runs in a permission-scoped Deno Worker, like a plugin: compiled by the
 *   plugin host's compiler (self-contained: no imports), loaded from a `data:` URL (works inside
 *   the compiled binary), with the permissions the node declares ∩ the policy (none by default).
 *   `ctx` reaches back to the host over messages: `exec(command, {cwd?, timeout_ms?})` runs a
 *   shell command through `execute_command` (guard, OS sandbox, events — like the model's own
 *   calls), `read(path)` / `write(path, text)` go through `fs_read` / `fs_write`, and
 *   `event(name, data)` emits a graph event (e.g. `validation_loop_iteration`). A Worker that
 *   finished a run is kept (up to 4 per script) for the next run of the same script, so a warm
 *   script node costs a message round trip; one that failed, timed out or was cancelled is ended.
 * - `.sh`: run through `execute_command` as `bash <script>` with the state as JSON in
 *   `GRAPH_STATE`, or, beyond 32 KiB, in a file named by `GRAPH_STATE_FILE`; it prints one JSON
 *   object on stdout.
 * Either way the returned object's keys merge into the state; `_next` routes. What a `.ts`
 * script prints (console, `Deno.stdout`, `process.stdout`) goes to stderr: the Worker shares
 * Coyote's stdout, which carries the ACP / stream-json protocol.
 * @module
 */
import { compilePluginSource } from "../plugin_host/source.ts";
import { NodeError } from "./run.ts";

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

const SHIM = `
const SCRIPT = __SCRIPT__;
// The Worker shares Coyote's fd 1, which carries the frontend's protocol (ACP, stream-json):
// everything a script prints goes to stderr (console, Deno.stdout, node's process.stdout).
{
  const toErr = (...a) => console.error(...a);
  for (const m of ["log", "info", "debug", "dir", "dirxml", "table"]) console[m] = toErr;
  try {
    const err = Deno.stderr;
    for (const [k, v] of [["write", (p) => err.write(p)], ["writeSync", (p) => err.writeSync(p)], ["writable", err.writable]]) {
      Object.defineProperty(Deno.stdout, k, { value: v, writable: false, configurable: false });
    }
  } catch { /* a runtime that freezes Deno.stdout keeps it */ }
  const d = Object.getOwnPropertyDescriptor(globalThis, "process");
  if (d && d.configurable) {
    let hooked = false;
    Object.defineProperty(globalThis, "process", {
      configurable: false,
      get() {
        const proc = d.get ? d.get.call(globalThis) : d.value;
        if (!hooked && proc && proc.stdout && proc.stderr) {
          hooked = true;
          try {
            Object.defineProperty(proc.stdout, "write", { value: (...a) => proc.stderr.write(...a), writable: false, configurable: false });
          } catch { /* kept */ }
        }
        return proc;
      },
    });
  }
}
let seq = 0;
const pending = new Map();
function call(op, args) {
  const id = ++seq;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    self.postMessage({ type: "call", id, op, args });
  });
}
const ctx = {
  exec: (command, opts) => call("exec", { command, opts: opts ?? {} }),
  read: (path) => call("read", { path }),
  write: (path, text) => call("write", { path, text }),
  event: (name, data) => self.postMessage({ type: "event", name, data: data ?? {} }),
};
self.onmessage = async (e) => {
  const m = e.data;
  if (m.type === "reply") {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!p) return;
    if (m.error !== undefined) p.reject(new Error(m.error)); else p.resolve(m.value);
    return;
  }
  if (m.type !== "run") return;
  try {
    const mod = await import(SCRIPT);
    if (typeof mod.default !== "function") throw new Error("the script has no default export function");
    const value = await mod.default(m.state, ctx);
    self.postMessage({ type: "result", value: JSON.parse(JSON.stringify(value ?? null)) });
  } catch (err) {
    self.postMessage({ type: "error", message: String(err && err.message || err) });
  }
};
`;

function dataUrl(js: string): string {
  const bytes = new TextEncoder().encode(js);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return `data:text/javascript;base64,${btoa(bin)}`;
}

const compiled = new Map<string, Promise<string>>();

/** Compiles (cached by text) and runs a `.ts`/`.js` script in a Worker; see the module doc. */
export async function runModuleScript(
  o: {
    name: string;
    text: string;
    state: Record<string, unknown>;
    timeoutMs: number;
    permissions: Deno.PermissionOptions;
    services: ScriptServices;
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
  const poolKey = `${key}\u0000${JSON.stringify(o.permissions)}`;
  const worker = idle.get(poolKey)?.pop() ?? new Worker(
    dataUrl(SHIM.replace("__SCRIPT__", JSON.stringify(dataUrl(code)))),
    {
      type: "module",
      name: `graph-script:${o.name}`,
      // deno-lint-ignore no-explicit-any
      deno: { permissions: o.permissions } as any,
    },
  );
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const both = AbortSignal.any([signal, timeout]);
  let reusable = false;
  try {
    const value = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const onAbort = () =>
        reject(
          signal.aborted
            ? (signal.reason ?? new Error("cancelled"))
            : new NodeError(`script ${o.name} timed out after ${o.timeoutMs / 1000} s`),
        );
      both.addEventListener("abort", onAbort, { once: true });
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new NodeError(`script ${o.name} crashed: ${e.message}`));
      };
      worker.onmessage = async (e: MessageEvent) => {
        const m = e.data;
        if (m.type === "result") {
          const v = m.value;
          if (!v || typeof v !== "object" || Array.isArray(v)) {
            reject(new NodeError(`script ${o.name} must return one JSON object`));
          } else resolve(v);
        } else if (m.type === "error") {
          reject(new NodeError(`script ${o.name} failed: ${m.message}`));
        } else if (m.type === "event") {
          o.services.event(String(m.name), m.data ?? {});
        } else if (m.type === "call") {
          try {
            let value: unknown;
            if (m.op === "exec") {
              value = await o.services.exec(String(m.args.command), m.args.opts ?? {}, both);
            } else if (m.op === "read") value = await o.services.read(String(m.args.path), both);
            else if (m.op === "write") {
              value = await o.services.write(String(m.args.path), String(m.args.text), both);
            } else throw new Error(`unknown operation ${m.op}`);
            worker.postMessage({ type: "reply", id: m.id, value: value ?? null });
          } catch (err) {
            worker.postMessage({ type: "reply", id: m.id, error: (err as Error).message });
          }
        }
      };
      worker.postMessage({ type: "run", state: o.state });
    });
    reusable = true;
    return value;
  } finally {
    worker.onmessage = null;
    worker.onerror = null;
    const pool = idle.get(poolKey) ?? [];
    if (reusable && pool.length < MAX_IDLE) {
      pool.push(worker);
      idle.set(poolKey, pool);
    } else worker.terminate();
  }
}

/** Idle Workers per script (and grant), reused for the next run of the same script. */
const idle = new Map<string, Worker[]>();
/** Idle Workers kept per script. */
const MAX_IDLE = 4;

/** Stops every idle script Worker (they also end with the process). */
export function closeScriptWorkers(): void {
  for (const pool of idle.values()) for (const w of pool) w.terminate();
  idle.clear();
}

function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs a `.sh` script through `services.exec` (execute_command) with the state in `GRAPH_STATE`
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
  try {
    const r = await o.services.exec(`${prefix} bash ${shQuote(o.path)}`, {
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
