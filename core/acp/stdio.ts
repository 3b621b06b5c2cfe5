/**
 * stdout purity for protocol modes (ACP server): after {@link takeStdoutForProtocol} every
 * byte on fd 1 comes from the returned stream; `console.log/info/debug/warn/dir/table`,
 * `Deno.stdout.write/writeSync/writable` and Node's `process.stdout` (which Deno backs with
 * `Deno.stdout`) are redirected to stderr (plugin Workers do the same in their bootstrap), so a stray log line in our code or a dependency
 * can never corrupt the JSON-RPC stream. No imports: safe to call before anything heavy loads.
 * @module
 */

let taken: WritableStream<Uint8Array> | undefined;

/**
 * Redirects every other stdout writer to stderr and returns the only writable for fd 1.
 * Idempotent (a second call returns the same stream).
 */
export function takeStdoutForProtocol(): WritableStream<Uint8Array> {
  if (taken) return taken;
  const stdout = Deno.stdout;
  const rawWrite = stdout.write.bind(stdout);
  const toErr = (...args: unknown[]) => console.error(...args);
  const c = console as unknown as Record<string, unknown>;
  for (const m of ["log", "info", "debug", "warn", "dir", "dirxml", "table", "trace"]) c[m] = toErr;
  try {
    const s = stdout as unknown as Record<string, unknown>;
    s.write = (p: Uint8Array) => Deno.stderr.write(p);
    s.writeSync = (p: Uint8Array) => Deno.stderr.writeSync(p);
    Object.defineProperty(stdout, "writable", {
      get: () => Deno.stderr.writable,
      configurable: true,
    });
  } catch {
    // A runtime that freezes Deno.stdout keeps its writers; console is still redirected.
  }
  taken = new WritableStream<Uint8Array>({
    async write(chunk) {
      let off = 0;
      while (off < chunk.length) off += await rawWrite(chunk.subarray(off));
    },
  });
  return taken;
}
