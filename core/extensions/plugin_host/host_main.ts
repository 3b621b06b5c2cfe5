/**
 * The entry point of a plugin's own process (the child side of process.ts).
 *
 * Each plugin runs in a child process that the host can kill outright (a busy
 * loop in a Deno Worker cannot be stopped on Deno 2.9.6, denoland/deno#35657),
 * whose heap is capped by V8 (`--max-old-space-size`), and whose Deno
 * permissions are the plugin's grant (under `deno run`; a compiled binary's
 * flags are fixed, see process.ts). The plugin's code runs under the
 * bootstrap of worker_main.ts in one of two ways, chosen by the host in the
 * first message (`{type:"load", isolate, permissions, name, …}`):
 *
 * - `isolate: "process"` (under `deno run`, where the process's own flags ARE
 *   the grant): the bootstrap and the plugin run in this process's main
 *   isolate, with `postMessage` / `onmessage` provided here over stdio (the
 *   same interface a Worker has), which saves a Worker start on every first
 *   call;
 * - `isolate: "worker"` (a compiled binary, whose process has the binary's
 *   full flags): a Deno Worker with `permissions` runs them, and this module
 *   only relays.
 *
 * The same child also runs any other self-contained module the host hands it
 * (graph script nodes, core/graph/script.ts): a first message
 * `{type:"module", isolate, permissions, name, source}` runs `source` (ES
 * module text, no imports of files) in this process's main isolate
 * (`isolate: "process"`, with the `postMessage` / `onmessage` interface
 * above) or in a Worker with `permissions` (`"worker"`); the message itself is
 * then delivered to it as its first `onmessage`, and the child relays both
 * ways as for a plugin. A module that fails to load is reported as
 * `{type:"crash", message}`.
 *
 * One JSON message per line on stdin, one per line on stdout (written before
 * the bootstrap takes `Deno.stdout` away from the plugin). End of stdin (the
 * host closed the pipe or died) ends the process, so a plugin never outlives
 * its host.
 *
 * Started by `deno run … core/extensions/plugin_host/host_main.ts` or, in a compiled
 * binary, by `coyote __coyote_plugin_host` (main.ts dispatches to
 * {@link runPluginHost}).
 * @module
 */
import { WORKER_SOURCE, workerMain } from "./worker_main.ts";

/** The hidden first argument that makes main.ts run {@link runPluginHost}. */
export const PLUGIN_HOST_ARG = "__coyote_plugin_host";

/** Runs the relay until stdin ends; then exits the process. */
export async function runPluginHost(): Promise<void> {
  // Taken before any plugin code (or the bootstrap, which locks them) runs.
  const exit = Deno.exit.bind(Deno);
  const stdoutWriteSync = Deno.stdout.writeSync.bind(Deno.stdout);
  const encoder = new TextEncoder();
  /** Relays a Worker's message; one that is not JSON data (a plugin's own raw post) is dropped. */
  const send = (m: unknown) => {
    try {
      sendSync(m);
    } catch { /* dropped */ }
  };
  /**
   * Synchronous send: a message posted just before the plugin exits is not lost. (Deno's
   * low-level read/writeSync, not its streams: loading the streams costs ~10–20 ms of start.)
   */
  const sendSync = (m: unknown) => {
    let line: string;
    try {
      line = JSON.stringify(m) + "\n";
    } catch (e) {
      throw new DataCloneError(`the message is not JSON data: ${(e as Error).message}`);
    }
    const bytes = encoder.encode(line);
    try {
      for (let off = 0; off < bytes.length;) off += stdoutWriteSync(bytes.subarray(off));
    } catch {
      exit(0); // the host is gone
    }
  };
  // deno-lint-ignore no-explicit-any
  const g = globalThis as any;
  let direct = false;
  const startDirect = (m: Record<string, unknown>) => {
    direct = true;
    g.postMessage = (msg: unknown) => sendSync(msg);
    workerMain();
    dispatch(m);
  };
  const dispatch = (m: unknown) => {
    const handler = g.onmessage;
    if (typeof handler === "function") {
      try {
        handler({ data: m });
      } catch { /* the plugin's own handler threw: reported through its error listener */ }
    }
  };
  /** Messages that arrive while a module (direct mode) is still loading. */
  let queued = null as unknown[] | null;
  const dataUrl = (text: string) => {
    const bytes = encoder.encode(text);
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return `data:application/javascript;base64,${btoa(bin)}`;
  };
  const startModuleDirect = async (m: Record<string, unknown>) => {
    direct = true;
    queued = [{ ...m, source: undefined }];
    g.postMessage = (msg: unknown) => sendSync(msg);
    try {
      await import(dataUrl(String(m.source ?? "")));
    } catch (e) {
      send({ type: "crash", message: `cannot load: ${(e as Error)?.message ?? e}` });
      exit(1);
    }
    const list = queued;
    queued = null;
    for (const x of list) dispatch(x);
  };
  let worker: Worker | undefined;
  const start = (m: Record<string, unknown>) => {
    const isModule = m.type === "module";
    try {
      worker = new Worker(
        dataUrl(isModule ? String(m.source ?? "") : WORKER_SOURCE),
        {
          type: "module",
          name: `${isModule ? "module" : "plugin"}:${String(m.name ?? "")}`,
          deno: { permissions: m.permissions as Deno.PermissionOptionsObject },
        },
      );
    } catch (e) {
      send({ type: "loadError", message: `cannot start worker: ${(e as Error).message}` });
      return;
    }
    worker.onmessage = (ev) => send(ev.data);
    worker.onerror = (ev) => {
      ev.preventDefault();
      send({ type: "crash", message: `worker error: ${ev.message}` });
    };
    worker.onmessageerror = () =>
      send({ type: "crash", message: "sent a message that cannot be received" });
    worker.postMessage(isModule ? { ...m, source: undefined } : m);
  };

  const decoder = new TextDecoder();
  let buffered = "";
  const buf = new Uint8Array(64 * 1024);
  try {
    for (let n; (n = await Deno.stdin.read(buf)) !== null;) {
      buffered += decoder.decode(buf.subarray(0, n), { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line) continue;
        let m: Record<string, unknown>;
        try {
          m = JSON.parse(line);
        } catch {
          continue;
        }
        if (queued) queued.push(m);
        else if (direct) dispatch(m);
        else if (worker) worker.postMessage(m);
        else if (m?.type === "load") m.isolate === "process" ? startDirect(m) : start(m);
        else if (m?.type === "module") {
          m.isolate === "process" ? startModuleDirect(m) : start(m);
        }
      }
    }
  } catch { /* stdin broken: the host is gone */ }
  exit(0);
}

/** What `postMessage` throws for data it cannot send (as a Worker's structured clone does). */
class DataCloneError extends Error {
  override name = "DataCloneError";
}

if (import.meta.main) await runPluginHost();
