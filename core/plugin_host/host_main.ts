/**
 * The entry point of a plugin's own process (the child side of process.ts).
 *
 * Each plugin runs in a child process that the host can kill outright (a busy
 * loop in a Deno Worker cannot be stopped on Deno 2.9.6, denoland/deno#35657),
 * whose heap is capped by V8 (`--max-old-space-size`), and whose Deno
 * permissions are the plugin's grant (under `deno run`; a compiled binary's
 * flags are fixed, see process.ts). Inside it, the plugin still runs in a
 * permission-scoped Deno Worker with the same grant and the bootstrap of
 * worker_main.ts, so the plugin sees the same environment in both cases.
 *
 * This module only relays: one JSON message per line on stdin goes to the
 * Worker (`postMessage`), every message of the Worker goes to stdout as one
 * JSON line. The first line is `{type:"load", permissions, name, …}`: it
 * starts the Worker with `permissions` and is then forwarded to it unchanged.
 * End of stdin (the host closed the pipe or died) ends the process, so a
 * plugin never outlives its host. It runs no plugin code itself.
 *
 * Started by `deno run … core/plugin_host/host_main.ts` or, in a compiled
 * binary, by `coyote __coyote_plugin_host` (main.ts dispatches to
 * {@link runPluginHost}).
 * @module
 */
import { WORKER_SOURCE } from "./worker_main.ts";

/** The hidden first argument that makes main.ts run {@link runPluginHost}. */
export const PLUGIN_HOST_ARG = "__coyote_plugin_host";

/** Runs the relay until stdin ends; then exits the process. */
export async function runPluginHost(): Promise<void> {
  const encoder = new TextEncoder();
  const writer = Deno.stdout.writable.getWriter();
  let writing: Promise<void> = Promise.resolve();
  const send = (m: unknown) => {
    let line: string;
    try {
      line = JSON.stringify(m) + "\n";
    } catch {
      return; // not JSON data (only the plugin's own raw postMessage can be): dropped
    }
    const bytes = encoder.encode(line);
    writing = writing.then(() => writer.write(bytes)).catch(() => Deno.exit(0));
  };
  let worker: Worker | undefined;
  const start = (m: Record<string, unknown>) => {
    try {
      worker = new Worker(
        `data:application/javascript;base64,${
          btoa(String.fromCharCode(...encoder.encode(WORKER_SOURCE)))
        }`,
        {
          type: "module",
          name: `plugin:${String(m.name ?? "")}`,
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
    worker.postMessage(m);
  };

  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for await (const chunk of Deno.stdin.readable) {
      buffered += decoder.decode(chunk, { stream: true });
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
        if (!worker) {
          if (m?.type === "load") start(m);
        } else worker.postMessage(m);
      }
    }
  } catch { /* stdin broken: the host is gone */ }
  Deno.exit(0);
}

if (import.meta.main) await runPluginHost();
