/**
 * stdout purity for protocol modes (ACP server): after {@link takeStdoutForProtocol} every
 * byte on fd 1 comes from the returned stream; `console.log/info/debug/warn/dir/table`,
 * `Deno.stdout.write/writeSync/writable` and Node's `process.stdout` (which Deno backs with
 * `Deno.stdout`) are redirected to stderr (plugin Workers do the same in their bootstrap), so a stray log line in our code or a dependency
 * can never corrupt the JSON-RPC stream. No child process inherits fd 1 either
 * ({@link keepChildrenOffStdout}; plugin Workers wrap their own `Deno.Command` the same way).
 * Its one import (core/util/child_stdout.ts) imports nothing: safe to call before anything
 * heavy loads.
 * @module
 */
import { stdoutToStderr } from "../../util/child_stdout.ts";

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
  keepChildrenOffStdout();
  taken = new WritableStream<Uint8Array>({
    async write(chunk) {
      let off = 0;
      while (off < chunk.length) off += await rawWrite(chunk.subarray(off));
    },
  });
  return taken;
}

/**
 * Replaces the global `Deno.Command` so that no child inherits fd 1: a `stdout` that is unset
 * (`spawn()` inherits by default) or `"inherit"` becomes a pipe whose bytes are copied to
 * stderr ({@link stdoutToStderr}). `"piped"` and `"null"` are untouched; `output()` without
 * `stdout` was piped already.
 * (npm code spawning through `node:child_process` pipes stdio by default.)
 */
export function keepChildrenOffStdout(): void {
  const g = Deno as unknown as { Command: typeof Deno.Command };
  const Orig = g.Command;
  if ((Orig as unknown as { offStdout?: boolean }).offStdout) return;
  function Command(command: string | URL, options?: Deno.CommandOptions): Deno.Command {
    if (!new.target) throw new TypeError("Deno.Command must be called with new");
    const o = options ?? {};
    if (o.stdout !== undefined && o.stdout !== "inherit") return new Orig(command, o);
    return stdoutToStderr(new Orig(command, { ...o, stdout: "piped" }), o.stdout === "inherit");
  }
  Command.prototype = Orig.prototype;
  Object.defineProperty(Command, "offStdout", { value: true });
  try {
    g.Command = Command as unknown as typeof Deno.Command;
  } catch { /* a runtime that freezes Deno keeps the original */ }
}
