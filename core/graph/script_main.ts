/**
 * The code that runs a graph `.ts` script inside its own process (core/graph/script.ts), as a
 * self-contained function whose source text becomes part of the module the plugin host's child
 * runs (core/extensions/plugin_host/host_main.ts, `module` entry). It runs after the plugin bootstrap
 * (core/extensions/plugin_host/worker_main.ts `workerMain({role: "script"})`: output to stderr, no
 * permission prompts, `self.close()` / `Deno.exit()` / uncaught errors reported as `crash`) and
 * takes over `onmessage` with the script protocol:
 *
 * | direction | message |
 * | --- | --- |
 * | child → host | `{type:"ready"}` once evaluated |
 * | host → child | `{type:"run", state}` |
 * | child → host | `{type:"call", id, op, args}` (`op`: `exec`, `read`, `write`), `{type:"event", name, data}` |
 * | host → child | `{type:"reply", id, value}` or `{type:"reply", id, error}` |
 * | child → host | `{type:"result", value}`, `{type:"error", message, phase}` (`phase`: `load` for a throw while the module is evaluated, `run` for one from its function) |
 *
 * The script cannot start Workers of its own (its heap cap and its one process stay the bound of
 * what it can take). Must not reference anything outside its own body.
 * @module
 */

/**
 * The script child's entry point.
 * @param script a `data:` URL of the compiled script module (no imports)
 */
export function scriptMain(script: string): void {
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  const post: (m: unknown) => void = g.postMessage.bind(g);
  const refuseWorker = function Worker() {
    throw new Error("a graph script cannot start Workers");
  };
  try {
    Object.defineProperty(g, "Worker", {
      value: refuseWorker,
      writable: false,
      configurable: false,
    });
  } catch { /* a runtime that freezes it keeps it */ }
  const text = (e: unknown): string => {
    try {
      return String((e as Error)?.message ?? e);
    } catch {
      return "unknown error";
    }
  };
  let seq = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const call = (op: string, args: Record<string, unknown>) => {
    const id = ++seq;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      post({ type: "call", id, op, args });
    });
  };
  const ctx = Object.freeze({
    exec: (command: string, opts?: Record<string, unknown>) =>
      call("exec", { command: String(command), opts: opts ?? {} }),
    read: (path: string) => call("read", { path: String(path) }),
    write: (path: string, text: string) =>
      call("write", { path: String(path), text: String(text) }),
    event: (name: string, data?: Record<string, unknown>) => {
      try {
        post({ type: "event", name: String(name), data: JSON.parse(JSON.stringify(data ?? {})) });
      } catch { /* not JSON data: dropped */ }
    },
  });
  g.onmessage = async (e: { data: unknown }) => {
    // deno-lint-ignore no-explicit-any
    const m = e.data as any;
    if (!m || typeof m !== "object") return;
    if (m.type === "reply") {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (!p) return;
      if (m.error !== undefined) p.reject(new Error(String(m.error)));
      else p.resolve(m.value);
      return;
    }
    if (m.type !== "run") return;
    // deno-lint-ignore no-explicit-any
    let mod: any;
    try {
      mod = await import(script);
    } catch (err) {
      post({ type: "error", phase: "load", message: text(err) });
      return;
    }
    try {
      if (typeof mod.default !== "function") {
        throw new Error("the script has no default export function");
      }
      const value = await mod.default(m.state, ctx);
      post({ type: "result", value: JSON.parse(JSON.stringify(value ?? null)) });
    } catch (err) {
      post({ type: "error", phase: "run", message: text(err) });
    }
  };
  post({ type: "ready" });
}
