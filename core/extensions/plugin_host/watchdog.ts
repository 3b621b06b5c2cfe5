/**
 * The memory watchdog over running plugin processes (see
 * `RpcLimits.maxMemoryMB` in limits.ts): every 50 ms, while at least one
 * worker runs, it asks each to check its process's growth
 * (`PluginWorker.checkMemory` in worker.ts kills the one past its limit). The
 * timer is unref'd, so it never keeps Coyote alive.
 * @module
 */

/** A worker the watchdog polls. */
export interface MemoryChecked {
  /** Kills the worker when its process grew past its memory limit. */
  checkMemory(): void;
}

/** Memory watchdog over running plugin processes (see RpcLimits.maxMemoryMB). */
export const watchdog = {
  workers: new Set<MemoryChecked>(),
  timer: undefined as ReturnType<typeof setInterval> | undefined,
  add(w: MemoryChecked) {
    if (!this.workers.size) {
      this.timer = setInterval(() => this.tick(), 50);
      Deno.unrefTimer(this.timer as unknown as number);
    }
    this.workers.add(w);
  },
  remove(w: MemoryChecked) {
    this.workers.delete(w);
    if (!this.workers.size && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  },
  tick() {
    for (const w of [...this.workers]) w.checkMemory();
  },
};
