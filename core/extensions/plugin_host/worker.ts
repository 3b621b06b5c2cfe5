/**
 * One plugin's sandbox and the host side of its RPC (see worker_main.ts for the
 * message protocol). The sandbox is a child process of its own (process.ts,
 * host_main.ts) running the plugin in a permission-scoped Deno Worker; "the
 * worker" below means that process and the Worker inside it.
 *
 * Guarantees, whatever the plugin does:
 * - every call settles: with the tool's result, or a tool error for a throw, a
 *   timeout (default 60 s; the process is killed, so a busy loop stops and its
 *   core is freed), a cancellation (the plugin's `ctx.signal` aborts; a worker
 *   that does not settle within `cancelGraceMs` is killed), a crash
 *   (uncaught error, unhandled rejection, `self.close()`, the process dying),
 *   the heap limit (V8 aborts the child: "out of memory"), an oversized result
 *   (> `maxResultBytes`) or a non-serialisable one;
 * - a dead worker is restarted lazily on the next call;
 * - worker messages are treated as untrusted input (shape-checked, capped).
 *
 * The limits and their defaults are in limits.ts, the grant's child environment
 * in grant.ts, the checks of what a plugin sends back in replies.ts, the memory
 * watchdog in watchdog.ts.
 * @module
 */
import type { PermissionQuestion, ToolProgress, ToolResult } from "../../../sdk/mod.ts";
import { IS_COMPILED, PluginProcess } from "./process.ts";
import { childEnvFor } from "./grant.ts";
import { resolveLimits, type RpcLimits } from "./limits.ts";
import { errorResult, type PluginManifest, sanitizeProgress, sanitizeResult } from "./replies.ts";
import { watchdog } from "./watchdog.ts";

/** Where a plugin's log lines go (default: stderr). Never stdout. */
export type PluginLogSink = (plugin: string, level: string, message: string) => void;

/** The callbacks of one call (from the engine's ToolContext). */
export interface CallHooks {
  signal?: AbortSignal;
  progress?(update: ToolProgress): void;
  requestPermission?(question: PermissionQuestion): Promise<boolean>;
}

interface Pending {
  resolve(r: ToolResult): void;
  hooks: CallHooks;
  messages: number;
  timer?: ReturnType<typeof setTimeout>;
  cleanup(): void;
}

/** A failure to start or load a plugin worker. */
export class PluginLoadError extends Error {
  override name = "PluginLoadError";
}

/**
 * A lazily (re)started Worker running one plugin's code with a fixed grant.
 * `start()` resolves with the manifest the plugin reports once evaluated.
 */
export class PluginWorker {
  #worker?: PluginProcess;
  /** RSS (MiB) of the worker's process when it became ready; undefined until then. */
  #baselineMiB?: number;
  #ready?: Promise<PluginManifest>;
  /** Bumped by each start and by close(): a start still checking its grant then gives up. */
  #epoch = 0;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #limits: Required<RpcLimits>;
  /** Number of times a worker was started (for tests and diagnostics). */
  starts = 0;

  constructor(
    readonly name: string,
    readonly code: string,
    readonly permissions: Deno.PermissionOptionsObject,
    limits: RpcLimits = {},
    readonly log: PluginLogSink = defaultLogSink,
  ) {
    this.#limits = resolveLimits(limits);
  }

  /** The process id of the running worker (diagnostics, tests); undefined when none runs. */
  get pid(): number | undefined {
    return this.#worker?.pid;
  }

