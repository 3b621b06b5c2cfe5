/**
 * The tunables of a plugin's RPC ({@link RpcLimits}: call timeout, result size,
 * cancellation grace, message cap, load timeout, link-scan bound, memory and heap
 * limits, isolate) and their defaults, shared with graph script processes
 * (core/graph/script.ts). What each limit guarantees is described in worker.ts.
 * @module
 */

/** Tunables of the RPC; all optional. */
export interface RpcLimits {
  /** Per-call timeout in milliseconds (default 60 000). */
  timeoutMs?: number;
  /** Largest accepted result, in bytes of its JSON text (default 1 MiB). */
  maxResultBytes?: number;
  /** How long a cancelled call may take to settle before the worker is terminated (default 1000 ms). */
  cancelGraceMs?: number;
  /** Most progress/log messages forwarded per call; the rest are dropped (default 1000). */
  maxMessagesPerCall?: number;
  /** Time allowed from worker start to `ready` (default 10 000 ms). */
  loadTimeoutMs?: number;
  /**
   * Bound of the walk over path grants that looks for symbolic links leading
   * outside them before each start (default 50 000 entries; see links.ts).
   */
  maxLinkScanEntries?: number;
  /**
   * Memory watchdog: when a plugin's process grows more than this many MiB
   * (RSS, Linux) above its size when it became ready, it is killed (default
   * 1024). A second line of defence behind `maxHeapMB` for memory outside the
   * JavaScript heap (ArrayBuffers, Wasm), checked every 50 ms.
   */
  maxMemoryMB?: number;
  /**
   * Heap limit of the plugin's code in MB (V8 `--max-old-space-size` of its
   * process; default 512, or `$COYOTE_PLUGIN_MAX_HEAP_MB`). Reaching it aborts
   * the plugin's process, not Coyote: the call ends with the tool error "out of
   * memory". 0 leaves V8's default. In a compiled binary (whose V8 flags are
   * fixed) the watchdog enforces it on the process's RSS growth instead.
   */
  maxHeapMB?: number;
  /**
   * Where the plugin's code runs inside its process: `"process"` (its main
   * isolate; the process's flags are the grant) or `"worker"` (a Deno Worker
   * with the grant, what a compiled binary always uses since its flags are
   * fixed). Default `"process"` under `deno run`; tests force `"worker"` to
   * cover the compiled binary's path.
   */
  isolate?: "process" | "worker";
}

const DEFAULTS = {
  timeoutMs: 60_000,
  maxResultBytes: 1024 * 1024,
  cancelGraceMs: 1000,
  maxMessagesPerCall: 1000,
  loadTimeoutMs: 10_000,
  maxMemoryMB: 1024,
  maxLinkScanEntries: 50_000,
  maxHeapMB: 512,
  isolate: "process" as "process" | "worker",
};

/** `$COYOTE_PLUGIN_MAX_HEAP_MB` when it is a non-negative integer (0 = no cap). */
function envHeapMB(): number | undefined {
  let v: string | undefined;
  try {
    v = Deno.env.get("COYOTE_PLUGIN_MAX_HEAP_MB");
  } catch {
    return undefined;
  }
  if (v === undefined || !/^\d+$/.test(v.trim())) return undefined;
  return Number(v.trim());
}

/**
 * The heap limit (MB) of a plugin's process when its limits name none, also used for graph script
 * processes (core/graph/script.ts): `$COYOTE_PLUGIN_MAX_HEAP_MB`, else 512; 0 = V8's default.
 */
export function defaultMaxHeapMB(): number {
  return envHeapMB() ?? DEFAULTS.maxHeapMB;
}

/** The RSS growth (MiB) past which a plugin's process is killed when its limits name none. */
export const DEFAULT_MAX_MEMORY_MB = DEFAULTS.maxMemoryMB;

/** `limits` with every unset tunable at its default (the heap limit from the environment). */
export function resolveLimits(limits: RpcLimits): Required<RpcLimits> {
  return {
    ...DEFAULTS,
    maxHeapMB: envHeapMB() ?? DEFAULTS.maxHeapMB,
    ...stripUndefined(limits),
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