  /** True while a worker is running (or starting). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** Starts the worker if needed; resolves with the manifest when it is ready. */
  start(): Promise<PluginManifest> {
    if (this.#ready) return this.#ready;
    const linkCheck = Array.isArray(this.permissions.read) ||
      Array.isArray(this.permissions.write);
    const epoch = ++this.#epoch;
    const ready: Promise<PluginManifest> = linkCheck
      ? (async () => {
        // Deno follows pre-existing links inside a path grant (see links.ts).
        const { findEscapingLink } = await import("./links.ts");
        const problem = await findEscapingLink(this.permissions, this.#limits.maxLinkScanEntries);
        if (this.#epoch !== epoch) throw new PluginLoadError("stopped before it started");
        if (problem) throw new PluginLoadError(`refused to start: ${problem}`);
        return await this.#spawn();
      })()
      : this.#spawn();
    this.#ready = ready;
    ready.catch(() => {
      if (this.#ready === ready) this.#ready = undefined;
    });
    return ready;
  }

  #spawn(): Promise<PluginManifest> {
    this.starts++;
    let worker: PluginProcess;
    try {
      worker = new PluginProcess(this.name, this.permissions, this.#limits.maxHeapMB);
    } catch (e) {
      return Promise.reject(new PluginLoadError(`cannot start worker: ${(e as Error).message}`));
    }
    this.#worker = worker;
    this.#baselineMiB = undefined;
    this.#loading = true;
    watchdog.add(this);
    const ready = new Promise<PluginManifest>((resolve, reject) => {
      const timer = setTimeout(() => {
        fail(`did not load within ${this.#limits.loadTimeoutMs} ms`);
      }, this.#limits.loadTimeoutMs);
      const fail = (message: string) => {
        clearTimeout(timer);
        if (this.#worker === worker) this.#kill(message);
        reject(new PluginLoadError(message));
      };
      worker.onmessage = (m: unknown) => {
        const msg = m as Record<string, unknown> | null;
        if (msg?.type === "ready" && msg.manifest && typeof msg.manifest === "object") {
          clearTimeout(timer);
          this.#loading = false;
          this.#baselineMiB = worker.rssMiB();
          worker.onmessage = (x) => this.#onMessage(x);
          worker.onexit = (reason) => {
            if (this.#worker === worker) this.#kill(reason);
          };
          resolve(msg.manifest as PluginManifest);
        } else if (msg?.type === "loadError" || msg?.type === "crash") {
          fail(String(msg.message).slice(0, 2000));
        }
      };
      worker.onexit = (reason) => fail(reason);
    });
    worker.postMessage({
      type: "load",
      isolate: IS_COMPILED || this.#limits.isolate === "worker" ? "worker" : "process",
      name: this.name,
      permissions: this.permissions,
      code: this.code,
      limits: { maxResultBytes: this.#limits.maxResultBytes },
      childEnv: childEnvFor(this.permissions),
    });
    ready.catch(() => {}); // callers observe the rejection; avoid unhandled noise
    return ready;
  }

  /** Kills the worker when its process grew past its memory limit (called by the watchdog). */
  checkMemory(): void {
    const worker = this.#worker;
    if (!worker || this.#baselineMiB === undefined) return;
    const rss = worker.rssMiB();
    if (rss === undefined) return;
    const grown = rss - this.#baselineMiB;
    if (IS_COMPILED && this.#limits.maxHeapMB > 0 && grown > this.#limits.maxHeapMB) {
      this.#kill(
        `out of memory: the plugin's process grew past its limit of ${this.#limits.maxHeapMB} MB`,
      );
    } else if (grown > this.#limits.maxMemoryMB) {
      this.#kill(
        `memory limit exceeded (process grew ${
          Math.round(grown)
        } MiB > ${this.#limits.maxMemoryMB} MiB)`,
      );
    }
  }

  /**
   * Calls a tool in the worker. Never rejects: faults become `{isError: true}` results.
   * @param tool tool name as declared by the plugin
   * @param input already-validated input (JSON data)
   */
  async call(
    tool: string,
    input: unknown,
    meta: { cwd: string; toolCallId: string },
    hooks: CallHooks = {},
  ): Promise<ToolResult> {
    if (hooks.signal?.aborted) return errorResult(this.name, "cancelled");
    // A cancelled call may still be running in the worker: wait until it stops or
    // its worker is terminated (grace period), so this call is not stuck behind it.
    while (this.#drains.size) await Promise.all([...this.#drains.values()].map((d) => d.promise));
    try {
      await this.start();
    } catch (e) {
      return errorResult(this.name, `cannot start: ${(e as Error).message}`);
    }
    // Cancelled while the worker was starting or a cancelled call drained: the abort
    // event has fired already and the listener below would never see it.
    if (hooks.signal?.aborted) return errorResult(this.name, "cancelled");
    const worker = this.#worker;
    if (!worker) return errorResult(this.name, "worker is not running");
    const id = this.#nextId++;
    return await new Promise<ToolResult>((resolve) => {
      const onAbort = () => {
        if (!this.#pending.has(id)) return;
        worker.postMessage({ type: "cancel", id });
        this.#settle(id, errorResult(this.name, "cancelled"));
        if (this.#inflight.has(id)) this.#drains.set(id, Promise.withResolvers<void>());
        const grace = setTimeout(() => {
          this.#graceTimers.delete(grace);
          // A plugin that ignores its signal and keeps running loses its worker.
          if (this.#worker === worker && this.#inflight.has(id)) {
            this.#kill("did not stop after cancellation");
          }
        }, this.#limits.cancelGraceMs);
        this.#graceTimers.add(grace);
      };
      const pending: Pending = {
        resolve,
        hooks,
        messages: 0,
        cleanup: () => {
          clearTimeout(pending.timer);
          hooks.signal?.removeEventListener("abort", onAbort);
        },
      };
      pending.timer = setTimeout(() => {
        this.#settle(
          id,
          errorResult(this.name, `tool "${tool}" timed out after ${this.#limits.timeoutMs} ms`),
        );
        this.#kill("timed out");
      }, this.#limits.timeoutMs);
      hooks.signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, pending);
      this.#inflight.add(id);
      try {
        worker.postMessage({
          type: "call",
          id,
          tool,
          input,
          cwd: meta.cwd,
          toolCallId: meta.toolCallId,
        });
      } catch (e) {
        this.#settle(id, errorResult(this.name, `cannot send input: ${(e as Error).message}`));
      }
    });
  }

  /** Ids whose worker-side run has not reported back (includes cancelled ones). */
  #inflight = new Set<number>();
  #graceTimers = new Set<ReturnType<typeof setTimeout>>();
  /** Cancelled calls still running in the worker; resolved when they stop or the worker dies. */
  #drains = new Map<number, PromiseWithResolvers<void>>();
  #drained(id: number): void {
    this.#drains.get(id)?.resolve();
    this.#drains.delete(id);
  }

  #settle(id: number, result: ToolResult): void {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id);
    p.cleanup();
    p.resolve(result);
  }

  #onMessage(m: unknown): void {
    if (!m || typeof m !== "object") return;
    const msg = m as Record<string, unknown>;
    const id = typeof msg.id === "number" ? msg.id : -1;
    switch (msg.type) {
      case "result": {
        this.#inflight.delete(id);
        this.#drained(id);
        if (!this.#pending.has(id)) return;
        const json = msg.json;
        if (typeof json !== "string") {
          return this.#settle(id, errorResult(this.name, "sent a malformed result"));
        }
        // The limit is in bytes (UTF-8), as the bootstrap counts; a worker that
        // skips the bootstrap (raw postMessage) is checked here again.
        if (
          json.length > this.#limits.maxResultBytes ||
          (json.length * 3 > this.#limits.maxResultBytes &&
            utf8.encode(json).length > this.#limits.maxResultBytes)
        ) {
          return this.#settle(
            id,
            errorResult(this.name, `result too large (> ${this.#limits.maxResultBytes} bytes)`),
          );
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(json);
        } catch {
          return this.#settle(id, errorResult(this.name, "sent a malformed result"));
        }
        return this.#settle(id, sanitizeResult(parsed, this.name));
      }
      case "error": {
        this.#inflight.delete(id);
        this.#drained(id);
        return this.#settle(id, errorResult(this.name, String(msg.message).slice(0, 4000)));
      }
      case "progress": {
        const p = this.#pending.get(id);
        if (!p || !this.#countMessage(p)) return;
        const update = sanitizeProgress(msg.update);
        if (update) {
          try {
            p.hooks.progress?.(update);
          } catch { /* the engine's sink must not break the RPC */ }
        }
        return;
      }
      case "log": {
        const p = this.#pending.get(id);
        if (p && !this.#countMessage(p)) return;
        const level = ["debug", "info", "warn", "error"].includes(String(msg.level))
          ? String(msg.level)
          : "info";
        this.log(this.name, level, String(msg.message).slice(0, 4096));
        return;
      }
      case "permission": {
        const p = this.#pending.get(id);
        const reqId = msg.reqId;
        const worker = this.#worker;
        const q = msg.question as Record<string, unknown> | undefined;
        const reply = (granted: boolean) =>
          worker?.postMessage({ type: "permissionReply", reqId, granted });
        if (!p || !p.hooks.requestPermission || !q) return reply(false);
        const question: PermissionQuestion = {
          title: `[plugin ${this.name}] ${String(q.title ?? "").slice(0, 500)}`,
          detail: q.detail === undefined ? undefined : String(q.detail).slice(0, 4000),
        };
        p.hooks.requestPermission(question).then((g) => reply(g === true), () => reply(false));
        return;
      }
      case "crash": {
        this.#kill(String(msg.message).slice(0, 2000));
        return;
      }
    }
  }

  #countMessage(p: Pending): boolean {
    p.messages++;
    if (p.messages === this.#limits.maxMessagesPerCall + 1) {
      this.log(
        this.name,
        "warn",
        `more than ${this.#limits.maxMessagesPerCall} progress/log messages in one call; dropping the rest`,
      );
    }
    return p.messages <= this.#limits.maxMessagesPerCall;
  }

  /** Terminates the worker; pending calls fail with `reason`; the next call restarts it. */
  #kill(reason: string): void {
    const worker = this.#worker;
    this.#loading = false;
    watchdog.remove(this);
    this.#worker = undefined;
    this.#ready = undefined;
    this.#inflight.clear();
    for (const id of [...this.#drains.keys()]) this.#drained(id);
    if (worker) {
      worker.terminate();
      const closed = worker.closed;
      this.#exits.add(closed);
      closed.finally(() => this.#exits.delete(closed));
    }
    for (const id of [...this.#pending.keys()]) {
      this.#settle(id, errorResult(this.name, `worker stopped: ${reason}`));
    }
  }

  #loading = false;
  /** Exits of killed processes not yet reaped. */
  #exits = new Set<Promise<void>>();

  /** True while the worker is loading or has calls in flight. */
  get busy(): boolean {
    return this.#loading || this.#inflight.size > 0;
  }

  /** The memory limit of this worker's limits (MiB of process growth). */
  get maxMemoryMB(): number {
    return this.#limits.maxMemoryMB;
  }

  /** Terminates the worker now; pending calls fail with `reason`; the next call restarts it. */
  stop(reason: string): void {
    if (this.#worker) this.#kill(reason);
  }

  /**
   * Kills the worker (if any); pending calls fail. Idempotent. The returned
   * promise resolves when every process this worker started has exited.
   */
  close(): Promise<void> {
    for (const t of this.#graceTimers) clearTimeout(t);
    this.#graceTimers.clear();
    if (this.#worker) this.#kill("plugin host closed");
    this.#ready = undefined;
    this.#epoch++; // also stops a start still checking its grant
    return Promise.all([...this.#exits]).then(() => {});
  }
}

/** Default log sink: one line on stderr per message. */
export function defaultLogSink(plugin: string, level: string, message: string): void {
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(`[plugin ${plugin}] ${level}: ${message}\n`));
  } catch { /* stderr closed */ }
}

const utf8 = new TextEncoder();
